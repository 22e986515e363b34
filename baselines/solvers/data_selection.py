"""Baselines and the reference line of ``RLDataSelection-v0`` (``docs/papers/ufo-rl.md``). Importing this
module does not import torch (the policy runs in the evaluator, behind ``problem.policy``).

* ``multi-sample-acc`` -- ``K`` = 8 samples per pool problem at temperature 1 (``policy.sample``, chunks of
  ``chunk`` prompts, each call seeded from the solver seed); accuracy = the fraction of samples equal to
  ``answer + "$"``; keep the problems with ``0 < acc < 1`` ordered by ``|acc − 0.5|`` (ties by index: DAPO's
  dynamic-sampling filter, Yu et al. 2025), fill up to ``k`` with uniformly random other problems (solver seed). If
  the work budget or ``stop_fraction`` of ``max_seconds`` runs out first, the problems estimated so far are used.
* ``random-select`` -- ``k`` uniform problems without replacement (solver seed); no policy call.
* ``easiest-conf`` / ``hardest-conf`` -- the top / bottom ``k`` by ``Conf`` (the same single pass as ``ufo-rl``,
  :func:`papergym.agents.solvers.ufo_rl.pool_confidence`; ties by index).
* ``full-data`` (role ``reference``, never ranked) -- the whole pool (10× the RL compute), through the private
  ``problem.oracle.allow_full_pool()`` pass that only trusted in-process solvers hold.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.agents.solvers.ufo_rl import get_field, policy_call, pool_confidence, top_k
from papergym.envs.tasks.base import BudgetExceeded
from papergym.validate import boolean, in_range, positive_float, positive_int

__all__ = ["MultiSampleAcc", "RandomSelect", "ConfSelect", "FullData", "sample_accuracy", "dapo_order"]

TASK = "RLDataSelection-v0"


def sample_accuracy(samples: list[list[str]], answers: list[str]) -> np.ndarray:
    """Per problem: the fraction of its samples that are exactly ``answer + "$"``."""
    return np.array([np.mean([c == a + "$" for c in s]) if len(s) else np.nan for s, a in zip(samples, answers)])


def dapo_order(acc: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """DAPO's filter: problems with ``0 < acc < 1`` (NaN: not estimated) by ``|acc − 0.5|`` (ties by index), the
    first ``k``; if fewer, filled with uniformly random others."""
    acc = np.asarray(acc, dtype=float)
    mid = np.flatnonzero((acc > 0) & (acc < 1))
    keep = mid[np.argsort(np.abs(acc[mid] - 0.5), kind="stable")][:k]
    if len(keep) < k:
        rest = np.setdiff1d(np.arange(len(acc)), keep)
        keep = np.concatenate([keep, rng.choice(rest, size=k - len(keep), replace=False)])
    return keep.astype(np.int64)


class MultiSampleAcc:
    """``multi-sample-acc`` (module docstring)."""

    def __init__(
        self,
        seed: Any = None,
        n_samples: int = 8,
        temperature: float = 1.0,
        chunk: int = 500,
        stop_fraction: float = 0.8,
    ):
        self.K = positive_int(n_samples, "n_samples")
        self.chunk = positive_int(chunk, "chunk")
        self.T = positive_float(temperature, "temperature")
        self.stop_fraction = in_range(stop_fraction, "stop_fraction", 0, 1, high_closed=True)
        self.seed = seed

    def estimate(self, problem: Any, budget: Any = None) -> np.ndarray:
        """Accuracy estimate per pool problem (NaN where the budget ran out first)."""
        t0 = time.perf_counter()
        rng = np.random.default_rng(self.seed)
        prompts, answers = list(get_field(problem, "prompts")), list(get_field(problem, "answers"))
        sample = policy_call(problem, "sample")
        acc = np.full(len(prompts), np.nan)
        max_s = getattr(budget, "max_seconds", None) if budget is not None else None
        for s in range(0, len(prompts), self.chunk):
            if max_s is not None and time.perf_counter() - t0 > self.stop_fraction * max_s:
                break
            P = prompts[s : s + self.chunk]
            try:
                out = sample(P, self.K, self.T, int(rng.integers(2**31)))
            except BudgetExceeded:
                break
            except Exception as exc:  # a sandboxed call re-raises the evaluator's error by message
                if "BudgetExceeded" in type(exc).__name__ or "max_work" in str(exc):
                    break
                raise
            acc[s : s + len(P)] = sample_accuracy(out, answers[s : s + self.chunk])
        return acc

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict[str, Any]:
        acc = self.estimate(problem, budget)
        rng = np.random.default_rng([0 if self.seed is None else int(self.seed), 1])
        idx = dapo_order(acc, int(get_field(problem, "k")), rng)
        return {
            "indices": idx,
            "meta": {
                "forwards": float(policy_call(problem, "work_used")()),
                "estimated": int(np.isfinite(acc).sum()),
                "in_band": int(((acc > 0) & (acc < 1)).sum()),
            },
        }


class RandomSelect:
    """``random-select``: ``k`` uniform pool problems (solver seed)."""

    def __init__(self, seed: Any = None):
        self.seed = seed

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        n = len(get_field(problem, "prompts"))
        return np.random.default_rng(self.seed).choice(n, size=int(get_field(problem, "k")), replace=False)


class ConfSelect:
    """``easiest-conf`` (``hardest=False``) / ``hardest-conf``: the top / bottom ``k`` by ``Conf``."""

    def __init__(self, seed: Any = None, hardest: bool = False, include_eos: bool = False):
        self.seed = seed
        self.hardest = boolean(hardest, "hardest")
        self.include_eos = boolean(include_eos, "include_eos")

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        conf = pool_confidence(problem, self.include_eos)
        return top_k(-conf if self.hardest else conf, int(get_field(problem, "k")))


class FullData:
    """``full-data`` (reference): the whole pool."""

    def __init__(self, seed: Any = None):
        self.seed = seed

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        oracle = getattr(problem, "oracle", None) if not isinstance(problem, dict) else problem.get("oracle")
        if oracle is None or not hasattr(oracle, "allow_full_pool"):
            raise ValueError("full-data needs the private problem.oracle (a trusted, in-process reference run)")
        oracle.allow_full_pool()
        return np.arange(len(get_field(problem, "prompts")), dtype=np.int64)


def _multi_sample_acc(*, seed: Any = None, **hp: Any) -> MultiSampleAcc:
    return MultiSampleAcc(seed=seed, **hp)


def _random_select(*, seed: Any = None) -> RandomSelect:
    return RandomSelect(seed=seed)


def _easiest_conf(*, seed: Any = None, **hp: Any) -> ConfSelect:
    return ConfSelect(seed=seed, hardest=False, **hp)


def _hardest_conf(*, seed: Any = None, **hp: Any) -> ConfSelect:
    return ConfSelect(seed=seed, hardest=True, **hp)


def _full_data(*, seed: Any = None) -> FullData:
    return FullData(seed=seed)


register_solver(
    "multi-sample-acc",
    _multi_sample_acc,
    tasks=[TASK],
    description="K = 8 samples per problem at temperature 1; keep 0 < acc < 1 by |acc - 0.5| (DAPO "
    "dynamic-sampling filter), fill randomly",
    defaults={"n_samples": 8, "temperature": 1.0, "chunk": 500, "stop_fraction": 0.8},
    requires=("torch",),
)
register_solver("random-select", _random_select, tasks=[TASK], description="k uniform problems", requires=("torch",))
register_solver(
    "easiest-conf",
    _easiest_conf,
    tasks=[TASK],
    description="the k problems of highest single-pass confidence",
    defaults={"include_eos": False},
    requires=("torch",),
)
register_solver(
    "hardest-conf",
    _hardest_conf,
    tasks=[TASK],
    description="the k problems of lowest single-pass confidence",
    defaults={"include_eos": False},
    requires=("torch",),
)
register_solver(
    "full-data",
    _full_data,
    tasks=[TASK],
    role="reference",
    description="the whole pool (10x the RL compute); reference line, not ranked",
    requires=("torch",),
)
