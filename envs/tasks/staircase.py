"""``FeatureStaircase-v0`` numerics (issue 13, in progress): the empirical staircase of a loss curve and the
score of a predicted staircase (spec ``learning-dynamics.md`` §§1.3, 1.6). The task class, its instances and
its ground-truth runs come next; these functions are its evaluator's core.

Empirical staircase (§1.3 step 3, [design]) of a loss curve ``L(t)``, ``t = 0 … T`` (iterations):

* floor: ``L ← max(L, ε_ℓ)`` with ``ε_ℓ = 1e−6·L(0)`` (below it only round-off remains);
* a iteration ``t`` is *flat* when ``|log L(t′) − log L(t)| < 5e−3`` for ``t′ = max(t + 1, ⌈1.02 t⌉)`` (the
  window grows with ``t`` because jump times grow geometrically); a plateau is a maximal run of flat
  iterations, extended to the ``t′`` of its last member; overlapping plateaus merge;
* ``ℓ_k`` = median of ``L`` on plateau ``k`` (plateau 0 is the initial one); the drop into plateau ``k ≥ 1``
  happens at ``t_k`` = the first iteration after plateau ``k − 1`` with ``L < √(ℓ_{k−1} ℓ_k)``.

Score (§1.6) of predicted steps ``[(t̂, ℓ̂, feature)]`` against empirical ``[(t, ℓ, feature)]``: predictions
after the horizon are dropped (none left: the single step ``(horizon, ℓ_0)``); each empirical step ``k`` is
matched to the predicted step ``m(k)`` nearest in ``log(ℓ + ε_ℓ)`` (the earlier on ties);

    staircase_error = mean_k |log(t̂_m(k)/t_k)| + mean_k |log((ℓ̂_m(k) + ε)/(ℓ_k + ε))| + |K̂ − K|/K + (1 − τ)/2

with ``τ`` Kendall's tau between the positions of first appearance of the features both sequences share
(``τ = 1`` when they share fewer than two). With ``K = 0`` only ``|K̂ − K|`` is scored.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

__all__ = ["extract_staircase", "score_staircase", "diagonal_instance", "gd_diagonal", "gd_diagonal_losses",
           "FLAT_TOL", "WINDOW",
           "FLOOR"]

FLAT_TOL = 5e-3  # [design] |Δ log L| below which an iteration is flat
WINDOW = 1.02  # [design] relative look-ahead t' = max(t + 1, ceil(1.02 t))
FLOOR = 1e-6  # [design] ε_ℓ = FLOOR · L(0)


def diagonal_instance(d: int, n: int, a: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The main track's data (§1.2, the notebook's "high-dimensional example"): rows of ``X`` ~
    ``N(0, diag(i^{−a}))``, ``β* = 10·N(0, I)``, ``y = Xβ*``. Returns ``(X, y, β*)``."""
    if d < 1 or n < 1:
        raise ValueError(f"d and n must be >= 1; got d={d}, n={n}")
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(13,)))
    X = rng.standard_normal((n, d)) * np.arange(1, d + 1) ** (-float(a) / 2.0)
    beta = 10.0 * rng.standard_normal(d)
    return X, X @ beta, beta


def gd_diagonal(X: Any, y: Any, alphas: Sequence[float], lr: float, iterations: int,
                beta_dtype: Any = np.float32) -> tuple[np.ndarray, np.ndarray]:
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
    levels = [float(np.median(Lf[a:b + 1])) for a, b in plateaus]
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
            grow = np.median(feats[a:b + 1], axis=0) - np.median(feats[a_prev:b_prev + 1], axis=0)
            feat = int(np.argmax(grow))
        out.append((tk, levels[k], feat))
    return out


def score_staircase(predicted: Sequence[Sequence[Any]], empirical: Sequence[Sequence[Any]], horizon: float,
                    l0: float) -> dict[str, float]:
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
        return {"staircase_error": float(Kh), "time_error": 0.0, "level_error": 0.0, "count_error": float(Kh),
                "order_error": 0.0}
    lp = np.log(np.array([p[1] for p in pred]) + eps)
    m = [int(np.argmin(np.abs(lp - math.log(e[1] + eps)))) for e in empirical]  # argmin: the earlier on ties
    te = float(np.mean([abs(math.log(pred[j][0] / max(e[0], 1))) for j, e in zip(m, empirical)]))
    le = float(np.mean([abs(math.log((pred[j][1] + eps) / (e[1] + eps))) for j, e in zip(m, empirical)]))
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
    return {"staircase_error": te + le + ce + oe, "time_error": te, "level_error": le, "count_error": ce,
            "order_error": oe}
