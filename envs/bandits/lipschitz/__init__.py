"""NonStatLipschitz-v0: non-stationary Lipschitz bandits on ``[0, 1]^d``.

Environment of N. Nguyen, S. Gaucher, C. Vernade, *Non-Stationary Lipschitz Bandits*
(arXiv 2505.18871, NeurIPS 2025); see ``docs/papers/nonstat-lipschitz.md`` (tags: see docs/conventions.md).

Public API
----------
``NonStatLipschitzEnv``         the Gymnasium env (one run).
``NonStatLipschitzVectorEnv``   native vector env (``num_envs`` runs, independent seeds, numpy-stepped).
``NonStatLipschitzOracle``      per-run oracle (``env.unwrapped.oracle``).
``BatchedNonStatLipschitzOracle``  oracle of the vector env (``.oracle``; ``.oracles`` = per-run list).
``INSTANCES``                   tuple of instance names; ``instance_kwargs(name)`` -> family kwargs + defaults.
``make_problem(d, horizon, noise, sigma)`` -> the :class:`~papergym.envs.spec.ProblemSpec`.

Every constant of the instance families is [design] unless tagged [code]
(two-peak-cyclic follows the official repository's ``Environment.py``). Constants that a user may want to
change are constructor kwargs (see ``Arguments`` in :class:`NonStatLipschitzEnv`); the shapes of the
families (peak positions 0.3/0.7, the tent floor 0.3 and the distributions of the seeded tents, benign
breakpoints, 16 knots) are fixed parts of the family definitions.

Deviations / design decisions (all [design])
--------------------------------------------
* ``piecewise-tents`` tents are drawn from the instance stream (``random_tents=True``, the default): per
  run, after the phase lengths, heights ``h_i ~ U[0.2, 0.4]`` (half-width = height: slope 1), then centres
  ``c_i ~ U[0, 1]^d`` redrawn until ``||c_i - c_{i-1}||_inf >= 0.4`` (``instances._random_tents``), so the
  previous peak is on the new tent's floor and every change leaves it a gap ``h_i >= 0.2``; ``mu_t* = 0.3 +
  h_i`` exactly, at ``c_i``. ``random_tents=False`` keeps the fixed tents (centres alternating 0.2 / 0.8,
  height 0.4, the same for every seed), whose shifts have closed forms (used by the tests).
* ``d > 1``: ``piecewise-tents`` uses l-inf tents by definition; ``two-peak-cyclic`` and
  ``drifting-peak`` are extended in the obvious l-inf way (peaks at ``(0.3,..,0.3)``, ``(0.7,..,0.7)``;
  drifting centre ``(c(t),..,c(t))``), which keeps every ``mu_t`` 1-Lipschitz in l-inf and the closed-form
  optimum unchanged. ``benign-changes`` and ``random-lipschitz`` are defined for ``d = 1`` only
  (``ValueError`` for ``d > 1``).
* Tent written as ``0.3 + max(0, h - ||x - c||)``, identical to ``0.3 + h max(0, 1 - ||x - c||/h)``
  (height ``h`` = half-width; ``h = 0.4`` for drifting-peak and the fixed tents).
* Phase lengths: equal phases start at rounds ``1 + floor(i T / P)``; random lengths are
  ``min_length + `` a largest-remainder rounding of ``(T - P min_length) * Dirichlet(a,..,a)``
  (``a = 2`` for tents, ``1`` for random-lipschitz), ``min_length = 256`` (kwarg).
* ``reset(seed=None)``: the run seed is drawn from ``self.np_random`` (fresh OS entropy for an env never
  seeded; a deterministic continuation after ``reset(seed=s)``, Gymnasium's convention).
* ``random-lipschitz`` draws, from the instance stream: the Dirichlet phase weights, then per phase
  ``f(0)`` and the 16 increments. ``benign-changes`` draws ``s_1..s_T`` at once.
* ``min_length`` (phase minimum, 256 by default) is exposed as a kwarg of the two phase families.
* ``argmax_switches`` (two-peak) reports, for each crossing ``t - 1 = T(2k+1)/(4c)``, the first round with
  ``t - 1 >= T(2k+1)/(4c)`` (at equality ``alpha = 1/2`` and all of ``[0.3, 0.7]`` is optimal).
* ``significant_shifts``: ``grid`` is the number of grid points per axis, default ``None`` = 1024 for
  ``d = 1`` (``grid=1024``), 64 for ``d = 2`` (64 x 64), ``round(4096^(1/d))`` beyond;
  see :meth:`NonStatLipschitzOracle.significant_shifts` for the discretisation. Implementation: the gap of
  every family except drifting-peak is linear in a few per-round coefficients
  (``delta_t(x) = sum_k theta_k(t) phi_k(x)``), so window sums come from prefix sums of ``theta`` (no
  ``T x G`` history is stored); drifting-peak keeps running window sums per (length, active arm). Flagged
  arms are dropped (flags are monotone within a phase). Both are checked against a direct implementation of
  the definition in the tests.
* Actions: float or integer arrays/lists are accepted (cast to float64); bool, complex, object and string
  dtypes are rejected (rule ``dtype``); the shape must be exactly ``(d,)`` (``(n, d)`` in the vector env).
* Vector env ``info`` follows Gymnasium's vector convention: ``{"t": (n,) ints, "_t": (n,) True}``.

Modules
-------
``instances``  the instance families: configuration checks, the per-run mean functions and their numba kernel.
``oracle``     the per-run and batched oracles: means, optimum, regret, significant shifts, run scoring.
``env``        the single and vector Gymnasium envs, the public ``ProblemSpec`` and ``papergym compare`` defaults.
"""

from papergym.envs.bandits.lipschitz.env import (
    COMPARE_DEFAULTS,
    ENV_ID,
    REGRET_NAME,  # noqa: F401  (read from the entry point's module by papergym compare and the board)
    NonStatLipschitzEnv,
    NonStatLipschitzVectorEnv,
    make_problem,
)
from papergym.envs.bandits.lipschitz.instances import INSTANCES, instance_kwargs
from papergym.envs.bandits.lipschitz.oracle import BatchedNonStatLipschitzOracle, NonStatLipschitzOracle

__all__ = [
    "ENV_ID",
    "COMPARE_DEFAULTS",
    "INSTANCES",
    "instance_kwargs",
    "make_problem",
    "NonStatLipschitzEnv",
    "NonStatLipschitzVectorEnv",
    "NonStatLipschitzOracle",
    "BatchedNonStatLipschitzOracle",
]
