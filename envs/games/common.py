"""Shared numerics of the entropic games (``docs/papers/best-response-games.md``).

* :func:`read_action` — an agent's weights → probability vectors (per row and per player block), with the
  action validation rules (NaN/inf, entries ``< −1e−12``, an all-zero block → :class:`InvalidActionError`).
* :func:`gibbs` — the Best Response operator on a finite set, ``softmax(log π ∓ g/σ)`` (the paper's
  ``Ψ(μ) ∝ exp(−σ^{−1} δF/δμ) π``), stable for any shift of ``g``.
* :func:`kl` — ``KL(p | π) = Σ p log(p/π)`` with ``0 log 0 = 0``.
* :func:`omega` — ``ω(M) = max_{i,i′,j,j′} (M_ij − M_i′j − M_ij′ + M_i′j′)/2``, the oscillation constant of the
  finite-set contraction bound.
* :func:`solve_saddle` — the exact regularised equilibrium of a two-player entropic matrix game
  (damped best-response iteration, then Newton on the fixed-point residual with backtracking).
* :func:`gap_metrics` — steps to a tolerance, fitted linear rate and cycling flag of a gap curve.
* :func:`feedback_box` — a player's observation ``Box`` with its finite bounds widened for round-off.
* :func:`player_blocks` — the public description of who moves which part of an action; every learner in
  ``agents/games`` and ``baselines/games`` reads it from ``ProblemSpec.params["blocks"]``.
* :func:`jacobian_bounds`, :func:`auto_step`, :func:`euler_factor_bound`, :func:`euler_factor` — the
  linearised Best Response map and the step size of its explicit Euler discretisation (below).

**Linearisation and the step size** (used by ``br-flow``'s ``h="auto"`` and by the oracles' rate
predictions). Near a fixed point ``x*`` the Euler step ``x ← (1 − h)x + hT(x)`` of the flow
``ẋ = T(x) − x`` (paper: ``dμ/dt = Ψ(μ) − μ``) acts on deviations as ``(1 − h)I + hJ``, ``J`` the Jacobian
of the joint best-response map ``T = (Ψ, Φ)`` at ``x*``; an eigenvalue ``λ`` of ``J`` is damped by
``|1 − h + hλ|`` per step. For the min–max game ``F(μ,ν) = μᵀGν − (a/2)μᵀPμ + (b/2)νᵀQν`` the Gibbs maps
give ``J = M H`` with ``M = diag(S_Ψ/σ, S_Φ/σ′)``, ``S_p = diag p − ppᵀ`` (PSD, ``λ_max(S_p) ≤ ½``) and
``H = [[aP, −G], [Gᵀ, bQ]]``. ``J`` is similar to ``M^{½} H M^{½}``, whose symmetric part
``M^{½} diag(aP, bQ) M^{½}`` is PSD and whose skew part is ``M^{½}[[0, −G], [Gᵀ, 0]]M^{½}``; so every
eigenvalue lies in the rectangle ``0 ≤ Re λ ≤ δ``, ``|Im λ| ≤ c`` with the *self* (non-convexity) bound
``δ = max(a λ_max(ΠPΠ)/(2σ), b λ_max(ΠQΠ)/(2σ′))`` and the *cross* (rotation) bound
``c = min(‖ΠGΠ‖₂/(2√(σσ′)), ρ₁)`` (``Π`` the centring projection, ``S_p Π = S_p``). ``ρ₁`` is the ℓ1 bound of
``GameOracle.contraction_bound()`` (``‖S_p z‖₁ ≤ ½ osc(z)``, ``osc(Mv) ≤ ω(M)‖v‖₁`` for ``Σv = 0``) in its
weighted form: with ``d₁ = aω(P)/(2σ)``, ``c₁ = ω(G)/(2σ)``, ``c₂ = ω(G)/(2σ′)``, ``d₂ = bω(Q)/(2σ′)`` the blocks of
``J`` have ℓ1 norms at most ``[[d₁, c₁], [c₂, d₂]]``, so every ``|λ|`` is at most its Perron root
``ρ₁ = (d₁ + d₂)/2 + √(((d₁ − d₂)/2)² + c₁c₂)`` (``≤ κ``; ``ω(G)/(2√(σσ′))`` when ``a = b = 0``); ``δ`` is capped by
``ρ₁`` too. Over that rectangle the worst damping is at the corner ``(δ, c)``: ``ρ(h)² = (1 − h(1 − δ))² + h²c²``
(``h ≤ 1``), minimised by

    h* = min(1, (1 − δ)/((1 − δ)² + c²)),      ρ(h*) = c/√((1 − δ)² + c²)  (h* < 1),  √(δ² + c²)  (h* = 1).

A single player (mean field: ``c = 0``) gets ``h* = 1`` for every ``δ < 1``: with a ``κ``-contraction ``Ψ``
(the paper's theorem) the Euler factor ``1 − h(1 − κ)`` is smallest at ``h = 1``. A zero-sum bilinear game
(``δ = 0``) gets ``h* = 1/(1 + c²)``: its linearisation is a pure rotation (``Re λ = 0``), which ``h = 1``
(best-response iteration) does not damp once ``|λ| ≥ 1``. For ``δ ≥ 1`` no step is certified (an eigenvalue may
have ``Re λ ≥ 1``: the fixed point of the flow itself may be unstable); :func:`auto_step` then falls back to
the rotation rule ``1/(1 + c²)`` [design].

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from papergym.envs.spec import InvalidActionError

__all__ = [
    "read_action",
    "logsumexp",
    "gibbs",
    "kl",
    "omega",
    "solve_saddle",
    "saddle_residual",
    "gap_metrics",
    "player_blocks",
    "Block",
    "NEG_TOL",
    "SUM_TOL",
    "centred_norm",
    "jacobian_bounds",
    "auto_step",
    "euler_factor_bound",
    "euler_factor",
    "bilinear_jacobian",
    "STATUSES",
    "feedback_box",
    "BOUND_SLACK",
]

NEG_TOL = 1e-12  # entries below -NEG_TOL are rejected; those in [-NEG_TOL, 0) count as 0
SUM_TOL = 1e-6  # strict_simplex: |sum - 1| above this is rejected


BOUND_SLACK = 1e-9  # relative widening of a finite observation bound, for floating-point round-off


def feedback_box(shape: tuple[int, ...], low: Any, high: Any, *, condition: float = 1.0):
    """``Box(low, high, shape, float64)`` of a player's feedback. Finite bounds are widened by
    ``(BOUND_SLACK + 100·eps·condition)·max(1, |bound|)``: the bound is exact for the real-number feedback, the
    widening covers the round-off of computing it (sums of probabilities are 1 only to a few ulps; a linear solve
    with condition number ``condition`` loses that factor); infinite bounds stay infinite."""
    import gymnasium as gym

    lo = np.broadcast_to(np.asarray(low, dtype=np.float64), shape).copy()
    hi = np.broadcast_to(np.asarray(high, dtype=np.float64), shape).copy()
    if np.any(lo > hi):
        raise ValueError("feedback_box: a lower bound exceeds its upper bound")
    rel = BOUND_SLACK + 100 * np.finfo(float).eps * float(condition)
    fin = np.isfinite(lo)
    lo[fin] -= rel * np.maximum(1.0, np.abs(lo[fin]))
    fin = np.isfinite(hi)
    hi[fin] += rel * np.maximum(1.0, np.abs(hi[fin]))
    return gym.spaces.Box(lo, hi, tuple(shape), np.float64)


Block = dict  # {"player", "start", "stop", "sign", "temperature", "reference", "initial"}


def player_blocks(players: Sequence[tuple[str, int, int, float, np.ndarray, np.ndarray]]) -> list[dict[str, Any]]:
    """``[(player, size, sign, temperature, reference, initial), ...]`` → the block list of the
    ``ProblemSpec``: each player moves the columns ``[start, stop)`` of the last action axis; ``sign`` is
    −1 for a minimiser (best response ``softmax(log ref − g/T)``), +1 for a maximiser."""
    out, start = [], 0
    for player, size, sign, temp, ref, init in players:
        out.append(
            {
                "player": player,
                "start": start,
                "stop": start + int(size),
                "sign": int(sign),
                "temperature": float(temp),
                "reference": np.asarray(ref, dtype=float),
                "initial": np.asarray(init, dtype=float),
            }
        )
        start += int(size)
    return out


def read_action(
    action: Any, shape: tuple[int, ...], blocks: Sequence[dict], *, strict: bool = False, what: str = "action"
) -> np.ndarray:
    """Validate ``action`` and return it normalised per row and per block (a new float64 array).

    Raises :class:`InvalidActionError` naming the rule broken: wrong shape, NaN/inf, an entry below
    ``−1e−12``, a block (row) of zero total weight, or — with ``strict`` — a block whose sum is off 1 by more
    than ``1e−6``."""
    try:
        a = np.array(action, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidActionError(f"{what} must be an array of weights of shape {shape}: {exc}") from None
    if a.shape != tuple(shape):
        raise InvalidActionError(f"{what} must have shape {tuple(shape)}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise InvalidActionError(f"{what} contains NaN or inf")
    if a.size and a.min() < -NEG_TOL:
        raise InvalidActionError(f"{what} has a negative weight {a.min():.3g} (< -{NEG_TOL:g})")
    np.maximum(a, 0.0, out=a)
    for b in blocks:
        part = a[..., b["start"] : b["stop"]]
        tot = part.sum(axis=-1, keepdims=True)
        if np.any(tot <= 0):
            raise InvalidActionError(
                f"{what}: the weights of player {b['player']!r} sum to 0 "
                + ("in some row (state)" if part.ndim > 1 else "")
                + "; they must be a measure"
            )
        if strict and np.any(np.abs(tot - 1.0) > SUM_TOL):
            raise InvalidActionError(
                f"{what}: the weights of player {b['player']!r} sum to "
                f"{float(np.max(np.abs(tot - 1.0))) + 1:.9g}, not 1 (strict_simplex=True)"
            )
        a[..., b["start"] : b["stop"]] = part / tot
    return a


def logsumexp(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """``log Σ exp x`` along ``axis`` (max-shifted; a plain numpy version — scipy's costs ~0.2 ms a call)."""
    x = np.asarray(x, dtype=float)
    m = np.max(x, axis=axis, keepdims=True)
    return np.squeeze(m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)), axis=axis)


def gibbs(log_ref: np.ndarray, g: np.ndarray, temperature: float, sign: int = -1) -> np.ndarray:
    """``softmax(log_ref + sign·g/temperature)`` along the last axis: the Gibbs best response of a
    minimiser (``sign = −1``) or a maximiser (``sign = +1``) to the first variation ``g``."""
    z = log_ref + (sign / temperature) * np.asarray(g, dtype=float)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def kl(p: np.ndarray, log_ref: np.ndarray) -> np.ndarray:
    """``Σ p (log p − log_ref)`` along the last axis, ``0 log 0 = 0``."""
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1.0)) - log_ref), 0.0)
    return terms.sum(axis=-1)


def omega(M: np.ndarray) -> float:
    """``ω(M) = max_{i,i′} (max_j D_j − min_j D_j)/2`` with ``D = M_i· − M_i′·``."""
    M = np.asarray(M, dtype=float)
    if M.ndim != 2 or M.shape[0] < 2 or M.shape[1] < 2:
        return 0.0
    D = M[:, None, :] - M[None, :, :]
    return float((D.max(axis=-1) - D.min(axis=-1)).max() / 2.0)


# ---------------------------------------------------------------------------------- matrix-game saddle
def _br_pair(mu, nu, G, a, P, b, Q, s1, s2, lp, lr):
    g_mu = G @ nu - a * (P @ mu)
    g_nu = G.T @ mu + b * (Q @ nu)
    return gibbs(lp, g_mu, s1, -1), gibbs(lr, g_nu, s2, +1)


def saddle_residual(mu, nu, G, a, P, b, Q, s1, s2, lp, lr) -> float:
    """``‖Ψ(μ,ν) − μ‖₁ + ‖Φ(μ,ν) − ν‖₁``: zero exactly at a fixed point of the Best Response pair."""
    psi, phi = _br_pair(mu, nu, G, a, P, b, Q, s1, s2, lp, lr)
    return float(np.abs(psi - mu).sum() + np.abs(phi - nu).sum())


def _newton(mu, nu, args, tol: float, max_newton: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Newton in log coordinates ``(u, v) = (log μ, log ν)`` on ``R = (u − lse(u) − log Ψ, v − lse(v) − log Φ)``
    (shift-invariant, so the least-squares step is taken), backtracking on ``‖R‖₂``; tiny probabilities
    (low temperatures) stay representable. Returns the ℓ1 fixed-point residual at the end."""
    G, a, P, b, Q, s1, s2, lp, lr = args
    A, B = G.shape
    eyeA, eyeB = np.eye(A), np.eye(B)
    with np.errstate(divide="ignore"):
        u, v = np.log(mu), np.log(nu)
    u = np.maximum(u, -700.0)
    v = np.maximum(v, -700.0)

    def resid(u, v):
        m, n = np.exp(u - logsumexp(u)), np.exp(v - logsumexp(v))
        zu = lp - (G @ n - a * (P @ m)) / s1
        zv = lr + (G.T @ m + b * (Q @ n)) / s2
        R = np.concatenate([u - logsumexp(u) - (zu - logsumexp(zu)), v - logsumexp(v) - (zv - logsumexp(zv))])
        return R, m, n, np.exp(zu - logsumexp(zu)), np.exp(zv - logsumexp(zv))

    R, m, n, psi, phi = resid(u, v)
    norm = float(np.linalg.norm(R))
    for _ in range(max_newton):
        if np.abs(m - psi).sum() + np.abs(n - phi).sum() <= tol or norm <= 1e-15:
            break
        Sm, Sn = np.diag(m) - np.outer(m, m), np.diag(n) - np.outer(n, n)
        Cm, Cn = eyeA - np.outer(np.ones(A), psi), eyeB - np.outer(np.ones(B), phi)
        J = np.block(
            [
                [eyeA - np.outer(np.ones(A), m) - Cm @ (a * P) @ Sm / s1, Cm @ G @ Sn / s1],
                [-Cn @ G.T @ Sm / s2, eyeB - np.outer(np.ones(B), n) - Cn @ (b * Q) @ Sn / s2],
            ]
        )
        step = np.linalg.lstsq(J, -R, rcond=None)[0]
        t = 1.0
        while t > 1e-10:
            u2, v2 = u + t * step[:A], v + t * step[A:]
            out = resid(u2, v2)
            n2 = float(np.linalg.norm(out[0]))
            if np.isfinite(n2) and n2 < norm:
                break
            t *= 0.5
        else:
            break  # no decrease along the Newton direction
        u, v, norm = u2 - u2.max(), v2 - v2.max(), n2
        R, m, n, psi, phi = out
    return m, n, float(np.abs(m - psi).sum() + np.abs(n - phi).sum())


def solve_saddle(
    G: np.ndarray,
    sigma: float,
    sigma2: float,
    log_pi: np.ndarray,
    log_rho: np.ndarray,
    *,
    a: float = 0.0,
    P: np.ndarray | None = None,
    b: float = 0.0,
    Q: np.ndarray | None = None,
    init: tuple[np.ndarray, np.ndarray] | None = None,
    tol: float = 1e-15,
    max_newton: int = 60,
) -> tuple[np.ndarray, np.ndarray]:
    """Fixed point of ``(Ψ, Φ)`` for ``min_μ max_ν μᵀGν − (a/2)μᵀPμ + (b/2)νᵀQν + σKL(μ|π) − σ′KL(ν|ρ)``.

    Newton on the fixed-point residual ``R(μ,ν) = (μ − Ψ, ν − Φ)`` in probability coordinates with the
    analytic Jacobian (``dΨ = S_Ψ (aP dμ − G dν)/σ``, ``dΦ = S_Φ (Gᵀ dμ + bQ dν)/σ′``, ``S_p = diag p − ppᵀ``) and
    backtracking on ``‖R‖₁``, first from ``init`` (a warm start) if given; otherwise — or if that stalls — by
    **continuation in the temperature**: both temperatures are multiplied by ``c = max(1, 2κ)`` so that the
    joint best-response map is a ``½``-contraction (finite-set bound), solved there by best-response iteration, and
    ``c`` is lowered to 1 geometrically (ratio 0.5, halved in log-scale whenever Newton stalls), Newton
    warm-started from the previous stage each time. Raises ``RuntimeError`` if the final residual exceeds
    ``10³·tol·max(1, max|G|/σ)`` (the round-off floor of ``Ψ`` at low temperature; the caller certifies the
    gap)."""
    A, B = G.shape
    P = np.eye(A) if P is None else P
    Q = np.eye(B) if Q is None else Q
    # round-off floor of the residual: Psi is computed from g/sigma, so its relative error is eps·|g|/sigma
    scale = float(np.abs(G).max() + a * np.abs(P).max() + b * np.abs(Q).max())
    accept = tol * 1e3 * max(1.0, scale / min(sigma, sigma2))

    def stage_args(c):
        return (G, a, P, b, Q, c * sigma, c * sigma2, log_pi, log_rho)

    if init is not None:
        mu, nu = (np.asarray(x, dtype=float).copy() for x in init)
        mu, nu, res = _newton(mu, nu, stage_args(1.0), tol, max_newton)
        if res <= accept:
            return mu, nu
    kappa = max(
        a * omega(P) / (2 * sigma) + omega(G) / (2 * sigma2), omega(G) / (2 * sigma) + b * omega(Q) / (2 * sigma2)
    )
    c = max(1.0, 2.0 * kappa)
    args = stage_args(c)
    mu, nu = np.exp(log_pi - logsumexp(log_pi)), np.exp(log_rho - logsumexp(log_rho))
    for _ in range(200):  # 1/2-contraction: 200 steps reach round-off
        psi, phi = _br_pair(mu, nu, *args)
        if np.abs(psi - mu).sum() + np.abs(phi - nu).sum() <= tol:
            break
        mu, nu = psi, phi
    mu, nu, res = _newton(mu, nu, args, tol, max_newton)
    ratio = 0.5
    while c > 1.0:
        c_new = max(1.0, c * ratio)
        m2, n2, r2 = _newton(mu, nu, stage_args(c_new), tol, max_newton)
        if r2 <= accept:
            mu, nu, res, c = m2, n2, r2, c_new
            ratio = max(0.5, ratio**2)
        else:
            ratio = np.sqrt(ratio)
            if ratio > 0.9999:
                break
    if c > 1.0 or res > accept:
        raise RuntimeError(
            f"regularised saddle point not found: fixed-point residual {res:.3g} at temperature multiplier {c:.4g}"
        )
    return mu, nu


# ------------------------------------------------------------------------------------------ curves
RATE_FLOOR = 1e-12  # gaps at or below this are round-off: the rate is fitted before the curve reaches it


def gap_metrics(gaps: Sequence[float], tol: float) -> dict[str, float]:
    """Gap metrics of a per-step gap curve ``gaps[k−1]`` = gap of the profile played at step ``k``:

    ``steps_to_tol``  first step with gap ``≤ tol`` (``K + 1`` if never);
    ``rate``          ``exp`` of the least-squares slope of ``log gap`` over the second half of the steps
                      *before the gap first reaches the round-off floor* ``1e−12`` (the linear convergence
                      factor per step; the second half of the curve when the floor is never reached — a run that
                      converges to machine precision early would otherwise fit a flat line); NaN with fewer
                      than 3 points;
    ``cycling``       1.0 if the gap did not decrease over the last 20 % of the steps and is still above
                      ``tol``, else 0.0."""
    g = np.asarray(gaps, dtype=float)
    K = g.size
    if K == 0:
        return {"steps_to_tol": np.nan, "rate": np.nan, "cycling": np.nan}
    hit = np.flatnonzero(g <= tol)
    steps = float(hit[0] + 1) if hit.size else float(K + 1)
    floor = np.flatnonzero(g <= RATE_FLOOR)
    end = int(floor[0]) if floor.size else K
    seg = g[end // 2 : end]
    if seg.size >= 3:
        slope = np.polyfit(np.arange(seg.size, dtype=float), np.log(seg), 1)[0]
        rate = float(np.exp(slope))
    else:
        rate = float("nan")
    w = max(2, int(np.ceil(0.2 * K)))
    tail = g[-w:] if K >= 2 else g
    cyc = float(tail.size >= 2 and tail[1:].min() >= tail[0] and g[-1] > tol)
    return {"steps_to_tol": steps, "rate": rate, "cycling": cyc}


# ------------------------------------------------------------------------- linearisation, step size
STATUSES = ("converged", "not converged", "not contractive", "grid-edge")  # episode_metrics()["status"]


def centred_norm(M: np.ndarray) -> float:
    """``‖Π_A M Π_B‖₂`` (``Π`` = the projection orthogonal to the constants): the part of ``M`` a Gibbs map
    sees, since ``S_p 1 = 0``."""
    M = np.asarray(M, dtype=float)
    Mc = M - M.mean(axis=0, keepdims=True) - M.mean(axis=1, keepdims=True) + M.mean()
    return float(np.linalg.norm(Mc, 2))


def jacobian_bounds(
    G: np.ndarray,
    sigma: float,
    sigma2: float,
    *,
    a: float = 0.0,
    P: np.ndarray | None = None,
    b: float = 0.0,
    Q: np.ndarray | None = None,
) -> dict[str, float]:
    """The rectangle ``{0 ≤ Re λ ≤ δ, |Im λ| ≤ c}`` holding the spectrum of the Jacobian of the joint Best
    Response map ``(Ψ, Φ)`` of ``μᵀGν − (a/2)μᵀPμ + (b/2)νᵀQν + σKL(μ|π) − σ′KL(ν|ρ)`` at *every* profile
    (module docstring): ``{"self": δ, "cross": c, "l1": ρ₁}``. Needs only the payoff data and temperatures,
    not the equilibrium."""
    G = np.asarray(G, dtype=float)
    A, B = G.shape
    P = np.eye(A) if P is None else np.asarray(P, dtype=float)
    Q = np.eye(B) if Q is None else np.asarray(Q, dtype=float)
    oG = omega(G)
    d1, d2 = a * omega(P) / (2 * sigma), b * omega(Q) / (2 * sigma2)
    c1, c2 = oG / (2 * sigma), oG / (2 * sigma2)
    rho1 = (d1 + d2) / 2 + float(np.sqrt(((d1 - d2) / 2) ** 2 + c1 * c2))

    def lam_max_centred(M):
        n = M.shape[0]
        Pi = np.eye(n) - 1.0 / n
        return float(np.linalg.eigvalsh(Pi @ ((M + M.T) / 2) @ Pi).max()) if n > 1 else 0.0

    delta = max(a * lam_max_centred(P) / (2 * sigma) if a else 0.0, b * lam_max_centred(Q) / (2 * sigma2) if b else 0.0)
    cross = centred_norm(G) / (2 * np.sqrt(sigma * sigma2))
    return {"self": float(min(max(delta, 0.0), rho1)), "cross": float(min(cross, rho1)), "l1": float(rho1)}


def bilinear_jacobian(
    M: np.ndarray,
    mu: np.ndarray,
    nu: np.ndarray,
    sigma: float,
    sigma2: float,
    *,
    a: float = 0.0,
    P: np.ndarray | None = None,
    b: float = 0.0,
    Q: np.ndarray | None = None,
) -> np.ndarray:
    """The Jacobian ``[[S_Ψ aP/σ, −S_Ψ M/σ], [S_Φ Mᵀ/σ′, S_Φ bQ/σ′]]`` of ``(Ψ, Φ)`` at a fixed point
    ``(μ, ν) = (Ψ, Φ)`` (``dΨ = S_Ψ(aP dμ − M dν)/σ``, ``dΦ = S_Φ(Mᵀ dμ + bQ dν)/σ′``)."""
    A, B = M.shape
    Sm, Sn = np.diag(mu) - np.outer(mu, mu), np.diag(nu) - np.outer(nu, nu)
    top = np.hstack([a * Sm @ (np.eye(A) if P is None else P) / sigma, -Sm @ M / sigma])
    bot = np.hstack([Sn @ M.T / sigma2, b * Sn @ (np.eye(B) if Q is None else Q) / sigma2])
    return np.vstack([top, bot])


def auto_step(self_bound: float, cross_bound: float) -> float:
    """``h* = min(1, (1 − δ)/((1 − δ)² + c²))``, the step minimising the worst Euler damping
    ``(1 − h(1 − δ))² + h²c²`` over the spectral rectangle (module docstring); ``δ ≥ 1``: ``min(1, 1/(1 + c²))``
    [design fallback, no step is certified]."""
    d, c = float(self_bound), float(cross_bound)
    if not (np.isfinite(d) and np.isfinite(c)) or d < 0 or c < 0:
        raise ValueError(f"spectral bounds must be finite and >= 0, got self={self_bound!r}, cross={cross_bound!r}")
    if d >= 1.0:
        return float(min(1.0, 1.0 / (1.0 + c * c)))
    return float(min(1.0, (1.0 - d) / ((1.0 - d) ** 2 + c * c)))


def euler_factor_bound(h: float, self_bound: float, cross_bound: float) -> float:
    """``ρ(h) = √((1 − h(1 − δ))² + h²c²)``: the largest per-step damping factor of a deviation over the
    spectral rectangle (``0 < h ≤ 1``). A gap quadratic in the deviation (NI error, ``F^σ − F^σ*``) decays
    like ``ρ(h)²``."""
    d, c = float(self_bound), float(cross_bound)
    return float(np.sqrt((1.0 - h * (1.0 - d)) ** 2 + (h * c) ** 2))


def euler_factor(h: float, eigenvalues: np.ndarray) -> float:
    """``max_j |1 − h + hλ_j|``: the exact linearised damping factor per Euler step, given the spectrum of the
    Jacobian of the best-response map at the fixed point. The Jacobian maps into the tangent space (its
    rows sum to 0 per block); the zero eigenvalues of the normal directions give ``1 − h``, never more than a
    tangent eigenvalue's factor since ``Re λ ≥ 0``."""
    lam = np.asarray(eigenvalues, dtype=complex).ravel()
    if lam.size == 0:
        return float(abs(1.0 - h))
    return float(np.abs(1.0 - h + h * lam).max())
