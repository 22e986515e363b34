"""The Gymnasium envs of ``NonStatLipschitz-v0``: :class:`NonStatLipschitzEnv` (one run) and
:class:`NonStatLipschitzVectorEnv` (``num_envs`` runs stepped together in numpy), the public
:class:`~papergym.envs.spec.ProblemSpec` (:func:`make_problem`) and the defaults of ``papergym compare``.

Part of :mod:`papergym.envs.bandits.lipschitz` (tags: see docs/conventions.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from papergym.envs.bandits.base import BanditEnv, BanditVectorEnv, check_render_mode
from papergym.envs.bandits.lipschitz.instances import ENV_ID, _Config, _eval_kernel, _Instances, _make_config
from papergym.envs.bandits.lipschitz.oracle import (
    BatchedNonStatLipschitzOracle,
    NonStatLipschitzOracle,
    _coerce,
    _invalid,
)
from papergym.envs.spec import NormalStream, ProblemSpec, UniformStream, run_seeds
from papergym.validate import positive_int

__all__ = ["ENV_ID", "COMPARE_DEFAULTS", "make_problem", "NonStatLipschitzEnv", "NonStatLipschitzVectorEnv"]

#: what ``papergym compare`` calls the regret it reports
REGRET_NAME = "cumulative dynamic regret"

#: Defaults of ``papergym compare NonStatLipschitz-v0``: the paper's protocol [code] (two-peak-cyclic,
#: T = 100,000, 100 runs); about 45 s for all agents on 2 cores. ``gym.make`` keeps ``horizon=2**15``.
COMPARE_DEFAULTS: dict[str, Any] = {"horizon": 100_000, "seeds": 100}


def _obs_space(noise: str, shape: tuple[int, ...]) -> spaces.Box:
    """Bernoulli rewards lie in ``[0, 1]``; Gaussian rewards are unclipped, so unbounded."""
    if noise == "bernoulli":
        return spaces.Box(0.0, 1.0, shape, np.float64)
    return spaces.Box(-np.inf, np.inf, shape, np.float64)


def make_problem(d: int = 1, horizon: int = 2**15, noise: str = "bernoulli", sigma: float = 0.1) -> ProblemSpec:
    """The public :class:`ProblemSpec` of NonStatLipschitz-v0 (what an agent may know)."""
    return ProblemSpec(
        env_id=ENV_ID,
        action_space=spaces.Box(0.0, 1.0, (d,), np.float64),
        observation_space=_obs_space(noise, (1,)),
        horizon=int(horizon),
        params={"d": int(d), "lipschitz": 1.0, "norm": "linf", "noise": noise, "sigma": float(sigma)},
    )


# -------------------------------------------------------------------------------------- core
class _Runs:
    """Instances + noise streams of a batch of runs (the shared engine of both envs)."""

    def __init__(self, cfg: _Config, seeds: Sequence[int]):
        self.cfg = cfg
        self.seeds = [int(s) for s in seeds]
        rs = [run_seeds(s) for s in self.seeds]
        self.inst = _Instances(cfg, [r.instance for r in rs])
        stream = UniformStream if cfg.noise == "bernoulli" else NormalStream
        self.noise = stream([r.noise for r in rs])
        self.oracles = [NonStatLipschitzOracle(self.inst, i, s, cfg) for i, s in enumerate(self.seeds)]
        self.bernoulli = cfg.noise == "bernoulli"
        self.sigma = cfg.sigma
        self.t = 0
        # scratch buffers for step
        n = len(self.seeds)
        self._m = np.empty(n)
        self._o = np.empty(n)
        self._r = np.empty(n)
        inst = self.inst
        self._args = (inst.tvec, inst.topt, inst.tmat, inst.starts, inst.pdat, inst.pmax)

    def step(self, X: np.ndarray) -> np.ndarray:
        """Rewards of the validated float64 actions X (n, d) at round t + 1; advances t."""
        t = self.t + 1
        inst = self.inst
        status = _eval_kernel(inst.code, X, inst.all_rows, t, *self._args, self._m, self._o, self._r)
        if status:
            raise _invalid(status, X)
        # noise drawn independently of the action: one U[0,1) (Bernoulli) or one N(0,1) per run and round
        z = self.noise.take1()
        if self.bernoulli:
            r = (z < self._m).astype(np.float64)  # Y = 1{U < mu_t(x)}
        else:
            r = self._m + self.sigma * z  # Y = mu_t(x) + sigma Z, unclipped
        self.t = t
        return r


# --------------------------------------------------------------------------------- single env
class NonStatLipschitzEnv(BanditEnv):
    """Non-stationary Lipschitz bandit on ``[0, 1]^d`` (``NonStatLipschitz-v0``).

    ## Description

    An oblivious adversary fixes mean functions ``mu_t : [0, 1]^d -> [0, 1]``, ``t = 1..T``, each 1-Lipschitz
    (l-inf norm for ``d > 1``) with no constraint linking ``mu_t`` and ``mu_{t+1}``. At round ``t`` the agent
    plays ``x_t`` and observes a noisy reward of mean ``mu_t(x_t)``. Instance families (``instance``):

    * ``two-peak-cyclic`` [code]: ``mu_t = (1 - a_t)(1 - |x - 0.3|) + a_t (1 - |x - 0.7|)``,
      ``a_t = (1 - cos(2 pi c (t - 1)/T))/2`` (``c = cycles``, default 5). ``mu_t`` changes every round;
      the argmax switches ``2c`` times. ``two-peak-cyclic-10``: preset with ``cycles = 10``.
    * ``piecewise-tents`` [design]: ``phases`` phases (equal, or Dirichlet(2,..,2) lengths of at least
      ``min_length`` rounds); phase ``i``: ``0.3 + max(0, h_i - ||x - c_i||_inf)`` (slope 1). Seeded
      (``random_tents=True``, default): ``h_i ~ U[0.2, 0.4]``, ``c_i ~ U[0, 1]^d`` with
      ``||c_i - c_{i-1}||_inf >= 0.4``; ``random_tents=False``: ``h_i = 0.4``, ``c_i`` alternating
      0.2 / 0.8 (``(c_i,..,c_i)`` for ``d > 1``). Every change leaves the old peak a gap ``>= 0.2``, so
      ``L~ = phases - 1`` once phases last a few hundred rounds (the oracle reports the exact value).
    * ``benign-changes`` [design] (``d = 1``): ``0.9 - |x - 0.25|`` on ``[0, 0.5]``,
      ``0.65 + s_t max(0, 0.25 - |x - 0.75|)`` on ``[0.5, 1]``, ``s_t ~ U[-1, 0.6]`` i.i.d.;
      ``L = T`` but ``L~ = 0`` (arm 0.25 is optimal every round). ``static=True``: ``s_t = 0``.
    * ``drifting-peak`` [design]: tent ``0.3 + 0.4 max(0, 1 - ||x - c(t)||/0.4)``,
      ``c(t) = 0.5 + 0.3 sin(2 pi t / period)``, ``period`` default ``T/2``.
    * ``random-lipschitz`` [design] (``d = 1``): ``phases`` Dirichlet(1,..,1) phases (at least
      ``min_length``); each a piecewise-linear function on knots ``k/16`` with ``f(0) ~ U[0.2, 0.8]``,
      increments ``u_k/16``, ``u_k ~ U[-1, 1]``, rescaled to ``0.05 + (f - min f) min(1, 0.9/(max f - min f))``.

    ## Action Space

    ``Box(0, 1, (d,), float64)``: float64 because regrets are resolved far below float32's ``6e-8`` steps
    near the peak; float32 actions (e.g. from an SB3 policy) are accepted as they are. Float or integer
    arrays / lists of shape ``(d,)`` are accepted; a wrong
    shape or dtype, NaN/inf or a coordinate outside ``[0, 1]`` raises
    :class:`~papergym.envs.InvalidActionError` naming the rule, and leaves the env unchanged
    (see :meth:`validate_action`).

    ## Observation Space

    ``Box(0, 1, (1,), float64)`` with ``noise="bernoulli"``, ``Box(-inf, inf, (1,), float64)`` with
    ``noise="gaussian"`` (unclipped): the reward just received (``0`` after ``reset``).

    ## Rewards

    ``noise="bernoulli"`` (default, as in [code]): ``Y_t = 1{U_t < mu_t(x_t)}``, ``U_t ~ U[0, 1)``.
    ``noise="gaussian"``: ``Y_t = mu_t(x_t) + sigma Z_t``, ``Z_t ~ N(0, 1)``, unclipped (clipping would bias
    the means) [design]. ``U_t`` / ``Z_t`` come from the run's noise stream, one per round, drawn
    independently of the action: every agent on the same seed faces the same numbers [design].

    ## Starting State

    ``reset(seed=s)`` builds the instance from ``run_seeds(s).instance`` (phase lengths, tents, ``s_t``,
    random knots; the cyclic, drifting, fixed equal-phase tents and static benign instances do not depend
    on it) and the
    noise from ``run_seeds(s).noise``. Same seed: same instance and noise, bit for bit. ``reset()`` without a
    seed draws the run seed from ``self.np_random`` (fresh entropy if the env was never seeded).

    ## Episode End

    Never terminated; truncated at ``t = T`` (``horizon``). Stepping after that (or before ``reset``) raises
    :class:`gymnasium.error.ResetNeeded`. ``info = {"t": t}`` (rounds played); nothing privileged.

    ## Arguments

    * ``instance`` (str, default ``"two-peak-cyclic"``): one of :data:`INSTANCES`.
    * ``horizon`` (int, default ``2**15``): ``T`` [design; the paper's figure uses 100,000].
    * ``d`` (int, default 1): dimension; ``> 1`` for two-peak-cyclic, piecewise-tents, drifting-peak only.
    * ``noise`` (``"bernoulli"`` | ``"gaussian"``), ``sigma`` (float, default 0.1, Gaussian only).
    * family kwargs (:func:`instance_kwargs`): two-peak-cyclic ``cycles=5`` (``-10`` preset: 10);
      piecewise-tents ``phases=5, random_lengths=False, min_length=256, random_tents=True``;
      benign-changes ``static=False``;
      drifting-peak ``period=None`` (``T/2``); random-lipschitz ``phases=8, min_length=256``.
      All [design] except the two-peak shape [code].

    ## Oracle and regret

    ``env.unwrapped.oracle`` (:class:`NonStatLipschitzOracle`, valid after ``reset``): ``mean_reward(x, t)``,
    ``mean_rewards(xs, t)``, ``optimal_value(t)`` (exact: closed form ``max(1 - 0.4a, 0.6 + 0.4a)`` for
    two-peak, maxima over breakpoints / known peaks otherwise), ``regret(x, t) = mu_t* - mu_t(x) >= 0``,
    ``gaps(xs, t)``, ``best_action(t)``, ``change_points()``, ``argmax_switches()`` and
    ``significant_shifts(grid, length_ratio=2**0.25, c_sig=1.0)`` (``L~`` = its length). Dynamic regret
    ``R_T = sum_t delta_t(x_t)`` is computed from means, never from realised rewards (use
    :class:`~papergym.envs.wrappers.RegretRecorder`). ``env.unwrapped.problem`` is the public
    :class:`~papergym.envs.spec.ProblemSpec` (``d``, ``lipschitz=1``, ``norm="linf"``, ``noise``, ``sigma``,
    horizon) -- never the family.

    ## Paper

    N. Nguyen, S. Gaucher, C. Vernade, *Non-Stationary Lipschitz Bandits*, arXiv 2505.18871, NeurIPS 2025.
    Official code ``nguyenicolas/NS_Lipschitz_Bandits`` (``Environment.py``: two-peak environment).
    Rates: ``E[R_T] = O~(L~^{1/3} T^{2/3})`` with a matching lower bound.

    ## Version History

    * v0: initial version.
    """

    _ENV_ID = ENV_ID

    def __init__(
        self,
        instance: str = "two-peak-cyclic",
        horizon: int = 2**15,
        d: int = 1,
        noise: str = "bernoulli",
        sigma: float = 0.1,
        render_mode: str | None = None,
        **family_kwargs: Any,
    ):
        check_render_mode(ENV_ID, render_mode)
        cfg = _make_config(instance, horizon, d, noise, sigma, **family_kwargs)
        self._setup(cfg, make_problem(cfg.d, cfg.horizon, cfg.noise, cfg.sigma))

    def _start(self, run_seed: int) -> None:
        self._runs = _Runs(self.cfg, [run_seed])
        self._oracle = self._runs.oracles[0]

    def validate_action(self, action: Any) -> np.ndarray:
        """Return ``action`` as a float64 ``(d,)`` array, or raise :class:`InvalidActionError` naming the rule
        broken (shape, dtype, finite, bounds). Does not change the env."""
        a = _coerce(action, (self.d,))
        if not (np.all(a >= 0.0) and np.all(a <= 1.0)):
            raise _invalid(1 if not np.all(np.isfinite(a)) else 2, a)
        return a

    def _advance(self, action: Any) -> tuple[np.ndarray, float]:
        X = _coerce(action, (self.d,)).reshape(1, self.d)
        r = self._runs.step(X)
        return r.copy(), float(r[0])


# --------------------------------------------------------------------------------- vector env
class NonStatLipschitzVectorEnv(BanditVectorEnv):
    """``num_envs`` independent runs of :class:`NonStatLipschitzEnv` stepped together in numpy.

    ``reset(seed=[s_0, .., s_{n-1}])`` (or an int ``s`` -> ``s, s+1, ..``; ``None`` -> seeds drawn from
    ``self.np_random``); ``step(actions (n, d))`` -> observations ``(n, 1)``, rewards ``(n,)``, terminations
    ``(n,)`` (always False), truncations ``(n,)`` (True at ``t = T``), ``info = {"t": (n,) ints, "_t": mask}``.
    Row ``i`` is bit-identical to the single env reset with seed ``s_i``. ``.oracle`` is a
    :class:`BatchedNonStatLipschitzOracle`, ``.oracles`` the per-run oracles, ``.problem`` the
    ``ProblemSpec`` of one run, ``.t`` the rounds played. No autoreset (``AutoresetMode.DISABLED``): all runs
    share ``T``; call ``reset`` to start again. Kwargs as :class:`NonStatLipschitzEnv`.
    """

    _ENV_ID = ENV_ID

    def __init__(
        self,
        num_envs: int = 1,
        instance: str = "two-peak-cyclic",
        horizon: int = 2**15,
        d: int = 1,
        noise: str = "bernoulli",
        sigma: float = 0.1,
        render_mode: str | None = None,
        **family_kwargs: Any,
    ):
        check_render_mode(ENV_ID, render_mode)
        n = positive_int(num_envs, "num_envs", integral_float=True)
        cfg = _make_config(instance, horizon, d, noise, sigma, **family_kwargs)
        self._setup(
            n,
            cfg,
            make_problem(cfg.d, cfg.horizon, cfg.noise, cfg.sigma),
            spaces.Box(0.0, 1.0, (n, cfg.d), np.float64),
            _obs_space(cfg.noise, (n, 1)),
        )

    def _start(self, seeds: list[int]) -> None:
        self._runs = _Runs(self.cfg, seeds)
        self._oracle = BatchedNonStatLipschitzOracle(self._runs.inst, self._runs.oracles)

    def validate_action(self, actions: Any) -> np.ndarray:
        """Return ``actions`` as float64 ``(n, d)``, or raise :class:`InvalidActionError` (state unchanged)."""
        a = _coerce(actions, (self.num_envs, self.d), "actions")
        if not (np.all(a >= 0.0) and np.all(a <= 1.0)):
            raise _invalid(1 if not np.all(np.isfinite(a)) else 2, a)
        return a

    def _advance(self, actions: Any) -> tuple[np.ndarray, np.ndarray]:
        X = _coerce(actions, (self.num_envs, self.d), "actions")
        r = self._runs.step(X)
        return r.reshape(self.num_envs, 1).copy(), r
