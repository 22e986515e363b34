"""``EntropicMeanField-v0``: non-convex entropic mean-field minimisation on a grid
(``docs/papers/best-response-games.md``).

## Description
Minimise ``F^σ(μ) = F(μ) + σ KL(μ | π)`` over probability measures ``μ`` on the uniform grid
``x_j = −R + 2Rj/(G − 1)`` (``π`` = the discretised ``N(0, 1)``). Each step the agent submits a measure
``μ_k`` and observes the **first variation** ``δF/δμ(μ_k, x_j)`` on the grid (full information, no noise);
``F`` itself may be non-convex. The paper's method, the Best Response flow (``br-flow``), iterates the
Gibbs operator ``Ψ(μ) ∝ exp(−δF/δμ(μ, ·)/σ) π``.

Instance families (``instance=``; all start from the public ``μ_0`` = discretised ``N(1, 1)``):

* ``curie-weiss``: ``F(μ) = −(a/2) m(μ)²`` (concave), ``a = 0.5``, ``σ = 1``. For ``a < σ`` the minimiser is
  ``π`` with ``F^σ = 0``, and an Euler step of the flow contracts the mean by exactly ``1 − h(1 − a/σ)``.
* ``curie-weiss-unstable``: ``a = 1.5 > σ``: no contraction; in the continuum ``F^σ`` is unbounded below
  (``(σ − a)m²/2`` along ``N(m, 1)``), on the grid the two minimisers sit near ``±R`` (``oracle.contractive``
  is ``False``: a run that ends there found an artefact of the truncation, not a minimum of the problem).
* ``double-well``: ``F(μ) = ∫(x⁴/4 − x²/2) dμ − (a/2) m(μ)²``, ``a = 0.5``: unique minimiser for
  ``a ≤ a_c(σ) = σ / Var_{Ψ_0}(x)`` (``a_c(1) ≈ 1.479338``), ``F^σ(μ*) = −σ log Z_0 ≈ −0.022510``.
* ``double-well-broken``: ``a = 2 > a_c``: a symmetric pair of global minimisers ``±m*``.
* ``interaction``: ``F(μ) = ½ ∬ W(x − y) μ(dx) μ(dy)``, ``W(z) = −a exp(−z²/(2ℓ²))`` (attractive, non-convex),
  ``a = 1``, ``ℓ = 1``; ``W ∗ μ`` by zero-padded FFT convolution on the grid.

## Action Space
``Box(0, 1, (G,), float64)``: non-negative weights, normalised to a measure by the env. NaN/inf, an entry
below ``−1e−12`` or all-zero weights raise :class:`~papergym.envs.InvalidActionError` (the state is
unchanged); ``strict_simplex=True`` also rejects ``|Σw − 1| > 1e−6``. The space is float64 because the
optimality gaps are measured far below float32 resolution (down to ~1e−14).

## Observation Space
``Box(−inf, inf, (G,), float64)``: ``δF/δμ(μ_k, x_j)``; after ``reset`` at ``μ_0``. The observation is the first
variation of ``F`` only (the entropy's ``σ(log(μ/π) + 1)``, unbounded near the simplex boundary, is not part of
it), and on the grid it *is* bounded for a given instance — ``|a m(μ) x_j| ≤ aR|x_j|`` plus the potential, or
``W ∗ μ ∈ [−a, 0]`` — but every such bound is a function of ``a`` (and of the potential), which the problem keeps
private and which the constructor lets grow without limit; no bound from public numbers holds for every
allowed ``a``, so the space stays infinite rather than publish ``a``.

## Render
``render_mode=None`` (default), ``"ansi"`` (text: step, gap, and ``μ_k`` summarised — mean, standard
deviation, edge mass and its mass on 8 equal cells of ``[−R, R]``, rounded) or ``"rgb_array"`` (``uint8``
image: ``μ_k`` as a histogram over the grid and the gap curve on a log axis). ``render()`` before ``reset``
raises ``RuntimeError``; with ``render_mode=None`` it warns and returns ``None``.

## Rewards
``−F^σ(μ_k)``.

## Starting State
``μ_0`` (public, in ``problem.params["blocks"][0]["initial"]``). The family is deterministic: the seed only
feeds the oracle's contraction estimate.

## Episode End
Truncation after ``horizon`` steps (default 200); never terminates.

## Arguments
``instance`` (family above), ``a`` and ``sigma`` (family defaults), ``ell`` (interaction range), ``R`` = 8,
``G`` = 2001, ``horizon`` = 200, ``mu0_mean`` = 1, ``mu0_std`` = 1, ``strict_simplex`` = False,
``gap_tol`` = 1e−6 (the tolerance of the ``steps_to_tol`` metric), ``render_mode`` = None. Paper-scale [design]:
``G = 8001``, ``R = 10``, ``horizon = 2000``.

## Oracle and regret
``env.unwrapped.oracle``: ``regret(μ) = F^σ(μ) − F^σ(μ*) ≥ 0`` (round-off negatives above ``−1e−12``
clipped); the minimiser ``μ*`` — for the families where ``F`` depends on ``μ`` only through ``∫V dμ`` and
``m(μ)``, every fixed point is some ``Ψ_m``, so all roots of ``m − E_{Ψ_m}[x]`` are found (sign changes on 4001
points of ``[−R, R]``, Brent to 1e−14, plus ``m = 0``) and the least ``F^σ`` is kept; for ``interaction``,
damped iteration (``h = 0.5``) to a fixed-point residual of 1e−14. Also ``w1_to_minimiser``,
``fixed_point_residual``, ``contraction_estimate`` (largest ``W1(Ψμ, Ψμ′)/W1(μ, μ′)`` over 200 Gaussian pairs
of the instance stream), ``contraction_bound`` (the ``W1`` constant of ``Ψ``: exactly ``a/a_c`` for the mean
families, the estimate for ``interaction``), ``contractive`` (``contraction_bound < 1``: the paper's theorem
applies), ``a_c``, ``linearised_spectrum`` and ``predicted_rate(h)`` (the Euler factor of the gap near ``μ*``),
and ``episode_metrics()`` (``gap_last``, ``gap_avg`` of the average iterate, ``steps_to_tol``, ``rate``,
``cycling``, ``w1_last``, ``residual_last``, ``edge_mass``, ``contraction_bound``, ``contractive`` and a
``status``: ``grid-edge`` when the last iterate or the grid's minimiser has mass ``> 1e−3`` in the outer 5 % of
the grid — a truncation artefact, never ``converged`` — else ``not contractive``, ``converged`` (gap
``≤ gap_tol``) or ``not converged``; one-hot numeric flags ``converged``, ``not_contractive``, ``grid_edge``).
``br-flow``'s default step here is ``h = 1`` (one player: :mod:`papergym.agents.games.br_flow`).

## Paper
R.-A. Lascu, M. B. Majka, *Non-convex entropic mean-field optimization via Best Response flow*,
NeurIPS 2025 (arXiv 2505.22760): for ``σ`` large enough relative to the non-convexity of ``F`` and the tails
of ``π``, ``Ψ`` is a ``W1`` contraction, its unique fixed point is the global minimiser of ``F^σ`` and the flow
converges to it. The grid, the truncation and the Euler scheme are papergym's [design].

## Version History
* v0: initial version.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from papergym.envs.games.common import euler_factor, gap_metrics, gibbs, kl, player_blocks, read_action
from papergym.envs.games.render import RENDER_FPS, RENDER_MODES, ansi_frame, can_render, check_render_mode, rgb_frame
from papergym.envs.spec import ProblemSpec, instance_seed
from papergym.validate import finite_float, positive_float, positive_int

__all__ = ["EntropicMeanFieldEnv", "MeanFieldOracle", "INSTANCES", "EDGE_FRACTION", "EDGE_MASS", "edge_mass"]

ENV_ID = "EntropicMeanField-v0"
INSTANCES = ("curie-weiss", "curie-weiss-unstable", "double-well", "double-well-broken", "interaction")
COMPARE_DEFAULTS = {"seeds": 1, "horizon": 200}
REGRET_NAME = "cumulative optimality gap  sum_k F^s(mu_k) - F^s(mu*)"

EDGE_FRACTION = 0.05  # the outer 5 % of the grid on each side is its "edge" [design]
EDGE_MASS = 1e-3  # a measure with more mass than this there has run into the truncation [design]


def edge_mass(mu: np.ndarray, x: np.ndarray) -> float:
    """Mass of ``μ`` on the grid points with ``|x| ≥ (1 − EDGE_FRACTION)·R``. The reference ``N(0, 1)`` puts
    ``~1e−14`` there at ``R = 8``; a minimiser of the continuum problem keeps Gaussian-like tails, so mass above
    ``EDGE_MASS`` means the iterate (or the grid's "minimiser") is an artefact of the truncation."""
    R = float(np.abs(x).max())
    return float(np.asarray(mu)[..., np.abs(x) >= (1 - EDGE_FRACTION) * R].sum())


# family -> (potential, a, sigma, interaction)
_FAMILIES = {
    "curie-weiss": ("none", 0.5, 1.0, False),
    "curie-weiss-unstable": ("none", 1.5, 1.0, False),
    "double-well": ("quartic", 0.5, 1.0, False),
    "double-well-broken": ("quartic", 2.0, 1.0, False),
    "interaction": ("none", 1.0, 1.0, True),
}


class MeanFieldProblem:
    """The private instance: grid, reference, ``V``, ``a``, interaction kernel; ``F``, ``δF/δμ``, ``Ψ``."""

    def __init__(self, family: str, a: float, sigma: float, ell: float, R: float, G: int):
        self.family, self.a, self.sigma, self.ell, self.R, self.G = family, a, sigma, ell, R, G
        pot, _, _, inter = _FAMILIES[family]
        self.x = np.linspace(-R, R, G)
        self.dx = 2 * R / (G - 1)
        lp = -(self.x**2) / 2
        self.log_pi = lp - np.logaddexp.reduce(lp)
        self.pi = np.exp(self.log_pi)
        self.V = self.x**4 / 4 - self.x**2 / 2 if pot == "quartic" else np.zeros(G)
        self.interaction = inter
        if inter:  # W on the offsets -(G-1)..(G-1) grid steps
            z = np.arange(-(G - 1), G) * self.dx
            self.W = -a * np.exp(-(z**2) / (2 * ell**2))

    # ----- objective
    def mean(self, mu: np.ndarray) -> float:
        return float(self.x @ mu)

    def conv(self, mu: np.ndarray) -> np.ndarray:
        """``(W ∗ μ)(x_i) = Σ_j W(x_i − x_j) μ_j``."""
        from scipy.signal import fftconvolve  # imported on use: scipy.signal costs ~0.3 s at import

        return fftconvolve(mu, self.W, mode="full")[self.G - 1 : 2 * self.G - 1]

    def F(self, mu: np.ndarray) -> float:
        val = float(self.V @ mu)
        if self.interaction:
            val += 0.5 * float(mu @ self.conv(mu))
        else:
            val -= 0.5 * self.a * self.mean(mu) ** 2
        return val

    def F_sigma(self, mu: np.ndarray) -> float:
        return self.F(mu) + self.sigma * float(kl(mu, self.log_pi))

    def first_variation(self, mu: np.ndarray) -> np.ndarray:
        if self.interaction:
            return self.V + self.conv(mu)
        return self.V - self.a * self.mean(mu) * self.x

    def best_response(self, mu: np.ndarray) -> np.ndarray:
        return gibbs(self.log_pi, self.first_variation(mu), self.sigma, -1)

    def w1(self, mu: np.ndarray, nu: np.ndarray) -> float:
        return float(self.dx * np.abs(np.cumsum(mu - nu)).sum())

    # ----- fixed points Psi_m of the mean families
    def psi_m(self, m: float) -> np.ndarray:
        return gibbs(self.log_pi, self.V - self.a * m * self.x, self.sigma, -1)

    def mean_residual(self, m: float) -> float:
        return m - self.mean(self.psi_m(m))


class MeanFieldOracle:
    """Privileged view of one instance (module docstring, "Oracle and regret")."""

    TRACK_LAST_REGRET = True  # the runner records the per-step gap curve (log scale) next to the regret

    def __init__(self, prob: MeanFieldProblem, seed_seq: np.random.SeedSequence, env: EntropicMeanFieldEnv):
        self.prob, self._env = prob, env
        self._seed_seq = seed_seq
        self.minimisers = self._solve()
        self.minimiser = self.minimisers[0]
        self.value = prob.F_sigma(self.minimiser)  # F^s(mu*)
        self._cache: tuple[bytes, float] | None = None
        self._contraction: float | None = None

    def _solve(self) -> list[np.ndarray]:
        p = self.prob
        if p.interaction:
            mu = p.pi.copy()
            for _ in range(200_000):
                psi = p.best_response(mu)
                if np.abs(psi - mu).sum() <= 1e-14:
                    mu = psi
                    break
                mu = 0.5 * mu + 0.5 * psi
            else:
                raise RuntimeError("interaction: damped best-response iteration did not reach residual 1e-14")
            return [mu]
        from scipy.optimize import brentq  # imported on use: scipy.optimize costs ~0.3 s at import

        ms = np.linspace(-p.R, p.R, 4001)
        r = np.array([p.mean_residual(m) for m in ms])
        roots = [0.0] if abs(p.mean_residual(0.0)) <= 1e-12 else []
        for i in np.flatnonzero(np.sign(r[:-1]) * np.sign(r[1:]) < 0):
            roots.append(brentq(p.mean_residual, ms[i], ms[i + 1], xtol=1e-14, rtol=4 * np.finfo(float).eps))
        roots += [float(m) for m in ms[r == 0.0]]
        cands = [p.psi_m(m) for m in roots]
        vals = np.array([p.F_sigma(c) for c in cands])
        best = vals.min()
        keep = [c for c, v in zip(cands, vals) if v <= best + 1e-12 * max(1.0, abs(best))]
        # one representative per distinct minimiser (by mean), positive mean first
        keep.sort(key=lambda c: -p.mean(c))
        out: list[np.ndarray] = []
        for c in keep:
            if all(abs(p.mean(c) - p.mean(o)) > 1e-9 for o in out):
                out.append(c)
        return out

    # ----- Oracle protocol
    def _measure(self, action: Any) -> np.ndarray:
        return read_action(action, (self.prob.G,), self._env._blocks, strict=self._env.strict_simplex)

    def mean_reward(self, action: Any, t: int | None = None) -> float:
        return -self.prob.F_sigma(self._measure(action))

    def optimal_value(self, t: int | None = None) -> float:
        return -self.value

    def regret(self, action: Any, t: int | None = None) -> float:
        mu = self._measure(action)
        key = mu.tobytes()
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        r = self.prob.F_sigma(mu) - self.value
        if r < -1e-12 * max(1.0, abs(self.value)):
            raise RuntimeError(f"F^sigma(mu) = {r + self.value!r} below the oracle's minimum {self.value!r}")
        r = max(r, 0.0)
        self._cache = (key, r)
        return r

    # ----- diagnostics
    @property
    def a_c(self) -> float:
        """Threshold of ``a`` for a unique fixed point: ``σ / Var_{Ψ_0}(x)`` (``σ`` for Curie–Weiss; NaN for
        ``interaction``)."""
        p = self.prob
        if p.interaction:
            return float("nan")  # no single threshold: see contraction_estimate()
        psi0 = gibbs(p.log_pi, p.V, p.sigma, -1)
        m = p.mean(psi0)
        return p.sigma / float(((p.x - m) ** 2) @ psi0)

    @property
    def contractive(self) -> bool:
        """The paper's condition: ``Ψ`` a ``W1`` contraction (:meth:`contraction_bound` ``< 1``)."""
        return self.contraction_bound() < 1.0

    def contraction_bound(self) -> float:
        """The ``W1`` Lipschitz constant of ``Ψ``. Mean families (``F`` through ``∫V dμ`` and ``m(μ)``):
        ``Ψ(μ) = Ψ_{m(μ)}``, an exponential tilt ``∝ e^{a m x/σ} Ψ_0``; tilts are stochastically ordered, so
        ``W1(Ψ_m, Ψ_m′) = |E_m x − E_m′ x| = (a/σ)|∫_m^{m′} Var_{Ψ_t}(x) dt|``, and ``|m(μ) − m(μ′)| ≤ W1(μ, μ′)``;
        ``Var_{Ψ_t}`` is largest at ``t = 0`` (Gaussian tilts of the symmetric grid reference; the GHS inequality for
        the quartic single-site measure, see ``a_c``), hence the exact constant ``(a/σ) Var_{Ψ_0}(x) = a/a_c``.
        ``interaction``: :meth:`contraction_estimate` (an empirical lower estimate, not a bound)."""
        if self.prob.interaction:
            return self.contraction_estimate()
        return self.prob.a / self.a_c

    def linearised_spectrum(self) -> np.ndarray:
        """Largest eigenvalue of the Jacobian ``J = −σ⁻¹ S_{μ*} K`` of ``Ψ`` at the minimiser (``K`` the
        linear map ``μ ↦ δF/δμ(μ)``; ``S_p = diag p − ppᵀ``), and 0. ``J`` is similar to a PSD operator
        (``−K`` is PSD: ``a x xᵀ`` for the mean families, the Gaussian kernel ``a e^{−z²/(2ℓ²)}`` for
        ``interaction``), so its spectrum is real in ``[0, λ_max]``. Mean families: ``J`` has rank one,
        ``λ_max = (a/σ) Var_{μ*}(x)``; ``interaction``: power iteration (FFT convolutions) to a relative change
        of 1e−13."""
        p, mu = self.prob, self.minimiser
        if not p.interaction:
            return np.array([p.a / p.sigma * float(((p.x - p.mean(mu)) ** 2) @ mu), 0.0])

        def J(v):
            w = -p.conv(v) / p.sigma
            return mu * (w - mu @ w)

        v = mu * (p.x + p.x**2 / 2)  # odd (translation) and even (width) modes both present
        lam = 0.0
        for _ in range(100_000):
            u = J(v)
            new = float(np.linalg.norm(u) / np.linalg.norm(v))
            v = u / np.linalg.norm(u)
            if abs(new - lam) <= 1e-13 * max(new, 1e-300):
                lam = new
                break
            lam = new
        return np.array([lam, 0.0])

    def predicted_rate(self, h: float) -> float:
        """Per-step factor of ``F^σ(μ_k) − F^σ(μ*)`` (quadratic in the deviation) of the Euler-discretised flow
        with step ``h`` near the minimiser: ``max(|1 − h|, |1 − h + hλ_max|)²``."""
        return euler_factor(h, self.linearised_spectrum()) ** 2

    def status(self, gap_last: float, mu_last: np.ndarray) -> str:
        """``"grid-edge"`` if the last iterate or the grid's minimiser has more than ``EDGE_MASS`` in the outer
        ``EDGE_FRACTION`` of the grid (a truncation artefact, whatever its gap); else ``"not contractive"`` if
        ``Ψ`` is not a ``W1`` contraction (the paper's theorem does not apply); else ``"converged"`` when the
        last gap is ``≤ gap_tol``, ``"not converged"`` otherwise."""
        x = self.prob.x
        if edge_mass(mu_last, x) > EDGE_MASS or max(edge_mass(m, x) for m in self.minimisers) > EDGE_MASS:
            return "grid-edge"
        if not self.contractive:
            return "not contractive"
        return "converged" if gap_last <= self._env.gap_tol else "not converged"

    def w1_to_minimiser(self, mu: Any) -> float:
        mu = self._measure(mu)
        return min(self.prob.w1(mu, m) for m in self.minimisers)

    def fixed_point_residual(self, mu: Any) -> float:
        """``W1(Ψ(μ), μ)``."""
        mu = self._measure(mu)
        return self.prob.w1(self.prob.best_response(mu), mu)

    def contraction_estimate(self, pairs: int = 200) -> float:
        """Largest ``W1(Ψμ, Ψμ′)/W1(μ, μ′)`` over Gaussian pairs ``N(m, s²)`` on the grid, ``m ~ U[−2, 2]``,
        ``s ~ U[0.5, 2]``, drawn from the instance stream (computed once)."""
        if self._contraction is None:
            p, rng = self.prob, np.random.default_rng(self._seed_seq)
            best = 0.0
            for _ in range(pairs):
                ms, ss = rng.uniform(-2, 2, 2), rng.uniform(0.5, 2, 2)
                mus = [gibbs(np.zeros(p.G), (p.x - m) ** 2 / (2 * s**2), 1.0, -1) for m, s in zip(ms, ss)]
                d = p.w1(*mus)
                if d > 1e-12:
                    best = max(best, p.w1(p.best_response(mus[0]), p.best_response(mus[1])) / d)
            self._contraction = best
        return self._contraction

    def instance_metrics(self) -> dict[str, Any]:
        p = self.prob
        return {
            "family": p.family,
            "a": p.a,
            "sigma": p.sigma,
            "optimal_value": -self.value,
            "minimiser_mean": p.mean(self.minimiser),
            "n_minimisers": len(self.minimisers),
            "contractive": bool(self.contractive),
            "contraction_bound": self.contraction_bound(),
            "a_c": self.a_c,
            "minimiser_edge_mass": max(edge_mass(m, p.x) for m in self.minimisers),
        }

    def episode_metrics(self) -> dict[str, Any]:
        """Scores of the episode just played (the runner adds them to the run's row): ``gap_last``, ``gap_avg``
        (average iterate), ``steps_to_tol``, ``rate``, ``cycling``, ``w1_last``, ``residual_last``; ``edge_mass``
        of the last iterate; ``contraction_bound`` and ``contractive`` (1/0); the convergence ``status``
        (:meth:`status`) with its one-hot flags ``converged``, ``not_contractive``, ``grid_edge``."""
        env = self._env
        if not env._gaps:
            return {}
        avg = env._sum / len(env._gaps)
        out = gap_metrics(env._gaps, env.gap_tol)
        out.update(
            {
                "gap_last": float(env._gaps[-1]),
                "gap_avg": self.regret(avg),
                "w1_last": self.w1_to_minimiser(env._mu),
                "residual_last": self.fixed_point_residual(env._mu),
                "edge_mass": edge_mass(env._mu, self.prob.x),
            }
        )
        status = self.status(out["gap_last"], env._mu)
        out.update(
            {
                "contraction_bound": self.contraction_bound(),
                "contractive": float(self.contractive),
                "status": status,
                "converged": float(status == "converged"),
                "not_contractive": float(status == "not contractive"),
                "grid_edge": float(status == "grid-edge"),
            }
        )
        return out


class EntropicMeanFieldEnv(gym.Env):
    __doc__ = __doc__
    # the families are deterministic: the seed only feeds the oracle's contraction estimate
    metadata = {"render_modes": RENDER_MODES, "render_fps": RENDER_FPS, "seed_independent_instance": True}

    def __init__(
        self,
        instance: str = "curie-weiss",
        *,
        a: float | None = None,
        sigma: float | None = None,
        ell: float = 1.0,
        R: float = 8.0,
        G: int = 2001,
        horizon: int = 200,
        mu0_mean: float = 1.0,
        mu0_std: float = 1.0,
        strict_simplex: bool = False,
        gap_tol: float = 1e-6,
        render_mode: str | None = None,
    ):
        self.render_mode = check_render_mode(render_mode)
        if instance not in _FAMILIES:
            raise ValueError(f"unknown instance {instance!r}; valid instances: {', '.join(INSTANCES)}")
        _, a0, s0, _ = _FAMILIES[instance]
        # a >= 0: the sign of the non-convex term is fixed
        self.a = positive_float(a0 if a is None else a, "a", allow_zero=True)
        self.sigma = positive_float(s0 if sigma is None else sigma, "sigma")
        self.ell, self.R = positive_float(ell, "ell"), positive_float(R, "R")
        G, horizon = positive_int(G, "G", 3), positive_int(horizon, "horizon")
        self.mu0_mean = finite_float(mu0_mean, "mu0_mean")
        self.mu0_std = positive_float(mu0_std, "mu0_std")
        self.gap_tol = positive_float(gap_tol, "gap_tol")
        self.instance, self.G, self.horizon, self.strict_simplex = instance, G, horizon, bool(strict_simplex)
        self.prob = MeanFieldProblem(instance, self.a, self.sigma, self.ell, self.R, self.G)
        x = self.prob.x
        self.mu0 = gibbs(np.zeros(self.G), (x - self.mu0_mean) ** 2 / (2 * self.mu0_std**2), 1.0, -1)
        # float64: the optimality gaps are measured far below float32 resolution
        self.action_space = gym.spaces.Box(0.0, 1.0, (self.G,), np.float64)
        # unbounded on purpose: a finite bound would be a function of the private a (module docstring)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (self.G,), np.float64)
        self._blocks = player_blocks([("min", self.G, -1, self.sigma, self.prob.pi, self.mu0)])
        self.problem = ProblemSpec(
            ENV_ID,
            self.action_space,
            self.observation_space,
            self.horizon,
            {
                "family": instance,
                "grid": x,
                "reference": self.prob.pi,
                "sigma": self.sigma,
                "mu0": self.mu0,
                "role": "min",
                "blocks": self._blocks,
            },
        )
        self.oracle: MeanFieldOracle | None = None
        self.t = 0

    def validate_action(self, action: Any) -> None:
        read_action(action, (self.G,), self._blocks, strict=self.strict_simplex)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        s = seed if seed is not None else int(self.np_random.integers(0, 2**63 - 1))
        if self.oracle is None or self._oracle_seed != s:
            ss = instance_seed(s)
            self.oracle = MeanFieldOracle(self.prob, ss, self) if self.oracle is None else self._reseed(ss)
            self._oracle_seed = s
        self.t = 0
        self._mu = self.mu0.copy()
        self._gaps: list[float] = []
        self._sum = np.zeros(self.G)
        return self.prob.first_variation(self._mu), {}

    def _reseed(self, ss: np.random.SeedSequence) -> MeanFieldOracle:
        # the minimiser does not depend on the seed; only the contraction estimate's pairs do
        self.oracle._seed_seq, self.oracle._contraction, self.oracle._cache = ss, None, None
        return self.oracle

    def step(self, action: Any):
        if self.oracle is None:
            raise RuntimeError("call reset() before step()")
        mu = read_action(action, (self.G,), self._blocks, strict=self.strict_simplex)
        self._gaps.append(self.oracle.regret(mu))
        self._sum += mu
        self._mu = mu
        self.t += 1
        return self.prob.first_variation(mu), -self.prob.F_sigma(mu), False, self.t >= self.horizon, {}

    def render(self) -> str | np.ndarray | None:
        """The current measure ``μ_k`` and the gap curve so far: text (``"ansi"``) or an ``H×W×3`` ``uint8`` image
        (``"rgb_array"``); ``None`` with a warning when ``render_mode`` is ``None`` (module docstring, "Render")."""
        if not can_render(ENV_ID, self.render_mode, self.oracle is not None, "measure"):
            return None
        title = f"{ENV_ID} ({self.instance})"
        gap_name = "gap F^σ(μ_k) − F^σ(μ*)"
        if self.render_mode == "ansi":
            x, mu = self.prob.x, self._mu
            m = float(x @ mu)
            sd = float(np.sqrt(max(((x - m) ** 2) @ mu, 0.0)))
            cells = np.minimum(((x + self.R) / (2 * self.R) * 8).astype(int), 7)
            mass = np.bincount(cells, weights=mu, minlength=8)
            summary = [
                f"  μ_k: mean {m:.3f}  std {sd:.3f}  edge mass {edge_mass(mu, x):.3e}",
                f"  mass on 8 cells of [-{self.R:g}, {self.R:g}]: " + " ".join(f"{v:.3f}" for v in mass),
            ]
            return ansi_frame(title, self.t, self.horizon, self._gaps, gap_name, [("μ_k", mu)], summary=summary)
        return rgb_frame(
            f"{title}  step {self.t}/{self.horizon}",
            self._gaps,
            gap_name,
            [("μ_k", self._mu)],
            gap_tol=self.gap_tol,
            grid=self.prob.x,
        )
