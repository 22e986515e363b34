"""Noise-free Gaussian-process bandit (``NoiseFreeGPBandit-v0``) and the shared GP numerics.

Environment of S. Iwazaki, *Gaussian Process Upper Confidence Bound Achieves Nearly-Optimal Regret in
Noise-Free Gaussian Process Bandits* (arXiv 2502.19006, NeurIPS 2025); see docs/papers/noise-free-gp.md.
An unknown ``f`` with RKHS norm ``||f||_k <= B`` under a known stationary kernel is queried on ``[0, 1]^d``
and observed exactly; the regret is computed from ``f``.

The package, one module per job (each module's docstring documents its part):

``kernels``    :data:`KERNELS`, :func:`kernel_from_distance`, :func:`kernel_matrix`,
               :func:`kernel_lipschitz_profile`, and the one evaluator of kernel expansions
               ``f = sum_j a_j k(., z_j)`` (shared numerics, imported by every GP agent).
``posterior``  :class:`NoiseFreeGP`, the exact noise-free posterior with rank-one Cholesky updates, and
               :func:`dense_posterior`, a dense reference (shared numerics).
``config``     validated kwargs, :func:`make_candidates` (the public candidate set) and
               :func:`make_problem` (the public ``ProblemSpec``); :data:`INSTANCES`, :data:`ACTION_MODES`,
               :data:`CANDIDATE_SETS`: valid values of the string kwargs.
``instances``  each run's hidden function (``rkhs-sum``, ``gp-interpolant``), ``f*`` and its certificate.
``actions``    the action rules (``InvalidActionError`` rules ``dtype``, ``finite``, ``shape``, ``range``,
               ``bounds``).
``oracle``     :class:`NoiseFreeGPOracle` (one run) and :class:`BatchedNoiseFreeGPOracle` (vector env).
``env``        :class:`NoiseFreeGPBanditEnv` (see its docstring for spaces and kwargs) and
               :class:`NoiseFreeGPBanditVectorEnv`; :data:`REGRET_NAME`, :data:`COMPARE_DEFAULTS`.

Everything public is importable from here (``from papergym.envs.bandits.gp import NoiseFreeGP``); the
registered entry points are ``papergym.envs.bandits.gp:NoiseFreeGPBanditEnv`` and
``papergym.envs.bandits.gp:NoiseFreeGPBanditVectorEnv``.
"""

from __future__ import annotations

from papergym.envs.bandits.gp.config import (
    ACTION_MODES,
    CANDIDATE_SETS,
    ENV_ID,
    GP_INTERPOLANT_JITTER,
    GP_INTERPOLANT_MIN_EIG,
    INSTANCES,
    MAX_CANDIDATES,
    MAX_CENTRES,
    make_candidates,
    make_problem,
)
from papergym.envs.bandits.gp.env import (
    COMPARE_DEFAULTS,
    REGRET_NAME,
    NoiseFreeGPBanditEnv,
    NoiseFreeGPBanditVectorEnv,
)
from papergym.envs.bandits.gp.kernels import (
    KERNELS,
    kernel_from_distance,
    kernel_lipschitz_profile,
    kernel_matrix,
)
from papergym.envs.bandits.gp.oracle import BatchedNoiseFreeGPOracle, NoiseFreeGPOracle
from papergym.envs.bandits.gp.posterior import MAX_JITTER, NoiseFreeGP, dense_posterior

__all__ = [
    "KERNELS",
    "kernel_from_distance",
    "kernel_matrix",
    "kernel_lipschitz_profile",
    "NoiseFreeGP",
    "dense_posterior",
    # the environment
    "ENV_ID",
    "INSTANCES",
    "ACTION_MODES",
    "CANDIDATE_SETS",
    "MAX_CANDIDATES",
    "make_candidates",
    "make_problem",
    "NoiseFreeGPBanditEnv",
    "NoiseFreeGPBanditVectorEnv",
    "NoiseFreeGPOracle",
    "BatchedNoiseFreeGPOracle",
    # read from the env's module by the runner and the CLI
    "REGRET_NAME",
    "COMPARE_DEFAULTS",
    # numerical limits
    "MAX_JITTER",
    "MAX_CENTRES",
    "GP_INTERPOLANT_JITTER",
    "GP_INTERPOLANT_MIN_EIG",
]
