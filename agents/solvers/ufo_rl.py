"""``ufo-rl``: single-pass, uncertainty-focused RL data selection, the paper's method of ``RLDataSelection-v0``
(Zhao et al., *UFO-RL*, NeurIPS 2025, arXiv:2505.12457; ``compute_ufo_scores.py`` of ``zy125413/UFO_RL``).

1. One batched teacher-forced pass over the pool (``problem.policy.logprobs``, one call for the whole pool; no
   sampling, no generation): ``Conf(x) = (1/T) Σ_t log π(y_t | x, y_<t)`` over the ``T`` gold-answer tokens only,
   as the official ``compute_ufo_scores.py`` does: it prefills the assistant turn with ``"<answer> " + gold`` and
   applies the chat template with ``continue_final_message`` (trl's ``maybe_apply_chat_template`` when the last
   turn is the assistant's), so no end-of-turn token follows the answer and ``T`` counts the answer's tokens alone.
   Here: the digits, not the EOS token ``$`` (``include_eos=True`` adds it, the gym's earlier default;
   the paired comparison is in :mod:`papergym.envs.tasks.data_selection`).
2. ``s = exp(Conf)`` (the geometric-mean token probability), ``μ = mean(s)`` over the pool,
   ``score = 1 − (s − μ)²``; the ``k`` highest scores (ties broken by the smaller pool index: a stable sort of
   ``−score``) -- the problems whose confidence is closest to the pool mean, neither mastered nor hopeless (the zone
   of proximal development).

The solver is deterministic (it draws no randomness; ``seed`` is accepted and unused). Solution:
``{"indices": k sorted-by-score pool indices, "meta": {"forwards", "mu", "conf_mean"}}``. It does not ``report``
intermediate selections (each would cost the evaluator a full RL run).

Hyperparameters (enter the cell key)
------------------------------------
=================  =========  ======================================================================================
name               default    provenance
=================  =========  ======================================================================================
``include_eos``    ``False``  [code] whether ``$`` counts among the gold tokens (the official code: no)
=================  =========  ======================================================================================

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.validate import boolean

__all__ = ["UFORL", "confidence", "ufo_scores", "top_k", "TASK"]

TASK = "RLDataSelection-v0"


def get_field(problem: Any, name: str) -> Any:
    return problem[name] if isinstance(problem, dict) else getattr(problem, name)


def policy_call(problem: Any, name: str) -> Callable[..., Any]:
    pol = get_field(problem, "policy")
    return pol[name] if isinstance(pol, dict) else getattr(pol, name)


def confidence(logprobs: np.ndarray, answer_lengths: np.ndarray, include_eos: bool = False) -> np.ndarray:
    """``Conf`` per row of ``policy.logprobs``' output (row ``i``: ``answer_lengths[i]`` digit log-probs then the
    EOS log-prob, NaN after): the mean over the digits (and EOS with ``include_eos``)."""
    lp = np.asarray(logprobs, dtype=float)
    L = np.asarray(answer_lengths, dtype=np.int64) + (1 if include_eos else 0)
    cols = np.arange(lp.shape[1])[None, :]
    m = cols < L[:, None]
    return np.where(m, np.nan_to_num(lp), 0.0).sum(axis=1) / np.maximum(L, 1)


def ufo_scores(conf: np.ndarray) -> np.ndarray:
    """``1 − (s − μ)²`` with ``s = exp(Conf)``, ``μ = mean(s)`` (the official ``compute_ufo_scores.py``)."""
    s = np.exp(np.asarray(conf, dtype=float))
    return 1.0 - (s - s.mean()) ** 2


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores, the smaller index first among equal scores."""
    return np.argsort(-np.asarray(scores, dtype=float), kind="stable")[: int(k)]


def pool_confidence(problem: Any, include_eos: bool = False) -> np.ndarray:
    """``Conf`` of every pool problem from one batched ``policy.logprobs`` call."""
    prompts, answers = list(get_field(problem, "prompts")), list(get_field(problem, "answers"))
    lp = np.asarray(policy_call(problem, "logprobs")(prompts, answers), dtype=float)
    return confidence(lp, np.array([len(a) for a in answers]), include_eos)


class UFORL:
    """``ufo-rl`` (module docstring)."""

    def __init__(self, seed: Any = None, include_eos: bool = False):
        self.seed, self.include_eos = seed, boolean(include_eos, "include_eos")

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict[str, Any]:
        conf = pool_confidence(problem, self.include_eos)
        sc = ufo_scores(conf)
        idx = top_k(sc, int(get_field(problem, "k")))
        s = np.exp(conf)
        return {
            "indices": idx.astype(np.int64),
            "meta": {
                "forwards": float(policy_call(problem, "work_used")()),
                "mu": float(s.mean()),
                "conf_mean": float(conf.mean()),
            },
        }


def _ufo_rl(*, seed: Any = None, **hp: Any) -> UFORL:
    return UFORL(seed=seed, **hp)


register_solver(
    "ufo-rl",
    _ufo_rl,
    tasks=[TASK],
    role="paper",
    description="one teacher-forced pass: Conf = mean gold-token log-prob, s = exp(Conf), keep the k "
    "problems with the largest 1 - (s - mean s)^2",
    defaults={"include_eos": False},
    requires=("torch",),
)
