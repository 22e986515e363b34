"""Dispatching rules as agents (docs/papers/fjsp-mistar.md): ``fifo``, ``mor``, ``spt``, ``mwkr``, ``lwkr``,
``random-dispatch``.

On ``FJSP-v0`` each decision applies the rule of :mod:`papergym.envs.scheduling.fjsp.rules` to the
observation: with ``restrict_to_earliest=True`` [design] the candidates are the startable pairs with the
minimal start ``max(job_ready_j, machine_ready_k)``; the job rule picks a job, the machine rule
(``machine_rule`` ∈ {``eet``, ``spt``}; composite rules {FIFO, MOR, LWKR, MWKR} × {SPT, EET} after
Lei-Kun/Dispatching-rules-for-FJSP) a machine; remaining ties are broken by the agent's seeded RNG.

On ``FJSPImprove-v0`` a rule is the **initial solution** the searches start from: the env builds it
(``init=<rule>``, or ``sampled-dispatch``), and :class:`HoldInitialAgent` keeps it (each step restores the
current solution's archive slot, a no-op), so its row in a comparison is the starting point every search
improves on. It is registered there as ``initial-solution`` (whatever ``init`` built); with ``rule=<name>``
it refuses an env whose ``init`` differs.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.envs.scheduling.fjsp.rules import MACHINE_RULES, RuleTables, choose_pair
from papergym.validate import one_of

__all__ = ["DispatchAgent", "HoldInitialAgent", "RULES"]

#: agent name -> job rule
RULES = {"fifo": "fifo", "mor": "mor", "spt": "spt", "mwkr": "mwkr", "lwkr": "lwkr", "random-dispatch": "random"}


class DispatchAgent:
    """A dispatching rule on ``FJSP-v0``."""

    def __init__(
        self,
        problem: Any,
        *,
        seed: Any = None,
        rule: str = "mwkr",
        machine_rule: str = "eet",
        restrict_to_earliest: bool = True,
    ):
        if rule not in RULES.values():
            raise ValueError(f"unknown rule {rule!r}; valid: {', '.join(sorted(set(RULES.values())))}")
        one_of(machine_rule, "machine_rule", MACHINE_RULES)
        self.rule, self.machine_rule = rule, machine_rule
        self.restrict_to_earliest = bool(restrict_to_earliest)
        self.rng = np.random.default_rng(seed)
        self._tables: RuleTables | None = None

    def act(self, observation: dict) -> int:
        if self._tables is None:
            self._tables = RuleTables(observation["proc"], observation["op_job"])
        return choose_pair(
            self.rule,
            observation,
            self._tables,
            self.rng,
            machine_rule=self.machine_rule,
            restrict_to_earliest=self.restrict_to_earliest,
        )

    def update(self, action: Any, reward: float, observation: Any) -> None:
        pass


class HoldInitialAgent:
    """A dispatching rule on ``FJSPImprove-v0``: keeps the env's initial solution (built by the same rule)."""

    def __init__(self, problem: Any, *, seed: Any = None, rule: str | None = "mwkr"):
        init = problem.params.get("init")
        if rule is not None and init != rule:
            raise ValueError(
                f"on FJSPImprove-v0 the '{rule}' agent reports the initial solution built by the env; "
                f"set the env's init='{rule}' (it is {init!r})"
            )
        N, M = int(problem.params["n_ops"]), int(problem.params["n_machines"])
        self._restore0 = N * (N + M)

    def act(self, observation: dict) -> int:
        return self._restore0 + int(observation["current_slot"][0])

    def update(self, action: Any, reward: float, observation: Any) -> None:
        pass
