"""Scheduling agents of the papers: ``mistar`` and its ablations on ``FJSPImprove-v0`` (torch extra).

Importing this package registers them; without torch / torch-geometric they are registered as unavailable (a warning
names the torch extra; ``papergym list`` shows them with that reason, ``make_agent`` raises naming the extra)."""

from __future__ import annotations

from functools import partial

from papergym.agents.base import optional_agent_module, register_agent

IMPROVE = "FJSPImprove-v0"


def _mistar(defaults, problem, *, seed=None, **hp):
    return MIStarAgent(problem, seed=seed, **{**defaults, **hp})


# the search the shipped weights were trained and selected for (weights/MODEL_CARD.md): sampling temperature 1,
# visited tabu, P = 16 chosen on DANIEL's SD2 10x5 validation split (benchmarks/mistar_card.py choose-p)
_SEARCH = {"temperature": 1.0, "tabu": "visited", "threads": 1}
VARIANTS = {
    "mistar": (
        {"weights": "sd2-10x5", "p": 16, "memory": True, "memory_k": 8, **_SEARCH},
        "MIStar: memory-enhanced heterogeneous GNN policy + parallel greedy search (P sampled moves "
        "evaluated exactly, best executed); shipped SD2 10x5 weights",
    ),
    "mistar-no-memory": (
        {"weights": "sd2-10x5-no-memory", "p": 16, "memory": False, **_SEARCH},
        "MIStar ablation: no memory module (own weights, trained without votes or penalty)",
    ),
    "mistar-p1": (
        {"weights": "sd2-10x5", "p": 1, "memory": True, "memory_k": 8, **_SEARCH},
        "MIStar ablation: no parallel search (P = 1: execute one sampled move)",
    ),
    "mistar-p4": (
        {"weights": "sd2-10x5", "p": 4, "memory": True, "memory_k": 8, **_SEARCH},
        "MIStar at a quarter of the evaluations (P = 4), where its learned proposals matter most",
    ),
    "mistar-untrained": (
        {"weights": "sd2-10x5", "p": 16, "memory": True, "memory_k": 8, "proposal": "untrained", **_SEARCH},
        "MIStar control: the same search and network with untrained (default-initialised) weights",
    ),
    "mistar-uniform": (
        {"weights": "sd2-10x5", "p": 16, "memory": True, "memory_k": 8, "proposal": "uniform", **_SEARCH},
        "MIStar control: the same search with uniform move proposals (no network)",
    ),
}
_agent_module = optional_agent_module(
    "papergym.agents.scheduling.mistar.agent", names=tuple(VARIANTS), envs=[IMPROVE], role="paper"
)
if _agent_module is not None:
    MIStarAgent = _agent_module.MIStarAgent
    for _name, (_defaults, _text) in VARIANTS.items():
        register_agent(
            _name, partial(_mistar, _defaults), envs=[IMPROVE], role="paper", description=_text, defaults=_defaults
        )
