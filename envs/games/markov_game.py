"""``EntropicMarkovGame-v0``: a tabular entropy-regularised zero-sum Markov game
(``docs/papers/best-response-games.md``).

## Description
States ``S``, actions ``A`` (min) and ``B`` (max), payoff ``r(s, a, b) ∈ [−1, 1]`` paid by min to max,
transitions ``P(s′|s, a, b)``, discount ``γ``, entropy weight ``τ`` for both players, uniform references and
initial distribution ``ρ_0``. For policies ``μ(·|s)``, ``ν(·|s)`` the regularised value is
``V = (I − γP^{μν})⁻¹ c`` with ``c(s) = μ_sᵀ R_s ν_s + τ KL(μ_s|π) − τ KL(ν_s|ρ)`` and the objective
``J(μ, ν) = ρ_0ᵀ V``. Each step both players submit a policy and observe their ``q`` tables at the new profile:
``q_min(s, a) = Σ_b Q_s(a, b) ν(b|s)``, ``q_max(s, b) = Σ_a μ(a|s) Q_s(a, b)``,
``Q_s(a, b) = r(s, a, b) + γ Σ_{s′} P(s′|s, a, b) V(s′)``. By the performance-difference lemma the flat derivative
of ``J`` in ``μ(·|s)`` is the occupancy weight of ``s`` times ``q_min(s, ·)`` plus the regulariser's derivative;
the weight multiplies both terms, so the per-state Gibbs best response ``Ψ_s = softmax(log π − q_min(s, ·)/τ)``
does not depend on it. This is the tabular policy-space instance of the paper's min–max setting [design].

Instance families (``instance=``; initial policies are per-state Dirichlet(1) draws of the instance
stream, public):

| family | defaults | known answer |
|---|---|---|
| ``random`` | ``S = 3``, ``A = B = 2``, ``r ~ U[−1, 1]``, ``P(·|s,a,b) ~ Dirichlet(1)``, ``γ = 0.9``, ``τ = 1`` | Shapley reference |
| ``random-cold`` | as ``random``, ``τ = 0.1`` (large Euler steps need not converge) | Shapley reference |
| ``random-medium`` | ``S = 10``, ``A = B = 3``, ``τ = 1`` | Shapley reference |
| ``single-state`` | ``S = 1``, ``γ = 0``, ``r`` = rock–paper–scissors | the matrix game: uniform, ``V* = 0`` |

## Action Space
Role ``min``: ``Box(0, 1, (S, A), float64)`` (rows normalised); ``max``: ``(S, B)``; ``both``: ``(S, A + B)``.
NaN/inf, an entry below ``−1e−12`` or an all-zero row raise :class:`~papergym.envs.InvalidActionError`.
The spaces are float64 because the equilibrium gaps are measured far below float32 resolution (down to ~1e−15).

## Observation Space
A ``Box`` of the action's shape: ``q_min``, ``q_max`` or both side by side, every entry in
``[−1 − γ(1 + τ log B)/(1 − γ), 1 + γ(1 + τ log A)/(1 − γ)]`` (widened by ``1e−9`` relative plus the round-off of
the linear solve) — a true bound for every pair of policies in the simplices, vertices included, from public
numbers (``r ∈ [−1, 1]``, ``γ < 1``, ``τ``, ``A``, ``B``): the KL terms of ``c`` are to the *uniform* references,
so ``0 ≤ KL(μ_s|π) ≤ log A`` even on the boundary of the simplex; hence ``c(s) ∈ [−1 − τ log B, 1 + τ log A]``,
``V = Σ_k γᵏ(P^{μν})ᵏc`` within ``1/(1 − γ)`` times that, and ``q`` (an average of ``r + γPV``) within the bound
above. The observation is ``q`` *without* the regulariser's derivative ``τ(log(μ_s/π) + 1)``, which is unbounded
near the boundary.

## Rewards
``−J(μ_k, ν_k)`` (min, both), ``+J`` (max).

## Starting State
The initial policies (``problem.params["mu0"]``, ``["nu0"]``); ``r`` and ``P`` stay private.
``params["br_bounds"] = {"self": 0, "cross": c, "l1": κ}`` with ``c = max_s min(‖ΠQ*_sΠ‖₂, ω(Q*_s))/(2τ)`` bounds the
spectrum of the best-response map linearised at the equilibrium (below); ``br-flow`` derives its default
step from it.

## Episode End
Truncation after ``horizon`` steps (default 300).

## Render
``render_mode=None`` (default), ``"ansi"`` (text: step, gap, the policies rounded, a line per state) or
``"rgb_array"`` (``uint8`` image: the policies as bars grouped by state and the gap curve on a log axis);
:class:`~papergym.envs.games.twoplayer.TwoPlayerEnv`.

## Arguments
``instance``, ``S``, ``A``, ``B``, ``gamma``, ``tau``, ``horizon``, ``role`` (``min`` | ``max`` | ``both``),
``opponent`` (default ``br-flow``), ``opponent_kwargs``, ``strict_simplex``, ``gap_tol`` (1e−6), ``render_mode``.
``papergym compare`` runs ``role="both"`` by default. Paper-scale [design]: ``S = 50``, ``A = B = 5``,
``horizon = 3000``, ``τ ∈ {1, 0.1, 0.01}``.

## Oracle and regret
``env.unwrapped.oracle`` (:class:`~papergym.envs.games.twoplayer.GameOracle`): the equilibrium from
the fixed point of the **regularised Shapley operator** ``(𝒯V)(s) = val_τ(Q_s[V])`` (each ``val_τ`` an exact
entropic matrix game, warm-started), found by safeguarded Newton on ``V − 𝒯V`` (policy iteration for games: each
step evaluates the current per-state equilibrium pair; a step that does not shrink the residual by ``γ`` is
replaced by the value-iteration step ``V ← 𝒯V``, so it never does worse than value iteration) to
``‖𝒯V − V‖∞ ≤ 1e−14·max(1, ‖𝒯V‖∞)``, then ``V*`` by exact evaluation of the equilibrium pair;
``NI(μ, ν) = ρ_0ᵀ(W^μ − U^ν)`` with the best-response values ``W^μ`` (max player's) and ``U^ν`` (min player's) computed
by soft policy iteration (exact policy evaluation by a linear solve, then the soft-greedy policy; quadratic
convergence), checked by one soft Bellman step. Single-agent regret = exploitability of the agent's policy (``NI`` for
``role="both"``). ``contraction_bound()`` is the per-state matrix-game bound ``max_s ω(Q*_s)/τ · ½`` at the
equilibrium's ``Q`` — it ignores how ``Q`` moves with the policies (a diagnostic, not a guarantee);
``contractive`` is ``κ < 1``. The episode ``status`` is ``converged`` when the last ``NI ≤ gap_tol`` (the
regularised equilibrium is unique and ``NI`` exact, so the gap certifies it), else ``not converged``.

**Linearisation.** At the equilibrium the first variation of ``V`` in ``μ(·|s)`` is the occupancy of ``s``
times ``q_min(s, ·) + τ log(μ_s/π)`` (performance difference), which is constant over actions there (the
Gibbs fixed point), so it vanishes on the tangent space; likewise for ``ν``. To first order ``Q`` is frozen
at ``Q*`` and the Jacobian of the joint best-response map is block-diagonal over states, each block the
bilinear matrix-game Jacobian ``[[0, −S_{μ*_s}Q*_s/τ], [S_{ν*_s}Q*_sᵀ/τ, 0]]``: purely imaginary spectrum with
``|λ| ≤ c`` (``linearised_spectrum()``, ``predicted_rate(h)``). Near the equilibrium an Euler step with
``h`` damps the deviation by ``√((1 − h)² + h²λ²)``; ``h = 0.5`` diverges from it once ``λ > √3`` (the cold
instances), while ``br-flow``'s ``h = 1/(1 + c²)`` always converges locally.

## Paper
R.-A. Lascu, M. B. Majka, *Non-convex entropic mean-field optimization via Best Response flow*, NeurIPS 2025
(arXiv 2505.22760): application to policy optimisation in Markov games. The paper regularises a parameter
measure of a mean-field softmax policy; this env is the tabular policy-space version with per-state KL
regularisation [design].

## Version History
* v0: initial version.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""  # noqa: E501 - markdown table rows cannot wrap

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from papergym.envs.games.common import bilinear_jacobian, centred_norm, gibbs, kl, logsumexp, omega, solve_saddle
from papergym.envs.games.matrix_game import RPS
from papergym.envs.games.twoplayer import TwoPlayerEnv
from papergym.validate import in_range, positive_float, positive_int

__all__ = ["EntropicMarkovGameEnv", "MarkovGame", "parallel_env", "INSTANCES"]

ENV_ID = "EntropicMarkovGame-v0"
INSTANCES = ("random", "random-cold", "random-medium", "single-state")
COMPARE_DEFAULTS = {"seeds": 10, "horizon": 300, "env_kwargs_always": {"role": "both"}}
REGRET_NAME = "cumulative equilibrium gap  sum_k gap(profile_k)"

_FAMILIES: dict[str, dict[str, Any]] = {
    "random": {"S": 3, "A": 2, "B": 2, "gamma": 0.9, "tau": 1.0},
    "random-cold": {"S": 3, "A": 2, "B": 2, "gamma": 0.9, "tau": 0.1},
    "random-medium": {"S": 10, "A": 3, "B": 3, "gamma": 0.9, "tau": 1.0},
    "single-state": {"S": 1, "A": 3, "B": 3, "gamma": 0.0, "tau": 1.0},
}


class MarkovGame:
    """One private instance with its exact regularised equilibrium (module docstring)."""

    def __init__(self, r: np.ndarray, P: np.ndarray, gamma: float, tau: float, init: tuple[np.ndarray, np.ndarray]):
        self.r, self.P = np.asarray(r, dtype=float), np.asarray(P, dtype=float)
        S, A, B = self.r.shape
        self.S, self.A, self.B, self.gamma, self.tau = S, A, B, float(gamma), float(tau)
        self.sigma_min = self.sigma_max = self.tau
        self.log_ref_min, self.log_ref_max = np.full(A, -np.log(A)), np.full(B, -np.log(B))
        self.shape_min, self.shape_max = (S, A), (S, B)
        self.rho0 = np.full(S, 1.0 / S)
        self.init_min, self.init_max = init
        self.exact = True

    # ----- the exact equilibrium: solved when first needed, then kept
    @functools.cached_property
    def _solution(self) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray, float]:
        equilibrium, _ = self._shapley()
        # V* by exact policy evaluation of the equilibrium pair (not the iterate's V, which is 1e-13/(1 - gamma) off)
        V_star = self.values(*equilibrium)
        ni = self.best_max(equilibrium[0]) - self.best_min(equilibrium[1])
        if ni > 1e-10:
            raise RuntimeError(f"Markov game equilibrium not certified: NI = {ni:.3g}")
        return equilibrium, V_star, float(self.rho0 @ V_star)

    @property
    def equilibrium(self) -> tuple[np.ndarray, np.ndarray]:
        """The regularised equilibrium ``(μ*, ν*)`` (regularised Shapley iteration, certified by ``NI``)."""
        return self._solution[0]

    @property
    def V_star(self) -> np.ndarray:
        return self._solution[1]

    @property
    def value_star(self) -> float:
        return self._solution[2]

    # ----- evaluation
    def _c_and_P(self, mu: np.ndarray, nu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = (
            np.einsum("sa,sab,sb->s", mu, self.r, nu)
            + self.tau * kl(mu, self.log_ref_min)
            - self.tau * kl(nu, self.log_ref_max)
        )
        Pmn = np.einsum("sa,sb,sabt->st", mu, nu, self.P)
        return c, Pmn

    def values(self, mu: np.ndarray, nu: np.ndarray) -> np.ndarray:
        """``V = (I − γ P^{μν})⁻¹ c``."""
        c, Pmn = self._c_and_P(mu, nu)
        return np.linalg.solve(np.eye(self.S) - self.gamma * Pmn, c)

    def Q(self, V: np.ndarray) -> np.ndarray:
        """``Q_s(a, b) = r(s, a, b) + γ Σ_{s′} P(s′|s, a, b) V(s′)``."""
        return self.r + self.gamma * self.P @ V

    def value(self, mu: np.ndarray, nu: np.ndarray) -> float:
        return float(self.rho0 @ self.values(mu, nu))

    def feedback(self, mu: np.ndarray, nu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        Q = self.Q(self.values(mu, nu))
        return np.einsum("sab,sb->sa", Q, nu), np.einsum("sa,sab->sb", mu, Q)

    # ----- best-response values by soft policy iteration
    def _best_response_values(self, fixed: np.ndarray, player: str) -> np.ndarray:
        """``W^μ`` (``player="max"`` responds to ``μ = fixed``) or ``U^ν`` (``player="min"``)."""
        S = self.S
        if player == "max":
            resp = np.full((S, self.B), 1.0 / self.B)
            pair = lambda y: (fixed, y)
        else:
            resp = np.full((S, self.A), 1.0 / self.A)
            pair = lambda y: (y, fixed)
        W = self.values(*pair(resp))
        for _ in range(200):
            Q = self.Q(W)
            if player == "max":
                cb = np.einsum("sa,sab->sb", fixed, Q)
                resp = gibbs(self.log_ref_max, cb, self.tau, +1)
            else:
                ca = np.einsum("sab,sb->sa", Q, fixed)
                resp = gibbs(self.log_ref_min, ca, self.tau, -1)
            W_new = self.values(*pair(resp))
            done = np.abs(W_new - W).max() <= 1e-14 * max(1.0, np.abs(W).max())
            W = W_new
            if done:
                break
        # one soft Bellman step as a check: W must be its own fixed point
        Q = self.Q(W)
        if player == "max":
            T = self.tau * logsumexp(
                self.log_ref_max + np.einsum("sa,sab->sb", fixed, Q) / self.tau, axis=1
            ) + self.tau * kl(fixed, self.log_ref_min)
        else:
            T = -self.tau * logsumexp(
                self.log_ref_min - np.einsum("sab,sb->sa", Q, fixed) / self.tau, axis=1
            ) - self.tau * kl(fixed, self.log_ref_max)
        if np.abs(T - W).max() > 1e-9 * max(1.0, np.abs(W).max()):
            raise RuntimeError(f"soft policy iteration did not converge (Bellman residual {np.abs(T - W).max():.3g})")
        return W

    def best_max(self, mu: np.ndarray) -> float:
        """``max_ν J(μ, ν) = ρ_0ᵀ W^μ``."""
        return float(self.rho0 @ self._best_response_values(mu, "max"))

    def best_min(self, nu: np.ndarray) -> float:
        """``min_μ J(μ, ν) = ρ_0ᵀ U^ν``."""
        return float(self.rho0 @ self._best_response_values(nu, "min"))

    # ----- equilibrium
    def _shapley_operator(
        self, V: np.ndarray, warm: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(μ, ν, 𝒯V)``: the per-state regularised equilibria of ``Q_s[V]`` (each an exact entropic matrix game,
        warm-started from ``warm``) and their values."""
        S, tau = self.S, self.tau
        Q = self.Q(V)
        mu, nu, TV = np.empty((S, self.A)), np.empty((S, self.B)), np.empty(S)
        for s in range(S):
            m, n = solve_saddle(
                Q[s],
                tau,
                tau,
                self.log_ref_min,
                self.log_ref_max,
                init=None if warm is None else (warm[0][s], warm[1][s]),
            )
            mu[s], nu[s] = m, n
            TV[s] = m @ Q[s] @ n + tau * kl(m, self.log_ref_min) - tau * kl(n, self.log_ref_max)
        return mu, nu, TV

    def _shapley(self, method: str = "newton") -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
        """The regularised equilibrium ``(μ*, ν*)`` and ``𝒯V`` at the last iterate, stopped once
        ``‖𝒯V − V‖∞ ≤ 1e−14·max(1, ‖𝒯V‖∞)``.

        ``method="value-iteration"``: ``V ← 𝒯V`` (a ``γ``-contraction: ~``log(1e−14)/log γ`` operator calls).
        ``method="newton"`` (default): safeguarded Newton on ``V − 𝒯V = 0``. ``𝒯`` is differentiable with
        ``∂𝒯V/∂V = γP^{μν}`` at the per-state equilibria (envelope theorem: ``∂val_τ(Q_s)/∂Q_s = μ_sν_sᵀ``), so
        the Newton step lands on ``V^{μν} = (I − γP^{μν})⁻¹c`` — the value of the current equilibrium pair
        (policy iteration for games). It is accepted only when its residual ``‖𝒯V − V‖∞`` is at most ``γ``
        times the current one (never worse than a value-iteration step); otherwise the value-iteration step
        ``V ← 𝒯V`` is taken. Same fixed point, same stopping rule; locally quadratic, so a handful of
        operator calls instead of hundreds."""
        if method not in ("newton", "value-iteration"):
            raise ValueError(f"method must be 'newton' or 'value-iteration', got {method!r}")
        V = np.zeros(self.S)
        mu, nu, TV = self._shapley_operator(V, None)
        res = np.abs(TV - V).max()
        for _ in range(100_000):
            if res <= 1e-14 * max(1.0, np.abs(TV).max()) or self.gamma == 0:
                break
            if method == "newton":
                Vn = self.values(mu, nu)
                mu_n, nu_n, TV_n = self._shapley_operator(Vn, (mu, nu))
                res_n = np.abs(TV_n - Vn).max()
                if res_n <= self.gamma * res:
                    V, mu, nu, TV, res = Vn, mu_n, nu_n, TV_n, res_n
                    continue
            V = TV
            mu, nu, TV = self._shapley_operator(V, (mu, nu))
            res = np.abs(TV - V).max()
        return (mu.copy(), nu.copy()), TV

    def contraction_bound(self) -> float:
        Q = self.Q(self.V_star)
        return max(omega(Q[s]) for s in range(self.S)) / (2 * self.tau)

    def jacobian_bounds(self) -> dict[str, float]:
        """The spectral rectangle of the Best Response map linearised at the equilibrium (module docstring,
        "Linearisation"): ``δ = 0`` and ``c = max_s min(‖ΠQ*_sΠ‖₂, ω(Q*_s))/(2τ)``."""
        Q = self.Q(self.V_star)
        c = max(min(centred_norm(Q[s]), omega(Q[s])) for s in range(self.S)) / (2 * self.tau)
        return {"self": 0.0, "cross": float(c), "l1": self.contraction_bound()}

    def linearised_spectrum(self) -> np.ndarray:
        """Eigenvalues of the Jacobian of the joint per-state Best Response map at the equilibrium: the union
        over states of the matrix-game Jacobians with the frozen ``Q*_s`` (module docstring)."""
        Q = self.Q(self.V_star)
        mu, nu = self.equilibrium
        return np.concatenate(
            [np.linalg.eigvals(bilinear_jacobian(Q[s], mu[s], nu[s], self.tau, self.tau)) for s in range(self.S)]
        )


class EntropicMarkovGameEnv(TwoPlayerEnv):
    __doc__ = __doc__
    ENV_ID = ENV_ID

    def __init__(
        self,
        instance: str = "random",
        *,
        S: int | None = None,
        A: int | None = None,
        B: int | None = None,
        gamma: float | None = None,
        tau: float | None = None,
        horizon: int = 300,
        role: str = "min",
        opponent: str = "br-flow",
        opponent_kwargs: dict | None = None,
        strict_simplex: bool = False,
        gap_tol: float = 1e-6,
        render_mode: str | None = None,
    ):
        if instance not in _FAMILIES:
            raise ValueError(f"unknown instance {instance!r}; valid instances: {', '.join(INSTANCES)}")
        d = _FAMILIES[instance]
        if instance == "single-state" and any(v is not None for v in (S, A, B, gamma)):
            raise ValueError(
                "single-state fixes S = 1, A = B = 3 (rock-paper-scissors) and gamma = 0; only tau may be set"
            )
        self.instance = instance
        self.S = positive_int(d["S"] if S is None else S, "S", 1)
        self.A = positive_int(d["A"] if A is None else A, "A", 2)
        self.B = positive_int(d["B"] if B is None else B, "B", 2)
        g = in_range(d["gamma"] if gamma is None else gamma, "gamma", 0, 1, low_closed=True)
        self.gamma, self.tau = g, positive_float(d["tau"] if tau is None else tau, "tau")
        super().__init__(
            horizon=horizon,
            role=role,
            opponent=opponent,
            opponent_kwargs=opponent_kwargs,
            strict_simplex=strict_simplex,
            gap_tol=gap_tol,
            render_mode=render_mode,
        )

    def _feedback_bounds(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """Both players' ``q`` lie in ``[−1 − γ(1 + τ log B)/(1 − γ), 1 + γ(1 + τ log A)/(1 − γ)]`` (module
        docstring, "Observation Space")."""
        g, t = self.gamma, self.tau
        lo = -1.0 - g * (1.0 + t * np.log(self.B)) / (1.0 - g)
        hi = 1.0 + g * (1.0 + t * np.log(self.A)) / (1.0 - g)
        return (lo, hi), (lo, hi)

    def _bound_condition(self) -> float:
        """``‖I − γP‖∞‖(I − γP)⁻¹‖∞ ≤ (1 + γ)/(1 − γ)``: the policy evaluation's linear solve."""
        return (1.0 + self.gamma) / (1.0 - self.gamma)

    def _make_game(self, seed_seq: np.random.SeedSequence) -> MarkovGame:
        rng = np.random.default_rng(seed_seq)
        S, A, B = self.S, self.A, self.B
        if self.instance == "single-state":
            r, P = RPS[None].copy(), np.ones((1, 3, 3, 1))
        else:
            r = rng.uniform(-1.0, 1.0, (S, A, B))
            P = rng.dirichlet(np.ones(S), size=(S, A, B))
        init = (rng.dirichlet(np.ones(A), size=S), rng.dirichlet(np.ones(B), size=S))
        return MarkovGame(r, P, self.gamma, self.tau, init)

    def _public(self, game: MarkovGame) -> dict[str, Any]:
        return {"S": game.S, "A": game.A, "B": game.B, "gamma": game.gamma, "tau": game.tau, "rho0": game.rho0}


def parallel_env(**kwargs: Any):
    """The PettingZoo ``ParallelEnv`` (agents ``"min"``, ``"max"``) on this game; kwargs as the Gymnasium env's
    (``role`` / ``opponent`` do not apply). Needs the ``games`` extra (pettingzoo)."""
    from papergym.envs.games.parallel import EntropicParallelEnv

    return EntropicParallelEnv(EntropicMarkovGameEnv, kwargs)
