"""``PowerLawRandomFeatures-v0``: one-pass SGD-type training on power-law random features (PLRF), the
setting of *Dimension-adapted Momentum Outscales SGD* (Paquette, Ferbach, Paquette, Gidel, Everett,
NeurIPS 2025, arXiv 2505.16098).

Model [code]: hidden dimension ``v`` (``= 4d``), model size ``d``; the instance seed draws
``W ∈ ℝ^{v×d}``, ``W_ij ~ N(0, 1/d)``; ``W̌ = diag(j^{−α}) W``, ``b̌_j = j^{−α−β}`` (``j = 1..v``). A sample is
``z ~ N(0, I_v)``, features ``φ = W̌ᵀz``, target ``y = b̌ᵀz``; the per-sample loss is ``½(φᵀθ − y)²`` and the
population risk

    P(θ) = E ½(φᵀθ − y)² = ½ ‖W̌θ − b̌‖²                                              (exact, z isotropic)

with limit ``P_∞ = min_θ P(θ)`` by least squares; ``θ_0 = 0`` so ``P(θ_0) = ½‖b̌‖²``. The step normaliser is the
code's ``T_r = Σ_{j ≤ v} j^{−2α}`` (the expected feature trace).

Public problem (:class:`PLRFProblem`): ``alpha``, ``beta``, ``d``, ``v``, ``batch``, ``steps``, ``trace``,
``theta0``, ``checkpoints`` (log-spaced steps at which solvers report) and ``oracle.grad(θ)`` — the mean of
``batch`` per-sample gradients ``φ(φᵀθ − y)`` at fresh samples, executed by the trusted evaluator (over the
sandbox channel for submissions; in-process it is a sealed callable, :func:`papergym.envs.tasks.sealed.seal`,
with no path back to ``W``). ``(φ, y)`` is drawn directly from its Gaussian law (``d + 1`` normals through
the triangular factor of ``[W̌ | b̌]``, the same distribution as through ``z``; :class:`GradientOracle`), so a
step costs ``O(d²)``, not ``O(vd)``. The oracle draws sample ``j`` of the instance's stream in call order
(common random numbers: two solvers issuing the same calls see the same samples), counts samples (the
work unit) and raises :class:`~papergym.envs.tasks.base.BudgetExceeded` past ``steps × batch``. ``W`` and
``b̌`` stay in the evaluator.

Evaluator (:class:`PLRFEvaluator`) scores a solution ``θ`` (array ``(d,)`` or ``{"theta": θ}``):

| metric | dir | definition |
|---|---|---|
| ``excess_ratio`` (primary) | min | ``(P(θ) − P_∞)/(P(θ_0) − P_∞)`` (1.0 for a diverged run) |
| ``log10_excess`` | min | ``log10`` of the ratio (``bench``'s geometric mean of the ratio is ``10^mean``) |
| ``slope`` | min | least-squares slope of ``log(P(θ_t) − P_∞)`` vs ``log t`` over the reported ``t`` in the window below |
| ``excess`` | min | ``P(θ) − P_∞`` |
| ``diverged`` | min | 1 if ``P(θ) > 10·P(θ_0)`` or ``θ`` is not finite at this or any earlier report (sticky; ``stable`` = 1 − ``diverged``) |
| ``step`` | max | samples drawn so far / ``batch`` (counted by the oracle, not declared by the solver) |

Slope window (:func:`slope_window`, a fixed rule that uses only public parameters): ``t ∈ [t_lo, t_sat]``
with ``t_sat = min(T, T_r·d^{2α})`` and ``t_lo = min(10², t_sat/10)``. ``t_sat`` is the order of the step at which
SGD with step ``≍ 1/T_r`` has fitted the smallest learnable population direction (eigenvalue ``≈ d^{−2α}``), i.e.
where the loss curve leaves its power-law phase for the ``d``-limited floor (the SGD phase analysis of Paquette,
Paquette, Xiao, Pennington, *4+3 phases of compute-optimal neural scaling laws*, NeurIPS 2024); ``10²`` skips the
first steps before the momentum buffer (``Δ(t) ≍ δ/t``) has any memory. A power law fitted past ``t_sat`` would
measure the floor, not the scaling exponent.

Instances: every ``(α, β)`` pair × ``d`` × seed; ``dev`` seeds are public (default 0–4), ``test`` seeds are
5 per configuration by HMAC of the evaluator's secret. Default grid [code]: ``(α, β) ∈ {(0.3, 0.7), (0.7,
0.7), (1.0, 0.3), (1.2, 0.7)}``, ``d ∈ {100, 200}``, ``v = 4d``, ``batch = 1``, ``steps = 10⁵``.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
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
    instance_params,
    register_task,
    split_instances,
)
from papergym.envs.tasks.sealed import seal

__all__ = [
    "PLRFTask",
    "PLRFProblem",
    "PLRFModel",
    "GradientOracle",
    "PLRFEvaluator",
    "population_trace",
    "checkpoints",
    "slope_window",
    "DEFAULT_PAIRS",
]

TASK_ID = "PowerLawRandomFeatures-v0"
DEFAULT_PAIRS = ((0.3, 0.7), (0.7, 0.7), (1.0, 0.3), (1.2, 0.7))
N_TEST_SEEDS = 5
CHUNK = 4096  # samples drawn from the stream at a time (the order of samples does not depend on it)


def population_trace(alpha: float, v: int) -> float:
    """``T_r = Σ_{j ≤ v} j^{−2α}`` [code: ``population_trace``]."""
    return float(np.sum(np.arange(1, v + 1, dtype=float) ** (-2.0 * alpha)))


def slope_window(alpha: float, d: int, v: int, steps: int) -> tuple[float, float]:
    """The exponent-fitting window ``(t_lo, t_sat)`` (module docstring): ``t_sat = min(T, T_r·d^{2α})``,
    ``t_lo = min(10², t_sat/10)``."""
    t_sat = min(float(steps), population_trace(alpha, v) * float(d) ** (2.0 * alpha))
    return min(1e2, t_sat / 10.0), t_sat


def checkpoints(steps: int, per_decade: int = 20) -> np.ndarray:
    """Log-spaced report steps ``1 ≤ t ≤ steps`` (``per_decade`` per decade, and ``steps`` itself)."""
    n = max(2, int(math.ceil(per_decade * math.log10(max(steps, 10)))) + 1)
    return np.unique(np.concatenate([np.round(np.geomspace(1, steps, n)).astype(np.int64), [steps]]))


class PLRFModel:
    """The private instance: ``W̌``, ``b̌``, ``P_∞`` (module docstring)."""

    def __init__(self, alpha: float, beta: float, d: int, v: int, seed: int):
        self.alpha, self.beta, self.d, self.v = float(alpha), float(beta), int(d), int(v)
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(0,)))
        j = np.arange(1, v + 1, dtype=float)
        W = rng.normal(0.0, 1.0 / math.sqrt(d), size=(v, d))
        self.W = (j**-self.alpha)[:, None] * W  # W-check
        self.b = j ** (-self.alpha - self.beta)  # b-check
        self.theta_star, *_ = np.linalg.lstsq(self.W, self.b, rcond=None)
        self.P_inf = self.risk(self.theta_star)
        self.P0 = 0.5 * float(self.b @ self.b)

    def risk(self, theta: np.ndarray) -> float:
        """``P(θ) = ½‖W̌θ − b̌‖²``."""
        r = self.W @ theta - self.b
        return 0.5 * float(r @ r)


class GradientOracle:
    """The trusted stochastic-gradient oracle of one solve (module docstring).

    Sampling: ``(φ, y) = (W̌ᵀz, b̌ᵀz)`` with ``z ~ N(0, I_v)`` is a centred Gaussian vector in ``ℝ^{d+1}`` with
    covariance ``AᵀA``, ``A = [W̌ | b̌]`` (``v × (d+1)``). With ``R`` the triangular factor of ``A = QR``,
    ``(φ, y) = ξᵀR`` for ``ξ ~ N(0, I_{d+1})`` has exactly that law, so the oracle draws ``d + 1`` normals
    per sample instead of ``v`` and forms the features a chunk at a time (``O(d²)`` per sample, in BLAS-3)
    instead of ``O(vd)`` per step. Sample ``j`` is row ``j`` of the instance's ``ξ`` stream."""

    def __init__(self, model: PLRFModel, batch: int, seed: int, max_samples: int | None):
        self.model, self.batch, self.max_samples = model, int(batch), max_samples
        self._rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(1,)))
        self._R = np.linalg.qr(np.column_stack([model.W, model.b]), mode="r")  # (d+1, d+1)
        self._buf = np.empty((0, model.d + 1))
        self._pos = 0
        self.count = 0

    def _samples(self, k: int) -> np.ndarray:
        """The next ``k`` rows ``(φ, y)`` of the stream, shape ``(k, d + 1)``."""
        if self._pos + k > self._buf.shape[0]:
            rest = self._buf[self._pos :]
            fresh = self._rng.standard_normal((max(CHUNK, k), self.model.d + 1)) @ self._R
            self._buf, self._pos = np.concatenate([rest, fresh]), 0
        out = self._buf[self._pos : self._pos + k]
        self._pos += k
        return out

    def grad(self, theta: Any) -> np.ndarray:
        """Mean of ``batch`` per-sample gradients ``φ(φᵀθ − y)`` at the next samples."""
        m = self.model
        try:
            th = np.asarray(theta, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"oracle.grad: theta must be a float array of shape ({m.d},): {exc}") from None
        if th.shape != (m.d,):
            raise ValueError(f"oracle.grad: theta must have shape ({m.d},), got {th.shape}")
        if self.max_samples is not None and self.count + self.batch > self.max_samples:
            raise BudgetExceeded(f"{self.count} samples drawn; the budget is {self.max_samples}")
        F = self._samples(self.batch)
        self.count += self.batch
        phi, y = F[:, :-1], F[:, -1]
        with np.errstate(over="ignore", invalid="ignore"):
            return phi.T @ (phi @ th - y) / self.batch

    @property
    def steps_taken(self) -> float:
        return self.count / self.batch


@dataclass(frozen=True)
class PLRFOracleView:
    """``problem.oracle``: ``grad(θ)`` runs in the evaluator."""

    grad: Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class PLRFProblem:
    """The public problem (module docstring)."""

    alpha: float
    beta: float
    d: int
    v: int
    batch: int
    steps: int
    trace: float
    theta0: np.ndarray
    checkpoints: np.ndarray
    oracle: PLRFOracleView

    PRIVATE_FIELDS = ()


def solution_theta(solution: Any, d: int) -> np.ndarray:
    """``θ`` from a solution (an array ``(d,)`` or a mapping with ``"theta"``); ``ValueError`` otherwise."""
    if isinstance(solution, Mapping):
        if "theta" not in solution:
            raise ValueError(f"solution mapping needs a 'theta' entry, got keys {sorted(solution)}")
        solution = solution["theta"]
    try:
        th = np.asarray(solution, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"solution must be a float array of shape ({d},): {exc}") from None
    if th.shape != (d,):
        raise ValueError(f"solution must have shape ({d},), got {th.shape}")
    return th


class PLRFEvaluator:
    """Private scorer (module docstring). Keeps the ``(step, excess)`` history of the reported iterates for
    the ``slope`` metric; the step is the oracle's own sample count."""

    def __init__(self, model: PLRFModel, oracle: GradientOracle):
        self.model, self.oracle = model, oracle
        self.history: list[tuple[float, float]] = []
        self.window = slope_window(
            model.alpha, model.d, model.v, oracle.max_samples // oracle.batch if oracle.max_samples else 10**9
        )
        self.diverged = False  # sticky: a run that once exploded stays diverged

    def evaluate(self, solution: Any) -> dict[str, float]:
        m = self.model
        th = solution_theta(solution, m.d)
        base = m.P0 - m.P_inf
        step = self.oracle.steps_taken
        P = m.risk(th) if np.all(np.isfinite(th)) else float("inf")
        self.diverged = self.diverged or not math.isfinite(P) or P > 10.0 * m.P0
        diverged = self.diverged
        if diverged:
            excess, ratio = float("inf"), 1.0
        else:
            excess = max(P - m.P_inf, 0.0)
            ratio = excess / base
            if step > 0:
                self.history.append((step, excess))
        return {
            "excess_ratio": ratio,
            "log10_excess": math.log10(ratio) if ratio > 0 else -300.0,
            "excess": excess,
            "diverged": float(diverged),
            "stable": float(not diverged),
            "step": step,
            "slope": self.slope(),
        }

    def slope(self) -> float:
        lo, hi = self.window
        pts = np.array([p for p in self.history if lo <= p[0] <= hi and p[1] > 0])
        if len(pts) < 3 or len(np.unique(pts[:, 0])) < 3:
            return float("nan")
        return float(np.polyfit(np.log(pts[:, 0]), np.log(pts[:, 1]), 1)[0])


class PLRFTask:
    """``PowerLawRandomFeatures-v0`` (module docstring).

    ``alpha``, ``beta``: values (lists allowed; every combination is run) — default the four pairs below;
    ``d``: model sizes (default 100, 200); ``v_ratio``: ``v = v_ratio·d`` (4); ``steps``: ``T`` (10⁵);
    ``batch``: ``B`` (1); ``seeds``: dev seeds (0–4); ``max_seconds``: the default budget's wall limit (60).
    """

    id = TASK_ID
    primary = "excess_ratio"
    metrics = {
        "excess_ratio": "min",
        "log10_excess": "min",
        "slope": "min",
        "excess": "min",
        "diverged": "min",
        "stable": "max",
        "step": "max",
    }
    table_metrics = ("log10_excess", "slope", "excess", "diverged", "step")

    def __init__(
        self,
        alpha: Any = None,
        beta: Any = None,
        d: Any = (100, 200),
        v_ratio: int = 4,
        steps: int = 100_000,
        batch: int = 1,
        seeds: Any = (0, 1, 2, 3, 4),
        max_seconds: float = 60.0,
    ):
        if alpha is None and beta is None:
            pairs = DEFAULT_PAIRS
        else:
            a = check_floats(alpha if alpha is not None else sorted({p[0] for p in DEFAULT_PAIRS}), "alpha", above=0.0)
            b = check_floats(beta if beta is not None else 0.7, "beta", above=0.0)
            pairs = tuple(itertools.product(a, b))
        for a_, _ in pairs:
            if a_ <= 0.25:
                raise ValueError(f"alpha must be > 1/4 (the features' trace and DANA's schedule need it), got {a_}")
        self.pairs = tuple(pairs)
        self.d = check_ints(d, "d", 2)
        self.v_ratio = check_ints(v_ratio, "v_ratio", 1)[0]
        self.steps = check_ints(steps, "steps", 1)[0]
        self.batch = check_ints(batch, "batch", 1)[0]
        self.seeds = check_ints(seeds, "seeds", 0)
        ms = check_floats(max_seconds, "max_seconds", above=0.0)[0]
        self.default_budget = Budget(max_seconds=ms, max_iterations=self.steps, max_work=self.steps * self.batch)

    @staticmethod
    def _key(a: float, b: float, d: int) -> str:
        return f"a={a:g},b={b:g}/d={d}"

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        configs = [
            (
                self._key(a, b, d),
                {"alpha": a, "beta": b, "d": d, "v": self.v_ratio * d, "steps": self.steps, "batch": self.batch},
            )
            for (a, b), d in itertools.product(self.pairs, self.d)
        ]
        return split_instances(TASK_ID, split, configs, self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[PLRFProblem, PLRFEvaluator]:
        p = instance_params(ref, TASK_ID)
        missing = {"alpha", "beta", "d", "v", "steps", "batch"} - set(p)
        if missing:
            raise ValueError(f"instance {ref.name!r}: params miss {sorted(missing)}")
        a, b = check_floats(p["alpha"], "alpha", above=0.25)[0], check_floats(p["beta"], "beta", above=0.0)[0]
        d, v = check_ints(p["d"], "d", 2)[0], check_ints(p["v"], "v", 1)[0]
        steps, batch = check_ints(p["steps"], "steps", 1)[0], check_ints(p["batch"], "batch", 1)[0]
        model = PLRFModel(a, b, d, v, ref.seed)
        oracle = GradientOracle(model, batch, ref.seed, steps * batch)
        problem = PLRFProblem(
            alpha=a,
            beta=b,
            d=d,
            v=v,
            batch=batch,
            steps=steps,
            trace=population_trace(a, v),
            theta0=np.zeros(d),
            checkpoints=checkpoints(steps),
            oracle=PLRFOracleView(grad=seal(oracle.grad, "PLRF oracle.grad")),
        )
        return problem, PLRFEvaluator(model, oracle)

    def report(self, runs: Any) -> str:
        """Median fitted slope (over :func:`slope_window`) and final ``log10`` excess per ``(α, β, d)`` and solver, and
        the slope ratio to ``sgd`` (the paper's headline: DANA's exponent steeper than SGD's, SGD-M equal to SGD)."""
        from papergym.envs.tasks.power_law_features.report import slope_table

        return slope_table(runs)

    def figures(self, runs: Any, folder: Any, curves: Any = None) -> list[Any]:
        """``loss_vs_steps``: excess risk against steps on log-log axes, one panel per ``(α, β, d)``, median
        over seeds per solver, with the fitted slopes in the legend (PNG + SVG)."""
        from papergym.envs.tasks.power_law_features.report import loss_figure

        return loss_figure(runs, curves, folder)


register_task(TASK_ID, PLRFTask)
