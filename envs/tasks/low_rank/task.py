"""``LowRankRecovery-v0``: ill-conditioned low-rank matrix recovery, the proxy of *Finding Low-Rank Matrix
Weights in DNNs via Riemannian Optimization: RAdaGrad and RAdamW* (NeurIPS 2025, OpenReview ``tiGFiCrmKm``).

Ground truth ``X* = U* diag(σ) V*ᵀ`` (``U*``, ``V*`` Haar, true rank ``r*``, ``σ`` geometric from 1 to ``1/κ``).

| family | loss | notes |
|---|---|---|
| ``sensing`` | ``½ Σ_k (⟨A_k, X⟩ − y_k)²``, ``A_k`` entries ``N(0, 1)/√N``, ``y_k = ⟨A_k, X*⟩``, ``N = 5 r*(m + n)`` | RIP regime |
| ``regression`` | ``½ ‖L(X − X*)R‖_F²``, ``L = Q_L diag(l) Q_Lᵀ``, ``R = Q_R diag(ρ) Q_Rᵀ``, ``l``, ``ρ`` log-spaced in ``[1, κ_H^{1/4}]`` | Hessian ``X ↦ L²XR²`` has condition ``κ_H`` |

Public problem (:class:`LowRankProblem`): ``m``, ``n``, ``r`` (the optimiser's rank), ``family``, ``kappa``,
``kappa_H``, ``L_smooth`` (the loss gradient's Lipschitz constant, computed by the evaluator), the common
initial point ``X_0 = (U0, s0, V0)`` (:func:`initial_point`: ``sensing``, the rank-``r`` truncated SVD of
``−∇loss(0) = Σ_k y_k A_k``; ``regression``, a random rank-``r`` point, since there ``−∇loss(0) = L²X*R²`` is
``X*`` itself at ``κ_H = 1``) and ``oracle.loss_grad(factors) -> (loss, G)``: ``factors`` is ``(U, s, V)``
(``X = U diag(s) Vᵀ``) or ``(A, B)`` (``X = ABᵀ``), ``G`` the dense Euclidean gradient; one work unit per call,
at most ``max_calls``. The oracle, which knows ``X*``, records the first call whose queried ``X`` is within
``tol`` relative error (the iterate count to tolerance cannot be misreported). ``A_k``, ``L``, ``R`` and ``X*``
stay in the evaluator; the solver gets the oracle sealed (:func:`papergym.envs.tasks.sealed.seal`), with no
path back to them.

Solution: factors (``{"U", "s", "V"}`` or ``{"A", "B"}``, optionally ``"state_floats"``: the optimiser state size,
a finite integer >= 0, declared by the solver and not verifiable; it is reported, never ranked).

| metric | dir | definition |
|---|---|---|
| ``par2_iters`` (primary) | min | oracle calls until ``‖X − X*‖_F/‖X*‖_F ≤ 1e−6``; ``2 × max_calls`` if never or diverged |
| ``final_rel_err`` | min | relative error of the solution (capped at 1e300) |
| ``calls`` | min | oracle calls made (counted by the oracle) |
| ``state_floats`` | min | declared optimiser state size (NaN if not declared) |
| ``solved`` | max | 1 if the tolerance was reached and the run did not diverge |
| ``diverged`` | min | 1 if the solution is non-finite or its relative error exceeds 10 (ten times the zero matrix's): the run is stored with status ``diverged`` |

Instances: every family × ``kappa`` × ``rank`` (and ``kappa_H`` for regression) × seed; ``m = n = 40``,
``r* = 3``, ``rank ∈ {3, 5}``, ``κ ∈ {1, 10, 100, 1000}``, ``κ_H ∈ {1, 100}``, dev seeds 0–4, ``max_calls``
5,000.
"""  # noqa: E501 - markdown table rows cannot wrap

from __future__ import annotations

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
    save_figure,
    split_instances,
)
from papergym.envs.tasks.haar import haar
from papergym.envs.tasks.sealed import seal

__all__ = [
    "LowRankTask",
    "LowRankProblem",
    "LowRankInstance",
    "top_singular_value",
    "LowRankOracle",
    "LowRankEvaluator",
    "matrix_of",
    "FAMILIES",
]

TASK_ID = "LowRankRecovery-v0"
FAMILIES = ("sensing", "regression")
N_TEST_SEEDS = 5
TOL = 1e-6
#: a returned solution with relative error above this (ten times that of the zero matrix), or non-finite, is a
#: diverged run: metric ``diverged = 1``, ``par2_iters`` at the PAR-2 cap, ``solved = 0``
DIVERGED_REL_ERR = 10.0


def matrix_of(factors: Any, m: int, n: int, r: int) -> np.ndarray:
    """``X`` from ``(U, s, V)`` / ``{"U", "s", "V"}`` or ``(A, B)`` / ``{"A", "B"}``; ``ValueError`` naming what is
    wrong (shapes, rank above ``r``, non-finite entries are allowed and scored as such)."""
    if isinstance(factors, Mapping):
        if {"U", "s", "V"} <= set(factors):
            factors = (factors["U"], factors["s"], factors["V"])
        elif {"A", "B"} <= set(factors):
            factors = (factors["A"], factors["B"])
        else:
            raise ValueError(f"factors need keys U, s, V or A, B; got {sorted(factors)}")
    try:
        parts = [np.asarray(f, dtype=float) for f in factors]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"factors must be arrays (U, s, V) or (A, B): {exc}") from None
    if len(parts) == 3:
        U, s, V = parts
        k = s.shape[0] if s.ndim == 1 else -1
        if s.ndim != 1 or U.shape != (m, k) or V.shape != (n, k) or k > r:
            raise ValueError(
                f"(U, s, V) must have shapes ({m}, k), (k,), ({n}, k) with k <= {r}; got "
                f"{U.shape}, {s.shape}, {V.shape}"
            )
        return (U * s) @ V.T
    if len(parts) == 2:
        A, B = parts
        if (
            A.ndim != 2
            or B.ndim != 2
            or A.shape[0] != m
            or B.shape[0] != n
            or A.shape[1] != B.shape[1]
            or A.shape[1] > r
        ):
            raise ValueError(f"(A, B) must have shapes ({m}, k), ({n}, k) with k <= {r}; got {A.shape}, {B.shape}")
        return A @ B.T
    raise ValueError(f"factors must be (U, s, V) or (A, B), got {len(parts)} arrays")


def top_singular_value(A: np.ndarray, tol: float = 1e-10) -> float:
    """The largest singular value ``‖A‖₂`` of a dense matrix, by Lanczos (ARPACK ``svds`` with ``k = 1``: matrix-vector
    products with ``A`` and ``Aᵀ`` only) instead of a full SVD: ``O(iters · size(A))`` rather than
    ``O(min(N, mn)² · max(N, mn))``. ``tol`` is ARPACK's relative residual tolerance, which bounds the value's
    relative error (1e−10, so well inside 1e−8; measured on a 1200 × 1600 sensing matrix: 8e−16, about 150
    iterations, since the top of a Gaussian matrix's spectrum is crowded). The start vector is fixed (all ones), so
    the value is deterministic. Small matrices (a side ≤ 2, where ARPACK needs ``k < min(shape)``) use the full
    SVD."""
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"top_singular_value needs a non-empty 2-D matrix, got shape {A.shape}")
    if min(A.shape) <= 2:
        return float(np.linalg.norm(A, 2))
    from scipy.sparse.linalg import svds

    v0 = np.ones(min(A.shape))
    s = svds(A, k=1, tol=tol, v0=v0, return_singular_vectors=False)
    return float(s[0])


class LowRankInstance:
    """The private instance (module docstring)."""

    def __init__(self, family: str, m: int, n: int, r_true: int, kappa: float, kappa_H: float, seed: int):
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(0,)))
        self.family, self.m, self.n = family, m, n
        sig = np.geomspace(1.0, 1.0 / kappa, r_true)
        self.X_star = (haar(rng, m, r_true) * sig) @ haar(rng, n, r_true).T
        self.norm_star = float(np.linalg.norm(self.X_star))
        if family == "sensing":
            N = 5 * r_true * (m + n)
            self.A = rng.standard_normal((N, m * n)) / math.sqrt(N)
            self.y = self.A @ self.X_star.ravel()
            self.L_smooth = top_singular_value(self.A) ** 2
        else:
            lv = np.geomspace(1.0, kappa_H**0.25, m)
            rv = np.geomspace(1.0, kappa_H**0.25, n)
            QL, QR = haar(rng, m), haar(rng, n)
            self.L2 = (QL * lv**2) @ QL.T
            self.R2 = (QR * rv**2) @ QR.T
            self.Lh = (QL * lv) @ QL.T
            self.Rh = (QR * rv) @ QR.T
            self.L_smooth = float(lv.max() ** 2 * rv.max() ** 2)

    def loss_grad(self, X: np.ndarray) -> tuple[float, np.ndarray]:
        if self.family == "sensing":
            res = self.A @ X.ravel() - self.y
            return 0.5 * float(res @ res), (self.A.T @ res).reshape(self.m, self.n)
        D = X - self.X_star
        E = self.Lh @ D @ self.Rh
        return 0.5 * float(np.sum(E * E)), self.L2 @ D @ self.R2

    def rel_err(self, X: np.ndarray) -> float:
        return float(np.linalg.norm(X - self.X_star) / self.norm_star)


class LowRankOracle:
    """The trusted loss/gradient oracle of one solve (module docstring)."""

    def __init__(self, inst: LowRankInstance, r: int, max_calls: int):
        self.inst, self.r, self.max_calls = inst, r, max_calls
        self.calls = 0
        self.hit: int | None = None

    def loss_grad(self, factors: Any) -> tuple[float, np.ndarray]:
        X = matrix_of(factors, self.inst.m, self.inst.n, self.r)
        if self.calls >= self.max_calls:
            raise BudgetExceeded(f"{self.calls} oracle calls made; the budget is {self.max_calls}")
        self.calls += 1
        if self.hit is None and np.all(np.isfinite(X)) and self.inst.rel_err(X) <= TOL:
            self.hit = self.calls
        with np.errstate(over="ignore", invalid="ignore"):
            return self.inst.loss_grad(X)


@dataclass(frozen=True)
class LowRankOracleView:
    """``problem.oracle``: runs in the evaluator."""

    loss_grad: Callable[[Any], tuple[float, np.ndarray]]


@dataclass(frozen=True)
class LowRankProblem:
    """The public problem (module docstring)."""

    m: int
    n: int
    r: int
    family: str
    kappa: float
    kappa_H: float
    L_smooth: float
    U0: np.ndarray
    s0: np.ndarray
    V0: np.ndarray
    max_calls: int
    oracle: LowRankOracleView

    PRIVATE_FIELDS = ()


class LowRankEvaluator:
    def __init__(self, inst: LowRankInstance, oracle: LowRankOracle, r: int):
        self.inst, self.oracle, self.r = inst, oracle, r

    def evaluate(self, solution: Any) -> dict[str, float]:
        state = float("nan")
        if isinstance(solution, Mapping) and "state_floats" in solution:
            state = _state_floats(solution["state_floats"])
        X = matrix_of(solution, self.inst.m, self.inst.n, self.r)
        with np.errstate(over="ignore", invalid="ignore"):
            rel = self.inst.rel_err(X) if np.all(np.isfinite(X)) else float("inf")
        if not np.isfinite(rel):
            rel = float("inf")
        o = self.oracle
        diverged = not rel <= DIVERGED_REL_ERR
        solved = o.hit is not None and not diverged
        return {
            "par2_iters": float(o.hit if solved else 2 * o.max_calls),
            "final_rel_err": min(rel, 1e300),
            "calls": float(o.calls),
            "state_floats": state,
            "solved": float(solved),
            "diverged": float(diverged),
        }


def _state_floats(value: Any) -> float:
    """The declared optimiser state size: a finite integer >= 0 (``ValueError`` naming the value otherwise)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"state_floats must be a number (the optimiser's state size), got {value!r}") from None
    if isinstance(value, bool) or not (np.isfinite(v) and v >= 0 and v == int(v)):
        raise ValueError(f"state_floats must be a finite integer >= 0 (the optimiser's state size), got {value!r}")
    return v


def initial_point(inst: LowRankInstance, r: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The public start ``X_0 = (U0, s0, V0)`` (module docstring): ``sensing``, the spectral initialisation (the
    rank-``r`` truncated SVD of ``−∇loss(0) = Σ_k y_k A_k``, a noisy estimate of ``X*``); ``regression``, a random
    rank-``r`` point (``U0``, ``V0`` Haar from a stream of the seed independent of ``X*``, ``s0`` all equal to
    ``‖∇loss(0)‖_F / (L_smooth √r)``): the spectral estimate ``L² X* R²`` would be ``X*`` itself at ``κ_H = 1``."""
    _, G0 = inst.loss_grad(np.zeros((inst.m, inst.n)))
    if inst.family == "sensing":
        U, s, Vt = np.linalg.svd(-G0, full_matrices=False)
        return U[:, :r].copy(), s[:r].copy(), Vt[:r].T.copy()
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(1,)))
    U0, V0 = haar(rng, inst.m, r), haar(rng, inst.n, r)
    s0 = np.full(r, float(np.linalg.norm(G0)) / (inst.L_smooth * math.sqrt(r)))
    return U0, s0, V0


class LowRankTask:
    """``LowRankRecovery-v0`` (module docstring). Kwargs: ``family``, ``kappa``, ``kappa_H``, ``rank``, ``m``,
    ``n``, ``true_rank``, ``seeds``, ``max_calls``, ``max_seconds``."""

    id = TASK_ID
    primary = "par2_iters"
    metrics = {
        "par2_iters": "min",
        "final_rel_err": "min",
        "calls": "min",
        "state_floats": "min",
        "solved": "max",
        "diverged": "min",
    }
    table_metrics = ("final_rel_err", "solved", "diverged", "calls", "state_floats")

    def __init__(
        self,
        family: Any = FAMILIES,
        kappa: Any = (1, 10, 100, 1000),
        kappa_H: Any = (1, 100),
        rank: Any = (3, 5),
        m: int = 40,
        n: int = 40,
        true_rank: int = 3,
        seeds: Any = (0, 1, 2, 3, 4),
        max_calls: int = 5000,
        max_seconds: float = 60.0,
    ):
        self.family = check_names(family, "family", FAMILIES)
        self.kappa = check_floats(kappa, "kappa", at_least=1.0)
        self.kappa_H = check_floats(kappa_H, "kappa_H", at_least=1.0)
        self.rank = check_ints(rank, "rank", 1)
        self.m, self.n = check_ints(m, "m", 2)[0], check_ints(n, "n", 2)[0]
        self.true_rank = check_ints(true_rank, "true_rank", 1)[0]
        if max(self.rank) > min(self.m, self.n) or self.true_rank > min(self.m, self.n):
            raise ValueError(f"rank and true_rank must be <= min(m, n) = {min(self.m, self.n)}")
        if min(self.rank) < self.true_rank:
            raise ValueError(f"rank must be >= true_rank = {self.true_rank} (X* must be representable)")
        self.seeds = check_ints(seeds, "seeds", 0)
        self.max_calls = check_ints(max_calls, "max_calls", 1)[0]
        ms = check_floats(max_seconds, "max_seconds", above=0.0)[0]
        self.default_budget = Budget(max_seconds=ms, max_iterations=self.max_calls, max_work=self.max_calls)

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        configs = []
        for fam, kap, r in itertools.product(self.family, self.kappa, self.rank):
            for kh in self.kappa_H if fam == "regression" else (1.0,):
                key = f"{fam}/kappa={kap:g}" + (f",kH={kh:g}" if fam == "regression" else "") + f"/r={r}"
                configs.append(
                    (
                        key,
                        {
                            "family": fam,
                            "kappa": kap,
                            "kappa_H": kh,
                            "rank": r,
                            "m": self.m,
                            "n": self.n,
                            "true_rank": self.true_rank,
                            "max_calls": self.max_calls,
                        },
                    )
                )
        return split_instances(TASK_ID, split, configs, self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[LowRankProblem, LowRankEvaluator]:
        p = instance_params(ref, TASK_ID)
        fam = check_names(p.get("family"), "family", FAMILIES)[0]
        m, n = check_ints(p.get("m"), "m", 2)[0], check_ints(p.get("n"), "n", 2)[0]
        r, rt = check_ints(p.get("rank"), "rank", 1)[0], check_ints(p.get("true_rank"), "true_rank", 1)[0]
        kap = check_floats(p.get("kappa"), "kappa", at_least=1.0)[0]
        kh = check_floats(p.get("kappa_H", 1.0), "kappa_H", at_least=1.0)[0]
        calls = check_ints(p.get("max_calls", self.max_calls), "max_calls", 1)[0]
        inst = LowRankInstance(fam, m, n, rt, kap, kh, ref.seed)
        U0, s0, V0 = initial_point(inst, r, ref.seed)
        oracle = LowRankOracle(inst, r, calls)
        problem = LowRankProblem(
            m=m,
            n=n,
            r=r,
            family=fam,
            kappa=kap,
            kappa_H=kh,
            L_smooth=inst.L_smooth,
            U0=U0,
            s0=s0,
            V0=V0,
            max_calls=calls,
            oracle=LowRankOracleView(loss_grad=seal(oracle.loss_grad, "oracle.loss_grad")),
        )
        return problem, LowRankEvaluator(inst, oracle, r)

    def report(self, runs: Any) -> str:
        """Median ``par2_iters`` against κ per family and solver (the paper's claim: flat in κ for the
        Riemannian methods, growing for the factorised ones), the worst run and the number of diverged runs
        (scored at the PAR-2 cap, status ``diverged``)."""
        ok = _scored(runs)
        if ok.empty:
            return ""
        kaps = sorted(ok.param_kappa.unique())
        lines = [
            "median oracle calls to relative error 1e-6 (PAR-2: 2 x max_calls if never or diverged) per kappa",
            f"{'family':<12}{'solver':<16}"
            + "".join(f"{'k=' + format(k, 'g'):>9}" for k in kaps)
            + f"{'worst':>9}{'diverged':>10}",
        ]
        for (fam, lab), g in ok.groupby(["param_family", "label"], sort=False):
            med = g.groupby("param_kappa").par2_iters.median()
            nd = int((g.status == "diverged").sum())
            lines.append(
                f"{fam:<12}{lab:<16}"
                + "".join(f"{med.get(k, np.nan):>9.0f}" for k in kaps)
                + f"{g.par2_iters.max():>9.0f}{f'{nd}/{len(g)}':>10}"
            )
        return "\n".join(lines)

    def figures(self, runs: Any, folder: Any) -> list[Any]:
        """``calls_vs_kappa``: median oracle calls to tolerance against κ (log-log), one panel per family, one line
        per solver over its ``ok`` and ``diverged`` runs (a solver with diverged runs says how many in its label,
        so that a line on the cap is not mistaken for the cap); the dashed line is the PAR-2 cap (PNG + SVG)."""
        import matplotlib

        matplotlib.use("Agg", force=False)
        from pathlib import Path

        import matplotlib.pyplot as plt

        ok = _scored(runs)
        if ok.empty:
            return []
        fams = list(dict.fromkeys(ok.param_family))
        fig, axes = plt.subplots(1, len(fams), figsize=(5.5 * len(fams), 4.2), squeeze=False)
        for ax, fam in zip(axes[0], fams):
            g = ok[ok.param_family == fam]
            for label, h in g.groupby("label", sort=False):
                med = h.groupby("param_kappa").par2_iters.median()
                nd = int((h.status == "diverged").sum())
                lab = f"{label} ({nd}/{len(h)} diverged)" if nd else label
                ax.loglog(
                    med.index.to_numpy(dtype=float),
                    med.to_numpy(dtype=float),
                    marker="x" if nd else "o",
                    ls=":" if nd else "-",
                    label=lab,
                    zorder=3,
                )
            cap = 2 * float(g.param_max_calls.max()) if "param_max_calls" in g else np.nan
            if np.isfinite(cap):
                ax.axhline(cap, color="grey", ls="--", lw=0.8, label="PAR-2 cap", zorder=1)
            ax.set(
                title=f"{fam}: oracle calls to rel. error 1e-6 (PAR-2)",
                xlabel="condition number kappa",
                ylabel="oracle calls",
            )
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize=7, frameon=False)
        fig.tight_layout()
        save_figure(fig, Path(folder) / "calls_vs_kappa", dpi=140)
        return [fig]


def _scored(runs: Any) -> Any:
    """The runs the task scores: ``ok`` and ``diverged`` ones (the latter at the PAR-2 cap)."""
    if not len(runs):
        return runs
    return runs[runs.status.isin(("ok", "diverged"))].copy()


register_task(TASK_ID, LowRankTask)
