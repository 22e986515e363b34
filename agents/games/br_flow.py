"""``br-flow``: the Best Response flow (Lascu & Majka, NeurIPS 2025), discretised in distribution space.

The paper studies ``dμ_t/dt = Ψ(μ_t) − μ_t`` with the Gibbs best response

    Ψ(μ)(dx) = Z(μ)⁻¹ exp(−σ⁻¹ δF/δμ(μ, x)) π(dx)                                    (paper, BR operator)

(for a maximiser ``Φ(μ, ν) ∝ exp(+δ_νF/σ′) ρ``, and per state with ``q`` tables for the Markov game). When
``Ψ`` is a contraction its fixed point is the unique global minimiser of ``F^σ = F + σ KL(·|π)`` and the flow
converges to it. On the env's finite set (grid, actions) ``Ψ`` is exact: one feedback = one best-response
evaluation. Each step (Lascu & Majka, NeurIPS 2025, arXiv:2505.22760; ``docs/papers/best-response-games.md``):

1. feedback ``g = δF/δμ(μ_k)`` (payoff vector, ``q`` table) at the current profile;
2. ``Ψ_k = normalise(π ⊙ exp(−(g − min g)/σ))`` (shifted for stability);
3. explicit Euler ``μ_{k+1} = (1 − h_k) μ_k + h_k Ψ_k``, or ``scheme="exponential"``:
   ``μ_{k+1} = e^{−h_k} μ_k + (1 − e^{−h_k}) Ψ_k`` (the exact flow over the step with ``Ψ`` frozen);
4. ``h_k = h`` (``schedule="constant"``) or ``h_k = 1/(k + 1)``, ``k = 0, 1, ...`` (``schedule="harmonic"``: the
   running average of best responses, i.e. fictitious play).

**Step size ``h="auto"`` (default).** The paper analyses continuous time, so it prescribes no step; ``auto``
derives one from the instance's published constants. Linearising the flow at its fixed point, an Euler
step multiplies a deviation along an eigenvector of the Jacobian ``J`` of the best-response map by
``1 − h + hλ``. The two-player envs publish (``ProblemSpec.params["br_bounds"]``) a rectangle
``0 ≤ Re λ ≤ δ``, ``|Im λ| ≤ c`` holding that spectrum — ``δ`` from the non-convexity (``a``, ``b`` against
``σ``, ``σ′``), ``c`` from the coupling of the two players (``ω(G)``, ``‖ΠGΠ‖₂`` against ``√(σσ′)``; for the
Markov game ``Q*_s`` against ``τ``); the derivation is in :mod:`papergym.envs.games.common`. The step
minimising the worst factor ``ρ(h)² = (1 − h(1 − δ))² + h²c²`` over the rectangle is

    h = min(1, (1 − δ)/((1 − δ)² + c²)),   ρ = c/√((1 − δ)² + c²)   (ρ = √(δ² + c²) when h = 1).

* One player (``EntropicMeanField-v0``: no opponent, ``c = 0``; no ``br_bounds`` needed): ``h = 1`` for every
  ``δ < 1``. This is the paper's condition: if ``Ψ`` is a ``κ``-contraction in ``W1`` (paper, main theorem), so
  is the Euler step with factor ``1 − h(1 − κ)`` (``W1`` is jointly convex), smallest at ``h = 1``.
* Zero-sum bilinear games (``rps``, ``rps-cold``, every Markov game at its equilibrium: ``δ = 0``):
  ``h = 1/(1 + c²)``. The linearisation is a pure rotation, which ``h = 1`` (best-response iteration) does
  not damp once ``|λ| ≥ 1`` (``rps-cold``: ``c = 7.5``, ``h ≈ 0.0175``).
* ``κ < 1`` (the oracle's ``contraction_bound()``: the joint map is an ℓ1 contraction) makes the
  convergence global for every ``h ∈ (0, 1]``; otherwise the guarantee is local (linear convergence near the
  equilibrium at the factor ``ρ``); for convex–concave ``F`` (``a = b = 0``) the continuous flow converges
  from everywhere (the predecessor paper, arXiv 2306.03033).
* ``δ ≥ 1``: no step is certified; ``h = min(1, 1/(1 + c²))`` [design fallback].

With ``scheme="exponential"`` ``auto`` gives the same mixing weight ``w`` (``h = −log(1 − w)``, ``+inf`` for
``w = 1``). An explicit float ``h ∈ (0, 1]`` is used as given. ``h = 1`` is best-response iteration (registered
as ``best-response-iteration``); the harmonic schedule is ``fictitious-play`` (``h`` unused).

Diagnostics (see :class:`~papergym.agents.games.learner.GameLearner`): fixed-point residuals and a
``diverged`` flag, so a run on a non-contractive instance (Curie–Weiss with ``a > σ``) reports divergence
rather than the truncation artefact it ends in; ``h`` (the step used) and ``rate_bound`` (``ρ(h)²``, the
guaranteed linearised per-step factor of a quadratic gap; NaN where no ``br_bounds`` are published or the
schedule is harmonic).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agents.games.learner import GameLearner
from papergym.envs.games.common import auto_step, euler_factor_bound

__all__ = ["BRFlow", "resolve_step", "published_bounds"]


def published_bounds(problem: Any) -> dict[str, float] | None:
    """``{"self": δ, "cross": c}`` from ``problem.params["br_bounds"]``, or ``None`` if not published."""
    bounds = problem.params.get("br_bounds")
    if bounds is None:
        return None
    try:
        d, c = float(bounds["self"]), float(bounds["cross"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"params['br_bounds'] must hold numbers 'self' and 'cross', got {bounds!r}") from None
    if not (np.isfinite(d) and np.isfinite(c) and d >= 0 and c >= 0):
        raise ValueError(f"params['br_bounds'] must be finite and >= 0, got {bounds!r}")
    return {"self": d, "cross": c}


def resolve_step(problem: Any) -> float:
    """The Euler weight of ``h="auto"`` for ``problem`` (module docstring): :func:`auto_step` of the published
    ``br_bounds``, else ``1`` for a single-player problem (``c = 0``). Raises ``ValueError`` for a two-player
    problem without bounds."""
    bounds = published_bounds(problem)
    if bounds is not None:
        return auto_step(bounds["self"], bounds["cross"])
    params = problem.params
    if len(params["blocks"]) == 1 and "sigma_max" not in params:
        return 1.0
    raise ValueError(
        "h='auto' needs the spectral bounds params['br_bounds'] of a two-player problem; pass a number h in (0, 1]"
    )


class BRFlow(GameLearner):
    """The Best Response flow learner (module docstring)."""

    def __init__(
        self,
        problem: Any,
        *,
        seed: Any = None,
        h: float | str = "auto",
        schedule: str = "constant",
        scheme: str = "euler",
    ):
        super().__init__(problem, seed=seed)
        if schedule not in ("constant", "harmonic"):
            raise ValueError(f"schedule must be 'constant' or 'harmonic', got {schedule!r}")
        if scheme not in ("euler", "exponential"):
            raise ValueError(f"scheme must be 'euler' or 'exponential', got {scheme!r}")
        self._bounds = published_bounds(problem)
        if isinstance(h, str):
            if h != "auto":
                raise ValueError(f"h must be 'auto' or a number in (0, 1], got {h!r}")
            w = resolve_step(problem) if schedule == "constant" else float("nan")
            # the Euler weight w; the exponential scheme reaches it with h = -log(1 - w)
            h = w if scheme == "euler" or not np.isfinite(w) else (np.inf if w >= 1 else float(-np.log1p(-w)))
        elif isinstance(h, bool) or not isinstance(h, (int, float, np.integer, np.floating)) or not 0 < h <= 1:
            raise ValueError(f"h must be 'auto' or a number in (0, 1], got {h!r}")
        self.h, self.schedule, self.scheme = float(h), schedule, scheme

    def step_size(self, k: int) -> float:
        """``h_k``: ``h`` or ``1/(k + 1)``."""
        return self.h if self.schedule == "constant" else 1.0 / (k + 1)

    def weight(self, k: int) -> float:
        """The mixing weight of ``Ψ`` at step ``k``: ``h_k`` (Euler) or ``1 − e^{−h_k}`` (exponential)."""
        hk = self.step_size(k)
        return hk if self.scheme == "euler" else float(-np.expm1(-hk))

    def _next(self, g: np.ndarray) -> np.ndarray:
        psi = self.best_response(g)
        self._track(psi)
        w = self.weight(self.k)
        return (1.0 - w) * self.x + w * psi

    def diagnostics(self) -> dict[str, Any]:
        out = super().diagnostics()
        const = self.schedule == "constant"
        out["h"] = self.h if const else float("nan")
        out["rate_bound"] = (
            euler_factor_bound(self.weight(0), self._bounds["self"], self._bounds["cross"]) ** 2
            if const and self._bounds is not None
            else float("nan")
        )
        return out
