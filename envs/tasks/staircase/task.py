"""``FeatureStaircase-v0``: predict the loss staircase of gradient descent from small initialisation without
simulating it — the setting of *Alternating Gradient Flows: A Theory of Feature Learning in Two-layer Neural
Networks* (Kunin, Marchetti, Chen, Karkada, Simon, DeWeese, Ganguli, Miolane, NeurIPS 2025, arXiv:2506.06489;
``docs/papers/agf.md``; tags: see docs/conventions.md).

Settings (``setting=``; [design] unless tagged)
------------------------------------------------
* ``diagonal-linear`` (main track): ``β = u ⊙ v``, loss ``½ mean (y − Xβ)²``; rows of ``X`` ~ ``N(0, diag(i^{−a}))``,
  ``β* = 10·N(0, I)``, ``y = Xβ*`` [code: the notebook's high-dimensional example]; ``d ∈ {5, 10}``, ``n = 4d``,
  ``a ∈ {0.5, 1, 2}``, ``α ∈ {1e−2, 1e−4, 1e−8}`` (``u = √2α·1, v = 0`` [code]), ``lr = 1e−3``, 10⁶ iterations.
  ``paper_scale=True``: the notebook's ``d = 5, a = 1``, ``α`` from 0.5 to 1e−16 (only ``α < 1/√2`` has an
  activation phase).
* ``linear``: ``W₂W₁`` with ``c = H = d ∈ {4, 8}``, loss ``½ mean ‖y − W₂W₁x‖²``, ``y = Bx`` with ``B ~ N(0, 1)``
  and ``Σ_xx`` a ``1/i`` power law aligned with ``B``'s right singular vectors, 1,000 samples (full batch),
  entries ``N(0, init²/fan_in)``, ``init = 1e−8``, ``lr = 1e−3``, 10⁶ iterations [code: the notebook's setting at
  ``d = 10, init = 1e−15`` with ``paper_scale``].
* ``modular-addition``: quadratic two-layer network composing a template on ℤ_20
  (:mod:`papergym.envs.tasks.staircase.modular`, the notebook's template scale); heavy-ball GD with momentum 0.9
  and the notebook's lr 0.01 on ``nn.MSELoss``, i.e. ``lr = 0.02/p`` (1e−3) on this task's loss [code], 2·10⁵
  iterations (frequencies 1, 3 and 5 are all learned within them).

Public problem (:class:`StaircaseProblem`) and solution
-------------------------------------------------------
``X``, ``y``, the architecture, ``alpha`` (initial scale), the initial parameters ``init``, ``lr``, ``momentum``,
``horizon`` (iterations) and ``l0`` (initial loss). A solution is the list of predicted drops ``[(t_k, ℓ_k,
feature_k)]``: ``t`` in GD iterations, ``ℓ`` the plateau level after the drop, ``feature`` the coordinate
(diagonal), the eigen-mode index of ``Σ_yxΣ_xx⁻¹Σ_yxᵀ`` by decreasing eigenvalue (linear) or the frequency
(modular), or ``None`` / ``-1``; also a ``(K, 2|3)`` array or ``{"steps": ...}`` (:func:`parse_steps`).

Evaluator and ground truth
--------------------------
The evaluator runs the gradient descent itself, vectorised over the ``α`` values of a configuration
(:func:`gd_diagonal`, :func:`gd_linear`, ``gd_modular``; ``ground_truth="flow"``: the diagonal track's gradient flow
by ``solve_ivp`` DOP853 at ``t = lr·iteration``), extracts the staircase with per-drop feature attribution (below),
and caches it in the process and, for the public dev instances, on disk (``<cell cache>/_staircase/``; hidden test
instances' staircases are never written). It runs in the evaluator's ``prepare()``, before the solver's clock.

| metric | dir | definition |
|---|---|---|
| ``staircase_error`` (primary) | min | time + level + count + order terms (below) |
| ``time_error``, ``level_error``, ``count_error``, ``order_error`` | min | the four terms |
| ``n_predicted``, ``n_measured`` | — | predicted drops within the horizon; measured drops |
| ``gd_seconds`` | — | seconds of the simulated GD per ``α`` |
| ``time_s``, ``cost_ratio`` | min | the prediction's seconds; their ratio to ``gd_seconds`` (:meth:`StaircaseTask.finalize`) |
| ``diverged`` | min | 1 when the prediction holds a non-finite time or level, or a level above 10⁶ × the initial loss (a diverged or exploding flow integration); it is then scored as the null prediction ``[(horizon, ℓ₀)]`` |

Budget: 2 s and 1,000 declared full-batch gradient evaluations per prediction (30 s and 20,000 when modular addition
is among the settings, where AGF integrates the utility flow of 18 neurons, ≈ 3–6 s); solvers must not iterate or
integrate the training dynamics. A solver without a rule for a setting (``pesme-flammarion`` outside
diagonal nets) raises :class:`~papergym.envs.tasks.base.NotApplicable` and leaves no row.

Oracle and regret
-----------------
There is no oracle solver: the measured staircase is the reference, and ``staircase_error = 0`` is a perfect
prediction (tested with the measured drops themselves).

Paper
-----
Claims tested here: AGF predicts the order, timing and size of the drops; on diagonal nets it approaches GD as
``α → 0`` (jump-time error 26 % at ``α = 1e−2``, under 10 % at ``1e−8``); on linear nets it recovers Saxe et al.'s
singular-mode order and timing ``1/σ_j``; quadratic networks learn modular addition's Fourier frequencies in
decreasing amplitude order, each plateau at the energy not yet learned.

Empirical staircase ([design]) of a loss curve ``L(t)``, ``t = 0 … T`` (iterations):

* floor: ``L ← max(L, ε_ℓ)`` with ``ε_ℓ = 1e−6·L(0)`` (below it only round-off remains);
* a iteration ``t`` is *flat* when ``|log L(t′) − log L(t)| < 5e−3`` for ``t′ = max(t + 1, ⌈1.02 t⌉)`` (the
  window grows with ``t`` because jump times grow geometrically); a plateau is a maximal run of flat
  iterations, extended to the ``t′`` of its last member; overlapping plateaus merge;
* ``ℓ_k`` = median of ``L`` on plateau ``k`` (plateau 0 is the initial one); the drop into plateau ``k ≥ 1``
  happens at ``t_k`` = the first iteration after plateau ``k − 1`` with ``L < √(ℓ_{k−1} ℓ_k)``;
* what counts as a drop (ground-truth version 3): a plateau after the initial one must last at least
  ``MIN_PLATEAU = 2·(WINDOW − 1) = 0.04`` of its start iteration (one flat iteration extended by the look-ahead
  spans exactly ``0.02·t``: a slow decay that keeps crossing the flatness tolerance is a slope, not a plateau),
  and must lie at least ``MIN_DROP = 0.1`` in ``log L`` (≈ 10 %) below the last plateau kept; a plateau failing
  either rule is merged into the slope (dropped) and the next drop is measured from the last plateau kept; the
  plateau that the horizon cuts short (it reaches the last iteration) is exempt from the length rule.
  :func:`merge_steps` applies the same rules to a predicted step function (a solver may use it). Version 1 counted
  every plateau: on modular addition the slow decay after the last frequency-5 drop was chopped into ≈ 17 drops
  of 3–6 % each, spaced 2 % of ``t`` apart, which dominated every solver's count and level terms.

Score of predicted steps ``[(t̂, ℓ̂, feature)]`` against empirical ``[(t, ℓ, feature)]``: predictions
after the horizon are dropped (none left: the single step ``(horizon, ℓ_0)``); each empirical step ``k`` is
matched to the predicted step ``m(k)`` nearest in ``log max(ℓ, ε_ℓ)`` (the earlier on ties);

    staircase_error = mean_k |log(t̂_m(k)/t_k)| + mean_k |log(max(ℓ̂_m(k), ε)/max(ℓ_k, ε))| + |K̂ − K|/K + (1 − τ)/2

with ``τ`` Kendall's tau between the positions of first appearance of the features both sequences share
(``τ = 1`` when they share fewer than two). With ``K = 0`` only ``|K̂ − K|`` is scored.

Deviation from the first design's ``log((ℓ̂ + ε)/(ℓ + ε))``: the empirical levels are medians of the *floored* curve, so
the last plateau of an interpolating instance is ``ℓ = ε`` and that form charges an exact prediction
``ℓ̂ = 0`` with ``log 2``; flooring the prediction too (``max(ℓ̂, ε)``) scores it 0 and is otherwise the same
comparison on the scale the levels are measured on.
"""  # noqa: E501 - markdown table rows cannot wrap

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from papergym.envs.tasks.base import (
    Budget,
    InstanceRef,
    check_floats,
    check_ints,
    check_names,
    instance_params,
    register_task,
    split_instances,
)

__all__ = [
    "extract_staircase",
    "score_staircase",
    "diagonal_instance",
    "gd_diagonal",
    "gd_diagonal_losses",
    "flow_diagonal",
    "linear_instance",
    "linear_stats",
    "linear_modes",
    "linear_init",
    "gd_linear",
    "parse_steps",
    "compute_ground_truth",
    "ground_truth",
    "StaircaseProblem",
    "StaircaseEvaluator",
    "StaircaseTask",
    "TASK_ID",
    "SETTINGS",
    "FLAT_TOL",
    "WINDOW",
    "FLOOR",
    "MIN_PLATEAU",
    "MIN_DROP",
    "merge_steps",
]

FLAT_TOL = 5e-3  # [design] |Δ log L| below which an iteration is flat
WINDOW = 1.02  # [design] relative look-ahead t' = max(t + 1, ceil(1.02 t))
FLOOR = 1e-6  # [design] ε_ℓ = FLOOR · L(0)
MIN_PLATEAU = 2.0 * (WINDOW - 1.0)  # [design] a plateau lasts >= 0.04 t: twice the flatness look-ahead
MIN_DROP = 0.1  # [design] a drop lowers log L by >= 0.1 (about 10 %) from the last plateau kept


def diagonal_instance(d: int, n: int, a: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The main track's data (the notebook's "high-dimensional example"): rows of ``X`` ~
    ``N(0, diag(i^{−a}))``, ``β* = 10·N(0, I)``, ``y = Xβ*``. Returns ``(X, y, β*)``."""
    if d < 1 or n < 1:
        raise ValueError(f"d and n must be >= 1; got d={d}, n={n}")
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(13,)))
    X = rng.standard_normal((n, d)) * np.arange(1, d + 1) ** (-float(a) / 2.0)
    beta = 10.0 * rng.standard_normal(d)
    return X, X @ beta, beta


def gd_diagonal(
    X: Any, y: Any, alphas: Sequence[float], lr: float, iterations: int, beta_dtype: Any = np.float32
) -> tuple[np.ndarray, np.ndarray]:
    """Full-batch GD on ``β = u ⊙ v`` from ``u = √2α, v = 0``, vectorised over ``alphas``: the ground truth of
    the diagonal track. Returns ``(losses (A, T + 1), |β| (A, T + 1, d))`` (``|β|`` in ``beta_dtype`` to bound
    memory: 40 MB per α at ``T = 10⁶``, ``d = 10``)."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, d = X.shape
    al = np.asarray(alphas, dtype=np.float64).reshape(-1, 1)
    u, v = np.repeat(np.sqrt(2.0) * al, d, axis=1), np.zeros((len(al), d))
    T = int(iterations)
    losses = np.empty((len(al), T + 1))
    mags = np.empty((len(al), T + 1, d), dtype=beta_dtype)
    Xt = np.ascontiguousarray(X.T)
    for it in range(T + 1):
        beta = u * v
        r = y - beta @ Xt  # (A, n)
        losses[:, it] = 0.5 * np.einsum("an,an->a", r, r) / n
        mags[:, it] = np.abs(beta)
        if it == T:
            break
        g = r @ X / n
        u, v = u + lr * g * v, v + lr * g * u
    return losses, mags


def gd_diagonal_losses(X: Any, y: Any, alpha: float, lr: float, iterations: int) -> np.ndarray:
    """The loss curve of :func:`gd_diagonal` for one ``alpha``: ``(T + 1,)``."""
    return gd_diagonal(X, y, [alpha], lr, iterations)[0][0]


def linear_instance(d: int, n_samples: int, seed: int, power: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The secondary track's data (the notebook's setting): ``B ~ N(0, 1)^{d×d}`` (``c = d``) with SVD
    ``B = U diag(s) Vᵀ`` (``s`` decreasing), inputs ``x ~ N(0, Σ_xx)``, ``Σ_xx = V diag(i^{−power}) Vᵀ`` (the power
    law aligned with the right singular vectors of ``B``), ``y = Bx``. Returns ``(X (n, d), Y (n, d), B)``."""
    if d < 1 or n_samples < 1:
        raise ValueError(f"d and n_samples must be >= 1; got d={d}, n_samples={n_samples}")
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(13, 2)))
    B = rng.standard_normal((d, d))
    _, _, Vt = np.linalg.svd(B)
    lam = np.arange(1, d + 1, dtype=np.float64) ** (-float(power))
    X = (rng.standard_normal((int(n_samples), d)) * np.sqrt(lam)) @ Vt
    return X, X @ B.T, B


def linear_stats(X: Any, Y: Any) -> tuple[np.ndarray, np.ndarray, float]:
    """Full-batch sufficient statistics ``(Σ_xx, Σ_yx, tr Σ_yy)`` (means over the samples)."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[0] != Y.shape[0] or X.shape[0] == 0:
        raise ValueError(f"X must be (n, d) and Y (n, c); got {X.shape} and {Y.shape}")
    n = X.shape[0]
    return X.T @ X / n, Y.T @ X / n, float(np.einsum("nc,nc->", Y, Y) / n)


def linear_modes(Sxx: Any, Syx: Any) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues ``μ`` (decreasing) and eigenvectors (columns) of ``Σ_yx Σ_xx⁻¹ Σ_yxᵀ``: the modes a linear
    network learns; ``½ Σ_{j>k} μ_j`` is the loss above the least-squares floor once ``k`` of them are fit."""
    W_ols = np.linalg.solve(np.asarray(Sxx, dtype=np.float64).T, np.asarray(Syx, dtype=np.float64).T).T
    mu, E = np.linalg.eigh(W_ols @ np.asarray(Syx, dtype=np.float64).T)
    order = np.argsort(-mu, kind="stable")
    return np.maximum(mu[order], 0.0), E[:, order]


def linear_init(d: int, c: int, width: int, init: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``W₁ (width, d)`` and ``W₂ (c, width)`` with entries ``N(0, init²/fan_in)`` (from the seed)."""
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(13, 3)))
    return (
        rng.standard_normal((width, d)) * (init / math.sqrt(d)),
        rng.standard_normal((c, width)) * (init / math.sqrt(width)),
    )


def gd_linear(
    Sxx: Any, Syx: Any, syy: float, W1: Any, W2: Any, lr: float, iterations: int, modes: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Full-batch GD on ``f(x) = W₂W₁x`` with loss ``½ mean ‖y − W₂W₁x‖²`` from the sufficient statistics:
    ``G = Σ_yx − W₂W₁Σ_xx``, ``W₁ += lr W₂ᵀG``, ``W₂ += lr G W₁ᵀ``. Returns the losses ``(T + 1,)`` and the mode
    magnitudes ``‖e_jᵀ W₂W₁‖`` ``(T + 1, c)`` (float32) for the eigenvectors ``e_j`` of :func:`linear_modes`
    (``modes``; computed when ``None``), the feature attribution of the empirical staircase."""
    Sxx = np.asarray(Sxx, dtype=np.float64)
    Syx = np.asarray(Syx, dtype=np.float64)
    W1 = np.array(W1, dtype=np.float64)
    W2 = np.array(W2, dtype=np.float64)
    Et = (linear_modes(Sxx, Syx)[1] if modes is None else np.asarray(modes, dtype=np.float64)).T.copy()
    T = int(iterations)
    losses = np.empty(T + 1)
    mags = np.empty((T + 1, Syx.shape[0]), dtype=np.float32)
    half_syy = 0.5 * float(syy)
    for it in range(T + 1):
        W = W2 @ W1
        WS = W @ Sxx
        losses[it] = 0.5 * np.vdot(WS, W) - np.vdot(W, Syx) + half_syy
        EW = Et @ W
        mags[it] = np.sqrt(np.einsum("jd,jd->j", EW, EW))
        if it == T:
            break
        G = Syx - WS
        W1, W2 = W1 + lr * (W2.T @ G), W2 + lr * (G @ W1.T)
    return np.maximum(losses, 0.0), mags


def extract_staircase(losses: Any, features: Any = None) -> list[tuple[int, float, Any]]:
    """Empirical drops ``[(t_k, ℓ_k, feature_k)]`` (``k ≥ 1``) of a loss curve sampled at every iteration
    (module docstring). ``features``: optional ``(T + 1, F)`` magnitudes per iteration (e.g. ``|β_i|``); the
    feature of drop ``k`` is the one whose median magnitude grows most from plateau ``k − 1`` to ``k``.
    The initial plateau is returned as ``(0, ℓ_0, None)`` first."""
    L = np.asarray(losses, dtype=np.float64).reshape(-1)
    if L.size < 2 or not np.all(np.isfinite(L)) or L[0] <= 0:
        raise ValueError("losses must be a finite curve of at least 2 iterations with a positive initial loss")
    T = L.size - 1
    eps = FLOOR * L[0]
    logL = np.log(np.maximum(L, eps))
    t = np.arange(T + 1)
    tp = np.minimum(np.maximum(t + 1, np.ceil(WINDOW * t).astype(np.int64)), T)
    flat = (np.abs(logL[tp] - logL) < FLAT_TOL) & (t < T)
    # maximal runs of flat iterations, each extended to the t' of its last member; overlaps merge
    plateaus: list[list[int]] = []
    starts = np.flatnonzero(flat & ~np.concatenate([[False], flat[:-1]]))
    ends = np.flatnonzero(flat & ~np.concatenate([flat[1:], [False]]))
    for a, b in zip(starts, ends):
        hi = int(tp[b])
        if plateaus and a <= plateaus[-1][1]:
            plateaus[-1][1] = max(plateaus[-1][1], hi)
        else:
            plateaus.append([int(a), hi])
    Lf = np.maximum(L, eps)
    kept: list[list[int]] = []
    for a, b in plateaus:  # what counts as a drop (module docstring): long enough and deep enough
        if not kept:
            kept.append([a, b])
            continue
        lev = float(np.median(Lf[a : b + 1]))
        if (b - a >= MIN_PLATEAU * a or b >= T) and lev <= float(
            np.median(Lf[kept[-1][0] : kept[-1][1] + 1])
        ) * math.exp(-MIN_DROP):
            kept.append([a, b])
    plateaus = kept
    levels = [float(np.median(Lf[a : b + 1])) for a, b in plateaus]
    feats = None if features is None else np.abs(np.asarray(features, dtype=np.float64))
    out: list[tuple[int, float, Any]] = []
    if not plateaus:
        return out
    out.append((0, levels[0], None))
    for k in range(1, len(plateaus)):
        a_prev, b_prev = plateaus[k - 1]
        thr = math.sqrt(levels[k - 1] * levels[k])
        below = np.flatnonzero(Lf[b_prev:] < thr)
        tk = int(b_prev + below[0]) if len(below) else int(plateaus[k][0])
        feat = None
        if feats is not None:
            a, b = plateaus[k]
            grow = np.median(feats[a : b + 1], axis=0) - np.median(feats[a_prev : b_prev + 1], axis=0)
            feat = int(np.argmax(grow))
        out.append((tk, levels[k], feat))
    return out


def merge_steps(
    steps: Sequence[Sequence[Any]], l0: float, horizon: float | None = None
) -> list[tuple[float, float, Any]]:
    """A predicted staircase ``[(t, level, feature)]`` (non-decreasing ``t``) from the initial loss ``l0``, read
    with the extraction's rules (module docstring) as if its step function were the loss curve: a step whose
    plateau (until the next step, or ``horizon`` for the last) is shorter than ``MIN_PLATEAU · t`` (unless the
    horizon cuts it short), or whose level
    is not ``MIN_DROP`` in log below the last kept level (``l0`` at first), is merged away. A kept drop's time is
    that of the first step since the last kept one whose level falls below the geometric mean of the last kept
    level and the new one (as the extraction times measured drops), its feature that step's."""
    l0 = float(l0)
    if not (math.isfinite(l0) and l0 > 0):
        raise ValueError(f"l0 must be a positive finite initial loss; got {l0!r}")
    eps = FLOOR * l0
    pts = [(float(s[0]), float(s[1]), s[2] if len(s) > 2 else None) for s in steps]
    ends = [pts[i + 1][0] for i in range(len(pts) - 1)] + [math.inf if horizon is None else float(horizon)]
    lv = [math.log(max(p[1], eps)) for p in pts]
    out: list[tuple[float, float, Any]] = []
    prev, start = math.log(l0), 0  # log level of the last kept plateau; first step since it
    for i, (t, lev, _) in enumerate(pts):
        if (ends[i] - t >= MIN_PLATEAU * t or (horizon is not None and ends[i] >= float(horizon))) and lv[
            i
        ] <= prev - MIN_DROP:
            thr = 0.5 * (prev + lv[i])
            j = next(k for k in range(start, i + 1) if lv[k] < thr)
            out.append((pts[j][0], lev, pts[j][2]))
            prev, start = lv[i], i + 1
    return out


def score_staircase(
    predicted: Sequence[Sequence[Any]], empirical: Sequence[Sequence[Any]], horizon: float, l0: float
) -> dict[str, float]:
    """The four terms and their sum ``staircase_error`` (module docstring). ``empirical``: the drops
    ``(t_k, ℓ_k, feature_k)``, ``k ≥ 1`` (without the initial plateau)."""
    from scipy.stats import kendalltau

    eps = FLOOR * float(l0)
    pred = []
    for i, p in enumerate(predicted):
        if len(p) < 2:
            raise ValueError(f"step {i}: expected (t, level[, feature]), got {p!r}")
        tt, lev = float(p[0]), float(p[1])
        if not (math.isfinite(tt) and tt > 0 and math.isfinite(lev) and lev >= 0):
            raise ValueError(f"step {i}: t must be > 0 and the level >= 0, both finite; got {p!r}")
        if pred and tt < pred[-1][0]:
            raise ValueError(f"step {i}: times must be non-decreasing")
        pred.append((tt, lev, p[2] if len(p) > 2 else None))
    if not pred:
        raise ValueError("a prediction needs at least one step")
    pred = [p for p in pred if p[0] <= horizon] or [(float(horizon), float(l0), None)]
    K, Kh = len(empirical), len(pred)
    if K == 0:
        return {
            "staircase_error": float(Kh),
            "time_error": 0.0,
            "level_error": 0.0,
            "count_error": float(Kh),
            "order_error": 0.0,
        }
    # levels compare on the floored scale they are measured on: log max(ℓ, ε) (module docstring)
    lp = np.log(np.maximum(np.array([p[1] for p in pred]), eps))
    le_emp = [math.log(max(float(e[1]), eps)) for e in empirical]
    m = [int(np.argmin(np.abs(lp - v))) for v in le_emp]  # argmin: the earlier on ties
    te = float(np.mean([abs(math.log(pred[j][0] / max(e[0], 1))) for j, e in zip(m, empirical)]))
    le = float(np.mean([abs(lp[j] - v) for j, v in zip(m, le_emp)]))
    ce = abs(Kh - K) / K

    def first_pos(seq):
        pos: dict[Any, int] = {}
        for i, f in enumerate(seq):
            if f is not None and f not in pos:
                pos[f] = i
        return pos

    pe, pp = first_pos([e[2] for e in empirical]), first_pos([p[2] for p in pred])
    shared = [f for f in pe if f in pp]
    tau = 1.0
    if len(shared) >= 2:
        tau = float(kendalltau([pe[f] for f in shared], [pp[f] for f in shared]).statistic)
        tau = 1.0 if not math.isfinite(tau) else tau
    oe = (1.0 - tau) / 2.0
    return {
        "staircase_error": te + le + ce + oe,
        "time_error": te,
        "level_error": le,
        "count_error": ce,
        "order_error": oe,
    }


# ============================================================================================ the task
TASK_ID = "FeatureStaircase-v0"
SETTINGS = ("diagonal-linear", "linear", "modular-addition")
GROUND_TRUTHS = ("gd", "flow")
N_TEST_SEEDS = 5
CURVE_POINTS = 2_000  # log-spaced samples of the measured loss curve kept for the overlay figure
_GT_VERSION = 3  # bump with any change of the extraction or the ground-truth runs (3: MIN_PLATEAU, MIN_DROP)


@dataclass(frozen=True)
class StaircaseProblem:
    """The public problem (module docstring): the data, the architecture, the initial parameters, the step size
    and the horizon of the gradient-descent run whose loss staircase a solver predicts.

    ``setting``: ``"diagonal-linear"`` (``y`` is ``(n,)``; ``init = {"u", "v"}``), ``"linear"`` (``y`` is
    ``(n, c)``; ``init = {"W1", "W2"}``, ``width`` hidden units) or ``"modular-addition"`` (``X`` is ``(p², 2p)``,
    ``y`` ``(p², p)``; ``init = {"W_in", "W_out"}``; :mod:`papergym.envs.tasks.staircase.modular`); ``alpha``: the
    initial scale (diagonal: ``u = √2α·1, v = 0``; otherwise entries ``N(0, α²/fan_in)``); ``lr``: the GD step;
    ``momentum``: heavy-ball momentum (0 but for modular addition); ``horizon``: the number of GD iterations;
    ``l0``: the initial loss."""

    setting: str
    arch: str
    X: np.ndarray
    y: np.ndarray
    alpha: float
    lr: float
    horizon: int
    init: Mapping[str, np.ndarray]
    l0: float
    width: int
    momentum: float = 0.0

    PRIVATE_FIELDS = ()


def parse_steps(solution: Any) -> list[tuple[float, float, Any]]:
    """A solution as ``[(t, level, feature)]``: a list of steps (tuples / :class:`Step` / dicts with ``t``,
    ``level``, ``feature``), a ``(K, 2)`` or ``(K, 3)`` array (feature ``-1``: none), or ``{"steps": ...}``.
    ``ValueError`` naming the malformed step otherwise (the checks of :func:`score_staircase` follow)."""
    if isinstance(solution, Mapping):
        if "steps" not in solution:
            raise ValueError(f"a solution dict needs the key 'steps'; got keys {sorted(map(str, solution))}")
        solution = solution["steps"]
    if isinstance(solution, np.ndarray):
        if solution.ndim != 2 or solution.shape[1] not in (2, 3):
            raise ValueError(f"a solution array must be (K, 2) or (K, 3); got shape {solution.shape}")
        solution = solution.tolist()
    if not isinstance(solution, (list, tuple)):
        raise ValueError(f"a solution is a list of (t, level, feature) steps; got {type(solution).__name__}")
    out = []
    for i, s in enumerate(solution):
        if isinstance(s, Mapping):
            s = (s.get("t"), s.get("level"), s.get("feature"))
        if not isinstance(s, (list, tuple, np.ndarray)) or len(s) not in (2, 3):
            raise ValueError(f"step {i}: expected (t, level[, feature]); got {s!r}")
        try:
            t, lev = float(s[0]), float(s[1])
        except (TypeError, ValueError):
            raise ValueError(f"step {i}: t and level must be numbers; got {s!r}") from None
        feat = s[2] if len(s) == 3 else None
        if feat is not None:
            if (
                isinstance(feat, (bool, np.bool_))
                or not isinstance(feat, (numbers.Integral, float, np.floating))
                or not float(feat).is_integer()
            ):
                raise ValueError(f"step {i}: the feature must be an integer index or None; got {feat!r}")
            feat = None if int(feat) < 0 else int(feat)
        out.append((t, lev, feat))
    return out


EXPLODE_FACTOR = 1e6  # a predicted level above this multiple of the initial loss is an exploded prediction


def prediction_diverged(steps: Sequence[tuple[float, float, Any]], l0: float) -> bool:
    """True when a parsed prediction holds a non-finite time or level (a diverged flow integration) or a level
    above ``EXPLODE_FACTOR × l0`` (an exploding loss; gradient descent from small initialisation starts at ``l0``)."""
    for t, lev, _ in steps:
        if not (math.isfinite(t) and math.isfinite(lev)) or lev > EXPLODE_FACTOR * float(l0):
            return True
    return False


# ------------------------------------------------------------------------------------- ground truth
def _gt_key(p: Mapping[str, Any], seed: int, mode: str) -> tuple:
    if p["setting"] == "diagonal-linear":
        return (
            "diag",
            int(p["d"]),
            int(p["n"]),
            float(p["a"]),
            tuple(float(a) for a in p["alphas"]),
            float(p["lr"]),
            int(p["horizon"]),
            int(seed),
            mode,
            _GT_VERSION,
        )
    if p["setting"] == "modular-addition":
        return (
            "mod",
            int(p["p"]),
            int(p["width"]),
            tuple(float(a) for a in p["alphas"]),
            float(p["lr"]),
            float(p["momentum"]),
            int(p["horizon"]),
            int(seed),
            mode,
            _GT_VERSION,
        )
    return (
        "lin",
        int(p["d"]),
        int(p["n"]),
        float(p["power"]),
        tuple(float(a) for a in p["alphas"]),
        float(p["lr"]),
        int(p["horizon"]),
        int(seed),
        mode,
        _GT_VERSION,
    )


def _curve_sample(L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    T = L.size - 1
    t = np.unique(np.concatenate([[0], np.geomspace(1, T, CURVE_POINTS).astype(np.int64)]))
    return t, L[t]


def flow_diagonal(
    X: Any, y: Any, alphas: Sequence[float], lr: float, iterations: int, chunk: int = 200_000
) -> tuple[np.ndarray, np.ndarray]:
    """The gradient *flow* of :func:`gd_diagonal` (``ground_truth="flow"``): ``u̇ = g ⊙ v``,
    ``v̇ = g ⊙ u`` integrated by ``solve_ivp`` (DOP853, rtol 1e−9, atol 1e−12·α²) and read at the flow times
    ``t = lr·iteration``. Same return values as :func:`gd_diagonal`; it differs from GD by ``O(lr)``."""
    from scipy.integrate import solve_ivp

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, d = X.shape
    T = int(iterations)
    losses = np.empty((len(alphas), T + 1))
    mags = np.empty((len(alphas), T + 1, d), dtype=np.float32)
    for k, al in enumerate(alphas):

        def rhs(_t, z):
            u, v = z[:d], z[d:]
            g = X.T @ (y - X @ (u * v)) / n
            return np.concatenate([g * v, g * u])

        z0 = np.concatenate([np.full(d, math.sqrt(2.0) * al), np.zeros(d)])
        sol = solve_ivp(rhs, (0.0, lr * T), z0, method="DOP853", rtol=1e-9, atol=1e-12 * al * al, dense_output=True)
        if not sol.success:
            raise RuntimeError(f"solve_ivp failed on the gradient flow: {sol.message}")
        for a in range(0, T + 1, chunk):
            it = np.arange(a, min(a + chunk, T + 1))
            z = sol.sol(lr * it)
            beta = z[:d] * z[d:]
            r = y[:, None] - X @ beta
            losses[k, it] = 0.5 * np.einsum("nt,nt->t", r, r) / n
            mags[k, it] = np.abs(beta).T
    return losses, mags


def compute_ground_truth(p: Mapping[str, Any], seed: int, mode: str = "gd") -> dict[float, dict[str, Any]]:
    """The measured staircases of one configuration, for every ``α`` of it (one vectorised run): ``{α: {"steps":
    (K, 3) array of (t_k, ℓ_k, feature_k) without the initial plateau, "l0", "curve_t", "curve_L", "seconds"}}``.
    ``seconds`` is the wall time of the run per ``α`` (what a solver's cost is compared with)."""
    import time

    alphas = [float(a) for a in p["alphas"]]
    T, lr = int(p["horizon"]), float(p["lr"])
    t0 = time.perf_counter()
    if p["setting"] == "diagonal-linear":
        X, y, _ = diagonal_instance(int(p["d"]), int(p["n"]), float(p["a"]), seed)
        run = gd_diagonal if mode == "gd" else flow_diagonal
        losses, mags = run(X, y, alphas, lr, T)
        curves = [(losses[k], mags[k]) for k in range(len(alphas))]
    elif p["setting"] == "modular-addition":
        from papergym.envs.tasks.staircase.modular import gd_modular, modular_init, modular_instance

        if mode != "gd":
            raise ValueError("ground_truth='flow' is implemented for the diagonal-linear setting only")
        X, Y, _ = modular_instance(int(p["p"]), seed)
        curves = []
        for al in alphas:
            W_in, W_out = modular_init(int(p["p"]), int(p["width"]), al, seed)
            curves.append(gd_modular(X, Y, W_in, W_out, lr, float(p["momentum"]), T))
    else:
        if mode != "gd":
            raise ValueError("ground_truth='flow' is implemented for the diagonal-linear setting only")
        X, Y, _ = linear_instance(int(p["d"]), int(p["n"]), seed, float(p["power"]))
        Sxx, Syx, syy = linear_stats(X, Y)
        _, E = linear_modes(Sxx, Syx)
        curves = []
        for al in alphas:
            W1, W2 = linear_init(X.shape[1], Y.shape[1], int(p["width"]), al, seed)
            curves.append(gd_linear(Sxx, Syx, syy, W1, W2, lr, T, modes=E))
    secs = (time.perf_counter() - t0) / len(alphas)
    out = {}
    for al, (L, M) in zip(alphas, curves):
        emp = extract_staircase(L, M)[1:]
        steps = np.array([(t, lev, -1 if f is None else f) for t, lev, f in emp], dtype=np.float64).reshape(-1, 3)
        ct, cL = _curve_sample(L)
        out[al] = {"steps": steps, "l0": float(L[0]), "curve_t": ct, "curve_L": cL, "seconds": secs}
    return out


def _gt_file(key: tuple) -> Any:
    from papergym.leaderboard.runner.compare import default_cache_dir

    name = "-".join(str(k) for k in key).replace(" ", "")
    return default_cache_dir() / "_staircase" / (hashlib.sha256(name.encode()).hexdigest()[:24] + ".npz")


_GT_MEMO: dict[tuple, dict[float, dict[str, Any]]] = {}


def ground_truth(p: Mapping[str, Any], seed: int, mode: str = "gd", disk: bool = False) -> dict[float, dict[str, Any]]:
    """:func:`compute_ground_truth` memoised in the process and, with ``disk`` (public dev instances only: hidden
    test instances' staircases are never written), in ``<cell cache>/_staircase/`` (written atomically; a corrupt
    or stale file is recomputed)."""
    import os
    import tempfile

    key = _gt_key(p, seed, mode)
    if key in _GT_MEMO:
        return _GT_MEMO[key]
    path = _gt_file(key) if disk else None
    out = None
    if path is not None:
        try:
            with np.load(path) as z:
                if str(z["key"]) == repr(key):
                    out = {
                        float(al): {
                            "steps": z[f"steps{i}"],
                            "l0": float(z[f"l0{i}"]),
                            "curve_t": z[f"ct{i}"],
                            "curve_L": z[f"cL{i}"],
                            "seconds": float(z[f"sec{i}"]),
                        }
                        for i, al in enumerate(z["alphas"])
                    }
        except (OSError, ValueError, KeyError):
            out = None
    if out is None:
        out = compute_ground_truth(p, seed, mode)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz")
            arrays: dict[str, Any] = {"key": np.array(repr(key)), "alphas": np.array(list(out))}
            for i, v in enumerate(out.values()):
                arrays.update(
                    {
                        f"steps{i}": v["steps"],
                        f"l0{i}": v["l0"],
                        f"ct{i}": v["curve_t"],
                        f"cL{i}": v["curve_L"],
                        f"sec{i}": v["seconds"],
                    }
                )
            try:
                with os.fdopen(fd, "wb") as fh:
                    np.savez(fh, **arrays)
                os.replace(tmp, path)
            except OSError:
                if os.path.exists(tmp):
                    os.unlink(tmp)
    if len(_GT_MEMO) >= 256:  # small entries (drops and a 2,000-point curve per alpha)
        _GT_MEMO.pop(next(iter(_GT_MEMO)))
    _GT_MEMO[key] = out
    return out


class StaircaseEvaluator:
    """Private scorer of one instance: the measured staircase (computed in :meth:`prepare`, before the solver's
    clock) and the score defined in the module docstring."""

    def __init__(self, params: Mapping[str, Any], seed: int, alpha: float, mode: str, disk: bool):
        self.params, self.seed, self.alpha, self.mode, self.disk = dict(params), int(seed), float(alpha), mode, disk
        self._truth: dict[str, Any] | None = None

    def prepare(self) -> None:
        if self._truth is None:
            self._truth = ground_truth(self.params, self.seed, self.mode, self.disk)[self.alpha]

    @property
    def truth(self) -> dict[str, Any]:
        self.prepare()
        return self._truth  # type: ignore[return-value]

    def empirical(self) -> list[tuple[int, float, Any]]:
        return [(int(t), float(lev), None if f < 0 else int(f)) for t, lev, f in self.truth["steps"]]

    def evaluate(self, solution: Any) -> dict[str, float]:
        steps = parse_steps(solution)
        tr = self.truth
        H = float(self.params["horizon"])
        diverged = prediction_diverged(steps, tr["l0"])
        # a diverged prediction scores as the null prediction (no drop before the horizon): the failure value
        sc = score_staircase([(H, tr["l0"], None)] if diverged else steps, self.empirical(), H, tr["l0"])
        return {
            **sc,
            "n_predicted": float(sum(1 for s in steps if s[0] <= H)),
            "n_measured": float(len(tr["steps"])),
            "gd_seconds": float(tr["seconds"]),
            "diverged": float(diverged),
        }


class StaircaseTask:
    """``FeatureStaircase-v0`` (module docstring). Kwargs: ``setting`` (names from :data:`SETTINGS`), ``d``, ``a``,
    ``alpha``, ``lr``, ``horizon`` (the diagonal track), ``linear_d``, ``linear_init``, ``linear_samples``,
    ``linear_power``, ``linear_lr``, ``linear_horizon`` (the linear track), ``mod_p``, ``mod_width``, ``mod_init``,
    ``mod_lr``, ``mod_momentum``, ``mod_horizon`` (modular addition), ``paper_scale``, ``ground_truth`` (``"gd"`` or
    ``"flow"``), ``seeds``, ``max_seconds`` (default 2 s, 30 s when modular addition is among the settings: AGF
    integrates the utility flow of 18 neurons there, about 5 s), ``max_work`` (default 1,000 declared full-batch
    gradient evaluations, 20,000 with modular addition)."""

    id = TASK_ID
    primary = "staircase_error"
    metrics = {
        "staircase_error": "min",
        "time_error": "min",
        "level_error": "min",
        "count_error": "min",
        "order_error": "min",
        "n_predicted": "min",
        "n_measured": "min",
        "gd_seconds": "min",
        "time_s": "min",
        "cost_ratio": "min",
        "diverged": "min",
    }
    table_metrics = ("time_error", "level_error", "count_error", "order_error", "cost_ratio")

    def __init__(
        self,
        setting: Any = "diagonal-linear",
        d: Any = (5, 10),
        a: Any = (0.5, 1.0, 2.0),
        alpha: Any = (1e-2, 1e-4, 1e-8),
        lr: float = 1e-3,
        horizon: int = 1_000_000,
        linear_d: Any = (4, 8),
        linear_init: Any = 1e-8,
        linear_samples: int = 1000,
        linear_power: float = 1.0,
        linear_lr: float = 1e-3,
        linear_horizon: int = 1_000_000,
        mod_p: int = 20,
        mod_width: int = 18,
        mod_init: Any = 1e-2,
        mod_lr: float | None = None,
        mod_momentum: float = 0.9,
        mod_horizon: int = 200_000,
        paper_scale: bool = False,
        ground_truth: str = "gd",
        seeds: Any = (0, 1, 2, 3, 4),
        max_seconds: float | None = None,
        max_work: float | None = None,
    ):
        self.settings = check_names(setting, "setting", SETTINGS)
        if not isinstance(paper_scale, (bool, np.bool_)):
            raise ValueError(f"paper_scale must be True or False, got {paper_scale!r}")
        self.paper_scale = bool(paper_scale)
        if self.paper_scale:  # the notebooks' settings (paper scale)
            d, a, alpha = (5,), (1.0,), (0.5, 0.1, 1e-2, 1e-4, 1e-8, 1e-16)
            linear_d, linear_init = (10,), 1e-15
        self.d = check_ints(d, "d", 1)
        self.a = check_floats(a, "a", at_least=0.0)
        self.alpha = check_floats(alpha, "alpha", above=0.0, below=1.0 / math.sqrt(2.0))
        self.lr = check_floats(lr, "lr", above=0.0)[0]
        self.horizon = check_ints(horizon, "horizon", 10)[0]
        self.linear_d = check_ints(linear_d, "linear_d", 1)
        self.linear_init = check_floats(linear_init, "linear_init", above=0.0, below=1.0 / math.sqrt(2.0))
        self.linear_samples = check_ints(linear_samples, "linear_samples", 1)[0]
        self.linear_power = check_floats(linear_power, "linear_power", at_least=0.0)[0]
        self.linear_lr = check_floats(linear_lr, "linear_lr", above=0.0)[0]
        self.linear_horizon = check_ints(linear_horizon, "linear_horizon", 10)[0]
        self.mod_p = check_ints(mod_p, "mod_p", 11)[0]  # frequency 5 needs p//2 >= 5
        self.mod_width = check_ints(mod_width, "mod_width", 1)[0]
        self.mod_init = check_floats(mod_init, "mod_init", above=0.0, below=1.0)
        if mod_lr is None:  # the notebook's lr 0.01 on nn.MSELoss (staircase_modular.modular_lr)
            from papergym.envs.tasks.staircase.modular import modular_lr

            mod_lr = modular_lr(self.mod_p)
        self.mod_lr = check_floats(mod_lr, "mod_lr", above=0.0)[0]
        self.mod_momentum = check_floats(mod_momentum, "mod_momentum", at_least=0.0, below=1.0)[0]
        self.mod_horizon = check_ints(mod_horizon, "mod_horizon", 10)[0]
        self.ground_truth = check_names(ground_truth, "ground_truth", GROUND_TRUTHS)[0]
        if self.ground_truth == "flow" and set(self.settings) - {"diagonal-linear"}:
            raise ValueError("ground_truth='flow' is implemented for the diagonal-linear setting only")
        self.seeds = check_ints(seeds, "seeds", 0)
        mod = "modular-addition" in self.settings
        ms = (30.0 if mod else 2.0) if max_seconds is None else max_seconds
        mw = (20_000.0 if mod else 1000.0) if max_work is None else max_work
        self.max_seconds = check_floats(ms, "max_seconds", above=0.0)[0]
        self.max_work = check_floats(mw, "max_work", above=0.0)[0]
        self.default_budget = Budget(max_seconds=self.max_seconds, max_work=self.max_work)

    def _configs(self) -> list[tuple[str, dict[str, Any]]]:
        out: list[tuple[str, dict[str, Any]]] = []
        if "diagonal-linear" in self.settings:
            for d in self.d:
                for a in self.a:
                    base = {
                        "setting": "diagonal-linear",
                        "d": d,
                        "n": 4 * d,
                        "a": a,
                        "alphas": list(self.alpha),
                        "lr": self.lr,
                        "horizon": self.horizon,
                    }
                    out += [(f"diagonal-linear/d={d},a={a:g},alpha={al:g}", {**base, "alpha": al}) for al in self.alpha]
        if "linear" in self.settings:
            for d in self.linear_d:
                base = {
                    "setting": "linear",
                    "d": d,
                    "n": self.linear_samples,
                    "power": self.linear_power,
                    "width": d,
                    "alphas": list(self.linear_init),
                    "lr": self.linear_lr,
                    "horizon": self.linear_horizon,
                }
                out += [(f"linear/d={d},init={al:g}", {**base, "alpha": al}) for al in self.linear_init]
        if "modular-addition" in self.settings:
            base = {
                "setting": "modular-addition",
                "template": "notebook",
                "p": self.mod_p,
                "width": self.mod_width,
                "alphas": list(self.mod_init),
                "lr": self.mod_lr,
                "momentum": self.mod_momentum,
                "horizon": self.mod_horizon,
            }
            out += [(f"modular-addition/p={self.mod_p},init={al:g}", {**base, "alpha": al}) for al in self.mod_init]
        return out

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        return split_instances(TASK_ID, split, self._configs(), self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[StaircaseProblem, StaircaseEvaluator]:
        p = instance_params(ref, TASK_ID)
        setting = check_names(p.get("setting"), "setting", SETTINGS)[0]
        if setting == "modular-addition":
            return self._make_modular(ref, p)
        d = check_ints(p.get("d"), "d", 1)[0]
        n = check_ints(p.get("n"), "n", 1)[0]
        al = check_floats(p.get("alpha"), "alpha", above=0.0, below=1.0 / math.sqrt(2.0))[0]
        alphas = check_floats(p.get("alphas", [al]), "alphas", above=0.0, below=1.0 / math.sqrt(2.0))
        if al not in alphas:
            raise ValueError(f"alpha {al} is not one of the configuration's alphas {list(alphas)}")
        lr = check_floats(p.get("lr"), "lr", above=0.0)[0]
        horizon = check_ints(p.get("horizon"), "horizon", 10)[0]
        clean = {**p, "setting": setting, "d": d, "n": n, "alphas": list(alphas), "lr": lr, "horizon": horizon}
        if setting == "diagonal-linear":
            a = check_floats(p.get("a"), "a", at_least=0.0)[0]
            clean["a"] = a
            X, y, _ = diagonal_instance(d, n, a, ref.seed)
            init = {"u": np.full(d, math.sqrt(2.0) * al), "v": np.zeros(d)}
            width = d
            l0 = 0.5 * float(np.mean(y**2))
        else:
            power = check_floats(p.get("power", 1.0), "power", at_least=0.0)[0]
            width = check_ints(p.get("width", d), "width", 1)[0]
            clean.update(power=power, width=width)
            X, y, _ = linear_instance(d, n, ref.seed, power)
            W1, W2 = linear_init(d, y.shape[1], width, al, ref.seed)
            init = {"W1": W1, "W2": W2}
            r = y - X @ (W2 @ W1).T
            l0 = 0.5 * float(np.einsum("nc,nc->", r, r) / n)
        for arr in (X, y, *init.values()):
            arr.setflags(write=False)
        arch = "u*v (diagonal linear net)" if setting == "diagonal-linear" else "W2 @ W1 (two-layer linear net)"
        problem = StaircaseProblem(
            setting=setting, arch=arch, X=X, y=y, alpha=al, lr=lr, horizon=horizon, init=init, l0=l0, width=width
        )
        mode = self.ground_truth if setting == "diagonal-linear" else "gd"
        return problem, StaircaseEvaluator(clean, ref.seed, al, mode, disk=ref.split == "dev")

    def _make_modular(self, ref: InstanceRef, p: dict[str, Any]) -> tuple[StaircaseProblem, StaircaseEvaluator]:
        from papergym.envs.tasks.staircase.modular import modular_init, modular_instance

        q = check_ints(p.get("p"), "p", 11)[0]
        width = check_ints(p.get("width"), "width", 1)[0]
        al = check_floats(p.get("alpha"), "alpha", above=0.0, below=1.0)[0]
        alphas = check_floats(p.get("alphas", [al]), "alphas", above=0.0, below=1.0)
        if al not in alphas:
            raise ValueError(f"alpha {al} is not one of the configuration's alphas {list(alphas)}")
        lr = check_floats(p.get("lr"), "lr", above=0.0)[0]
        mom = check_floats(p.get("momentum"), "momentum", at_least=0.0, below=1.0)[0]
        horizon = check_ints(p.get("horizon"), "horizon", 10)[0]
        clean = {**p, "p": q, "width": width, "alphas": list(alphas), "lr": lr, "momentum": mom, "horizon": horizon}
        X, Y, _ = modular_instance(q, ref.seed)
        W_in, W_out = modular_init(q, width, al, ref.seed)
        h = X @ W_in.T
        r = Y - (h * h) @ W_out.T
        for arr in (X, Y, W_in, W_out):
            arr.setflags(write=False)
        problem = StaircaseProblem(
            setting="modular-addition",
            arch="W_out (W_in x)^2 (quadratic two-layer net)",
            X=X,
            y=Y,
            alpha=al,
            lr=lr,
            horizon=horizon,
            init={"W_in": W_in, "W_out": W_out},
            l0=0.5 * float(np.einsum("ij,ij->", r, r)) / X.shape[0],
            width=width,
            momentum=mom,
        )
        return problem, StaircaseEvaluator(clean, ref.seed, al, "gd", disk=ref.split == "dev")

    def finalize(
        self, metrics: Mapping[str, float] | None, seconds: float | None, status: str, budget: Budget | None = None
    ) -> dict[str, float]:
        """``metrics`` plus ``time_s`` (the solve's seconds) and ``cost_ratio`` = ``time_s`` / the seconds of the
        simulated GD run the prediction replaces (per ``α``)."""
        out = dict(metrics or {})
        ok = status == "ok" and seconds is not None and math.isfinite(float(seconds))
        out["time_s"] = float(seconds) if ok else math.nan
        gd = float(out.get("gd_seconds", math.nan) or math.nan)
        out["cost_ratio"] = out["time_s"] / gd if ok and gd > 0 else math.nan
        return out

    def report(self, runs: Any) -> str:
        from papergym.envs.tasks.staircase.report import report_table

        return report_table(runs)

    def figures(self, runs: Any, folder: Any) -> list[Any]:
        from papergym.envs.tasks.staircase.report import overlay_figure

        f = overlay_figure(self, runs, folder)
        return [f] if f is not None else []


register_task(TASK_ID, StaircaseTask)
