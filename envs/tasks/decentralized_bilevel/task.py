"""``DecentralizedBilevel-v0``: decentralized bilevel optimisation over a communication graph (Zhai, Yan &
Zhang, *Problem-Parameter-Free Decentralized Bilevel Optimization*, NeurIPS 2025, arXiv:2510.24288;
``docs/papers/adasdbo.md``).

``n`` agents on a connected graph hold ``(f_i, l_i)`` and solve

    min_x Φ(x) = (1/n) Σ_i f_i(x, y*(x)),   y*(x) = argmin_y (1/n) Σ_i l_i(x, y)   (l strongly convex in y),

    ∇Φ(x) = ∇_x f(x, y*) − ∇²_xy l(x, y*) v*,   v* = [∇²_yy l(x, y*)]⁻¹ ∇_y f(x, y*).

Graphs [design] (networkx): ``ring`` (``cycle_graph(n)``), ``torus`` (``grid_2d_graph(a, b, periodic=True)``,
``a`` the largest divisor of ``n`` with ``2 ≤ a ≤ √n``, ``b = n/a ≥ 2``; an error for prime ``n``), ``er``
(alias ``erdos-renyi``: ``erdos_renyi_graph(n, 0.3, seed)``, redrawn with the next seed until connected),
``complete``. Mixing matrix: Metropolis–Hastings ``W_ij = 1/(1 + max(deg_i, deg_j))`` on edges,
``W_ii = 1 − Σ_{j≠i} W_ij`` (symmetric, doubly stochastic — asserted; the complete graph gives ``11ᵀ/n``);
``spectral_gap = 1 − max_{k≥2} |λ_k(W)|`` is an instance descriptor.

Families [design]:

* ``syn`` — per-coordinate ridge tuning with closed forms [design]. Shared ``w ~ N(0, I_20)``, agent means
  ``μ_i ~ N(0, h² I)``; ``A_i, A_i^val ∈ ℝ^{50×20}`` with rows ``~ N(μ_i, I)``, ``b = A w + ε``, ``ε ~ N(0, 1)``;
  ``l_i = c_l[(1/100)‖A_i y − b_i‖² + ½ Σ_k e^{x_k} y_k²]``, ``f_i = c_f (1/100)‖A_i^val y − b_i^val‖²``,
  ``d_x = d_y = 20``, ``x_0 = 0``. With ``H̄ = (1/n)Σ A_iᵀA_i/50``, ``c̄ = (1/n)Σ A_iᵀb_i/50``,
  ``H(x) = H̄ + diag(e^x)``: ``y*(x) = H(x)⁻¹c̄``, ``∇Φ(x) = −diag(e^x ⊙ y*) H(x)⁻¹ ∇_y f(x, y*)`` exactly
  (``∇_x f = 0``).
* ``digits`` — ℓ2 tuning of multinomial logistic regression on scikit-learn's bundled ``load_digits``
  (pixels/16; a seeded split into 1,000 training, 400 validation and 397 private test rows).
  ``y = (Y, c) ∈ ℝ^{64×10} × ℝ^{10}``, flattened row-major as the ``(65, 10)`` matrix ``[Y; c]`` (``d_y = 650``),
  ``x ∈ ℝ^{64}`` (``d_x = 64``, ``x_0 = 0``); ``l_i = c_l[CE_i^train(y) + ½ Σ_k e^{x_k}‖Y_{k,:}‖² + ½·10⁻³‖c‖²]``,
  ``f_i = c_f CE_i^val(y)`` (``CE_i`` the mean softmax cross-entropy over agent ``i``'s rows).
  Partition of the training and validation rows over agents: heterogeneity ``h = 0`` → i.i.d. (a seeded
  permutation cut into ``n`` near-equal parts); ``h > 0`` → label-skewed: per class, proportions
  ``q ~ Dirichlet(0.5/h · 1_n)`` shared by the class's training and validation rows (``h = 1`` is
  Dirichlet(0.5)); redrawn until every agent holds ≥ 5 training and ≥ 2 validation rows. Reference
  ``y*(x̄)`` by Newton–CG (Jacobi-preconditioned CG, Armijo backtracking) to ``‖∇_y l/c_l‖ ≤ 10⁻¹⁰``,
  warm-started from the previous evaluation's ``y*``; ``v*`` by Jacobi-preconditioned CG to a relative residual
  of ``10⁻¹⁰``.
* Scales ``(c_l, c_f)``: change every smoothness constant while leaving ``x*`` unchanged; the hypergradient is
  reported divided by ``c_f`` (it does not depend on ``c_l``). ``digits-clean`` (a paper-scale
  hyper-cleaning option) is not implemented.

Public problem (:class:`DecentralizedBilevelProblem`): ``family``, ``n``, ``d_x``, ``d_y``, ``graph``,
``adjacency`` ``(n, n)`` 0/1, ``W``, ``spectral_gap``, ``x0`` ``(d_x,)``, ``rounds`` (``T``), ``batch`` and
``oracle`` (:class:`BilevelOracleView`, executed by the evaluator). **Vectorised over agents** — a deliberate
refinement of per-agent calls ``grad_x_f(i, x, y)``: every call takes stacks with a leading agent
axis and evaluates each agent ``i``'s *own* ``f_i`` / ``l_i`` at its own point (row ``i``); ``X`` is ``(n, d_x)``,
``Y`` and ``V`` are ``(n, d_y)``; each call costs ``n`` work units:

* ``grad_x_f(X, Y)``, ``grad_y_f(X, Y)``, ``grad_y_l(X, Y)`` → ``(n, d_x)`` / ``(n, d_y)`` / ``(n, d_y)``;
* ``hvp_yy_l(X, Y, V)`` → ``∇²_yy l_i(x_i, y_i) v_i`` ``(n, d_y)``; ``jvp_xy_l(X, Y, V)`` → ``∇²_xy l_i(x_i, y_i) v_i``
  ``(n, d_x)``;
* ``mix(Z)``: ``Z`` of shape ``(n, k)`` or ``(n, ...)`` (flattened per agent) → ``W Z`` (same shape): one
  communication round, ``k`` floats per agent (``floats_sent`` grows by ``n·k``); at most ``T`` rounds.

**Protocol rule**: agents exchange information only through ``mix`` (a solver must never combine rows of
different agents otherwise, e.g. ``X.mean(axis=0)``). Oracle work is capped at ``10·n·T`` units. Exceeding
the rounds or the work raises :class:`~papergym.envs.tasks.base.BudgetExceeded`; bad arguments raise
``ValueError`` naming the argument. With ``batch = b`` every data term is a mini-batch estimate: each call draws
its own fresh batch of ``b`` rows per agent, uniformly with replacement from that agent's rows (training rows for
``grad_y_l`` and ``hvp_yy_l``, validation rows for ``grad_y_f``), from a seeded stream of the instance; no two
calls share a batch; the regularisers and ``jvp_xy_l`` (no data term) stay exact.

Solution: the agents' ``x`` stack ``(n, d_x)`` (or ``{"x": stack}``); the score uses ``x̄ = (1/n) Σ_i x_i``,
clipped to ``[−30, 30]`` per coordinate (``e^{±30}``: the ridge is then 0 or ∞ to double precision, the
hypergradient there is ≈ 0 either way); a diverged run — a non-finite stack, or one whose consensus error
overflows — scores ``1e300`` on every ``min`` quality metric (``log10_hypergrad`` 300) and ``diverged = 1``
(``bench`` and the board then store the run as ``diverged``, never ``ok``).

| metric | dir | definition |
|---|---|---|
| ``hypergrad_sq`` (primary) | min | ``‖∇Φ(x̄)‖²/c_f²`` (``bench``'s geometric mean = ``10^mean log10``) |
| ``log10_hypergrad`` | min | ``log10`` of it (the primary of the first design) |
| ``consensus_x`` | min | ``(1/n) Σ_i ‖x_i − x̄‖²`` |
| ``val_loss`` | min | ``f(x̄, y*(x̄))/c_f`` |
| ``test_acc`` | max | ``digits``: accuracy of ``y*(x̄)`` on the private test rows (NaN for ``syn``) |
| ``rounds``, ``oracle_calls``, ``floats_sent`` | min | the oracle's counters when the solution is scored |
| ``diverged`` | min | 1 if the run diverged (above), else 0 |
| ``spectral_gap`` | — | instance descriptor |

Instances: every family × graph × agents × heterogeneity × scale × seed; default ``family ∈ {syn, digits}``,
``graph ∈ {ring, er, complete}``, ``n = 10``, ``h ∈ {0, 1}``, three scale pairs ``c_l:c_f ∈ {1:1, 10:0.1,
0.1:10}`` (a subset of ``{0.1, 1, 10}²`` that keeps the default run short: the mismatched pairs
stress a fixed step the most), ``T = 2,000`` (``syn``) / ``1,000`` (``digits``), dev seeds 0–2. Step-size
grid (``step_size_grid=True``: ``{1e−3, 1e−2, 1e−1, 1, 10}``): :meth:`DecentralizedBilevelTask.solver_sweep`
asks ``bench`` to sweep every solver's base step ``gamma`` (the step-size sensitivity report).

Notes and deviations: (1) the oracle is vectorised over agents (above); (2) ``digits-clean`` is not implemented;
(3) on ``syn`` the upper level's infimum lies at infinity for several coordinates (with 500 training rows for 20
weights, no ridge is best: ``x_k → −∞``), so even tuned centralised hypergradient descent sees
``‖∇Φ‖² ~ 1/t²`` there; ``val_loss`` is reported next to the primary metric so that such plateaus can be told
apart from a poor point; (4) ``floats_sent`` counts ``k`` floats per agent and round (a broadcast to all
neighbours counted once); (5) the hypergradient also vanishes on the flat region ``x → +∞`` (infinite ridge,
``y* = 0``: nothing depends on ``x`` any more), so ``x̄ = 1e6`` scores ``hypergrad_sq ≈ 1e−23`` with no work
done — a stationarity measure, not a quality measure. The leaderboard therefore ranks this task by ``val_loss``
(``papergym.leaderboard.board.configs``); read ``hypergrad_sq`` next to ``val_loss`` here too.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from papergym.envs.tasks.base import (
    Budget,
    BudgetExceeded,
    InstanceRef,
    check_floats,
    check_ints,
    check_names,
    instance_params,
    register_task,
    split_instances,
)
from papergym.envs.tasks.sealed import seal

__all__ = [
    "DecentralizedBilevelTask",
    "DecentralizedBilevelProblem",
    "BilevelOracleView",
    "BilevelOracle",
    "BilevelEvaluator",
    "SynInstance",
    "DigitsInstance",
    "make_graph",
    "metropolis_hastings",
    "spectral_gap",
    "parse_scale",
]

TASK_ID = "DecentralizedBilevel-v0"
N_TEST_SEEDS = 5
FAMILIES = ("syn", "digits")
GRAPHS = ("ring", "torus", "er", "complete")
GRAPH_ALIASES = {"erdos-renyi": "er"}
DEFAULT_ROUNDS = {"syn": 2000, "digits": 1000}
GAMMA_GRID = (1e-3, 1e-2, 1e-1, 1.0, 10.0)
ER_P = 0.3
X_CLIP = 30.0
BIG = 1e300
RIDGE_C = 1e-3  # fixed ridge on the digits intercept (removes the softmax invariance c -> c + t 1)
WORK_PER_ROUND = 10  # oracle work cap: 10 n T units


# ------------------------------------------------------------------------------------------------ graphs
def _require(module: str) -> Any:
    """Import an optional dependency of this task, or say which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"{TASK_ID} needs the optional package {module.split('.')[0]!r}: pip install 'papergym[bilevel]'"
        ) from None


def make_graph(name: str, n: int, seed: int = 0) -> np.ndarray:
    """Adjacency matrix ``(n, n)`` (0/1, zero diagonal) of the named graph (module docstring)."""
    nx = _require("networkx")

    name = GRAPH_ALIASES.get(name, name)
    if name == "ring":
        g = nx.cycle_graph(n)
    elif name == "complete":
        g = nx.complete_graph(n)
    elif name == "torus":
        a = torus_shape(n)[0]
        g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(a, n // a, periodic=True), ordering="sorted")
    elif name == "er":
        k = 0
        while True:
            g = nx.erdos_renyi_graph(n, ER_P, seed=int(seed) * 1000 + k)
            if nx.is_connected(g):
                break
            k += 1
    else:
        raise ValueError(f"graph must be one of {', '.join(GRAPHS)}, got {name!r}")
    A = nx.to_numpy_array(g, nodelist=range(n), dtype=float)
    np.fill_diagonal(A, 0.0)
    return (A > 0).astype(float)


def torus_shape(n: int) -> tuple[int, int]:
    """``(a, b)``, ``a·b = n``, ``a`` the largest divisor ``≤ √n`` with ``a ≥ 2``; ``ValueError`` otherwise."""
    a = max((d for d in range(2, math.isqrt(n) + 1) if n % d == 0), default=None)
    if a is None:
        raise ValueError(f"agents: the torus graph needs n = a·b with a, b >= 2; n = {n} has no such factorisation")
    return a, n // a


def metropolis_hastings(A: np.ndarray) -> np.ndarray:
    """``W_ij = 1/(1 + max(deg_i, deg_j))`` on edges, ``W_ii = 1 − Σ_{j≠i} W_ij``; asserted symmetric and doubly
    stochastic."""
    deg = A.sum(axis=1)
    W = A / (1.0 + np.maximum(deg[:, None], deg[None, :]))
    np.fill_diagonal(W, 1.0 - W.sum(axis=1))
    assert np.allclose(W, W.T, atol=0) and np.all(W >= 0)
    assert np.allclose(W.sum(axis=0), 1.0, atol=1e-12) and np.allclose(W.sum(axis=1), 1.0, atol=1e-12)
    return W


def spectral_gap(W: np.ndarray) -> float:
    """``1 − max_{k≥2} |λ_k(W)|`` (eigenvalues in decreasing order, so negative ones count)."""
    lam = np.sort(np.linalg.eigvalsh(W))[::-1]
    return float(1.0 - np.max(np.abs(lam[1:]))) if len(lam) > 1 else 1.0


# --------------------------------------------------------------------------------------------- families
class SynInstance:
    """``syn``: per-coordinate ridge tuning with closed forms (module docstring). Data terms are means over an
    agent's 50 rows of ``½(aᵀy − b)²``, i.e. ``(1/100)‖Ay − b‖²``."""

    family = "syn"
    rows = 50

    def __init__(self, n: int, h: float, seed: int, d: int = 20):
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(11,)))
        self.n, self.d_x, self.d_y = n, d, d
        w = rng.standard_normal(d)
        mu = h * rng.standard_normal((n, d))
        self.A = mu[:, None, :] + rng.standard_normal((n, self.rows, d))
        self.b = self.A @ w + rng.standard_normal((n, self.rows))
        self.Av = mu[:, None, :] + rng.standard_normal((n, self.rows, d))
        self.bv = self.Av @ w + rng.standard_normal((n, self.rows))
        self.G = np.einsum("nri,nrj->nij", self.A, self.A) / self.rows
        self.c = np.einsum("nri,nr->ni", self.A, self.b) / self.rows
        self.Gv = np.einsum("nri,nrj->nij", self.Av, self.Av) / self.rows
        self.cv = np.einsum("nri,nr->ni", self.Av, self.bv) / self.rows
        self.Hbar, self.cbar = self.G.mean(axis=0), self.c.mean(axis=0)
        self.Gvbar, self.cvbar = self.Gv.mean(axis=0), self.cv.mean(axis=0)
        self.n_rows = {"train": np.full(n, self.rows), "val": np.full(n, self.rows)}

    # -- per-agent data terms (vectorised over agents); sel: (n, b) row indices of a mini-batch or None
    def _data(self, part: str, sel: np.ndarray | None):
        A, b = (self.A, self.b) if part == "train" else (self.Av, self.bv)
        rows = np.arange(self.n)[:, None]
        return A[rows, sel], b[rows, sel]

    def data_grad(self, part: str, Y: np.ndarray, sel: np.ndarray | None = None) -> np.ndarray:
        if sel is None:
            G, c = (self.G, self.c) if part == "train" else (self.Gv, self.cv)
            return np.einsum("nij,nj->ni", G, Y) - c
        A, b = self._data(part, sel)
        r = np.einsum("nri,ni->nr", A, Y) - b
        return np.einsum("nri,nr->ni", A, r) / sel.shape[1]

    def data_hvp(self, part: str, Y: np.ndarray, V: np.ndarray, sel: np.ndarray | None = None) -> np.ndarray:
        if sel is None:
            return np.einsum("nij,nj->ni", self.G if part == "train" else self.Gv, V)
        A, _ = self._data(part, sel)
        return np.einsum("nri,nr->ni", A, np.einsum("nri,ni->nr", A, V)) / sel.shape[1]

    @staticmethod
    def ridge(X: np.ndarray) -> np.ndarray:
        """Diagonal of ``∇²_yy`` of the regulariser (per agent)."""
        return np.exp(X)

    @staticmethod
    def cross(X: np.ndarray, Y: np.ndarray, V: np.ndarray) -> np.ndarray:
        """``∇²_xy`` of the regulariser times ``V``: ``e^x ⊙ y ⊙ v``."""
        return np.exp(X) * Y * V

    # -- the evaluator's reference at one point x (global problem, c_l = c_f = 1)
    def reference(self, x: np.ndarray) -> dict[str, Any]:
        ex = np.exp(x)
        H = self.Hbar + np.diag(ex)
        ys = np.linalg.solve(H, self.cbar)
        gf = self.Gvbar @ ys - self.cvbar
        v = np.linalg.solve(H, gf)
        hyper = -ex * ys * v
        r = np.einsum("nri,i->nr", self.Av, ys) - self.bv
        val = float(np.mean(np.sum(r**2, axis=1) / (2 * self.rows)))
        return {"y": ys, "v": v, "hypergrad": hyper, "val_loss": val, "test_acc": float("nan")}


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    X, y = _require("sklearn.datasets").load_digits(return_X_y=True)
    return X.astype(float) / 16.0, y.astype(int)


def _softmax(Z: np.ndarray) -> np.ndarray:
    Z = Z - Z.max(axis=-1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=-1, keepdims=True)


class DigitsInstance:
    """``digits``: ℓ2 tuning of multinomial logistic regression (module docstring). Rows carry an appended 1
    (intercept); ``y`` is the flattened ``(65, 10)`` matrix ``[Y; c]``; agents' rows are padded to a common
    length with zero weights (``w_r = 1/N_i`` on real rows)."""

    family = "digits"
    n_train, n_val, n_test, k = 1000, 400, 397, 10

    def __init__(self, n: int, h: float, seed: int):
        X, lab = _digits()
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(12,)))
        perm = rng.permutation(len(lab))
        tr, va, te = np.split(perm, [self.n_train, self.n_train + self.n_val])
        self.n, self.d_x, self.d_y = n, X.shape[1], (X.shape[1] + 1) * self.k
        Xa = np.hstack([X, np.ones((len(X), 1))])
        parts_tr, parts_va = self._partition(lab[tr], lab[va], n, h, rng)
        self.part = {}
        self.n_rows = {}
        for name, idx_all, parts in (("train", tr, parts_tr), ("val", va, parts_va)):
            R = max(len(p) for p in parts)
            Xp = np.zeros((n, R, Xa.shape[1]))
            Tp = np.zeros((n, R, self.k))
            wp = np.zeros((n, R))
            for i, p in enumerate(parts):
                rows = idx_all[p]
                Xp[i, : len(rows)] = Xa[rows]
                Tp[i, np.arange(len(rows)), lab[rows]] = 1.0
                wp[i, : len(rows)] = 1.0 / len(rows)
            self.part[name] = (Xp, Tp, wp)
            self.n_rows[name] = np.array([len(p) for p in parts])
        # global (evaluator) arrays: every real row with weight 1/(n N_i), so sums give (1/n) Σ_i CE_i
        self.glob = {}
        for name in ("train", "val"):
            Xp, Tp, wp = self.part[name]
            m = wp > 0
            self.glob[name] = (Xp[m], Tp[m], wp[m] / n)
        Xg, _, wg = self.glob["train"]
        self._XwT = np.ascontiguousarray((Xg * wg[:, None]).T)  # weighted rows, for the Hessian products
        self._X2wT = np.ascontiguousarray((Xg**2 * wg[:, None]).T)
        self.Xte, self.yte = Xa[te], lab[te]
        self._y_warm: np.ndarray | None = None
        self._v_warm: np.ndarray | None = None

    @staticmethod
    def _partition(
        ytr: np.ndarray, yva: np.ndarray, n: int, h: float, rng: np.random.Generator
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        if len(ytr) < 5 * n or len(yva) < 2 * n:
            raise ValueError(
                f"agents: digits holds {len(ytr)} training and {len(yva)} validation rows, too few "
                f"for n = {n} agents (>= 5 and >= 2 rows each)"
            )
        if h == 0:
            return (np.array_split(rng.permutation(len(ytr)), n), np.array_split(rng.permutation(len(yva)), n))
        alpha = 0.5 / h
        for _ in range(1000):
            tr: list[list[int]] = [[] for _ in range(n)]
            va: list[list[int]] = [[] for _ in range(n)]
            for c in range(int(max(ytr.max(), yva.max())) + 1):
                q = rng.dirichlet(np.full(n, alpha))
                for rows, out in ((np.flatnonzero(ytr == c), tr), (np.flatnonzero(yva == c), va)):
                    rows = rng.permutation(rows)
                    cuts = np.round(np.cumsum(q)[:-1] * len(rows)).astype(int)
                    for i, p in enumerate(np.split(rows, cuts)):
                        out[i].extend(p.tolist())
            if min(map(len, tr)) >= 5 and min(map(len, va)) >= 2:
                return [np.sort(p) for p in tr], [np.sort(p) for p in va]
        raise ValueError(
            f"heterogeneity: no Dirichlet({alpha:g}) partition over {n} agents gives every agent "
            ">= 5 training and >= 2 validation rows; lower the heterogeneity or the agents"
        )

    def _data(self, part: str, sel: np.ndarray | None):
        Xp, Tp, wp = self.part[part]
        if sel is None:
            return Xp, Tp, wp
        rows = np.arange(self.n)[:, None]
        return Xp[rows, sel], Tp[rows, sel], np.full(sel.shape, 1.0 / sel.shape[1])

    def data_grad(self, part: str, Y: np.ndarray, sel: np.ndarray | None = None) -> np.ndarray:
        Xp, Tp, wp = self._data(part, sel)
        P = _softmax(Xp @ Y.reshape(self.n, -1, self.k))
        return (np.swapaxes(Xp, 1, 2) @ (wp[..., None] * (P - Tp))).reshape(self.n, -1)

    def data_hvp(self, part: str, Y: np.ndarray, V: np.ndarray, sel: np.ndarray | None = None) -> np.ndarray:
        Xp, _, wp = self._data(part, sel)
        P = _softmax(Xp @ Y.reshape(self.n, -1, self.k))
        S = P * (Xp @ V.reshape(self.n, -1, self.k))
        S -= P * S.sum(axis=-1, keepdims=True)
        return (np.swapaxes(Xp, 1, 2) @ (wp[..., None] * S)).reshape(self.n, -1)

    def ridge(self, X: np.ndarray) -> np.ndarray:
        r = np.concatenate([np.exp(X), np.full(X.shape[:-1] + (1,), RIDGE_C)], axis=-1)
        return np.repeat(r, self.k, axis=-1)

    def cross(self, X: np.ndarray, Y: np.ndarray, V: np.ndarray) -> np.ndarray:
        YV = (Y * V).reshape(Y.shape[:-1] + (-1, self.k))[..., :-1, :].sum(axis=-1)
        return np.exp(X) * YV

    # -- evaluator: global problem at one point (c_l = c_f = 1)
    def _glob_fun(self, part: str, Wm: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        Xg, Tg, wg = self.glob[part]
        Z = Xg @ Wm
        zmax = Z.max(axis=1, keepdims=True)
        lse = zmax[:, 0] + np.log(np.exp(Z - zmax).sum(axis=1))
        loss = float(np.sum(wg * (lse - np.sum(Z * Tg, axis=1))))
        P = np.exp(Z - lse[:, None])
        return loss, P, Xg.T @ (wg[:, None] * (P - Tg))

    def _glob_hvp(self, P: np.ndarray, ridge: np.ndarray, Vm: np.ndarray) -> np.ndarray:
        S = P * (self.glob["train"][0] @ Vm)
        S -= P * S.sum(axis=1, keepdims=True)
        return self._XwT @ S + ridge * Vm

    def _jacobi(self, P: np.ndarray, ridge: np.ndarray) -> np.ndarray:
        return self._X2wT @ (P * (1 - P)) + ridge

    @staticmethod
    def _pcg(
        hvp: Callable[[np.ndarray], np.ndarray],
        b: np.ndarray,
        dinv: np.ndarray,
        x0: np.ndarray,
        tol: float,
        maxiter: int = 2000,
    ) -> np.ndarray:
        x = x0.copy()
        r = b - hvp(x)
        z = dinv * r
        p = z.copy()
        rz = float(np.sum(r * z))
        for _ in range(maxiter):
            if math.sqrt(float(np.sum(r * r))) <= tol:
                break
            Ap = hvp(p)
            pAp = float(np.sum(p * Ap))
            if pAp <= 0:
                break
            a = rz / pAp
            x += a * p
            r -= a * Ap
            z = dinv * r
            rz_new = float(np.sum(r * z))
            p = z + (rz_new / rz) * p
            rz = rz_new
        return x

    def reference(self, x: np.ndarray, tol: float = 1e-10) -> dict[str, Any]:
        k = self.k
        ridge = np.repeat(np.append(np.exp(x), RIDGE_C), k).reshape(-1, k)
        Wm = self._y_warm.copy() if self._y_warm is not None else np.zeros((self.d_x + 1, k))

        def obj(Wm):
            loss, P, g = self._glob_fun("train", Wm)
            return loss + 0.5 * float(np.sum(ridge * Wm * Wm)), P, g + ridge * Wm

        L, P, g = obj(Wm)
        for _ in range(100):
            gn = math.sqrt(float(np.sum(g * g)))
            if gn <= tol:
                break
            d = self._pcg(
                lambda V: self._glob_hvp(P, ridge, V),
                -g,
                1.0 / self._jacobi(P, ridge),
                np.zeros_like(g),
                min(0.1, math.sqrt(gn)) * gn,
            )
            slope, t = float(np.sum(g * d)), 1.0
            while True:
                L2, P2, g2 = obj(Wm + t * d)
                if L2 <= L + 1e-4 * t * slope or t < 1e-10:
                    break
                t *= 0.5
            Wm, L, P, g = Wm + t * d, L2, P2, g2
        self._y_warm = Wm
        val, _, gf = self._glob_fun("val", Wm)
        v0 = self._v_warm if self._v_warm is not None else np.zeros_like(gf)
        V = self._pcg(
            lambda V: self._glob_hvp(P, ridge, V),
            gf,
            1.0 / self._jacobi(P, ridge),
            v0,
            tol * max(math.sqrt(float(np.sum(gf * gf))), 1e-300),
            maxiter=5000,
        )
        self._v_warm = V
        hyper = -np.exp(x) * np.sum(Wm[:-1] * V[:-1], axis=1)
        acc = float(np.mean(np.argmax(self.Xte @ Wm, axis=1) == self.yte))
        return {
            "y": Wm.ravel(),
            "v": V.ravel(),
            "hypergrad": hyper,
            "val_loss": val,
            "test_acc": acc,
            "grad_norm": math.sqrt(float(np.sum(g * g))),
        }


# ----------------------------------------------------------------------------------------------- oracle
def _stack(name: str, value: Any, n: int, d: int) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"oracle: {name} must be a float array of shape ({n}, {d}): {exc}") from None
    if a.shape != (n, d):
        raise ValueError(f"oracle: {name} must have shape ({n}, {d}) (one row per agent), got {a.shape}")
    return a


class BilevelOracle:
    """The trusted, vectorised oracle of one solve (module docstring): counts work, rounds and floats."""

    def __init__(
        self,
        inst: SynInstance | DigitsInstance,
        W: np.ndarray,
        c_l: float,
        c_f: float,
        T: int,
        batch: int | None,
        seed: int,
    ):
        self.inst, self.W, self.c_l, self.c_f, self.T = inst, W, float(c_l), float(c_f), int(T)
        self.batch = batch
        self.n = inst.n
        self.max_work = WORK_PER_ROUND * self.n * self.T
        self.rounds = 0
        self.work = 0
        self.floats = 0
        self._rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(13,)))

    def _charge(self, what: str) -> None:
        if self.work + self.n > self.max_work:
            raise BudgetExceeded(f"oracle.{what}: the oracle work cap of {self.max_work} units (10·n·T) is used")
        self.work += self.n

    def _sel(self, part: str) -> np.ndarray | None:
        if self.batch is None:
            return None
        N = self.inst.n_rows[part]
        return np.minimum((self._rng.random((self.n, self.batch)) * N[:, None]).astype(int), N[:, None] - 1)

    def _xy(self, what: str, X: Any, Y: Any) -> tuple[np.ndarray, np.ndarray]:
        Xa = _stack(f"{what}: X", X, self.n, self.inst.d_x)
        Ya = _stack(f"{what}: Y", Y, self.n, self.inst.d_y)
        self._charge(what)
        return Xa, Ya

    def grad_x_f(self, X: Any, Y: Any) -> np.ndarray:
        Xa, _ = self._xy("grad_x_f", X, Y)
        return np.zeros_like(Xa)  # f does not depend on x in either family

    def grad_y_f(self, X: Any, Y: Any) -> np.ndarray:
        _, Ya = self._xy("grad_y_f", X, Y)
        with np.errstate(over="ignore", invalid="ignore"):
            return self.c_f * self.inst.data_grad("val", Ya, self._sel("val"))

    def grad_y_l(self, X: Any, Y: Any) -> np.ndarray:
        Xa, Ya = self._xy("grad_y_l", X, Y)
        with np.errstate(over="ignore", invalid="ignore"):
            return self.c_l * (self.inst.data_grad("train", Ya, self._sel("train")) + self.inst.ridge(Xa) * Ya)

    def hvp_yy_l(self, X: Any, Y: Any, V: Any) -> np.ndarray:
        Va = _stack("hvp_yy_l: V", V, self.n, self.inst.d_y)
        Xa, Ya = self._xy("hvp_yy_l", X, Y)
        with np.errstate(over="ignore", invalid="ignore"):
            return self.c_l * (self.inst.data_hvp("train", Ya, Va, self._sel("train")) + self.inst.ridge(Xa) * Va)

    def jvp_xy_l(self, X: Any, Y: Any, V: Any) -> np.ndarray:
        Va = _stack("jvp_xy_l: V", V, self.n, self.inst.d_y)
        Xa, Ya = self._xy("jvp_xy_l", X, Y)
        with np.errstate(over="ignore", invalid="ignore"):
            return self.c_l * self.inst.cross(Xa, Ya, Va)

    def mix(self, Z: Any) -> np.ndarray:
        try:
            Za = np.asarray(Z, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"oracle.mix: Z must be a float array with a leading agent axis of {self.n}: {exc}"
            ) from None
        if Za.ndim < 2 or Za.shape[0] != self.n or Za.size == 0:
            raise ValueError(f"oracle.mix: Z must have shape ({self.n}, k) or ({self.n}, ...), k >= 1, got {Za.shape}")
        if self.rounds >= self.T:
            raise BudgetExceeded(f"oracle.mix: all T = {self.T} communication rounds are used")
        self.rounds += 1
        flat = Za.reshape(self.n, -1)
        self.floats += int(flat.size)
        with np.errstate(over="ignore", invalid="ignore"):
            return (self.W @ flat).reshape(Za.shape)


@dataclass(frozen=True)
class BilevelOracleView:
    """``problem.oracle``: the trusted :class:`BilevelOracle`'s methods, each behind
    :func:`~papergym.envs.tasks.sealed.seal` (no path back to the oracle's data, ``c_l``, ``c_f`` or the evaluator)."""

    grad_x_f: Callable[[np.ndarray, np.ndarray], np.ndarray]
    grad_y_f: Callable[[np.ndarray, np.ndarray], np.ndarray]
    grad_y_l: Callable[[np.ndarray, np.ndarray], np.ndarray]
    hvp_yy_l: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
    jvp_xy_l: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
    mix: Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class DecentralizedBilevelProblem:
    """The public problem (module docstring)."""

    family: str
    n: int
    d_x: int
    d_y: int
    graph: str
    adjacency: np.ndarray
    W: np.ndarray
    spectral_gap: float
    x0: np.ndarray
    rounds: int
    batch: int | None
    oracle: BilevelOracleView

    PRIVATE_FIELDS = ()


# -------------------------------------------------------------------------------------------- evaluator
class BilevelEvaluator:
    """Private scorer (module docstring)."""

    def __init__(self, inst: SynInstance | DigitsInstance, oracle: BilevelOracle, gap: float):
        self.inst, self.oracle, self.gap = inst, oracle, float(gap)
        self._last: tuple[np.ndarray, dict[str, Any]] | None = None  # (x̄, reference) of the last scoring

    def _stack(self, solution: Any) -> np.ndarray:
        n, d = self.inst.n, self.inst.d_x
        if isinstance(solution, Mapping):
            if "x" not in solution:
                raise ValueError(
                    f"solution mapping needs an 'x' entry (the agents' x stack), got keys {sorted(map(str, solution))}"
                )
            solution = solution["x"]
        try:
            X = np.asarray(solution, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"solution must be the agents' x stack, a float array of shape ({n}, {d}): {exc}"
            ) from None
        if X.shape != (n, d):
            raise ValueError(f"solution must be the agents' x stack of shape ({n}, {d}), got {X.shape}")
        return X

    def evaluate(self, solution: Any) -> dict[str, float]:
        X = self._stack(solution)
        o = self.oracle
        out = {
            "rounds": float(o.rounds),
            "oracle_calls": float(o.work),
            "floats_sent": float(o.floats),
            "spectral_gap": self.gap,
        }
        with np.errstate(over="ignore", invalid="ignore"):  # huge but finite stacks are scored, not warned about
            xbar = X.mean(axis=0)
            cons = float(np.mean(np.sum((X - xbar) ** 2, axis=1))) if np.all(np.isfinite(X)) else math.inf
        if not (math.isfinite(cons) and np.all(np.isfinite(xbar))):  # diverged: NaN/inf or overflowing stack
            return {
                "hypergrad_sq": BIG,
                "log10_hypergrad": 300.0,
                "consensus_x": BIG,
                "val_loss": BIG,
                "test_acc": 0.0 if self.inst.family == "digits" else float("nan"),
                "diverged": 1.0,
                **out,
            }
        xc = np.clip(np.nan_to_num(xbar, nan=0.0, posinf=X_CLIP, neginf=-X_CLIP), -X_CLIP, X_CLIP)
        if self._last is not None and np.array_equal(self._last[0], xc):
            ref = self._last[1]
        else:
            ref = self.inst.reference(xc)
            self._last = (xc, ref)
        hg = float(np.sum(ref["hypergrad"] ** 2))
        return {
            "hypergrad_sq": min(hg, BIG),
            "log10_hypergrad": math.log10(hg) if hg > 0 else -300.0,
            "consensus_x": min(cons, BIG),
            "val_loss": ref["val_loss"],
            "test_acc": ref["test_acc"],
            "diverged": 0.0,
            **out,
        }


# ------------------------------------------------------------------------------------------------- task
def parse_scale(v: Any) -> tuple[float, float]:
    """A scale pair ``"c_l:c_f"`` or a 2-sequence of numbers ``> 0`` -> ``(c_l, c_f)``."""
    if isinstance(v, str):
        parts = v.split(":")
        try:
            vals = [float(p) for p in parts]
        except ValueError:
            vals = []
    elif isinstance(v, (list, tuple)) and len(v) == 2:
        vals = list(v)
    else:
        vals = []
    if len(vals) != 2 or any(
        isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0 for x in vals
    ):
        raise ValueError(
            f"scales must be pairs c_l:c_f of finite numbers > 0 (strings 'a:b' or 2-sequences), got {v!r}"
        )
    return float(vals[0]), float(vals[1])


class DecentralizedBilevelTask:
    """``DecentralizedBilevel-v0`` (module docstring). Kwargs: ``family``, ``graph``, ``agents`` (``n``),
    ``heterogeneity``, ``scales``, ``rounds`` (``T``; None: 2,000 syn / 1,000 digits), ``batch``, ``seeds``,
    ``step_size_grid``, ``max_seconds``."""

    id = TASK_ID
    primary = "hypergrad_sq"
    metrics = {
        "hypergrad_sq": "min",
        "log10_hypergrad": "min",
        "consensus_x": "min",
        "val_loss": "min",
        "test_acc": "max",
        "rounds": "min",
        "oracle_calls": "min",
        "floats_sent": "min",
        "spectral_gap": "max",
        "diverged": "min",
    }
    table_metrics = ("log10_hypergrad", "consensus_x", "val_loss", "test_acc", "floats_sent")

    def __init__(
        self,
        family: Any = ("syn", "digits"),
        graph: Any = ("ring", "er", "complete"),
        agents: Any = 10,
        heterogeneity: Any = (0.0, 1.0),
        scales: Any = ("1:1", "10:0.1", "0.1:10"),
        rounds: Any = None,
        batch: Any = None,
        seeds: Any = (0, 1, 2),
        step_size_grid: Any = False,
        max_seconds: float = 60.0,
    ):
        self.family = check_names(family, "family", FAMILIES)
        graphs = graph if isinstance(graph, (list, tuple)) else [graph]
        check_names(list(graphs), "graph", GRAPHS + tuple(GRAPH_ALIASES))
        self.graph = tuple(dict.fromkeys(GRAPH_ALIASES.get(g, g) for g in graphs))
        self.agents = check_ints(agents, "agents", 2)
        if "torus" in self.graph:
            for n in self.agents:
                torus_shape(n)
        self.heterogeneity = check_floats(heterogeneity, "heterogeneity", at_least=0.0)
        sc = (
            list(scales)
            if isinstance(scales, (list, tuple))
            and not (len(scales) == 2 and all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scales))
            else [scales]
        )
        if not sc:
            raise ValueError("scales must not be empty")
        self.scales = tuple(dict.fromkeys(parse_scale(s) for s in sc))
        self.rounds = None if rounds is None else check_ints(rounds, "rounds", 1)[0]
        self.batch = None if batch is None else check_ints(batch, "batch", 1)[0]
        self.seeds = check_ints(seeds, "seeds", 0)
        if step_size_grid is True:
            self.step_size_grid: tuple[float, ...] = GAMMA_GRID
        elif step_size_grid is False or step_size_grid is None:
            self.step_size_grid = ()
        else:
            self.step_size_grid = check_floats(step_size_grid, "step_size_grid", above=0.0)
        ms = check_floats(max_seconds, "max_seconds", above=0.0)[0]
        T = max(self._T(f) for f in self.family)
        self.default_budget = Budget(max_seconds=ms, max_iterations=T, max_work=WORK_PER_ROUND * max(self.agents) * T)

    def _T(self, family: str) -> int:
        return self.rounds if self.rounds is not None else DEFAULT_ROUNDS[family]

    def solver_sweep(self) -> dict[str, list[float]]:
        """``{"gamma": grid}`` with a step-size grid (``bench`` sweeps every solver's base step), else ``{}``."""
        return {"gamma": list(self.step_size_grid)} if self.step_size_grid else {}

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        configs = []
        for fam, g, n, h, (cl, cf) in itertools.product(
            self.family, self.graph, self.agents, self.heterogeneity, self.scales
        ):
            key = f"{fam}/{g}/n={n}/h={h:g}/cl={cl:g},cf={cf:g}"
            configs.append(
                (
                    key,
                    {
                        "family": fam,
                        "graph": g,
                        "n": n,
                        "h": h,
                        "c_l": cl,
                        "c_f": cf,
                        "T": self._T(fam),
                        "batch": self.batch,
                    },
                )
            )
        return split_instances(TASK_ID, split, configs, self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[DecentralizedBilevelProblem, BilevelEvaluator]:
        p = instance_params(ref, TASK_ID)
        missing = {"family", "graph", "n", "h", "c_l", "c_f", "T"} - set(p)
        if missing:
            raise ValueError(f"instance {ref.name!r}: params miss {sorted(missing)}")
        fam = check_names(p["family"], "family", FAMILIES)[0]
        g = GRAPH_ALIASES.get(p["graph"], p["graph"])
        check_names(g, "graph", GRAPHS)
        n = check_ints(p["n"], "n", 2)[0]
        h = check_floats(p["h"], "h", at_least=0.0)[0]
        cl, cf = parse_scale((p["c_l"], p["c_f"]))
        T = check_ints(p["T"], "T", 1)[0]
        batch = None if p.get("batch") is None else check_ints(p["batch"], "batch", 1)[0]
        inst = SynInstance(n, h, ref.seed) if fam == "syn" else DigitsInstance(n, h, ref.seed)
        A = make_graph(g, n, ref.seed)
        W = metropolis_hastings(A)
        gap = spectral_gap(W)
        oracle = BilevelOracle(inst, W, cl, cf, T, batch, ref.seed)
        view = BilevelOracleView(
            **{
                name: seal(getattr(oracle, name), f"oracle.{name}")
                for name in ("grad_x_f", "grad_y_f", "grad_y_l", "hvp_yy_l", "jvp_xy_l", "mix")
            }
        )
        problem = DecentralizedBilevelProblem(
            family=fam,
            n=n,
            d_x=inst.d_x,
            d_y=inst.d_y,
            graph=g,
            adjacency=A.astype(int),
            W=W.copy(),
            spectral_gap=gap,
            x0=np.zeros(inst.d_x),
            rounds=T,
            batch=batch,
            oracle=view,
        )
        return problem, BilevelEvaluator(inst, oracle, gap)

    def report(self, runs: Any) -> str:
        """Per family and solver: median over instances of the final log10 hypergradient, upper-level loss,
        consensus error and floats sent — with a step-size grid, the median and worst over the grid of those
        per-step medians (the paper's robustness claim); plus a per-graph breakdown."""
        from papergym.envs.tasks.decentralized_bilevel.report import report_text

        return report_text(runs)

    def figures(self, runs: Any, folder: Any, curves: Any = None) -> list[Any]:
        """``curves_<family>``: log10 hypergradient (median over instances) against rounds and against floats
        communicated, and the consensus error against rounds; one line per solver, one column per step size
        (grid) or per graph (PNG + SVG)."""
        from papergym.envs.tasks.decentralized_bilevel.report import curve_figures

        return curve_figures(runs, folder, curves)


register_task(TASK_ID, DecentralizedBilevelTask)
