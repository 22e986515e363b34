"""Scheduling baselines: dispatching rules, improvement searches and CP-SAT (``FJSP-v0``, ``FJSPImprove-v0``)."""

from __future__ import annotations

from functools import partial

from papergym.agents.base import optional_agent_module, register_agent
from papergym.baselines.scheduling.dispatching import RULES, DispatchAgent, HoldInitialAgent
from papergym.baselines.scheduling.local_search import LocalSearchAgent

CONSTRUCT = "FJSP-v0"
IMPROVE = "FJSPImprove-v0"

_RULE_TEXT = {
    "fifo": "FIFO: the job whose next operation became ready first; earliest-available machine",
    "mor": "MOR: the job with the most remaining operations; earliest-available machine",
    "spt": "SPT: the startable (operation, machine) pair with the shortest processing time",
    "mwkr": "MWKR: the job with the most remaining work; earliest-available machine",
    "lwkr": "LWKR: the job with the least remaining work; earliest-available machine",
    "random-dispatch": "a uniformly random startable pair",
}


def _dispatch(rule: str, problem, *, seed=None, **hp):
    return DispatchAgent(problem, seed=seed, rule=rule, **hp)


def _hold(rule: str, problem, *, seed=None, **hp):
    return HoldInitialAgent(problem, seed=seed, rule=rule, **hp)


def _search(strategy: str, problem, *, seed=None, **hp):
    return LocalSearchAgent(problem, seed=seed, strategy=strategy, **hp)


for _name, _rule in RULES.items():
    register_agent(
        _name,
        partial(_dispatch, _rule),
        envs=[CONSTRUCT],
        role="baseline",
        description=_RULE_TEXT[_name],
        defaults={"machine_rule": "eet", "restrict_to_earliest": True},
    )

# on the improvement env the start is the env's `init` (`papergym compare` and the board: sampled-dispatch;
# `--init mwkr` etc.), kept unchanged; one agent for any init, so every default comparison runs
register_agent(
    "initial-solution",
    partial(_hold, None),
    envs=[IMPROVE],
    role="baseline",
    description="the env's initial solution (any init), kept unchanged: the searches' starting point",
)

for _name, _strategy, _text, _defaults in (
    ("gd-search", "gd", "greedy descent over the exact neighbourhood, tabu on the reverse move", {"tabu_tenure": 1}),
    ("bi-search", "bi", "best improving move, else restore an archived solution", {}),
    ("fi-search", "fi", "first improving move in random order, else restore", {}),
    ("random-p-search", "random-p", "best of P random legal moves", {"p": 16}),
):
    register_agent(
        _name, partial(_search, _strategy), envs=[IMPROVE], role="baseline", description=_text, defaults=_defaults
    )

# CP-SAT needs the fjsp extra (ortools); without it `cpsat` is listed as unavailable with that reason
_cpsat = optional_agent_module(
    "papergym.baselines.scheduling.cpsat", names=("cpsat",), envs=[CONSTRUCT, IMPROVE], requires=("ortools",)
)
if _cpsat is not None:
    register_agent(
        "cpsat",
        _cpsat.CPSATDispatchAgent,
        envs=[CONSTRUCT],
        role="baseline",
        description="OR-Tools CP-SAT solved at reset, replayed in start-time order",
        defaults={"time_limit": 2.0, "num_workers": 2, "hint": "mwkr"},
    )
    register_agent(
        "cpsat",
        _cpsat.CPSATReferenceAgent,
        envs=[IMPROVE],
        role="oracle",
        description="OR-Tools CP-SAT makespan as a reference line (does not walk the neighbourhood)",
        defaults={"time_limit": 2.0, "num_workers": 2, "hint": "mwkr"},
    )
