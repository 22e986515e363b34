"""Two-player entropic zero-sum games as Gymnasium environments
(``docs/papers/best-response-games.md``).

A game object (:class:`~papergym.envs.games.matrix_game.MatrixGame`,
:class:`~papergym.envs.games.markov_game.MarkovGame`) knows its payoff; this module turns it into

* :class:`TwoPlayerEnv` — the single-agent Gymnasium view: ``role="min"`` or ``"max"`` plays against a
  built-in learner (``opponent=``, any learner registered for the env, default ``br-flow``), moving
  simultaneously; ``role="both"`` lets one learner move both players (self-play: the action is the two
  strategies side by side on the last axis, the observation the two feedbacks);
* :class:`GameOracle` — the privileged view: the exact regularised equilibrium, ``NI``, both exploitabilities,
  the single-agent regret (the exploitability of the agent's own strategy, or ``NI`` for ``role="both"``),
  and the episode metrics (gap of the last and of the average iterate, steps to a tolerance, fitted
  linear rate, cycling flag, the contraction bound and flag, a convergence status); the spectrum of the
  linearised best-response map and the Euler rate it predicts.

Every ``ProblemSpec`` (each role) publishes ``params["br_bounds"] = {"self": δ, "cross": c, "l1": ρ₁}``, the
rectangle ``0 ≤ Re λ ≤ δ``, ``|Im λ| ≤ c`` holding the spectrum of the linearised joint best-response map
(:mod:`papergym.envs.games.common`, "Linearisation and the step size"): three scalars from which
``br-flow``'s ``h="auto"`` is derived; they do not reveal the payoff.

The PettingZoo ``ParallelEnv`` on the same games is :mod:`papergym.envs.games.parallel`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from papergym.envs.games.common import euler_factor, feedback_box, gap_metrics, player_blocks, read_action
from papergym.envs.games.render import RENDER_FPS, RENDER_MODES, ansi_frame, can_render, check_render_mode, rgb_frame
from papergym.envs.spec import ProblemSpec, instance_seed
from papergym.validate import one_of, positive_float, positive_int

__all__ = ["TwoPlayerEnv", "GameOracle", "ROLES", "clip_gap"]

ROLES = ("min", "max", "both")


def clip_gap(v: float, what: str) -> float:
    """Round-off negatives above ``−1e−12`` → 0; a larger negative is an oracle bug."""
    if v < -1e-12:
        raise RuntimeError(f"{what} = {v!r} < 0: the oracle's equilibrium is not exact")
    return max(float(v), 0.0)


class GameOracle:
    """Privileged view of one game instance and one role (see the module docstring)."""

    TRACK_LAST_REGRET = True  # the runner records the per-step gap curve (log scale)

    def __init__(self, game: Any, env: TwoPlayerEnv):
        self.game, self._env = game, env
        self.exact = bool(game.exact)
        self._cache: tuple[bytes, float] | None = None

    # the equilibrium is read from the game when first needed (the Markov game solves it lazily)
    @property
    def mu_star(self) -> np.ndarray:
        return self.game.equilibrium[0]

    @property
    def nu_star(self) -> np.ndarray:
        return self.game.equilibrium[1]

    @property
    def value(self) -> float:
        """``V* = F^σ(μ*, ν*)`` (``J`` for the Markov game)."""
        return float(self.game.value_star)

    # ----- game quantities
    def exploitability_min(self, mu: np.ndarray) -> float:
        """``max_ν′ F^σ(μ, ν′) − V*``."""
        return clip_gap(self.game.best_max(mu) - self.value, "exploitability_min")

    def exploitability_max(self, nu: np.ndarray) -> float:
        """``V* − min_μ′ F^σ(μ′, ν)``."""
        return clip_gap(self.value - self.game.best_min(nu), "exploitability_max")

    def equilibrium_gap(self, mu: np.ndarray, nu: np.ndarray) -> float:
        """The Nikaidô–Isoda error ``NI(μ, ν) = max_ν′ F^σ(μ, ν′) − min_μ′ F^σ(μ′, ν) ≥ 0``."""
        return self.exploitability_min(mu) + self.exploitability_max(nu)

    def contraction_bound(self) -> float:
        """``κ``, the finite-set contraction bound (ℓ1; ``κ < 1`` ⇒ every ``h ∈ (0, 1]`` converges geometrically)."""
        return float(self.game.contraction_bound())

    @property
    def contractive(self) -> bool:
        """``κ < 1``: the joint best-response map is a contraction (the finite analogue of the paper's condition)."""
        return self.contraction_bound() < 1.0

    @property
    def certified(self) -> bool:
        """Whether a small ``NI`` certifies convergence to *the* solution: ``κ < 1`` (contraction: unique fixed
        point), or an exact oracle on a game with a unique equilibrium — the matrix game with concave inner
        problems (``a λ_max(P) < σ``, ``b λ_max(Q) < σ′``: ``F^σ`` strongly convex–concave,
        :mod:`~papergym.envs.games.matrix_game`) and the Markov game (unique regularised Shapley equilibrium).
        Neither ⇒ status ``"not contractive"``."""
        return self.contractive or self.exact

    def jacobian_bounds(self) -> dict[str, float]:
        """``{"self": δ, "cross": c, "l1": ρ₁}``: the rectangle holding the spectrum of the linearised Best
        Response map (published to learners as ``ProblemSpec.params["br_bounds"]``; ``br-flow``'s ``h="auto"``)."""
        return dict(self.game.jacobian_bounds())

    def linearised_spectrum(self) -> np.ndarray:
        """Eigenvalues of the Jacobian of the joint best-response map at the equilibrium."""
        return self.game.linearised_spectrum()

    def predicted_rate(self, h: float) -> float:
        """Per-step factor of the ``NI`` error of the Euler-discretised flow with step ``h`` near the equilibrium:
        ``max_j |1 − h + hλ_j|²`` (``NI`` is quadratic in the deviation; compare ``episode_metrics()["rate"]``)."""
        return euler_factor(h, self.linearised_spectrum()) ** 2

    # ----- Oracle protocol (single-agent view of the env's role)
    def _split(self, action: Any) -> tuple[np.ndarray | None, np.ndarray | None]:
        env = self._env
        x = read_action(action, env.action_space.shape, env._blocks, strict=env.strict_simplex)
        g = self.game
        if env.role == "min":
            return x, None
        if env.role == "max":
            return None, x
        return x[..., : g.shape_min[-1]], x[..., g.shape_min[-1] :]

    def regret(self, action: Any, t: int | None = None) -> float:
        mu, nu = self._split(action)
        key = (mu.tobytes() if mu is not None else b"") + b"|" + (nu.tobytes() if nu is not None else b"")
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        r = (self.exploitability_min(mu) if mu is not None else 0.0) + (
            self.exploitability_max(nu) if nu is not None else 0.0
        )
        self._cache = (key, r)
        return r

    def optimal_value(self, t: int | None = None) -> float:
        return -self.value if self._env.role == "min" else self.value if self._env.role == "max" else 0.0

    def mean_reward(self, action: Any, t: int | None = None) -> float:
        """Min role: ``−max_ν′ F^σ(μ, ν′)``; max role: ``min_μ′ F^σ(μ′, ν)``; both: ``−NI``."""
        return self.optimal_value(t) - self.regret(action, t)

    def instance_metrics(self) -> dict[str, Any]:
        jb = self.jacobian_bounds()
        return {
            "value": self.value,
            "contraction_bound": self.contraction_bound(),
            "exact": self.exact,
            "contractive": self.contractive,
            "self_bound": jb["self"],
            "cross_bound": jb["cross"],
            "equilibrium_gap": self.equilibrium_gap(self.mu_star, self.nu_star),
        }

    def status(self, gap_last: float) -> str:
        """``"converged"`` (last gap ``≤ gap_tol`` and :attr:`certified`), ``"not contractive"`` (not certified,
        whatever the gap) or ``"not converged"``."""
        if not self.certified:
            return "not contractive"
        return "converged" if gap_last <= self._env.gap_tol else "not converged"

    def episode_metrics(self) -> dict[str, Any]:
        """Scores of the episode just played: ``gap_last`` / ``gap_avg`` (the regret of the last and of the
        average iterate of the agent), ``ni_last`` / ``ni_avg`` (``NI`` of the joint profile), ``steps_to_tol``,
        ``rate``, ``cycling`` (:func:`~papergym.envs.games.common.gap_metrics`); the instance's ``contraction_bound``
        (``κ``) and ``contractive`` flag (1/0); the convergence ``status`` (:meth:`status`) with its one-hot flags
        ``converged`` and ``not_contractive`` (numeric, so the runner averages them)."""
        env = self._env
        k = len(env._gaps)
        if k == 0:
            return {}
        mu_bar, nu_bar = env._sum_mu / k, env._sum_nu / k
        out = gap_metrics(env._gaps, env.gap_tol)
        if env.role == "min":
            gap_avg = self.exploitability_min(mu_bar)
        elif env.role == "max":
            gap_avg = self.exploitability_max(nu_bar)
        else:
            gap_avg = self.equilibrium_gap(mu_bar, nu_bar)
        out.update(
            {
                "gap_last": float(env._gaps[-1]),
                "gap_avg": gap_avg,
                "ni_last": self.equilibrium_gap(env._mu, env._nu),
                "ni_avg": self.equilibrium_gap(mu_bar, nu_bar),
            }
        )
        status = self.status(out["gap_last"])
        out.update(
            {
                "contraction_bound": self.contraction_bound(),
                "contractive": float(self.contractive),
                "status": status,
                "converged": float(status == "converged"),
                "not_contractive": float(status == "not contractive"),
                "grid_edge": 0.0,
            }
        )
        return out


class LazyParams(Mapping):
    """Read-only problem parameters whose ``lazy`` entries (name -> zero-argument function) are computed when first
    read, then kept: a value that needs the exact equilibrium costs nothing until a learner asks for it."""

    def __init__(self, data: dict[str, Any], **lazy: Callable[[], Any]):
        self._data, self._lazy = dict(data), dict(lazy)
        self._order = list(self._data) + [k for k in self._lazy if k not in self._data]

    def __getitem__(self, key: str) -> Any:
        if key not in self._data and key in self._lazy:
            self._data[key] = self._lazy.pop(key)()
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def __repr__(self) -> str:
        return f"LazyParams({dict(self)!r})"


class TwoPlayerEnv(gym.Env, abc.ABC):
    """Base class of ``EntropicMatrixGame-v0`` and ``EntropicMarkovGame-v0`` (see their docstrings).

    Subclasses set ``ENV_ID`` and implement ``_make_game(seed_seq)`` (the private game of a run seed),
    ``_public(game)`` (extra ``ProblemSpec`` parameters) and ``_feedback_bounds()`` (the observation bounds of
    each player, from public parameters only).

    ``render_mode`` (``None``, ``"ansi"`` or ``"rgb_array"``; :mod:`papergym.envs.games.render`): ``render()``
    returns the text / the ``uint8`` image of the current profile and the gap curve so far; before the first
    ``reset`` it raises ``RuntimeError``; with ``render_mode=None`` it warns and returns ``None`` (Gymnasium's
    convention)."""

    metadata = {"render_modes": RENDER_MODES, "render_fps": RENDER_FPS}
    ENV_ID = ""

    def __init__(
        self,
        *,
        horizon: int,
        role: str = "min",
        opponent: str = "br-flow",
        opponent_kwargs: dict | None = None,
        strict_simplex: bool = False,
        gap_tol: float = 1e-6,
        render_mode: str | None = None,
    ):
        self.render_mode = check_render_mode(render_mode)
        horizon, role = positive_int(horizon, "horizon"), one_of(role, "role", ROLES)
        if not isinstance(opponent, str):
            raise ValueError(f"opponent must be a learner name, got {opponent!r}")
        if opponent_kwargs is not None and not isinstance(opponent_kwargs, dict):
            raise ValueError(f"opponent_kwargs must be a dict, got {opponent_kwargs!r}")
        self.horizon, self.role, self.opponent = horizon, role, opponent
        self.opponent_kwargs = dict(opponent_kwargs or {})
        self.strict_simplex, self.gap_tol = bool(strict_simplex), positive_float(gap_tol, "gap_tol")
        # spaces come from a game built for seed 0 (shapes do not depend on the seed)
        game = self._make_game(instance_seed(0))
        self._set_spaces(game)
        if role != "both":
            from papergym.agents.base import get_agent_info

            try:
                get_agent_info(opponent, self.ENV_ID)
            except KeyError as exc:
                raise ValueError(f"opponent: {exc.args[0]}") from None
        self.game: Any = None
        self.oracle: GameOracle | None = None
        self.problem = self._problem(game)
        self._seed: int | None = None
        self.t = 0

    # ----- construction helpers
    @abc.abstractmethod
    def _make_game(self, seed_seq: np.random.SeedSequence) -> Any:
        """The private game of a run seed."""

    def _public(self, game: Any) -> dict[str, Any]:
        return {}

    def _feedback_bounds(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """``((low, high) of the min player's feedback, (low, high) of the max player's)`` over every profile of
        the simplex, from public parameters only; ``±inf`` where no such bound is known."""
        return (-np.inf, np.inf), (-np.inf, np.inf)

    def _bound_condition(self) -> float:
        """Condition number of the computation of the feedback (round-off widening of its bounds,
        :func:`feedback_box`)."""
        return 1.0

    def _observation_box(self, role: str, shape_min: tuple[int, ...], shape_max: tuple[int, ...]) -> gym.spaces.Box:
        (lo1, hi1), (lo2, hi2) = self._feedback_bounds()
        cond = self._bound_condition()
        if role == "min":
            return feedback_box(shape_min, lo1, hi1, condition=cond)
        if role == "max":
            return feedback_box(shape_max, lo2, hi2, condition=cond)
        lo = np.concatenate([np.full(shape_min, lo1), np.full(shape_max, lo2)], axis=-1)
        hi = np.concatenate([np.full(shape_min, hi1), np.full(shape_max, hi2)], axis=-1)
        return feedback_box(lo.shape, lo, hi, condition=cond)

    def _set_spaces(self, game: Any) -> None:
        sm, sx = tuple(game.shape_min), tuple(game.shape_max)
        if self.role == "min":
            shape = sm
        elif self.role == "max":
            shape = sx
        else:
            shape = sm[:-1] + (sm[-1] + sx[-1],)
        # float64: the equilibrium gaps are measured far below float32 resolution
        self.action_space = gym.spaces.Box(0.0, 1.0, shape, np.float64)
        self.observation_space = self._observation_box(self.role, sm, sx)

    def _player_blocks(self, game: Any, role: str) -> list[dict]:
        mins = ("min", game.shape_min[-1], -1, game.sigma_min, np.exp(game.log_ref_min), game.init_min)
        maxs = ("max", game.shape_max[-1], +1, game.sigma_max, np.exp(game.log_ref_max), game.init_max)
        return player_blocks([mins] if role == "min" else [maxs] if role == "max" else [mins, maxs])

    def _problem(self, game: Any, role: str | None = None) -> ProblemSpec:
        role = role or self.role
        blocks = self._player_blocks(game, role)
        if role == self.role:
            self._blocks = blocks
            space_a, space_o = self.action_space, self.observation_space
        else:  # the built-in opponent's own view
            shape = tuple(game.shape_max if role == "max" else game.shape_min)
            space_a = gym.spaces.Box(0.0, 1.0, shape, np.float64)
            space_o = self._observation_box(role, tuple(game.shape_min), tuple(game.shape_max))
        return ProblemSpec(
            self.ENV_ID,
            space_a,
            space_o,
            self.horizon,
            LazyParams(
                {
                    "role": role,
                    "blocks": blocks,
                    "sigma": game.sigma_min,
                    "sigma_max": game.sigma_max,
                    "mu0": game.init_min,
                    "nu0": game.init_max,
                    **self._public(game),
                },
                br_bounds=lambda: dict(game.jacobian_bounds()),
            ),
        )  # needs the equilibrium: computed when first read

    # ----- protocol
    def validate_action(self, action: Any) -> None:
        read_action(action, self.action_space.shape, self._blocks, strict=self.strict_simplex)

    def _obs(self, g_min: np.ndarray, g_max: np.ndarray) -> np.ndarray:
        if self.role == "min":
            return g_min.copy()
        if self.role == "max":
            return g_max.copy()
        return np.concatenate([g_min, g_max], axis=-1)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        s = seed if seed is not None else int(self.np_random.integers(0, 2**63 - 1))
        if self.game is None or s != self._seed:
            self.game = self._make_game(instance_seed(s))
            self.problem = self._problem(self.game)
            self.oracle = GameOracle(self.game, self)
            self._seed = s
        self.oracle._cache = None
        g = self.game
        self._mu, self._nu = g.init_min.copy(), g.init_max.copy()
        self._sum_mu, self._sum_nu = np.zeros_like(self._mu), np.zeros_like(self._nu)
        self._gaps: list[float] = []
        self.t = 0
        g_min, g_max = g.feedback(self._mu, self._nu)
        self._opp = None
        if self.role != "both":
            from papergym.agents.base import make_agent

            other = "max" if self.role == "min" else "min"
            self._opp = make_agent(
                self.opponent,
                self._problem(g, other),
                seed=np.random.SeedSequence(s, spawn_key=(3,)),  # the opponent's stream
                **self.opponent_kwargs,
            )
            self._opp_obs = g_max.copy() if other == "max" else g_min.copy()
        return self._obs(g_min, g_max), {}

    def step(self, action: Any):
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        x = read_action(action, self.action_space.shape, self._blocks, strict=self.strict_simplex)
        g = self.game
        if self._opp is not None:  # the opponent moves from its own previous feedback (simultaneous play)
            other = "max" if self.role == "min" else "min"
            oshape = g.shape_max if other == "max" else g.shape_min
            y = read_action(
                self._opp.act(self._opp_obs),
                tuple(oshape),
                self._player_blocks(g, other),
                what=f"opponent {self.opponent!r} action",
            )
            mu, nu = (x, y) if self.role == "min" else (y, x)
        else:
            n = g.shape_min[-1]
            mu, nu = x[..., :n], x[..., n:]
        self._gaps.append(self.oracle.regret(x))
        self._mu, self._nu = mu, nu
        self._sum_mu += mu
        self._sum_nu += nu
        self.t += 1
        value = g.value(mu, nu)
        g_min, g_max = g.feedback(mu, nu)
        if self._opp is not None:
            self._opp_obs = g_max.copy() if self.role == "min" else g_min.copy()
            self._opp.update(y, value if self.role == "min" else -value, self._opp_obs)
        reward = value if self.role == "max" else -value
        return self._obs(g_min, g_max), float(reward), False, self.t >= self.horizon, {}

    # ----- rendering
    @property
    def gap_name(self) -> str:
        """What the per-step gap is for this role: an exploitability (one player) or ``NI`` (both)."""
        return {"min": "exploitability of μ", "max": "exploitability of ν", "both": "NI gap"}[self.role]

    def render(self) -> str | np.ndarray | None:
        """The current profile ``(μ_k, ν_k)`` and the gap curve so far: text (``"ansi"``) or an ``H×W×3`` ``uint8``
        image (``"rgb_array"``); ``None`` with a warning when ``render_mode`` is ``None``."""
        if not can_render(self.ENV_ID, self.render_mode, self.game is not None, "profile"):
            return None
        profile = [("μ (min)", self._mu), ("ν (max)", self._nu)]
        title = f"{self.ENV_ID} ({getattr(self, 'instance', '')}, role={self.role})"
        if self.render_mode == "ansi":
            return ansi_frame(title, self.t, self.horizon, self._gaps, self.gap_name, profile)
        return rgb_frame(
            f"{title}  step {self.t}/{self.horizon}", self._gaps, self.gap_name, profile, gap_tol=self.gap_tol
        )
