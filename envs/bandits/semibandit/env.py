"""The Gymnasium envs of ``MSetSemiBandit-v0``: :class:`MSetSemiBanditEnv` (one run) and
:class:`MSetSemiBanditVectorEnv` (``num_envs`` runs stepped together), and the defaults of ``papergym compare``.

Part of :mod:`papergym.envs.bandits.semibandit` (tags: see docs/conventions.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector.utils import batch_space

from papergym.envs.bandits.base import BanditEnv, BanditVectorEnv, check_render_mode
from papergym.envs.bandits.semibandit.instances import _make_config, _Runs
from papergym.envs.bandits.semibandit.oracle import BatchedMSetSemiBanditOracle, MSetSemiBanditOracle
from papergym.envs.bandits.semibandit.space import ENV_ID, _as_actions, make_problem
from papergym.validate import positive_int

__all__ = ["COMPARE_DEFAULTS", "MSetSemiBanditEnv", "MSetSemiBanditVectorEnv"]

#: what ``papergym compare`` calls the regret it reports
REGRET_NAME = "cumulative pseudo-regret (from means)"

#: Defaults of ``papergym compare MSetSemiBandit-v0`` (20 seeds, n = 10^4) [design].
COMPARE_DEFAULTS: dict[str, Any] = {"seeds": 20, "horizon": 10_000}


# ------------------------------------------------------------------------------------- envs
def _zero_obs(shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    return {"losses": np.zeros(shape), "observed": np.zeros(shape, np.int8)}


class MSetSemiBanditEnv(BanditEnv):
    """m-set semi-bandit with Bernoulli losses (``MSetSemiBandit-v0``).

    ## Description

    ``d`` arms; at round ``t`` the agent picks a set ``A_t`` of exactly ``m`` arms, pays the sum of their
    losses and observes the loss of every chosen arm (semi-bandit feedback) [paper]. An oblivious
    adversary fixes mean losses ``mu_t in [0, 1]^d``; the realised losses are
    ``l_{t,i} = 1{U_{t,i} < mu_{t,i}}``. Instance families (``instance``, ``g = gap``):

    * ``stochastic`` [code]: ``0.5 (1 - g)`` on a hidden optimal m-set, ``0.5 (1 + g)`` elsewhere.
    * ``stochastically-constrained-adversarial`` [code]: the stochastic means plus ``s(t) 0.5 (1 - g)`` on
      every arm, ``s(t) = +1`` if ``floor(ln t / ln 1.1) mod 10 < 5`` else ``-1``: the gaps stay ``g``
      while all means jump between ``{1 - g, 1}`` and ``{0, g}`` in geometrically growing phases
      (designed to break stochastic algorithms).
    * ``oblivious-switching`` [design]: ``n_switches`` distinct switch rounds ``~ U{2..n}``; each segment
      has a fresh random optimal m-set at ``0.5 - g/2``, the others at ``0.5 + g/2``. Scored by the static
      regret against the best fixed set.
    * ``worst-case`` [design]: all means ``0.5`` except a hidden m-set at ``0.5 - epsilon``,
      ``epsilon = 1/4 sqrt(d / (n m))`` by default (lower-bound style; probes the ``sqrt(n m d)`` scaling).

    ## Action Space

    :class:`MSet` ``(d, m)``: ``int8`` 0/1 vectors of length ``d`` with exactly ``m`` ones (``sample()`` is a
    uniform m-subset). Bool, integer or float arrays (or lists) with 0/1 entries are accepted. A wrong
    shape, a non-numeric dtype, NaN/inf, an entry outside ``{0, 1}`` or a set of the wrong size raises
    :class:`~papergym.envs.InvalidActionError` (rules ``shape``, ``dtype``, ``finite``, ``values``, ``size``)
    and leaves the env unchanged (:meth:`validate_action`).

    ## Observation Space

    ``Dict(losses=Box(0, 1, (d,), float64), observed=MultiBinary(d))``: ``losses[i] = l_{t,i}`` (0 or 1) at
    the chosen arms and ``0`` at the others; ``observed`` (``int8``) is the action, the mask of the arms
    whose loss was seen. Zeros after ``reset``. NaN at the unobserved arms would not lie inside
    ``Box(0, 1)`` (``check_env`` would fail), so 0 plus the mask is used.

    ## Rewards

    ``-sum_{i in A_t} l_{t,i}`` (an integer in ``[-m, 0]``). ``U_{t,i}`` are ``d`` uniforms per round from the
    run's noise stream, drawn before and independently of the action (common random numbers across agents).

    ## Starting State

    ``reset(seed=s)`` builds the instance from ``run_seeds(s).instance`` (arm permutation; switch rounds
    and fresh optimal sets) and the noise from ``run_seeds(s).noise``: same seed, same means and losses,
    bit for bit. ``reset()`` without a seed draws the run seed from ``self.np_random``.

    ## Episode End

    Never terminated; truncated at ``t = n`` (``horizon``). Stepping after that (or before ``reset``)
    raises :class:`gymnasium.error.ResetNeeded`. ``info = {"t": t}`` (rounds played); nothing privileged.

    ## Arguments

    * ``instance`` (str, default ``"stochastic"``): one of :data:`INSTANCES`.
    * ``horizon`` (int, default 10,000): ``n`` [design].
    * ``d`` (int, default 10), ``m`` (int, default 3, ``1 <= m <= d``) [design; repository CLI: ``d = 4``].
    * ``gap`` (float in ``(0, 1]``, default 0.2) [design; repository CLI: 0.25]: ``g`` of the stochastic,
      adversarial and switching families (ignored by ``worst-case``).
    * ``n_switches`` (int >= 0, default 4) [design]: switch rounds of ``oblivious-switching`` (at most
      ``n - 1``; ignored by the other families).
    * ``epsilon`` (float in ``(0, 0.5]`` or None, default None) [design]: the ``worst-case`` gap; None ->
      ``min(1/4 sqrt(d / (n m)), 1/2)``; ignored by the other families. ``resolved_kwargs`` reports the
      value used.

    ## Oracle and regret

    ``env.unwrapped.oracle`` (:class:`MSetSemiBanditOracle`, valid after ``reset``): ``mean_losses(t)``,
    ``mean_reward(a, t) = -<mu_t, a>``, ``optimal_value(t)``, ``optimal_set(t)``,
    ``regret(a, t) = <mu_t, a> - min_{|a'|=m} <mu_t, a'> >= 0`` (per-round dynamic), ``best_set()`` (best
    fixed m-set in hindsight of the means: m smallest entries of ``sum_t mu_t``),
    ``static_regret_increment(a, t) = <mu_t, a - best_set()>``, ``static_regret(actions)``,
    ``dynamic_regret(actions)``, ``gaps(t)``, ``min_gap(t)``, ``switch_times()``, ``change_points()``,
    ``realised_cumulative_losses()`` / ``realised_best_set()`` (best set of the realised loss matrix) and
    ``tracks_static_regret`` (True for ``oblivious-switching``, the one family where the dynamic and
    the static regret differ; the paper's regret is the static one). Regret is computed from means, never
    from realised losses (:class:`~papergym.envs.wrappers.RegretRecorder`). ``env.unwrapped.problem`` is the
    public :class:`~papergym.envs.spec.ProblemSpec` (``d``, ``m``, loss range ``[0, 1]``, horizon) --
    never the family.

    ## Paper

    J. Zhan et al., *Follow-the-Perturbed-Leader Approaches Best-of-Both-Worlds for the m-Set Semi-Bandit
    Problems*, arXiv 2504.07307, NeurIPS 2025 (no code). Families from the reference code of Zimmert, Luo,
    Wei (ICML 2019), ``diku-dk/CombSemiBandits`` (``environment.py``), with losses mapped from ``±1`` to
    ``{0, 1}``. FTPL with Fréchet perturbations: ``O(sqrt(n m) (sqrt(d log d) + m^{5/6}))`` adversarial
    regret and logarithmic regret in the stochastic regime.

    ## Version History

    * v0: initial version.
    """

    _ENV_ID = ENV_ID
    _HORIZON_SYMBOL = "n"

    def __init__(
        self,
        instance: str = "stochastic",
        horizon: int = 10_000,
        d: int = 10,
        m: int = 3,
        gap: float = 0.2,
        n_switches: int = 4,
        epsilon: float | None = None,
        render_mode: str | None = None,
    ):
        check_render_mode(ENV_ID, render_mode)
        cfg = _make_config(instance, horizon, d, m, gap, n_switches, epsilon)
        self._setup(cfg, make_problem(cfg.d, cfg.m, cfg.horizon))
        self.m = cfg.m
        self._shape = (self.d,)

    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        """Values used for None defaults: ``{"epsilon": value}`` for ``worst-case``, else ``{}``."""
        return self.cfg.resolved_kwargs

    def _start(self, run_seed: int) -> None:
        self._runs = _Runs(self.cfg, [run_seed])
        self._oracle = MSetSemiBanditOracle(self._runs, 0)

    def _zero_obs(self) -> dict[str, np.ndarray]:
        return _zero_obs(self._shape)

    def validate_action(self, action: Any) -> np.ndarray:
        """The action as an ``int8 (d,)`` 0/1 array, or raise :class:`InvalidActionError` naming the rule
        broken (shape, dtype, finite, values, size). Does not change the env."""
        return _as_actions(action, self._shape, self.m)

    def _advance(self, action: Any) -> tuple[dict[str, np.ndarray], float]:
        a = _as_actions(action, self._shape, self.m)
        losses, rewards = self._runs.step(a.reshape(1, self.d))
        return {"losses": losses[0], "observed": a.copy()}, float(rewards[0])


class MSetSemiBanditVectorEnv(BanditVectorEnv):
    """``num_envs`` independent runs of :class:`MSetSemiBanditEnv` stepped together (numpy + numba).

    ``reset(seed=[s_0, .., s_{n-1}])`` (or an int ``s`` -> ``s, s+1, ..``; ``None`` -> seeds drawn from
    ``self.np_random``); ``step(actions (n, d))`` -> observations ``{"losses": (n, d), "observed": (n, d)}``,
    rewards ``(n,)``, terminations ``(n,)`` (always False), truncations ``(n,)`` (True at ``t = horizon``),
    ``info = {"t": (n,) ints, "_t": mask}``. Row ``i`` is bit-identical to the single env reset with seed
    ``s_i``. ``.oracle`` is a :class:`BatchedMSetSemiBanditOracle`, ``.oracles`` the per-run oracles,
    ``.problem`` the ``ProblemSpec`` of one run, ``.t`` the rounds played. Action space
    :class:`BatchedMSet`; observation space ``batch_space`` of the single one. No autoreset
    (``AutoresetMode.DISABLED``): all runs share the horizon. Kwargs as :class:`MSetSemiBanditEnv`.
    """

    _ENV_ID = ENV_ID
    _HORIZON_SYMBOL = "n"

    def __init__(
        self,
        num_envs: int = 1,
        instance: str = "stochastic",
        horizon: int = 10_000,
        d: int = 10,
        m: int = 3,
        gap: float = 0.2,
        n_switches: int = 4,
        epsilon: float | None = None,
        render_mode: str | None = None,
    ):
        check_render_mode(ENV_ID, render_mode)
        n = positive_int(num_envs, "num_envs")
        cfg = _make_config(instance, horizon, d, m, gap, n_switches, epsilon)
        problem = make_problem(cfg.d, cfg.m, cfg.horizon)
        self._setup(n, cfg, problem, batch_space(problem.action_space, n), batch_space(problem.observation_space, n))
        self.m = cfg.m
        self._shape = (n, self.d)

    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        return self.cfg.resolved_kwargs

    def _start(self, seeds: list[int]) -> None:
        runs = _Runs(self.cfg, seeds)
        self._runs = runs
        self._oracle = BatchedMSetSemiBanditOracle(runs, [MSetSemiBanditOracle(runs, i) for i in range(runs.R)])

    def _zero_obs(self) -> dict[str, np.ndarray]:
        return _zero_obs(self._shape)

    def validate_action(self, actions: Any) -> np.ndarray:
        """``actions`` as ``int8 (n, d)``, or raise :class:`InvalidActionError` (state unchanged)."""
        return _as_actions(actions, self._shape, self.m, "actions")

    def _advance(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray]:
        A = _as_actions(actions, self._shape, self.m, "actions")
        losses, rewards = self._runs.step(A)
        return {"losses": losses, "observed": A.copy()}, rewards
