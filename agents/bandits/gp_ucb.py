"""GP-UCB with a constant confidence width, the method of *Gaussian Process Upper Confidence Bound
Achieves Nearly-Optimal Regret in Noise-Free Gaussian Process Bandits*.

S. Iwazaki, NeurIPS 2025 (arXiv 2502.19006; no code released). Registered as agent ``gp-ucb``
(role ``paper``) for ``NoiseFreeGPBandit-v0``. This module also holds :class:`GPAgent`, the base class
every GP agent (the baselines in ``papergym.baselines.bandits``) builds on: one candidate set, one
full-history posterior (:class:`~papergym.envs.bandits.gp.NoiseFreeGP`, the only posterior
implementation), action conversion and the diagnostics.

Setting ([paper]; tags: see docs/conventions.md)
-------------------------------------------------
``f`` lies in the RKHS of a known kernel ``k`` (``k(x, x) <= 1``) with ``||f||_k <= B``; observations are
exact, ``y_t = f(x_t)``. After ``t - 1`` queries the noise-free posterior is

    mu_{t-1}(x) = k_{t-1}(x)^T K_{t-1}^{-1} y_{t-1},
    sigma_{t-1}^2(x) = k(x, x) - k_{t-1}(x)^T K_{t-1}^{-1} k_{t-1}(x),

and ``|f(x) - mu_{t-1}(x)| <= B sigma_{t-1}(x)`` holds deterministically for every ``x`` (no log or
information-gain term), which is why the width can be the constant ``beta^{1/2} = B``.

Algorithm (steps cited inline)
------------------------------
1. ``x_1`` arbitrary: the candidate closest to the centre of ``[0, 1]^d`` [design] (``x1="random"``:
   a uniform candidate from the agent's stream).
2. After ``t - 1`` queries, the noise-free posterior on the candidate set (kept up to date by rank-one
   Cholesky updates: ``O(t^2 + N t)`` per round, never a refactorisation).
3. ``x_t = argmax_x mu_{t-1}(x) + beta^{1/2} sigma_{t-1}(x)`` with ``beta^{1/2} = B`` constant in ``t``
   (ties: the lowest candidate index).
4. Query ``x_t``, append ``(x_t, f(x_t))`` (a candidate already queried is not appended: it adds no
   information, and GP-UCB only picks it again when its exact value beats every other UCB, i.e. when
   it is optimal), repeat. The recommendation ``x_hat_T`` is the best observed point.

Guarantees the tests check (the paper's analysis): with ``beta^{1/2} = B`` and ``||f||_k <= B``,
``f(x*) - f(x_t) <= 2 B sigma_{t-1}(x_t)`` every round, so ``R_T <= 2 B sum_t sigma_{t-1}(x_t)`` -- the
``sum_sigma`` diagnostic -- and the simple regret of the best observed point is at most
``2 B min_t sigma_{t-1}(x_t)``. Rates (the paper): ``R_T = O(1)`` for SE and for Matérn with ``d < nu``,
``O(ln^2 T)`` for ``d = nu``, ``O~(T^{(d - nu)/d})`` for ``d > nu``.

Hyperparameters (enter the cell key)
------------------------------------
=============  ===========  ==========================================================================
name           default      provenance
=============  ===========  ==========================================================================
``beta_sqrt``  ``None``     [paper] ``None`` = the public RKHS-norm bound ``B`` of the problem
``jitter``     ``1e-10``    [design] initial diagonal jitter of ``K``, x10 on a Cholesky failure
``x1``         ``"centre"`` [design] first query: ``"centre"`` or ``"random"``
=============  ===========  ==========================================================================

The regularised variance (``lambda > 0``) of the paper appears only in its proof [secondary]; the
agent uses the exact noise-free posterior.

Diagnostics (every :class:`GPAgent`)
------------------------------------
``sum_sigma`` = ``sum_t sigma_{t-1}(x_t)`` under the full-history posterior (whatever the query rule;
the algorithm-independent quantity of the paper's lemma), ``sigma_at_queries`` (the list),
``repeats`` (rounds that re-queried an already queried candidate), ``best_index`` (the recommendation),
``jitter`` (final) and ``refactorisations``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from papergym.agents.base import register_agent
from papergym.envs.bandits.gp import NoiseFreeGP
from papergym.validate import one_of, positive_float

__all__ = ["GPAgent", "GPUCB", "ENV_ID"]

ENV_ID = "NoiseFreeGPBandit-v0"
X1_RULES = ("centre", "random")  # the first query: the centre candidate, or a uniformly random one


class GPAgent:
    """Base of the GP agents: candidate set, full-history posterior ``self.gp``, actions, diagnostics.

    Subclasses implement :meth:`choose` (the candidate index for round ``self.t + 1``) and may
    override :meth:`observe` (called after the posterior has absorbed the new point).

    Parameters
    ----------
    problem:
        The public :class:`~papergym.envs.spec.ProblemSpec` (``d``, ``kernel``, ``lengthscale``, ``B``,
        ``candidates``, ``action_mode``).
    seed:
        Anything :func:`numpy.random.default_rng` accepts; the agent's only randomness source.
    jitter:
        Initial jitter of the posterior (see :class:`~papergym.envs.bandits.gp.NoiseFreeGP`).
    """

    def __init__(self, problem: Any, *, seed: Any = None, jitter: float = 1e-10):
        self.problem = problem
        self.C = np.asarray(problem.candidates, dtype=np.float64)
        if self.C.ndim != 2:
            raise ValueError(f"problem.candidates must be an (N, d) array, got shape {self.C.shape}")
        self.N, self.d = self.C.shape
        self.kernel = problem.kernel
        self.lengthscale = float(problem.lengthscale)
        self.B = float(problem.B)
        self.T = int(problem.horizon)
        mode = getattr(problem, "action_mode", "discrete")
        if mode not in ("discrete", "continuous"):
            raise ValueError(f"problem.action_mode must be 'discrete' or 'continuous', got {mode!r}")
        self.continuous = mode == "continuous"
        self.rng = np.random.default_rng(seed)
        self.gp = NoiseFreeGP(self.C, self.kernel, self.lengthscale, jitter=jitter, capacity=min(self.T, self.N) + 1)
        self.t = 0  # rounds played
        self.sigma_at_queries: list[float] = []
        self.repeats = 0
        self.best_index = -1
        self.best_value = -math.inf
        self._last: int | None = None

    # --------------------------------------------------------------------------- the policy
    def choose(self) -> int:
        """Candidate index to query at round ``self.t + 1``."""
        raise NotImplementedError

    def observe(self, i: int, y: float) -> None:
        """Hook after round ``self.t`` queried candidate ``i`` and saw ``y`` (posterior updated)."""

    def centre_index(self) -> int:
        """The candidate closest to the centre of ``[0, 1]^d`` (lowest index on ties)."""
        return int(np.argmin(np.sum((self.C - 0.5) ** 2, axis=1)))

    # ---------------------------------------------------------------------------- protocol
    def act(self, observation: Any = None) -> Any:
        i = int(self.choose())
        if not 0 <= i < self.N:
            raise RuntimeError(f"{type(self).__name__}.choose() returned {i}, not a candidate index")
        self._last = i
        return self.C[i].copy() if self.continuous else i

    def _index_of(self, action: Any) -> int:
        if not self.continuous:
            a = np.asarray(action)
            if a.size != 1 or not np.issubdtype(a.dtype, np.integer):
                raise ValueError(f"expected a candidate index, got {action!r}")
            i = int(a.reshape(()))
            if not 0 <= i < self.N:
                raise ValueError(f"candidate index {i} out of range [0, {self.N})")
            return i
        x = np.asarray(action, dtype=np.float64).reshape(-1)
        if self._last is not None and np.array_equal(x, self.C[self._last]):
            return self._last
        hit = np.flatnonzero(np.all(self.C == x, axis=1))
        if len(hit) == 0:
            raise ValueError(f"{type(self).__name__} only learns from candidate points; {x} is not one")
        return int(hit[0])

    def update(self, action: Any, reward: float, observation: Any = None) -> None:
        i = self._index_of(action)
        y = float(reward)
        # sigma_{t-1}(x_t) under the full-history posterior, before absorbing y
        self.sigma_at_queries.append(float(math.sqrt(self.gp.var[i])))
        self.t += 1
        if not self.gp.add(i, y):
            self.repeats += 1
        if y > self.best_value:
            self.best_value, self.best_index = y, i
        self._last = None
        self.observe(i, y)

    @property
    def recommendation(self) -> int:
        """``x_hat``: the best observed candidate (``-1`` before the first round)."""
        return self.best_index

    def diagnostics(self) -> dict[str, Any]:
        return {
            "sum_sigma": float(math.fsum(self.sigma_at_queries)),
            "sigma_at_queries": list(self.sigma_at_queries),
            "repeats": int(self.repeats),
            "best_index": int(self.best_index),
            "jitter": float(self.gp.jitter),
            "refactorisations": int(self.gp.refactorisations),
        }


def check_x1(x1: Any) -> str:
    """Kept for the GP baselines (:mod:`papergym.baselines.bandits.gp_ei`, ``gp_ts``, ``mvr``); new code calls
    :func:`papergym.validate.one_of` directly."""
    return one_of(x1, "x1", X1_RULES)


class GPUCB(GPAgent):
    """``gp-ucb``: ``x_t = argmax mu_{t-1} + beta^{1/2} sigma_{t-1}``, ``beta^{1/2} = B`` (the paper's rule)."""

    def __init__(
        self,
        problem: Any,
        *,
        seed: Any = None,
        beta_sqrt: float | None = None,
        jitter: float = 1e-10,
        x1: str = "centre",
    ):
        jitter = positive_float(jitter, "jitter")
        super().__init__(problem, seed=seed, jitter=jitter)
        beta_sqrt = positive_float(beta_sqrt, "beta_sqrt", allow_none=True)
        self.beta_sqrt_fixed = beta_sqrt
        self.x1 = one_of(x1, "x1", X1_RULES)

    def width(self, t: int) -> float:
        """``beta_t^{1/2}`` at round ``t``: the constant ``B`` (step 3) unless ``beta_sqrt`` is given."""
        return self.B if self.beta_sqrt_fixed is None else self.beta_sqrt_fixed

    def choose(self) -> int:
        t = self.t + 1
        if t == 1:  # step 1: x_1 arbitrary
            return self.centre_index() if self.x1 == "centre" else int(self.rng.integers(self.N))
        # step 3: maximise the upper confidence bound over the candidates
        ucb = self.gp.mean + self.width(t) * self.gp.std
        return int(np.argmax(ucb))


register_agent(
    "gp-ucb",
    GPUCB,
    envs=[ENV_ID],
    role="paper",
    description="noise-free GP-UCB with constant width beta^1/2 = B (Iwazaki, NeurIPS 2025)",
    defaults={"beta_sqrt": None, "jitter": 1e-10, "x1": "centre"},
)
