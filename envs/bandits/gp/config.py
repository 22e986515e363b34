"""Configuration of ``NoiseFreeGPBandit-v0``: validated kwargs (:class:`Config`), the public candidate sets
(:func:`make_candidates`) and the public :class:`~papergym.envs.spec.ProblemSpec` (:func:`make_problem`).

Environment of S. Iwazaki, *Gaussian Process Upper Confidence Bound Achieves Nearly-Optimal Regret in
Noise-Free Gaussian Process Bandits* (arXiv 2502.19006, NeurIPS 2025); see docs/papers/noise-free-gp.md.
Every constant below is [design] (the paper's experimental protocol is unknown; tags: see
docs/conventions.md) and is a constructor kwarg unless said otherwise.

* Candidate sets (:func:`make_candidates`) are public, fixed by ``candidate_set`` / ``n_candidates`` /
  ``candidate_seed`` (never by the run seed: a seed-dependent set would make the ``ProblemSpec``
  seed-dependent), read-only, at most :data:`MAX_CANDIDATES` points. Grid for ``d >= 3`` with
  ``n_candidates=None``: side ``round(2048^(1/d))``.
* ``gp-interpolant`` conditioning: ``K_ZZ`` on the coarse grid must have its smallest eigenvalue above
  ``1e-8`` (:data:`GP_INTERPOLANT_MIN_EIG`), so that ``|a|^2 <= 1e8 ||f||_k^2`` and values / norm are
  accurate. ``n_inducing=None`` takes the preset (15 / 7 / 5 per axis for ``d = 1 / 2 / >= 3``) and lowers it
  until the test passes (e.g. SE, ``d = 1``, ``l = 0.2``: 13 points); an explicit ``n_inducing`` that fails
  it is a ``ValueError`` naming the largest value that works. ``resolved_kwargs`` reports the value used.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from scipy.linalg import cholesky

from papergym.envs.bandits.gp.kernels import KERNELS, check_lengthscale, kernel_matrix
from papergym.envs.spec import ProblemSpec
from papergym.validate import one_of, positive_float, positive_int

ENV_ID = "NoiseFreeGPBandit-v0"

#: Instance families: random kernel expansions with exact RKHS norm ``B``.
INSTANCES: tuple[str, ...] = ("rkhs-sum", "gp-interpolant")
#: ``action_mode`` values: an index into the candidate set, or any point of ``[0, 1]^d``.
ACTION_MODES: tuple[str, ...] = ("discrete", "continuous")
#: ``candidate_set`` values (``auto``: grid for ``d <= 2``, Sobol for ``d >= 3``).
CANDIDATE_SETS: tuple[str, ...] = ("auto", "grid", "sobol", "uniform")

#: Largest candidate set accepted (memory guard: the set, one ``f`` per run, the agents' ``N x t`` state).
MAX_CANDIDATES = 2**21
#: Largest number of expansion centres (``n_centres``, ``n_inducing^d``): ``J x J`` Gram matrices.
MAX_CENTRES = 4096
#: gp-interpolant: jitter of the Cholesky factor of ``K_ZZ`` used to draw ``y ~ N(0, K_ZZ)`` [design].
GP_INTERPOLANT_JITTER = 1e-10
#: gp-interpolant: smallest eigenvalue of ``K_ZZ`` accepted (``a = K_ZZ^{-1} y`` then has
#: ``|a|^2 <= 1e8 a^T K a``: values and norm stay accurate to ~1e-8 relative or better) [design].
GP_INTERPOLANT_MIN_EIG = 1e-8

_PRESET_HORIZON = {1: 60, 2: 150}  # d >= 3: 200 [design]
_PRESET_N_CANDIDATES = {1: 1000, 2: 2500}  # d >= 3: 2048 Sobol points [design]
_PRESET_N_INDUCING = {1: 15, 2: 7}  # d >= 3: 5 per axis [design]


# ------------------------------------------------------------------------------- candidate sets
def unit_grid(d: int, side: int) -> np.ndarray:
    """``side^d`` points, ``side`` equispaced values per axis including 0 and 1; point
    ``(i_1, .., i_d)`` has index ``((i_1 side + i_2) side + ..) + i_d`` (last axis fastest)."""
    g = np.linspace(0.0, 1.0, side)
    return np.stack(np.meshgrid(*([g] * d), indexing="ij"), axis=-1).reshape(-1, d)


def sobol_points(d: int, n: int, seed: int) -> np.ndarray:
    """The first ``n`` points of a scrambled ``d``-dimensional Sobol sequence driven by
    ``np.random.default_rng(seed)``."""
    from scipy.stats import qmc

    gen = np.random.default_rng(seed)  # a Generator: same points under scipy's `seed=` and `rng=` APIs
    try:
        engine = qmc.Sobol(d, scramble=True, rng=gen)
    except TypeError:  # scipy < 1.15
        engine = qmc.Sobol(d, scramble=True, seed=gen)
    with warnings.catch_warnings():
        # n need not be a power of two (then the set is a prefix of the sequence)
        warnings.filterwarnings("ignore", message=".*balance properties.*", category=UserWarning)
        return engine.random(n)


def _grid_side(d: int, n: int) -> int:
    side = int(round(n ** (1.0 / d)))
    for s in (side - 1, side, side + 1):
        if s >= 2 and s**d == n:
            return s
    if d == 1:
        raise ValueError(f"n_candidates must be >= 2 for a grid (it includes 0 and 1), got {n}")
    lo, hi = max(2, int(math.floor(n ** (1.0 / d)))), int(math.ceil(n ** (1.0 / d)))
    hint = sorted({max(2, lo) ** d, max(2, hi) ** d})
    auto = ", or 'auto' with d=2" if d == 2 else ""
    raise ValueError(
        f"n_candidates={n} is not side^{d} for an integer side >= 2, as a {d}-D grid needs "
        f"(candidate_set='grid'{auto}); e.g. {' or '.join(map(str, hint))}, or candidate_set='sobol' / 'uniform'"
    )


@lru_cache(maxsize=64)
def _candidates_cached(kind: str, d: int, n: int, seed: int) -> np.ndarray:
    if kind == "grid":
        C = unit_grid(d, _grid_side(d, n))
    elif kind == "sobol":
        C = sobol_points(d, n, seed)
    else:  # uniform
        C = np.random.default_rng(seed).random((n, d))
    C = np.ascontiguousarray(C, dtype=np.float64)
    C.flags.writeable = False
    return C


def _resolve_candidates(d: int, candidate_set: Any, n_candidates: Any, candidate_seed: Any) -> tuple[str, int, int]:
    kind = one_of(candidate_set, "candidate_set", CANDIDATE_SETS)
    seed = positive_int(candidate_seed, "candidate_seed", 0, integral_float=True)
    if kind == "auto":
        kind = "grid" if d <= 2 else "sobol"
    if n_candidates is None:
        if kind == "grid" and d >= 3:
            n = max(2, int(round(2048 ** (1.0 / d)))) ** d  # side = round(2048^(1/d)) [design]
        else:
            n = _PRESET_N_CANDIDATES.get(d, 2048)
    else:
        n = positive_int(n_candidates, "n_candidates", 1, integral_float=True)
    if n > MAX_CANDIDATES:
        raise ValueError(
            f"n_candidates={n} is too large (at most {MAX_CANDIDATES:,} candidate points); "
            f"use a smaller n_candidates, or action_mode='continuous' for a dense domain"
        )
    if kind == "grid":
        _grid_side(d, n)  # validates n
    return kind, n, seed


def make_candidates(
    d: int = 1, candidate_set: str = "auto", n_candidates: int | None = None, candidate_seed: int = 0
) -> np.ndarray:
    """The public candidate set: a read-only ``(N, d)`` float64 array.

    * ``"grid"``: ``d = 1``: ``N`` equispaced points on ``[0, 1]`` (0 and 1 included); ``d >= 2``: the
      product grid with ``side = N^(1/d)`` points per axis (``N`` must be ``side^d``); default ``N``:
      1000 (``d = 1``), 2500 = 50 x 50 (``d = 2``), ``round(2048^(1/d))^d`` (``d >= 3``).
    * ``"sobol"``: the first ``N`` points of a scrambled Sobol sequence,
      ``scipy.stats.qmc.Sobol(d, scramble=True)`` driven by ``np.random.default_rng(candidate_seed)``
      (default ``N``: 1000 / 2500 / 2048 for ``d = 1 / 2 / >= 3``).
    * ``"uniform"``: ``np.random.default_rng(candidate_seed).random((N, d))``.
    * ``"auto"`` (default): ``"grid"`` for ``d <= 2``, ``"sobol"`` for ``d >= 3``.

    The set is public and the same for every run seed (``candidate_seed`` is a kwarg, never the run seed).
    """
    d = positive_int(d, "d", 1, integral_float=True)
    kind, n, seed = _resolve_candidates(d, candidate_set, n_candidates, candidate_seed)
    return _candidates_cached(kind, d, n, seed)


# ------------------------------------------------------- gp-interpolant: the coarse grid's size
def _min_eig_ok(kernel: str, ell: float, d: int, p: int) -> bool:
    """``lambda_min(K_ZZ) > GP_INTERPOLANT_MIN_EIG`` on the ``p^d`` grid (exact test: Cholesky of
    ``K_ZZ - GP_INTERPOLANT_MIN_EIG I`` succeeds)."""
    Z = unit_grid(d, p)
    K = kernel_matrix(kernel, Z, Z, ell)
    K[np.diag_indices(len(Z))] -= GP_INTERPOLANT_MIN_EIG
    try:
        cholesky(K, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return False
    return True


@lru_cache(maxsize=64)
def _resolve_inducing(kernel: str, ell: float, d: int, n_inducing: int | None) -> int:
    if n_inducing is None:
        p = _PRESET_N_INDUCING.get(d, 5)
        while p > 2 and (p**d > MAX_CENTRES or not _min_eig_ok(kernel, ell, d, p)):
            p -= 1
        if p**d > MAX_CENTRES:
            raise ValueError(
                f"instance='gp-interpolant' needs n_inducing^d <= {MAX_CENTRES} coarse-grid points; "
                f"even n_inducing=2 gives 2^{d} = {2**d}: use instance='rkhs-sum' for d={d}"
            )
    else:
        p = n_inducing
        if p**d > MAX_CENTRES:
            raise ValueError(
                f"n_inducing={p} gives {p}^{d} = {p**d} coarse-grid points for d={d}; at most "
                f"{MAX_CENTRES} are allowed (choose n_inducing <= {int(MAX_CENTRES ** (1 / d) + 1e-9)})"
            )
    if not _min_eig_ok(kernel, ell, d, p):
        ok = [q for q in range(p - 1, 1, -1) if _min_eig_ok(kernel, ell, d, q)]
        hint = f"n_inducing <= {ok[0]} works" if ok else "no n_inducing >= 2 works"
        raise ValueError(
            f"n_inducing={p}: the {p}^{d} coarse grid is too ill-conditioned for kernel={kernel!r}, "
            f"lengthscale={ell:g} (smallest eigenvalue of K_ZZ <= {GP_INTERPOLANT_MIN_EIG:g}); {hint}. "
            f"Use a smaller n_inducing or lengthscale, or instance='rkhs-sum'"
        )
    return p


# -------------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class Config:
    """A validated configuration (everything but the run seed)."""

    instance: str
    horizon: int
    d: int
    kernel: str
    lengthscale: float
    B: float
    action_mode: str
    candidate_kind: str
    n_candidates: int
    candidate_seed: int
    n_centres: int
    n_inducing: int | None  # None for rkhs-sum (not used)

    @property
    def discrete(self) -> bool:
        return self.action_mode == "discrete"

    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        return {
            "horizon": self.horizon,
            "lengthscale": self.lengthscale,
            "n_candidates": self.n_candidates,
            "n_inducing": self.n_inducing,
        }

    @property
    def candidates(self) -> np.ndarray:
        return _candidates_cached(self.candidate_kind, self.d, self.n_candidates, self.candidate_seed)


def make_config(
    instance: str = "rkhs-sum",
    horizon: int | None = None,
    d: int = 1,
    kernel: str = "se",
    lengthscale: float | None = None,
    B: float = 1.0,
    action_mode: str = "discrete",
    candidate_set: str = "auto",
    n_candidates: int | None = None,
    candidate_seed: int = 0,
    n_centres: int = 20,
    n_inducing: int | None = None,
) -> Config:
    """Validate the env kwargs and resolve their None defaults (see
    :class:`~papergym.envs.bandits.gp.env.NoiseFreeGPBanditEnv`)."""
    instance = one_of(instance, "instance", INSTANCES)
    d = positive_int(d, "d", 1, integral_float=True)
    T = _PRESET_HORIZON.get(d, 200) if horizon is None else positive_int(horizon, "horizon", 1, integral_float=True)
    kernel = one_of(kernel, "kernel", KERNELS)
    if lengthscale is None:
        ell = 0.1 if d == 1 else 0.2
    else:
        if isinstance(lengthscale, (bool, np.bool_)) or not isinstance(
            lengthscale, (int, float, np.integer, np.floating)
        ):
            raise ValueError(f"lengthscale must be None or a positive finite number, got {lengthscale!r}")
        ell = check_lengthscale(lengthscale)
    B = positive_float(B, "B")
    action_mode = one_of(action_mode, "action_mode", ACTION_MODES)
    kind, n, cseed = _resolve_candidates(d, candidate_set, n_candidates, candidate_seed)
    J = positive_int(n_centres, "n_centres", 1, maximum=MAX_CENTRES, integral_float=True)
    p = None if n_inducing is None else positive_int(n_inducing, "n_inducing", 2, integral_float=True)
    if instance == "gp-interpolant":
        p = _resolve_inducing(kernel, ell, d, p)
    else:
        p = None  # not used by rkhs-sum
    return Config(instance, T, d, kernel, ell, B, action_mode, kind, n, cseed, J, p)


def obs_space(B: float, shape: tuple[int, ...]) -> spaces.Box:
    """``|f(x)| <= ||f||_k sqrt(k(x, x)) = B`` (Cauchy-Schwarz, ``k(x, x) = 1``); the bound is widened by
    ``1e-9`` relative so that the round-off of ``||f||_k = B`` can never put an observation outside."""
    b = float(B) * (1.0 + 1e-9)
    return spaces.Box(-b, b, shape, np.float64)


def problem_spec(cfg: Config) -> ProblemSpec:
    """The public :class:`~papergym.envs.spec.ProblemSpec` of ``cfg`` (the same for every seed)."""
    C = cfg.candidates
    if cfg.discrete:
        action_space: gym.Space = spaces.Discrete(len(C))
    else:
        action_space = spaces.Box(0.0, 1.0, (cfg.d,), np.float64)
    return ProblemSpec(
        env_id=ENV_ID,
        action_space=action_space,
        observation_space=obs_space(cfg.B, (1,)),
        horizon=cfg.horizon,
        params={
            "d": cfg.d,
            "kernel": cfg.kernel,
            "lengthscale": cfg.lengthscale,
            "B": cfg.B,
            "candidates": C,
            "action_mode": cfg.action_mode,
        },
    )


def make_problem(
    d: int = 1,
    kernel: str = "se",
    lengthscale: float | None = None,
    B: float = 1.0,
    horizon: int | None = None,
    action_mode: str = "discrete",
    candidate_set: str = "auto",
    n_candidates: int | None = None,
    candidate_seed: int = 0,
) -> ProblemSpec:
    """The public :class:`~papergym.envs.spec.ProblemSpec` of NoiseFreeGPBandit-v0 (what an agent may
    know): spaces, ``horizon`` and ``params = {d, kernel, lengthscale, B, candidates, action_mode}``.
    ``None`` defaults are resolved as in :class:`NoiseFreeGPBanditEnv`; the same for every seed."""
    cfg = make_config(
        horizon=horizon,
        d=d,
        kernel=kernel,
        lengthscale=lengthscale,
        B=B,
        action_mode=action_mode,
        candidate_set=candidate_set,
        n_candidates=n_candidates,
        candidate_seed=candidate_seed,
    )
    return problem_spec(cfg)
