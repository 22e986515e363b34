"""``EntropicMatrixGame-v0``: two-player entropic zero-sum matrix games
(``docs/papers/best-response-games.md``).

## Description
The min player picks ``μ ∈ Δ_A``, the max player ``ν ∈ Δ_B``; the payoff is

``F^σ(μ, ν) = μᵀGν − (a/2) μᵀPμ + (b/2) νᵀQν + σ KL(μ|π) − σ′ KL(ν|ρ)``

(``P``, ``Q`` symmetric PSD: non-convex in ``μ``, non-concave in ``ν``; ``π``, ``ρ`` uniform). Each step both
players move simultaneously and observe their **first variation** at the new profile:
``g_μ = Gν − aPμ`` (min) and ``g_ν = Gᵀμ + bQν`` (max). The Best Response flow (``br-flow``) iterates the Gibbs
maps ``Ψ = softmax(log π − g_μ/σ)``, ``Φ = softmax(log ρ + g_ν/σ′)``.

Instance families (``instance=``; the initial profile ``(μ_0, ν_0)`` is a Dirichlet(1) draw of the instance
stream, public):

| family | data | defaults | known answer |
|---|---|---|---|
| ``rps`` | rock–paper–scissors ``G``, ``P = Q = I`` | ``a = b = 0``, ``σ = σ′ = 1`` | uniform/uniform, ``V* = (b − a)/6``, ``κ = 0.75`` |
| ``rps-cold`` | as ``rps`` | ``σ = σ′ = 0.1`` | same equilibrium; ``κ = 7.5``: ``h = 1`` cycles |
| ``rps-nonconvex`` | as ``rps`` | ``a = b = 0.5`` | uniform, ``V* = 0``, ``κ = 1`` (borderline) |
| ``random`` | ``G_ij ~ U[−g, g]``, ``P = Q = I`` | ``A = B = 5``, ``g = 0.5``, ``a = b = 0.5``, ``σ = σ′ = 1`` | unique saddle; ``κ ≤ 0.75`` |

The constructor rejects ``a λ_max(P) ≥ σ`` or ``b λ_max(Q) ≥ σ′`` (the inner problems would not be
concave) unless ``allow_nonconvex_inner=True``: inner problems are then solved by a 64-start multistart
and ``oracle.exact`` is ``False``.

## Action Space
Role ``min``: ``Box(0, 1, (A,), float64)``; ``max``: ``(B,)``; ``both``: ``(A + B,)`` (the two strategies side by
side). Non-negative weights, normalised per player; NaN/inf, an entry below ``−1e−12`` or a player's weights
all zero raise :class:`~papergym.envs.InvalidActionError`; ``strict_simplex=True`` also rejects
``|Σw − 1| > 1e−6``. The spaces are float64 because the equilibrium gaps are measured far below float32
resolution (down to ~1e−15).

## Observation Space
A ``Box`` of the action's shape: ``g_μ`` (min), ``g_ν`` (max) or both, at ``(μ_k, ν_k)``; after ``reset`` at
``(μ_0, ν_0)``. Its bounds hold for every profile of the simplices (every valid action, vertices included) and
use public numbers only: ``|G_ij| ≤ ḡ`` (``ḡ = 1`` for the RPS families, ``g`` for ``random``) and ``a < σ``,
``b < σ′`` (enforced by the constructor; ``P = Q = I``), so ``g_μ = Gν − aμ ∈ [−ḡ − σ, ḡ]`` and
``g_ν = Gᵀμ + bν ∈ [−ḡ, ḡ + σ′]``, each widened by ``1e−9`` relative for round-off. The observation is the
first variation of the payoff *without* the entropy term, whose derivative ``σ(log(μ/π) + 1)`` would be
unbounded near the simplex boundary. With ``allow_nonconvex_inner=True`` the side that depends on ``a`` (low
of ``g_μ``) or ``b`` (high of ``g_ν``) is infinite: ``a``, ``b`` are then unbounded and private.

## Render
``render_mode=None`` (default), ``"ansi"`` (text: step, gap, the profile rounded) or ``"rgb_array"`` (``uint8``
image: the profile as bars and the gap curve on a log axis); :class:`~papergym.envs.games.twoplayer.TwoPlayerEnv`.

## Rewards
``−F^σ(μ_k, ν_k)`` for ``min`` and ``both``, ``+F^σ(μ_k, ν_k)`` for ``max``.

## Starting State
``(μ_0, ν_0)`` in ``problem.params`` (``mu0``, ``nu0`` and the ``blocks``); ``G`` (random family), ``P``, ``Q``,
``a``, ``b`` stay private. ``params["br_bounds"]`` publishes three scalars, the rectangle ``0 ≤ Re λ ≤ δ``,
``|Im λ| ≤ c`` holding the spectrum of the linearised joint best-response map (``δ = max(a λ_max(ΠPΠ)/(2σ),
b λ_max(ΠQΠ)/(2σ′))``, ``c = min(‖ΠGΠ‖₂/(2√(σσ′)), ρ₁)``, ``ρ₁`` the weighted ℓ1 bound;
:mod:`papergym.envs.games.common`), from which ``br-flow`` derives its default step.

## Episode End
Truncation after ``horizon`` steps (default 500).

## Arguments
``instance``, ``a``, ``b``, ``sigma``, ``sigma_max`` (``σ′``), ``A``, ``B``, ``g`` (random family), ``horizon``,
``role`` (``min`` | ``max`` | ``both``, default ``min``), ``opponent`` (learner name of the built-in opponent,
default ``br-flow``), ``opponent_kwargs``, ``strict_simplex``, ``gap_tol`` (1e−6, for ``steps_to_tol``),
``allow_nonconvex_inner``, ``render_mode``. ``papergym compare`` runs ``role="both"`` by default: every learner plays
itself, which is the dynamics the paper studies. Paper-scale [design]: ``random`` with ``A = B = 50``,
``horizon = 5000``, ``σ ∈ {1, 0.1, 0.01}``.

## Oracle and regret
``env.unwrapped.oracle`` (:class:`~papergym.envs.games.twoplayer.GameOracle`): the equilibrium ``(μ*, ν*)``
(damped best-response iteration, then Newton on the fixed-point residual; certified ``NI ≤ 1e−12``),
``value = V*``, ``equilibrium_gap(μ, ν) = NI``, ``exploitability_min``/``exploitability_max`` (sum = NI),
``contraction_bound() = κ``, ``contractive`` (``κ < 1``), ``jacobian_bounds()``, ``linearised_spectrum()`` (the
Jacobian of ``(Ψ, Φ)`` at the equilibrium) and ``predicted_rate(h)`` (``max_j |1 − h + hλ_j|²``, the Euler factor
of ``NI`` near the equilibrium). Single-agent regret: the exploitability of the agent's strategy (``NI`` for
``role="both"``) — the per-step gap; the runner reports its cumulative sum, the last and average-iterate
gaps, steps to ``gap_tol``, the fitted linear rate, a cycling flag, ``κ``, the ``contractive`` flag and a
``status``: ``converged`` (last gap ``≤ gap_tol``, certified by ``κ < 1`` or by the unique equilibrium of a
strongly convex–concave ``F^σ``), ``not converged``, or ``not contractive`` (``allow_nonconvex_inner`` with
``κ ≥ 1``: no certificate, never reported converged).

## Paper
R.-A. Lascu, M. B. Majka, *Non-convex entropic mean-field optimization via Best Response flow*, NeurIPS
2025 (arXiv 2505.22760), the min–max extension; predecessor arXiv 2306.03033 (convex–concave case, NI error).

## Version History
* v0: initial version.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""  # noqa: E501 - markdown table rows cannot wrap

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.envs.games.common import (
    bilinear_jacobian,
    gibbs,
    jacobian_bounds,
    kl,
    logsumexp,
    omega,
    saddle_residual,
    solve_saddle,
)
from papergym.envs.games.twoplayer import TwoPlayerEnv
from papergym.validate import positive_float, positive_int

__all__ = ["EntropicMatrixGameEnv", "MatrixGame", "parallel_env", "INSTANCES", "RPS"]

ENV_ID = "EntropicMatrixGame-v0"
INSTANCES = ("rps", "rps-cold", "rps-nonconvex", "random")
#: ``horizon`` 1000: ``rps-cold``'s certified step (``h = 1/(1 + c²) ≈ 0.0175``) needs ≈ 560 steps to a gap of 1e−6
COMPARE_DEFAULTS = {"seeds": 10, "horizon": 1000, "env_kwargs_always": {"role": "both"}}
REGRET_NAME = "cumulative equilibrium gap  sum_k gap(profile_k)"
RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])

# family -> defaults
_FAMILIES: dict[str, dict[str, Any]] = {
    "rps": {"a": 0.0, "b": 0.0, "sigma": 1.0, "sigma_max": 1.0},
    "rps-cold": {"a": 0.0, "b": 0.0, "sigma": 0.1, "sigma_max": 0.1},
    "rps-nonconvex": {"a": 0.5, "b": 0.5, "sigma": 1.0, "sigma_max": 1.0},
    "random": {"a": 0.5, "b": 0.5, "sigma": 1.0, "sigma_max": 1.0, "A": 5, "B": 5, "g": 0.5},
}


def _maximise_entropic(
    lin: np.ndarray,
    c: float,
    Q: np.ndarray,
    T: float,
    log_ref: np.ndarray,
    multistart: np.random.Generator | None = None,
) -> tuple[float, np.ndarray]:
    """``max_x xᵀlin + (c/2) xᵀQx − T KL(x|ref)`` over the simplex → ``(value, argmax)``.

    ``c = 0``: closed form ``T log Σ ref e^{lin/T}``. ``c > 0`` with ``c λ_max(Q) < T`` (strictly concave):
    the first-order condition ``x = softmax(log ref + (lin + cQx)/T)`` by damped fixed-point iteration
    (factor ``c ω(Q)/(2T)``). ``multistart``: 64 Dirichlet(1) starts, the best stationary point is kept."""

    def val(x):
        return float(x @ lin + 0.5 * c * x @ Q @ x - T * kl(x, log_ref))

    if c == 0:
        x = gibbs(log_ref, lin, T, +1)
        return float(T * logsumexp(log_ref + lin / T)), x
    k = c * omega(Q) / (2 * T)
    h = 1.0 if k < 1 else 1.0 / (1.0 + k)
    starts = [gibbs(log_ref, lin, T, +1)]
    if multistart is not None:
        starts += list(multistart.dirichlet(np.ones(lin.size), size=63))
    best = (-np.inf, starts[0])
    for x in starts:
        for _ in range(100_000):
            y = gibbs(log_ref, lin + c * (Q @ x), T, +1)
            d = np.abs(y - x).sum()
            x = (1 - h) * x + h * y
            if d <= 1e-15:
                break
        v = val(x)
        if v > best[0]:
            best = (v, x)
    return best


class MatrixGame:
    """One private instance (``G``, ``P``, ``Q``, ``a``, ``b``, temperatures) with its exact equilibrium."""

    def __init__(
        self,
        G: np.ndarray,
        *,
        a: float,
        b: float,
        sigma: float,
        sigma_max: float,
        P: np.ndarray | None = None,
        Q: np.ndarray | None = None,
        init: tuple[np.ndarray, np.ndarray],
        exact_inner: bool = True,
        seed_seq: np.random.SeedSequence | None = None,
    ):
        self.G = np.asarray(G, dtype=float)
        A, B = self.G.shape
        self.P = np.eye(A) if P is None else np.asarray(P, dtype=float)
        self.Q = np.eye(B) if Q is None else np.asarray(Q, dtype=float)
        self.a, self.b = float(a), float(b)
        self.sigma_min, self.sigma_max = float(sigma), float(sigma_max)
        self.log_ref_min, self.log_ref_max = np.full(A, -np.log(A)), np.full(B, -np.log(B))
        self.shape_min, self.shape_max = (A,), (B,)
        self.init_min, self.init_max = init
        self.exact = bool(exact_inner)
        self._ms = np.random.default_rng(seed_seq) if not exact_inner else None
        self.equilibrium = solve_saddle(
            self.G,
            self.sigma_min,
            self.sigma_max,
            self.log_ref_min,
            self.log_ref_max,
            a=self.a,
            P=self.P,
            b=self.b,
            Q=self.Q,
        )
        self.value_star = self.value(*self.equilibrium)
        if self.exact:
            ni = self.best_max(self.equilibrium[0]) - self.best_min(self.equilibrium[1])
            if ni > 1e-12:
                raise RuntimeError(f"equilibrium not certified: NI = {ni:.3g} > 1e-12")

    # ----- payoff
    def value(self, mu: np.ndarray, nu: np.ndarray) -> float:
        return float(
            mu @ self.G @ nu
            - 0.5 * self.a * mu @ self.P @ mu
            + 0.5 * self.b * nu @ self.Q @ nu
            + self.sigma_min * kl(mu, self.log_ref_min)
            - self.sigma_max * kl(nu, self.log_ref_max)
        )

    def feedback(self, mu: np.ndarray, nu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.G @ nu - self.a * (self.P @ mu), self.G.T @ mu + self.b * (self.Q @ nu)

    def best_max(self, mu: np.ndarray) -> float:
        """``max_ν F^σ(μ, ν)``."""
        v, _ = _maximise_entropic(self.G.T @ mu, self.b, self.Q, self.sigma_max, self.log_ref_max, self._ms)
        return v - 0.5 * self.a * float(mu @ self.P @ mu) + self.sigma_min * float(kl(mu, self.log_ref_min))

    def best_min(self, nu: np.ndarray) -> float:
        """``min_μ F^σ(μ, ν)``."""
        v, _ = _maximise_entropic(-(self.G @ nu), self.a, self.P, self.sigma_min, self.log_ref_min, self._ms)
        return -v + 0.5 * self.b * float(nu @ self.Q @ nu) - self.sigma_max * float(kl(nu, self.log_ref_max))

    def contraction_bound(self) -> float:
        s1, s2, oG = self.sigma_min, self.sigma_max, omega(self.G)
        return max(self.a * omega(self.P) / (2 * s1) + oG / (2 * s2), oG / (2 * s1) + self.b * omega(self.Q) / (2 * s2))

    def jacobian_bounds(self) -> dict[str, float]:
        """The spectral rectangle of the linearised Best Response map
        (:func:`~papergym.envs.games.common.jacobian_bounds`): a function of ``G``, ``P``, ``Q``, ``a``, ``b`` and the
        temperatures, valid at every profile."""
        return jacobian_bounds(self.G, self.sigma_min, self.sigma_max, a=self.a, P=self.P, b=self.b, Q=self.Q)

    def linearised_spectrum(self) -> np.ndarray:
        """Eigenvalues of the Jacobian of ``(Ψ, Φ)`` at the equilibrium."""
        mu, nu = self.equilibrium
        J = bilinear_jacobian(self.G, mu, nu, self.sigma_min, self.sigma_max, a=self.a, P=self.P, b=self.b, Q=self.Q)
        return np.linalg.eigvals(J)

    def residual(self, mu: np.ndarray, nu: np.ndarray) -> float:
        return saddle_residual(
            mu,
            nu,
            self.G,
            self.a,
            self.P,
            self.b,
            self.Q,
            self.sigma_min,
            self.sigma_max,
            self.log_ref_min,
            self.log_ref_max,
        )


class EntropicMatrixGameEnv(TwoPlayerEnv):
    __doc__ = __doc__
    ENV_ID = ENV_ID

    def __init__(
        self,
        instance: str = "rps",
        *,
        a: float | None = None,
        b: float | None = None,
        sigma: float | None = None,
        sigma_max: float | None = None,
        A: int | None = None,
        B: int | None = None,
        g: float | None = None,
        horizon: int = 500,
        role: str = "min",
        opponent: str = "br-flow",
        opponent_kwargs: dict | None = None,
        strict_simplex: bool = False,
        gap_tol: float = 1e-6,
        allow_nonconvex_inner: bool = False,
        render_mode: str | None = None,
    ):
        if instance not in _FAMILIES:
            raise ValueError(f"unknown instance {instance!r}; valid instances: {', '.join(INSTANCES)}")
        d = _FAMILIES[instance]
        if instance != "random" and any(v is not None for v in (A, B, g)):
            raise ValueError(f"A, B and g set the random family only (instance {instance!r} is 3x3 RPS)")
        self.instance = instance
        self.a = positive_float(d["a"] if a is None else a, "a", allow_zero=True)
        self.b = positive_float(d["b"] if b is None else b, "b", allow_zero=True)
        self.sigma = positive_float(d["sigma"] if sigma is None else sigma, "sigma")
        self.sigma_max = positive_float(d["sigma_max"] if sigma_max is None else sigma_max, "sigma_max")
        self.A = positive_int(d.get("A", 3) if A is None else A, "A", 2)
        self.B = positive_int(d.get("B", 3) if B is None else B, "B", 2)
        self.g = positive_float(d.get("g", 1.0) if g is None else g, "g")
        self.allow_nonconvex_inner = bool(allow_nonconvex_inner)
        # P = Q = I: lambda_max = 1
        if not self.allow_nonconvex_inner and (self.a >= self.sigma or self.b >= self.sigma_max):
            raise ValueError(
                f"a * lambda_max(P) = {self.a:g} must be < sigma = {self.sigma:g} and b * lambda_max(Q) = "
                f"{self.b:g} < sigma_max = {self.sigma_max:g} (inner problems concave); pass "
                "allow_nonconvex_inner=True to solve them by multistart (oracle.exact = False)"
            )
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
        """``g_μ ∈ [−ḡ − σ, ḡ]``, ``g_ν ∈ [−ḡ, ḡ + σ′]`` (module docstring, "Observation Space")."""
        gbar = self.g if self.instance == "random" else float(np.abs(RPS).max())
        lo_min = -np.inf if self.allow_nonconvex_inner else -gbar - self.sigma
        hi_max = np.inf if self.allow_nonconvex_inner else gbar + self.sigma_max
        return (lo_min, gbar), (-gbar, hi_max)

    def _make_game(self, seed_seq: np.random.SeedSequence) -> MatrixGame:
        rng = np.random.default_rng(seed_seq)
        G = RPS.copy() if self.instance != "random" else rng.uniform(-self.g, self.g, (self.A, self.B))
        init = (rng.dirichlet(np.ones(G.shape[0])), rng.dirichlet(np.ones(G.shape[1])))
        return MatrixGame(
            G,
            a=self.a,
            b=self.b,
            sigma=self.sigma,
            sigma_max=self.sigma_max,
            init=init,
            exact_inner=not self.allow_nonconvex_inner,
            seed_seq=seed_seq.spawn(1)[0],
        )

    def _public(self, game: MatrixGame) -> dict[str, Any]:
        return {"A": game.shape_min[0], "B": game.shape_max[0]}


def parallel_env(**kwargs: Any):
    """The PettingZoo ``ParallelEnv`` (agents ``"min"``, ``"max"``) on this game; kwargs as the Gymnasium env's
    (``role`` / ``opponent`` do not apply). Needs the ``games`` extra (pettingzoo)."""
    from papergym.envs.games.parallel import EntropicParallelEnv

    return EntropicParallelEnv(EntropicMatrixGameEnv, kwargs)
