"""The Gymnasium envs of ``NoiseFreeGPBandit-v0``: :class:`NoiseFreeGPBanditEnv` (one run) and
:class:`NoiseFreeGPBanditVectorEnv` (``num_envs`` seeds stepped together in numpy).

Environment of S. Iwazaki, *Gaussian Process Upper Confidence Bound Achieves Nearly-Optimal Regret in
Noise-Free Gaussian Process Bandits* (arXiv 2502.19006, NeurIPS 2025); see docs/papers/noise-free-gp.md.

* ``reset(seed=None)`` draws the run seed from ``self.np_random`` (Gymnasium's convention), as
  ``NonStatLipschitz-v0`` does. Vector env ``info``: ``{"t": (n,) ints, "_t": (n,) True}``.
* Rewards, means and regrets all come from one evaluator
  (:func:`~papergym.envs.bandits.gp.kernels.kernel_expansion`), so rows of the vector env are bit-identical
  to single envs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from papergym.envs.bandits.base import BanditEnv, BanditVectorEnv, check_render_mode
from papergym.envs.bandits.gp.actions import as_index, as_indices, as_points
from papergym.envs.bandits.gp.config import ENV_ID, make_config, obs_space, problem_spec
from papergym.envs.bandits.gp.instances import Instance, get_instance
from papergym.envs.bandits.gp.kernels import kernel_expansion
from papergym.envs.bandits.gp.oracle import BatchedNoiseFreeGPOracle, NoiseFreeGPOracle
from papergym.validate import positive_int

#: what ``papergym compare`` calls the regret it reports
REGRET_NAME = "cumulative regret"

#: Defaults of ``papergym compare NoiseFreeGPBandit-v0`` (20 seeds; the horizon is the env's
#: own d-dependent preset) [design].
COMPARE_DEFAULTS: dict[str, int] = {"seeds": 20}


class NoiseFreeGPBanditEnv(BanditEnv):
    """Noise-free Gaussian-process bandit on ``[0, 1]^d`` (``NoiseFreeGPBandit-v0``).

    ## Description

    An unknown function ``f : [0, 1]^d -> R`` lies in the RKHS of a known stationary kernel ``k``
    (``k(x, x) = 1``) with known norm bound ``||f||_k <= B``. At round ``t`` the agent queries ``x_t`` and
    observes ``f(x_t)`` exactly (no noise). Every instance is a kernel expansion
    ``f = sum_j a_j k(., z_j)`` whose RKHS norm ``sqrt(a^T K_ZZ a)`` is exactly ``B`` ([design]):

    * ``rkhs-sum`` (default): ``J = n_centres`` centres ``z_j ~ U[0, 1]^d``, ``a ~ N(0, I_J)``, rescaled
      ``a <- a B / sqrt(a^T K_zz a)``.
    * ``gp-interpolant`` (GP sample path): ``y ~ N(0, K_ZZ)`` on the coarse grid ``Z`` with ``n_inducing``
      points per axis, ``f = k_Z(.)^T K_ZZ^{-1} y`` (the interpolant of the sample), rescaled to norm ``B``.

    ## Action Space

    ``action_mode="discrete"`` (default): ``Discrete(N)``, an index into the public candidate set
    ``problem.candidates`` (``N x d``). A Python int, a NumPy integer, or an integer array of shape ``()``
    or ``(1,)`` is accepted; a bool, a float (even integral, or NaN), another shape or an index outside
    ``[0, N)`` raises :class:`~papergym.envs.InvalidActionError` (rules ``dtype``, ``finite``, ``shape``,
    ``range``). ``action_mode="continuous"``: ``Box(0, 1, (d,), float64)``, any point (float or integer
    array of shape ``(d,)``, float32 included; rules ``dtype``, ``shape``, ``finite``, ``bounds``); float64
    because noise-free regrets reach ``1e-10``, far below float32's resolution. An invalid action leaves
    the env unchanged (:meth:`validate_action`).

    ## Observation Space

    ``Box(-B, B, (1,), float64)`` (widened by ``1e-9`` relative for round-off): ``f(x_t)`` (``0`` after
    ``reset``); ``|f(x)| <= ||f||_k sqrt(k(x, x)) = B``.

    ## Rewards

    ``f(x_t)`` exactly [paper]. In discrete mode ``f`` is precomputed on the candidates at ``reset`` and a
    step is a lookup.

    ## Starting State

    ``reset(seed=s)`` draws the function from ``run_seeds(s).instance`` only (same seed, same function, bit
    for bit); the candidate set and the ``ProblemSpec`` do not depend on the seed. ``reset()`` without a
    seed draws the run seed from ``self.np_random`` (fresh entropy if the env was never seeded).

    ## Episode End

    Never terminated; truncated at ``t = T`` (``horizon``). Stepping after that (or before ``reset``) raises
    :class:`gymnasium.error.ResetNeeded`. ``info = {"t": t}`` (rounds played); nothing privileged.

    ## Arguments

    * ``instance`` (``"rkhs-sum"`` | ``"gp-interpolant"``, default ``"rkhs-sum"``).
    * ``horizon`` (int or None): ``T``; None -> 60 (``d = 1``), 150 (``d = 2``), 200 (``d >= 3``) [design].
    * ``d`` (int, default 1): dimension of the domain ``[0, 1]^d``.
    * ``kernel`` (default ``"se"``): one of :data:`KERNELS` (``se``, ``matern-0.5``, ``matern-1.5``,
      ``matern-2.5``).
    * ``lengthscale`` (float or None): ``l``; None -> 0.1 (``d = 1``), 0.2 (``d >= 2``) [design].
    * ``B`` (float, default 1.0): the RKHS norm of ``f`` (exact) and the bound published to agents.
    * ``action_mode`` (``"discrete"`` | ``"continuous"``, default ``"discrete"``).
    * ``candidate_set`` (``"auto"`` | ``"grid"`` | ``"sobol"`` | ``"uniform"``), ``n_candidates`` (int or
      None), ``candidate_seed`` (int, default 0): see :func:`make_candidates`. Defaults: 1000 equispaced
      points (``d = 1``), a 50 x 50 grid (``d = 2``), 2048 scrambled Sobol points (``d >= 3``) [design].
    * ``n_centres`` (int, default 20): ``J`` of ``rkhs-sum`` [design]; ignored by ``gp-interpolant``.
    * ``n_inducing`` (int or None): points per axis of the ``gp-interpolant`` grid; None -> 15 / 7 / 5 for
      ``d = 1 / 2 / >= 3`` [design], lowered until ``K_ZZ`` is well conditioned
      (:mod:`~papergym.envs.bandits.gp.config`);
      ignored by ``rkhs-sum``.

    ``resolved_kwargs`` gives the values used for the None defaults (``horizon``, ``lengthscale``,
    ``n_candidates``, ``n_inducing``; the latter None for ``rkhs-sum``).

    ## Oracle and regret

    ``env.unwrapped.oracle`` (:class:`NoiseFreeGPOracle`, valid after ``reset``): ``mean_reward(a, t) =
    f(x_a)``, ``optimal_value(t) = f*``, ``regret(a, t) = f* - f(x_a) >= 0``, ``simple_regret(actions)``
    (best observed point), ``values(X)``, ``f_candidates``, ``best_action()``, ``maximiser``,
    ``rkhs_norm()`` (``= B``), ``certificate``. Discrete mode: ``f*`` is the maximum over the candidates
    (exact). Continuous mode: ``f*`` from a dense grid and an L-BFGS-B polish, with a certified bound
    ``certificate >= sup f - f*`` (:mod:`~papergym.envs.bandits.gp.instances`).
    Cumulative regret ``R_T = sum_t f* - f(x_t)`` is
    computed from ``f``, never from observations (:class:`~papergym.envs.wrappers.RegretRecorder`).
    ``env.unwrapped.problem`` is the public :class:`~papergym.envs.spec.ProblemSpec`: ``d``, ``kernel``,
    ``lengthscale``, ``B``, ``candidates``, ``action_mode`` and the horizon -- never the family.

    ## Paper

    S. Iwazaki, *Gaussian Process Upper Confidence Bound Achieves Nearly-Optimal Regret in Noise-Free
    Gaussian Process Bandits*, arXiv 2502.19006, NeurIPS 2025 (no code released). GP-UCB with the constant
    width ``beta^{1/2} = B`` has ``R_T = O(1)`` for SE and Matern ``d < nu``, ``O(ln^2 T)`` for ``d = nu``,
    ``O~(T^{(d - nu)/d})`` for ``d > nu``.

    ## Version History

    * v0: initial version.
    """

    _ENV_ID = ENV_ID

    def __init__(
        self,
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
        render_mode: str | None = None,
    ):
        check_render_mode(ENV_ID, render_mode)
        cfg = make_config(
            instance,
            horizon,
            d,
            kernel,
            lengthscale,
            B,
            action_mode,
            candidate_set,
            n_candidates,
            candidate_seed,
            n_centres,
            n_inducing,
        )
        self._setup(cfg, problem_spec(cfg))
        self.candidates = cfg.candidates
        self._discrete = cfg.discrete
        self._N = cfg.n_candidates
        self._inst: Instance | None = None
        self._t = 0

    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        """Values used for the None defaults: ``horizon``, ``lengthscale``, ``n_candidates``,
        ``n_inducing`` (None for ``rkhs-sum``, which does not use it)."""
        return self.cfg.resolved_kwargs

    @property
    def t(self) -> int:
        """Rounds played since the last ``reset`` (0 before round 1)."""
        return self._t

    def _start(self, run_seed: int) -> None:
        self._inst = get_instance(self.cfg, run_seed)
        self._oracle = NoiseFreeGPOracle(self.cfg, self._inst, run_seed)
        self._t = 0

    def validate_action(self, action: Any) -> int | np.ndarray:
        """The action as a candidate index (discrete) or a float64 ``(d,)`` point (continuous), or raise
        :class:`InvalidActionError` naming the rule broken. Does not change the env."""
        if self._discrete:
            return as_index(action, self._N)
        return as_points(action, (self.d,))

    def _advance(self, action: Any) -> tuple[np.ndarray, float]:
        inst = self._inst
        if self._discrete:
            f = float(inst.f_candidates[as_index(action, self._N)])
        else:
            x = as_points(action, (self.d,))
            f = float(kernel_expansion(self.cfg.kernel, self.cfg.lengthscale, x[None, :], inst.Z, inst.a)[0])
        self._t += 1
        return np.array([f]), f


class NoiseFreeGPBanditVectorEnv(BanditVectorEnv):
    """``num_envs`` independent runs of :class:`NoiseFreeGPBanditEnv` stepped together in numpy.

    ``reset(seed=[s_0, .., s_{n-1}])`` (or an int ``s`` -> ``s, s+1, ..``; ``None`` -> seeds drawn from
    ``self.np_random``); ``step(actions)`` with ``(n,)`` candidate indices (discrete) or ``(n, d)`` points
    (continuous) -> observations ``(n, 1)``, rewards ``(n,)``, terminations ``(n,)`` (always False),
    truncations ``(n,)`` (True at ``t = T``), ``info = {"t": (n,) ints, "_t": mask}``. Row ``i`` is
    bit-identical to the single env reset with seed ``s_i``. ``.oracle`` is a
    :class:`BatchedNoiseFreeGPOracle`, ``.oracles`` the per-run oracles, ``.problem`` the ``ProblemSpec``
    of one run, ``.t`` the rounds played. No autoreset (``AutoresetMode.DISABLED``). Kwargs as
    :class:`NoiseFreeGPBanditEnv`.
    """

    _ENV_ID = ENV_ID

    def __init__(
        self,
        num_envs: int = 1,
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
        render_mode: str | None = None,
    ):
        check_render_mode(ENV_ID, render_mode)
        n = positive_int(num_envs, "num_envs", integral_float=True)
        cfg = make_config(
            instance,
            horizon,
            d,
            kernel,
            lengthscale,
            B,
            action_mode,
            candidate_set,
            n_candidates,
            candidate_seed,
            n_centres,
            n_inducing,
        )
        if cfg.discrete:
            action_space = spaces.MultiDiscrete(np.full(n, cfg.n_candidates, dtype=np.int64))
        else:
            action_space = spaces.Box(0.0, 1.0, (n, cfg.d), np.float64)
        self._setup(n, cfg, problem_spec(cfg), action_space, obs_space(cfg.B, (n, 1)))
        self.candidates = cfg.candidates
        self._discrete = cfg.discrete
        self._t = 0

    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        return self.cfg.resolved_kwargs

    @property
    def t(self) -> int:
        return self._t

    def _start(self, seeds: list[int]) -> None:
        oracles = [NoiseFreeGPOracle(self.cfg, get_instance(self.cfg, s), s) for s in seeds]
        self._oracle = BatchedNoiseFreeGPOracle(self.cfg, oracles)
        self._t = 0

    def validate_action(self, actions: Any) -> np.ndarray:
        """``(n,)`` indices or float64 ``(n, d)`` points, or :class:`InvalidActionError` (state unchanged)."""
        if self._discrete:
            return as_indices(actions, (self.num_envs,), self.cfg.n_candidates)
        return as_points(actions, (self.num_envs, self.d), "actions")

    def _advance(self, actions: Any) -> tuple[np.ndarray, np.ndarray]:
        r = self._oracle._f(actions)
        self._t += 1
        return r.reshape(self.num_envs, 1).copy(), r
