"""Baselines of ``PreferenceHallucination-v0`` (``docs/papers/symmpo.md``). The training loop, the sequence
log-probabilities and the losses are those of :mod:`papergym.agents.solvers.symmpo` (imported; torch is imported
only inside ``solve``, so importing this module does not need torch).

* ``sft`` — the reference policy ``π_ref`` as is (the lower reference: the supervised captioner with its
  co-occurrence hallucinations); numpy only, reported once at iteration 0.
* ``dpo`` — DPO (Rafailov et al., NeurIPS 2023): ``L_DPO = −log σ(β [ρ(y_w|m) − ρ(y_l|m)])``, ``β`` = 0.1; two
  policy passes per tuple.
* ``mdpo`` — mDPO (Wang et al., EMNLP 2024): ``L_DPO − log σ(β [ρ(y_w|m) − ρ(y_w|m_corrupt)]) − log σ(β ρ(y_w|m) −
  δ)``, ``β`` = 0.1, ``δ`` = 0, the corrupted image being the problem's ``features_corrupt`` (50 % of the feature
  dimensions zeroed, seeded by the instance); three policy passes per tuple.

``dpo`` and ``mdpo`` share ``symmpo``'s optimiser settings (Adam ``lr`` 1e−3, batch 64, the problem's epochs,
weights reported after each epoch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.agents.solvers.symmpo import TASK, PreferenceOptimizer, weights_from

__all__ = ["SFTReference"]

_COMMON = ("beta", "delta", "lr", "batch_size", "epochs", "stop_fraction")


class SFTReference:
    """``sft``: returns ``π_ref`` unchanged (float32 copies of the problem's ``ref_weights``)."""

    def __init__(self, *, seed: Any = None):
        self.seed = seed

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict[str, Any]:
        sol: dict[str, Any] = {
            k: np.asarray(v, dtype=np.float32).copy() for k, v in weights_from(problem.ref_weights).items()
        }
        sol["meta"] = {"objective": "sft", "epochs": 0}
        report(sol, iteration=0, work=0)
        return sol


def _factory(objective: str, allowed: tuple[str, ...]) -> Callable[..., PreferenceOptimizer]:
    def make(*, seed: Any = None, **hp: Any) -> PreferenceOptimizer:
        bad = sorted(set(hp) - set(allowed))
        if bad:
            raise ValueError(f"{objective} has no hyperparameter(s) {bad}; valid: {list(allowed)}")
        return PreferenceOptimizer(seed=seed, objective=objective, **hp)

    make.__qualname__ = make.__name__ = f"_{objective}"
    return make


_dpo = _factory("dpo", tuple(h for h in _COMMON if h != "delta"))
_mdpo = _factory("mdpo", _COMMON)

register_solver(
    "sft",
    SFTReference,
    tasks=[TASK],
    role="baseline",
    description="the reference policy pi_ref unchanged (supervised captioner, 20 % partner-hallucinated captions)",
)
register_solver(
    "dpo",
    _dpo,
    tasks=[TASK],
    role="baseline",
    requires=("torch",),
    description="DPO on (m, y_w, y_l), beta = 0.1; Adam 1e-3, 10 epochs",
    defaults={"beta": 0.1, "lr": 1e-3, "batch_size": 64, "epochs": None, "stop_fraction": 0.9},
)
register_solver(
    "mdpo",
    _mdpo,
    tasks=[TASK],
    role="baseline",
    requires=("torch",),
    description="mDPO: DPO + image-contrast term against 50 %-zeroed features + reward anchor, beta = 0.1",
    defaults={"beta": 0.1, "delta": 0.0, "lr": 1e-3, "batch_size": 64, "epochs": None, "stop_fraction": 0.9},
)
