"""``agf`` numerical core for ``FeatureStaircase-v0`` — Alternating Gradient Flows (Kunin, Marchetti, Chen,
Karkada, Simon, DeWeese, Ganguli, Miolane, *Alternating Gradient Flows: A Theory of Feature Learning in
Two-layer Neural Networks*, NeurIPS 2025, arXiv:2506.06489; authors' code
``danielkunin/alternating-gradient-flows``, notebook ``diagonal-linear-network``).

Diagonal linear network (this module's track)
----------------------------------------------
``β = u ⊙ v`` with loss ``L(β) = ½·mean_j (y_j − x_jᵀβ)²`` and gradient flow from ``u = √2·α·1``, ``v = 0``.
With ``g = Xᵀr/n`` (``r = y − Xβ``) each coordinate obeys ``u̇_i = g_i v_i``, ``v̇_i = g_i u_i``: a hyperbolic
rotation of ``(u_i, v_i)``. Writing ``u_i ± v_i = √2 α e^{±s_i/2}`` defines the **phase** ``s_i`` with

    ṡ_i = 2 g_i,   ‖θ_i‖² = u_i² + v_i² = 2α² cosh(s_i),   β_i = α² sinh(s_i).

A coordinate stays negligible (dormant) until ``‖θ_i‖ = 1``, i.e. ``|s_i| = S = arccosh(1/(2α²))``
(``≈ 2 log(1/α)``), and then fits within a time ``O(1)`` (active). AGF [paper] alternates:

1. **Utility maximisation** (dormant coordinates, residual frozen): the utility of dormant ``i`` is
   ``U_i = |g_i|/2``; its phase moves at speed ``2|g_i| = 4U_i``. The time until ``i`` activates is
   ``τ_i = (S − |s_i|)/(2|g_i|)`` if ``s_i g_i ≥ 0`` else ``(S + |s_i|)/(2|g_i|)``; ``i* = argmin τ_i``,
   the clock advances by ``τ* = τ_{i*}``.
2. **Memory**: every dormant phase advances ``s_i ← s_i + 2 g_i τ*`` (accumulated utility is kept).
3. **Cost minimisation** (active set ``A``, instantaneous): ``β_A`` = least squares of ``y`` on ``X_A`` with
   each coordinate's sign fixed by its activation direction (``scipy.optimize.lsq_linear`` with one-sided
   bounds). A coordinate the constraint pins at 0 leaves ``A`` and returns to the dormant set with phase
   ``±S`` (the sign of its last activation): it re-activates at once if the gradient pushes it the same way,
   and with the opposite sign only after its phase has travelled ``2S``.
4. ``r ← y − X_A β_A``; record ``(t/lr, ½ mean r², i*)``. Stop when ``max_i |g_i| < grad_tol`` on the
   dormant set or every coordinate is active.

Times are gradient-flow times; ``t/lr`` converts to iterations of gradient descent with step ``lr``. As
``α → 0`` with time rescaled by ``log(1/α)`` this is the saddle-to-saddle limit of Pesme & Flammarion
(NeurIPS 2023) [paper: AGF → gradient flow, proved for diagonal nets].

Linear networks (:func:`agf_linear`) follow the same alternation on rank-one modes (its docstring); the solver
``agf`` (:class:`AGF`) dispatches on the problem's setting.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from papergym.agents.base import register_solver
from papergym.validate import boolean, in_range, positive_float

__all__ = [
    "Step",
    "agf_diagonal",
    "agf_linear",
    "activation_phase",
    "check_data",
    "linear_rescale",
    "linear_path",
    "agf_modular",
    "greedy_memoryless",
    "as_solution",
]


class Step(NamedTuple):
    """One predicted drop: the iteration ``t`` it happens at, the loss ``level`` after it, the ``feature``
    (coordinate) that activated."""

    t: float
    level: float
    feature: int


def activation_phase(alpha: float) -> float:
    """``S = arccosh(1/(2α²))``: the phase at which a coordinate started at ``u = √2α, v = 0`` reaches norm 1.
    Defined for ``0 < α < 1/√2``."""
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0 / np.sqrt(2.0):
        raise ValueError(f"alpha must be in (0, 1/sqrt(2)) for the activation phase to exist; got {alpha!r}")
    # arccosh(1/w) = log((1 + sqrt(1 − w²))/w) with w = 2α²: no overflow for tiny α
    w = 2.0 * alpha * alpha
    return float(np.log1p(np.sqrt(1.0 - w * w)) - np.log(w))


def check_data(X, y) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` as float64 ``(n, d)`` and ``(n,)``; ``ValueError`` naming the problem."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if X.ndim != 2 or X.shape[0] != y.shape[0] or X.shape[0] == 0:
        raise ValueError(f"X must be (n, d) and y (n,); got {X.shape} and {y.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("X and y must be finite")
    return X, y


def _signed_lstsq(X: np.ndarray, y: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Least squares of ``y`` on ``X`` with ``sign(β_i) ∈ {0, signs_i}``."""
    from scipy.optimize import lsq_linear

    lb = np.where(signs > 0, 0.0, -np.inf)
    ub = np.where(signs > 0, np.inf, 0.0)
    return lsq_linear(X, y, bounds=(lb, ub), method="bvls", tol=1e-12).x


def agf_diagonal(
    X,
    y,
    alpha: float,
    lr: float = 1.0,
    max_steps: int | None = None,
    grad_tol: float = 1e-12,
    zero_tol: float = 1e-12,
    phase: float | None = None,
) -> list[Step]:
    """The AGF staircase of a diagonal linear network (module docstring): the list of predicted drops
    ``Step(t, level, feature)`` with ``t`` in iterations of GD with step ``lr`` (``lr = 1``: flow time).
    ``phase`` overrides the activation phase ``S`` (the ``α → 0`` baseline uses ``2 log(1/α)``)."""
    X, y = check_data(X, y)
    n, d = X.shape
    S = activation_phase(alpha) if phase is None else positive_float(phase, "phase")
    positive_float(lr, "lr")
    max_steps = 4 * d + 4 if max_steps is None else int(max_steps)
    s = np.zeros(d)  # phases
    active = np.zeros(d, dtype=bool)
    sign = np.zeros(d)  # activation direction of each coordinate (0: never active)
    beta = np.zeros(d)
    r = y.copy()
    t = 0.0
    steps: list[Step] = []
    for _ in range(max_steps):
        g = X.T @ r / n
        dorm = ~active & (np.abs(g) > grad_tol)
        if not dorm.any():
            break
        gd, sd = g[dorm], s[dorm]
        with np.errstate(divide="ignore"):
            tau = np.where(sd * gd >= 0, S - np.abs(sd), S + np.abs(sd)) / (2.0 * np.abs(gd))
        tau = np.maximum(tau, 0.0)
        k = int(np.argmin(tau))
        i = int(np.flatnonzero(dorm)[k])
        t += float(tau[k])
        s[dorm] += 2.0 * gd * tau[k]  # memory: every dormant phase keeps its accumulated utility
        s[i] = np.sign(g[i]) * S
        active[i], sign[i] = True, np.sign(g[i])
        while True:  # cost minimisation with the activation signs; pinned coordinates leave
            idx = np.flatnonzero(active)
            b = _signed_lstsq(X[:, idx], y, sign[idx])
            pinned = np.abs(b) <= zero_tol * max(1.0, float(np.max(np.abs(b))))
            pinned[idx == i] = False  # the newcomer stays (it activated because it lowers the loss)
            if not pinned.any():
                break
            for j in idx[pinned]:
                active[j] = False
                s[j] = sign[j] * S
        beta[:] = 0.0
        beta[idx] = b
        r = y - X @ beta
        steps.append(Step(t / lr, 0.5 * float(np.mean(r**2)), i))
        if active.all():
            break
    return steps


# --------------------------------------------------------------------------------- linear networks
def linear_rescale(init: float) -> float:
    """``log(1/(√2·init))``: rescaled AGF time ``τ`` → gradient-flow time of a linear net initialised at scale
    ``init`` (authors' notebook ``fully-connected-linear-network``; a dormant rank-one neuron's log-norm grows at
    the rate of its utility and must climb from ``log(√2·init)`` to 0)."""
    init = float(init)
    if not 0.0 < init < 1.0 / np.sqrt(2.0):
        raise ValueError(f"init must be in (0, 1/sqrt(2)); got {init!r}")
    return float(-np.log(np.sqrt(2.0) * init))


def linear_path(Sxx, Syx, syy: float, directions) -> tuple[np.ndarray, list[float]]:
    """Cost minimisation of a linear net whose active neurons span ``directions`` (output-space unit vectors,
    columns): ``W_k = P_{U_k} W_ols`` (the least-squares map restricted to the learned output subspace) and the
    loss ``½ tr(W Σ_xx Wᵀ) − tr(W Σ_yxᵀ) + ½ tr Σ_yy`` after each prefix ``U_k`` of the directions. Returns
    ``(W_ols, [loss after k = 1, 2, … directions])``."""
    Sxx = np.asarray(Sxx, dtype=np.float64)
    Syx = np.asarray(Syx, dtype=np.float64)
    W_ols = np.linalg.lstsq(Sxx, Syx.T, rcond=None)[0].T
    D = np.asarray(directions, dtype=np.float64).reshape(Syx.shape[0], -1)
    levels = []
    for k in range(1, D.shape[1] + 1):
        Q = np.linalg.qr(D[:, :k])[0]
        W = Q @ (Q.T @ W_ols)
        levels.append(max(0.5 * float(np.vdot(W @ Sxx, W)) - float(np.vdot(W, Syx)) + 0.5 * float(syy), 0.0))
    return W_ols, levels


def agf_linear(
    Sxx, Syx, syy: float, init: float, lr: float = 1.0, memory: bool = True, tol: float = 1e-12
) -> list[Step]:
    """The AGF staircase of a two-layer linear network ``W₂W₁`` (width ≥ rank) trained on ``½ mean ‖y − W₂W₁x‖²``
    from scale ``init`` (authors' notebook ``fully-connected-linear-network``):

    * **Utility.** With ``k`` modes active (output subspace ``U_k``), the residual cross-covariance is
      ``R_k = Σ_yx − W_kΣ_xx = (I − P_{U_k})Σ_yx``; a dormant rank-one neuron aligned with its ``m``-th singular pair
      grows at rate ``σ_m(R_k)`` (its utility), so the remaining modes, in order, accumulate the rescaled phases
      ``φ_{k+m} += σ_{m+1}(R_k)·Δτ`` (``memory``; ``memory=False`` restarts them at 0 after every jump: the
      ``greedy-memoryless`` rule).
    * **Next activation.** Mode ``k + 1`` activates when its phase reaches 1: ``Δτ = (1 − φ_{k+1})/σ_1(R_k)``;
      its direction is ``R_k``'s top left singular vector (the first jump at ``τ = 1/σ_1(Σ_yx)``).
    * **Cost minimisation.** ``W_{k+1} = P_{U_{k+1}} W_ols`` (:func:`linear_path`).

    Times: iteration ``τ·log(1/(√2·init))/lr``. The feature of a step is the index of the eigenvector of
    ``Σ_yxΣ_xx⁻¹Σ_yxᵀ`` (decreasing eigenvalue) most aligned with the new direction. With whitened or aligned
    inputs ``σ_m(R_k) = σ_{k+m}(Σ_yx)`` and every mode jumps at ``1/σ_j``: Saxe et al.'s closed form."""
    from papergym.envs.tasks.staircase import linear_modes

    Sxx = np.asarray(Sxx, dtype=np.float64)
    Syx = np.asarray(Syx, dtype=np.float64)
    if Sxx.ndim != 2 or Sxx.shape[0] != Sxx.shape[1] or Syx.ndim != 2 or Syx.shape[1] != Sxx.shape[0]:
        raise ValueError(f"Sxx must be (d, d) and Syx (c, d); got {Sxx.shape} and {Syx.shape}")
    if not (np.all(np.isfinite(Sxx)) and np.all(np.isfinite(Syx)) and np.isfinite(syy)):
        raise ValueError("Sxx, Syx and syy must be finite")
    positive_float(lr, "lr")
    scale = linear_rescale(init)
    c = Syx.shape[0]
    _, E = linear_modes(Sxx, Syx)
    phi = np.zeros(c)
    tau = 0.0
    dirs: list[np.ndarray] = []
    steps: list[Step] = []
    for k in range(min(c, Sxx.shape[0])):
        if dirs:
            Q = np.linalg.qr(np.stack(dirs, axis=1))[0]
            R = Syx - Q @ (Q.T @ Syx)
        else:
            R = Syx
        Ur, sig, _ = np.linalg.svd(R)
        sig = sig[: c - k]
        if sig.size == 0 or sig[0] <= tol * max(1.0, float(np.abs(Syx).max())):
            break
        dt = max((1.0 - phi[k]) / sig[0], 0.0)
        phi[k : k + sig.size] += sig * dt
        tau += dt
        if not memory:
            phi[k + 1 :] = 0.0
        u = Ur[:, 0]
        dirs.append(u)
        level = linear_path(Sxx, Syx, syy, np.stack(dirs, axis=1))[1][-1]
        steps.append(Step(tau * scale / lr, level, int(np.argmax(np.abs(E.T @ u)))))
    return steps


# ---------------------------------------------------------------------------------- modular addition
def _quad_loss_grad(z: np.ndarray, X: np.ndarray, Y: np.ndarray, m: int) -> tuple[float, np.ndarray]:
    """Loss ``½ mean ‖y − W_out (W_in x)²‖²`` of ``m`` neurons packed in ``z = [W_in.ravel(), W_out.ravel()]`` and
    its gradient."""
    N, q = X.shape
    Wi = z[: m * q].reshape(m, q)
    Wo = z[m * q :].reshape(Y.shape[1], m)
    h = X @ Wi.T
    a = h * h
    r = Y - a @ Wo.T
    g_o = -(r.T @ a) / N
    g_i = -((2.0 * h * (r @ Wo)).T @ X) / N
    return 0.5 * float(np.einsum("ij,ij->", r, r)) / N, np.concatenate([g_i.ravel(), g_o.ravel()])


def _cost_flow(
    z: np.ndarray, X: np.ndarray, Y: np.ndarray, m: int, max_evals: int, stop: float, cos_min: float = 0.9
) -> tuple[np.ndarray, int]:
    """Gradient flow of the active neurons' loss from ``z``, by Euler steps with step control: a step ``−h∇L`` is
    accepted when the loss does not increase and the new gradient stays within ``arccos(cos_min)`` of the old one
    (``h`` then grows by 1.25; otherwise it halves and the step is retried). Follows the flow through the transient
    after an activation into the basin it reaches; stops when ``‖∇L‖`` has fallen to ``stop`` times its largest
    value on the path, or after ``max_evals`` gradient evaluations. Returns ``(z, evaluations)``."""
    f, g = _quad_loss_grad(z, X, Y, m)
    ev, gmax = 1, float(np.linalg.norm(g))
    h = 0.05 / max(gmax, 1e-300)  # first step: 5 % of a unit parameter change
    while ev < max_evals:
        gn = float(np.linalg.norm(g))
        gmax = max(gmax, gn)
        if gn <= stop * gmax or gn < 1e-12:
            break
        z1 = z - h * g
        f1, g1 = _quad_loss_grad(z1, X, Y, m)
        ev += 1
        if f1 <= f and float(g @ g1) >= cos_min * gn * float(np.linalg.norm(g1)):
            z, f, g = z1, f1, g1
            h *= 1.25
        else:
            h *= 0.5
    return z, ev


def agf_modular(
    X,
    Y,
    W_in,
    W_out,
    lr: float,
    momentum: float = 0.0,
    horizon: float | None = None,
    eta: float = 0.05,
    threshold: float = 1.0,
    memory: bool = True,
    frozen_utility: bool = False,
    cost_iters: int = 300,
    flow_evals: int = 1000,
    flow_stop: float = 0.03,
    deadline: float | None = None,
    max_steps: int | None = None,
    max_work: float | None = None,
) -> tuple[list[Step], int]:
    """AGF for a two-layer network with quadratic activation, ``f(x) = Σ_i o_i (w_iᵀx)²`` (neuron ``θ_i = (w_i,
    o_i)``), as in the authors' modular-arithmetic notebook:

    * **Utility maximisation** (dormant neurons, residual ``r`` frozen): ``U_i(θ) = mean_x ⟨r(x), o (wᵀx)²⟩``;
      every dormant neuron follows ``θ̇_i = ∇U_i(θ_i)`` (the exact small-norm dynamics: ``U`` is 3-homogeneous,
      so ``d‖θ‖/dt = 3U(θ̂)‖θ‖²`` and the norm blows up in finite time once the direction aligns). Integrated by
      Euler steps of flow time ``dt = eta / max_i ‖∇U_i‖/‖θ_i‖`` (each step changes the fastest neuron's
      parameters by a relative ``eta``), from the problem's initial parameters; the first neuron to reach norm
      ``threshold`` activates.
    * **Memory**: the other dormant neurons keep their flowed parameters (``memory=False``: they restart from
      their initial ones after every activation, the ``greedy-memoryless`` rule). ``frozen_utility=True`` keeps
      ``r = y`` for the utilities (``independent-modes``: every neuron's activation time fixed by the initial
      correlations).
    * **Cost minimisation**: the active neurons (dormant ones contribute ``O(‖θ‖³)``, ignored) descend the loss
      by gradient flow from where the activation left them (the notebook: 10⁴ steps of heavy-ball GD at lr 0.01),
      so they settle in the basin the flow reaches: :func:`_cost_flow` (at most ``flow_evals`` gradient
      evaluations, until the gradient falls to ``flow_stop`` of its peak), then L-BFGS (at most ``cost_iters``
      iterations) polishes inside that basin; the new residual and level follow. L-BFGS alone, from the
      activation point, takes a first step of unit length in parameter space and can land in another basin: on
      seed 2006 the first frequency-1 neuron ended as a frequency-3 fit with a 2 % drop where gradient descent
      drops 40 %.

    Flow time converts to iterations of heavy-ball GD as ``t (1 − momentum)/lr``. A step's feature is the
    frequency ``k ≥ 1`` with the largest amplitude in the activating neuron's output weights ``o_i``. Stops when
    every neuron is active, the loss is below ``1e−6·ℓ_0``, the next activation lies beyond ``2·horizon``, or
    ``deadline`` (``time.perf_counter()``) passes or ``max_work`` evaluations are spent. Returns ``(steps, work)`` with
    ``work`` the number of full-batch gradient evaluations (utility steps + cost-minimisation evaluations)."""
    import time

    from scipy.optimize import minimize

    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    Wi0, Wo0 = np.array(W_in, dtype=np.float64), np.array(W_out, dtype=np.float64)
    if (
        X.ndim != 2
        or Y.ndim != 2
        or X.shape[0] != Y.shape[0]
        or Wi0.shape != (Wo0.shape[1], X.shape[1])
        or Wo0.shape[0] != Y.shape[1]
    ):
        raise ValueError(f"shapes do not fit: X {X.shape}, Y {Y.shape}, W_in {Wi0.shape}, W_out {Wo0.shape}")
    positive_float(lr, "lr")
    in_range(momentum, "momentum", 0, 1, low_closed=True)
    positive_float(eta, "eta")
    positive_float(threshold, "threshold")
    to_iter = (1.0 - momentum) / lr
    t_max = math.inf if horizon is None else 2.0 * float(horizon) / to_iter
    N, q = X.shape
    Wi, Wo = Wi0.copy(), Wo0.copy()
    H = Wi.shape[0]
    dormant = np.ones(H, dtype=bool)
    l0 = 0.5 * float(np.einsum("ij,ij->", Y, Y)) / N
    r_util = Y.copy()
    t, work, steps = 0.0, 0, []
    while dormant.any():
        D = np.flatnonzero(dormant)
        while True:  # utility maximisation: integrate the dormant flow until one neuron reaches the threshold
            h = X @ Wi[D].T
            gw = (2.0 / N) * (((r_util @ Wo[:, D]) * h).T @ X)
            go = (1.0 / N) * (r_util.T @ (h * h))
            rho = np.sqrt((Wi[D] ** 2).sum(1) + (Wo[:, D] ** 2).sum(0))
            work += 1
            if rho.max() >= threshold:
                break
            speed = float((np.sqrt((gw**2).sum(1) + (go**2).sum(0)) / np.maximum(rho, 1e-300)).max())
            if (
                speed <= 1e-300
                or t > t_max
                or (deadline is not None and time.perf_counter() > deadline)
                or (max_work is not None and work >= max_work)
            ):
                return steps, work
            dt = eta / speed
            Wi[D] += dt * gw
            Wo[:, D] += dt * go
            t += dt
        i = int(D[np.argmax(rho)])
        dormant[i] = False
        A = np.flatnonzero(~dormant)
        z0 = np.concatenate([Wi[A].ravel(), Wo[:, A].ravel()])
        z0, ev = _cost_flow(z0, X, Y, len(A), int(flow_evals), float(flow_stop)) if flow_evals > 0 else (z0, 0)
        res = minimize(
            _quad_loss_grad,
            z0,
            args=(X, Y, len(A)),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": int(cost_iters), "gtol": 1e-9, "ftol": 1e-12},
        )
        work += ev + int(res.nfev)
        Wi[A] = res.x[: len(A) * q].reshape(len(A), q)
        Wo[:, A] = res.x[len(A) * q :].reshape(Y.shape[1], len(A))
        level = float(res.fun)
        if not frozen_utility:
            h = X @ Wi[A].T
            r_util = Y - (h * h) @ Wo[:, A].T
        if not memory:
            rest = np.flatnonzero(dormant)
            Wi[rest], Wo[:, rest] = Wi0[rest], Wo0[:, rest]
        spec = np.abs(np.fft.rfft(Wo[:, i]))
        steps.append(Step(t * to_iter, level, int(np.argmax(spec[1:]) + 1)))
        if (
            level < 1e-6 * l0
            or (deadline is not None and time.perf_counter() > deadline)
            or (max_steps is not None and len(steps) >= max_steps)
            or (max_work is not None and work >= max_work)
        ):
            break
    return steps, work


def greedy_memoryless(X, y, alpha: float, lr: float = 1.0, grad_tol: float = 1e-12) -> list[Step]:
    """Greedy selection without memory (the ``memory=False`` ablation of ``agf`` on the diagonal-linear
    setting; also the ``greedy-memoryless`` baseline of :mod:`papergym.baselines.solvers.staircase`)."""
    X, y = check_data(X, y)
    n, d = X.shape
    S = activation_phase(alpha)
    active: list[int] = []
    t, r, steps = 0.0, y.copy(), []
    for _ in range(d):
        g = X.T @ r / n
        g[active] = 0.0
        i = int(np.argmax(np.abs(g)))
        if abs(g[i]) <= grad_tol:
            break
        t += S / (2.0 * abs(g[i]))
        active.append(i)
        b = np.linalg.lstsq(X[:, active], y, rcond=None)[0]
        r = y - X[:, active] @ b
        steps.append(Step(t / lr, 0.5 * float(np.mean(r**2)), i))
    return steps


# ------------------------------------------------------------------------------------------ solver
def as_solution(steps: list[Step]) -> list[tuple[float, float, int]]:
    return [(float(s.t), float(s.level), int(s.feature)) for s in steps]


def linear_problem_stats(problem) -> tuple[np.ndarray, np.ndarray, float]:
    """``(Σ_xx, Σ_yx, tr Σ_yy)`` of a ``linear``-setting problem (full batch)."""
    from papergym.envs.tasks.staircase import linear_stats

    return linear_stats(problem.X, problem.y)


def modular_solution(problem, budget, report, **kw) -> list[tuple[float, float, int]]:
    """:func:`agf_modular` on a ``modular-addition`` problem, stopping at 90 % of the budget's seconds or 95 % of
    its work, with the work (full-batch gradient evaluations) declared to ``report``. The predicted steps are read
    with the task's drop rules (:func:`papergym.envs.tasks.staircase.merge_steps`: a sub-drop under 10 % or a
    plateau shorter than 4 % of its start merges, as in the measured staircase)."""
    import time

    from papergym.envs.tasks.staircase import merge_steps

    dl, mw = None, None
    if budget is not None and getattr(budget, "max_seconds", None):
        dl = time.perf_counter() + 0.9 * float(budget.max_seconds)
    if budget is not None and getattr(budget, "max_work", None):
        mw = 0.95 * float(budget.max_work)
    steps, work = agf_modular(
        problem.X,
        problem.y,
        problem.init["W_in"],
        problem.init["W_out"],
        problem.lr,
        problem.momentum,
        problem.horizon,
        deadline=dl,
        max_work=mw,
        **kw,
    )
    merged = merge_steps(as_solution(steps), problem.l0, problem.horizon)
    sol = merged or [(float(problem.horizon) * 2.0, float(problem.l0), -1)]
    if report is not None:
        report(sol, iteration=len(steps), work=work)
    return sol


class AGF:
    """``agf``: the staircase predicted by Alternating Gradient Flows from the public problem alone
    (:func:`agf_diagonal` for ``diagonal-linear``, :func:`agf_linear` for ``linear``); no gradient-descent
    iteration is run. ``memory=False`` resets the dormant phases after every jump (ablation)."""

    def __init__(self, seed: int | None = None, memory: bool = True, eta: float = 0.05):
        self.memory = boolean(memory, "memory")
        self.eta = in_range(eta, "eta", 0, 0.5, high_closed=True)  # relative step of the utility flow (modular)

    def solve(self, problem, budget, report):
        if problem.setting == "diagonal-linear":
            if not self.memory:
                return as_solution(greedy_memoryless(problem.X, problem.y, problem.alpha, lr=problem.lr))
            return as_solution(agf_diagonal(problem.X, problem.y, problem.alpha, lr=problem.lr))
        if problem.setting == "linear":
            Sxx, Syx, syy = linear_problem_stats(problem)
            return as_solution(agf_linear(Sxx, Syx, syy, problem.alpha, lr=problem.lr, memory=self.memory))
        if problem.setting == "modular-addition":
            return modular_solution(problem, budget, report, memory=self.memory, eta=self.eta)
        raise ValueError(f"agf has no rule for setting {problem.setting!r}")


def _agf(*, seed=None, **hp):
    return AGF(seed=seed, **hp)


register_solver(
    "agf",
    _agf,
    tasks=["FeatureStaircase-v0"],
    role="paper",
    description="Alternating Gradient Flows: utility maximisation with memory over dormant units, "
    "(sign-constrained) least squares over active ones; predicts drop times, levels, features",
    defaults={"memory": True, "eta": 0.05},
)
