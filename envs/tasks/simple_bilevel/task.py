"""``SimpleBilevel-v0``: stationary points of nonconvex simple bilevel problems (Cao, Jiang, Yazdandoost Hamedani
& Mokhtari, *On the Complexity of Finding Stationary Points in Nonconvex Simple Bilevel Optimization*, NeurIPS 2025,
arXiv:2507.23155; ``docs/papers/dbgd.md``; tags: see docs/conventions.md).

Problem: ``min f(x)`` subject to ``x ∈ argmin g``, with ``f`` and ``g`` smooth and possibly nonconvex.

**Stationarity** ([design] consistent with the paper's abstract): with ``∇f``, ``∇g`` at ``x``,

* ``r_g(x) = ‖∇g(x)‖``;
* ``r_f(x) = min_{λ≥0} ‖∇f(x) + λ∇g(x)‖``, closed form ``λ̂ = max(0, −⟨∇f, ∇g⟩/‖∇g‖²)`` (``λ̂ = 0`` when
  ``∇g = 0``), i.e. ``r_f = ‖∇f − ⟨∇f, u⟩u‖`` with ``u = ∇g/‖∇g‖`` if ``⟨∇f, ∇g⟩ < 0``, else ``‖∇f‖``
  (:func:`stationarity`);
* ``x`` is ``(ε_f, ε_g)``-stationary when ``r_f ≤ ε_f`` and ``r_g ≤ ε_g`` (defaults ``1e−3``).

The measure is discontinuous at lower-level critical points: exactly at ``x*`` (``∇g = 0``) ``r_f = ‖∇f‖``, so
stationarity is reached by iterates that approach the solution set with ``∇g ≠ 0`` and ``∇g`` anti-parallel to
``∇f`` (by this definition; a solver that lands exactly on ``x*`` is not stationary by it).

**Instances** ([design]); all solvers get the same seeded ``x_0``:

* ``circle`` (G1): ``g = (‖x‖² − 1)²``, ``f = ⟨c, x⟩`` with ``‖c‖ = 1``; ``d ∈ circle_dims`` = {2, 10};
  ``x* = −c``, ``f* = −1``, ``g* = 0``.
* ``balanced-factorisation`` (G2): ``g = ½‖UVᵀ − M‖_F²``, ``f = ½(‖U‖_F² + ‖V‖_F²)``; ``U, V ∈ ℝ^{m×r}``,
  ``m = factor_rows`` = 30 (100 with ``paper_scale``), ``r ∈ ranks`` = {5, 8}; ``f* = ‖M‖_*``, ``g* = 0``.
* ``min-norm-network`` (G3): ``g`` = ½ mean squared training error of a 2-layer tanh net, ``f = ½‖θ‖²``;
  20 points in ℝ⁵, ``hidden`` = 50 units (200 with ``paper_scale``): 351 (1,401) parameters; no known answer.
* ``min-norm-regression`` (G4): ``g = ½‖Ax − b‖²``, ``f = ½‖x‖²``; ``A ∈ ℝ^{40×100}``; ``x* = A⁺b``,
  ``f* = ½‖x*‖²``, ``g* = 0``.

Generators (instance seed ``s``; [design]):

* G1: ``c = z/‖z‖``, ``z ~ N(0, I_d)``; ``x_0 ~ N(0, 0.5² I)``.
* G2: ``M = P diag(σ) Qᵀ``, ``P, Q ∈ ℝ^{m×5}`` Haar (orthonormal columns), ``σ = linspace(1, 5, 5)``, so
  ``‖M‖_* = 15``; ``U_0, V_0`` entries ``N(0, 0.1²)``; ``x = (vec U, vec V)`` (row-major). ``f* = ‖M‖_*`` because
  ``½(‖U‖² + ‖V‖²) ≥ ‖UVᵀ‖_*`` with equality at the balanced factors ``U = PΣ^{1/2}``, ``V = QΣ^{1/2}``.
* G3: inputs ``X ~ N(0, I_5)`` (``net_points`` rows); targets from a random teacher
  ``t = aᵀ tanh(W x + b)`` with ``teacher_hidden`` = 5 units, ``W ~ N(0, 1/5)``, ``b ~ N(0, 0.1²)``,
  ``a ~ N(0, 1/teacher_hidden)``. Student ``y(x) = w₂ᵀ tanh(W₁x + b₁) + b₂``, ``θ = (vec W₁, b₁, w₂, b₂)``;
  ``g(θ) = (1/(2n)) Σ_i (y(x_i) − t_i)²``; ``x_0`` = PyTorch's default ``nn.Linear`` initialisation (weights and
  biases ``U(±1/√fan_in)``). With more parameters than points the net interpolates, so ``g* = 0`` is assumed
  (``g_gap`` reports ``g`` itself); ``f*`` is unknown (``f_gap`` is NaN): relative ranking only.
* G4: ``A`` entries ``N(0, 1/m)`` (``m = regression_rows``), ``x_true ~ N(0, I_n)``, ``b = A x_true``, ``x_0 = 0``;
  ``x* = A⁺b`` (KKT: ``Ax* = b`` and ``x* = Aᵀw`` lies in the row space).

**Smoothness estimates** ``L_f``, ``L_g`` (public): G1 ``L_f = 0`` and ``L_g = 12R² − 4``, the largest eigenvalue of
``∇²g = 4(‖x‖² − 1)I + 8xxᵀ`` on the ball ``‖x‖ ≤ R = max(‖x_0‖, 1.2)``; G2 ``L_f = 1`` and ``L_g = 3R² + ‖M‖₂``,
a bound on ``‖∇²g‖`` over ``{‖U‖₂, ‖V‖₂ ≤ R}`` with ``R² = max(‖M‖₂, ‖U_0‖₂², ‖V_0‖₂²)`` (the balanced solutions
have ``‖U‖₂² = ‖M‖₂``); G3 ``L_f = 1`` and ``L_g`` = twice the spectral norm of ``∇²g(x_0)`` (100 power
iterations on central-difference Hessian-vector products of the exact gradient) — an estimate at the start, ``g``
is not globally smooth; G4 ``L_f = 1``, ``L_g = ‖A‖₂²`` (exact, global).

**Public problem** (:class:`SimpleBilevelProblem`, ``PRIVATE_FIELDS = ()``): ``family``, ``dim``, ``x0``, ``L_f``,
``L_g``, ``g_star`` (the known lower-level optimal value: 0.0 on G1, G2, G4; ``None`` on G3), ``eps_f``, ``eps_g``,
``max_work``, ``shapes`` (the parameter blocks of ``x`` in order: G2 ``((m, r), (m, r))``, G3
``((h, 5), (h,), (h,), (1,))``, else ``((dim,),)``) and ``oracle`` (:class:`SimpleBilevelOracleView`) — the methods
of a trusted counter that runs in the evaluator, each sealed (:func:`~papergym.envs.tasks.sealed.seal`: no path
from the problem to ``x*``, ``f*`` or the evaluator). The functions are public by design (the task is about the
algorithm); the oracle counts work (unit: one evaluation of ``(∇f, ∇g)`` at one point):

| call | returns | work |
|---|---|---|
| ``grads(x)`` | ``(∇f(x), ∇g(x))`` | 1 |
| ``grad_f(x)``, ``grad_g(x)`` | one gradient | ½ each |
| ``values(x)`` | ``(f(x), g(x))`` | ½ |
| ``f(x)``, ``g(x)`` | one value | ¼ each |
| ``work_used()`` | work units spent so far | 0 |

Every call validates ``x`` (real numbers, shape ``(dim,)``, finite; else ``ValueError`` naming the problem) and
raises :class:`BudgetExceeded` when it would take the total past ``max_work`` (the call is then not charged).

**Solution**: ``x`` (array ``(dim,)``). **Metrics** (the evaluator recomputes ``∇f``, ``∇g`` itself):

| metric | dir | definition |
|---|---|---|
| ``par2_calls`` (primary) | min | oracle work at the first *reported* ``(ε_f, ε_g)``-stationary iterate (read from |
| | | the counter at report time); ``2 × max_work`` if none |
| ``iters_to_stationary`` | min | gradient query points at that report (calls to ``grads``, plus ``grad_f``/``grad_g`` |
| | | at a new point; ``x_0`` counts, so one more than the iteration index of a one-gradient-pair-per-iteration |
| | | method); NaN if never. The report prints the solver-declared iteration from the anytime curves instead |
| ``stationary`` | max | 1 if the evaluated iterate is ``(ε_f, ε_g)``-stationary |
| ``r_f``, ``r_g`` | min | stationarity residuals of the evaluated iterate |
| ``f`` | min | upper-level value |
| ``f_gap`` | min | ``|f − f*|`` (G1, G2, G4; NaN on G3) |
| ``g_gap`` | min | ``g − g*`` with ``g* = 0`` on every family (G3: assumed interpolation) |
| ``dist_to_solution`` | min | ``‖x − x*‖`` (G1, G4; NaN otherwise: G2's solution set is a manifold) |
| ``work`` | min | oracle work spent when the iterate was evaluated |

| ``diverged`` | min | 1 if the evaluated iterate diverged: non-finite ``x``, ``f``, ``∇f`` or ``∇g``, or |
| | | ``g(x) > 10⁶ (1 + |g(x_0)|)`` (exploded); its ``par2_calls`` is then the failure value ``2 × max_work`` |

Non-finite iterates are scored (``inf`` residuals and gaps, ``diverged = 1``; ``bench`` and the board store such a
run as ``diverged``, never ``ok``), never an error. Budget: ``max_work`` = 1e5 units,
``max_seconds`` = 60. Instance names: ``circle/d=2/s0``, ``balanced-factorisation/r=5/s0``,
``min-norm-network/h=50/s0``, ``min-norm-regression/m=40,n=100/s0`` (``--instances circle`` selects a family).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
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
from papergym.envs.tasks.haar import haar
from papergym.envs.tasks.sealed import seal

__all__ = [
    "SimpleBilevelTask",
    "SimpleBilevelProblem",
    "SimpleBilevelOracle",
    "SimpleBilevelOracleView",
    "SimpleBilevelEvaluator",
    "make_instance",
    "stationarity",
    "FAMILIES",
    "WORK_COSTS",
]

TASK_ID = "SimpleBilevel-v0"
FAMILIES = ("circle", "balanced-factorisation", "min-norm-network", "min-norm-regression")
N_TEST_SEEDS = 5
TRUE_RANK = 5  # G2: rank of M, singular values linspace(1, 5, 5)
WORK_COSTS = {"grads": 1.0, "grad_f": 0.5, "grad_g": 0.5, "values": 0.5, "f": 0.25, "g": 0.25}
EXPLODE = 1e6  # a run whose g exceeds EXPLODE·(1 + |g(x_0)|) has exploded (diverged)


# ---------------------------------------------------------------------------------------- stationarity
def stationarity(grad_f: np.ndarray, grad_g: np.ndarray) -> tuple[float, float, float]:
    """``(r_f, r_g, λ̂)`` (module docstring): ``r_g = ‖∇g‖``, ``λ̂ = max(0, −⟨∇f, ∇g⟩/‖∇g‖²)`` (0 if ``∇g = 0``),
    ``r_f = ‖∇f + λ̂∇g‖``, computed as ``‖∇f − ⟨∇f, u⟩u‖`` with ``u = ∇g/‖∇g‖`` (no ``‖∇g‖²`` underflow).
    Non-finite gradients give ``inf`` residuals."""
    gf, gg = np.asarray(grad_f, dtype=float), np.asarray(grad_g, dtype=float)
    if not (np.all(np.isfinite(gf)) and np.all(np.isfinite(gg))):
        return math.inf, math.inf, math.nan
    r_g = float(np.linalg.norm(gg))
    if not math.isfinite(r_g):
        return math.inf, math.inf, math.nan
    if r_g == 0.0:
        return float(np.linalg.norm(gf)), 0.0, 0.0
    u = gg / r_g
    a = float(gf @ u)
    if a >= 0.0:
        return float(np.linalg.norm(gf)), r_g, 0.0
    return float(np.linalg.norm(gf - a * u)), r_g, -a / r_g


# ------------------------------------------------------------------------------------------- instances
class _Instance(abc.ABC):
    """A private instance: ``f``, ``g`` and their gradients, ``x0``, ``L_f``, ``L_g``, the known answers (each
    family implements the four functions)."""

    family: str
    dim: int
    x0: np.ndarray
    L_f: float
    L_g: float
    shapes: tuple[tuple[int, ...], ...]
    f_star: float = math.nan
    g_star: float = 0.0
    g_star_known: bool = True
    x_star: np.ndarray | None = None

    @abc.abstractmethod
    def f(self, x: np.ndarray) -> float: ...

    @abc.abstractmethod
    def g(self, x: np.ndarray) -> float: ...

    @abc.abstractmethod
    def grad_f(self, x: np.ndarray) -> np.ndarray: ...

    @abc.abstractmethod
    def grad_g(self, x: np.ndarray) -> np.ndarray: ...


class CircleInstance(_Instance):
    """G1: ``g = (‖x‖² − 1)²``, ``f = ⟨c, x⟩``."""

    family = "circle"

    def __init__(self, d: int, seed: int):
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(0, d)))
        z = rng.standard_normal(d)
        self.c = z / np.linalg.norm(z)
        self.x0 = 0.5 * rng.standard_normal(d)
        self.dim, self.shapes = d, ((d,),)
        R = max(float(np.linalg.norm(self.x0)), 1.2)
        self.L_f, self.L_g = 0.0, 12.0 * R * R - 4.0
        self.x_star, self.f_star = -self.c, -1.0

    def f(self, x):
        return float(self.c @ x)

    def g(self, x):
        return float((x @ x - 1.0) ** 2)

    def grad_f(self, x):
        return self.c.copy()

    def grad_g(self, x):
        return 4.0 * (x @ x - 1.0) * x


class FactorisationInstance(_Instance):
    """G2: ``g = ½‖UVᵀ − M‖_F²``, ``f = ½(‖U‖_F² + ‖V‖_F²)``."""

    family = "balanced-factorisation"

    def __init__(self, m: int, r: int, seed: int):
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(1, m, r)))
        self.sigma = np.linspace(1.0, 5.0, TRUE_RANK)
        self.P, self.Q = haar(rng, m, TRUE_RANK), haar(rng, m, TRUE_RANK)
        self.M = (self.P * self.sigma) @ self.Q.T
        U0, V0 = 0.1 * rng.standard_normal((m, r)), 0.1 * rng.standard_normal((m, r))
        self.m, self.r = m, r
        self.dim, self.shapes = 2 * m * r, ((m, r), (m, r))
        self.x0 = np.concatenate([U0.ravel(), V0.ravel()])
        s1 = float(self.sigma.max())
        R2 = max(s1, float(np.linalg.norm(U0, 2)) ** 2, float(np.linalg.norm(V0, 2)) ** 2)
        self.L_f, self.L_g = 1.0, 3.0 * R2 + s1
        self.f_star = float(self.sigma.sum())  # nuclear norm of M

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = self.m * self.r
        return x[:k].reshape(self.m, self.r), x[k:].reshape(self.m, self.r)

    def f(self, x):
        return 0.5 * float(x @ x)

    def g(self, x):
        U, V = self.split(x)
        E = U @ V.T - self.M
        return 0.5 * float(np.sum(E * E))

    def grad_f(self, x):
        return x.copy()

    def grad_g(self, x):
        U, V = self.split(x)
        E = U @ V.T - self.M
        return np.concatenate([(E @ V).ravel(), (E.T @ U).ravel()])


class NetworkInstance(_Instance):
    """G3: minimum-norm interpolation with a 2-layer tanh network."""

    family = "min-norm-network"

    def __init__(self, n: int, p: int, h: int, teacher_hidden: int, seed: int):
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(2, n, p, h, teacher_hidden)))
        self.n, self.p, self.h = n, p, h
        self.X = rng.standard_normal((n, p))
        Wt = rng.standard_normal((teacher_hidden, p)) / math.sqrt(p)
        bt = 0.1 * rng.standard_normal(teacher_hidden)
        at = rng.standard_normal(teacher_hidden) / math.sqrt(teacher_hidden)
        self.t = np.tanh(self.X @ Wt.T + bt) @ at
        a1, a2 = 1.0 / math.sqrt(p), 1.0 / math.sqrt(h)  # PyTorch nn.Linear default: U(±1/sqrt(fan_in))
        self.x0 = np.concatenate(
            [rng.uniform(-a1, a1, h * p), rng.uniform(-a1, a1, h), rng.uniform(-a2, a2, h), rng.uniform(-a2, a2, 1)]
        )
        self.dim, self.shapes = h * p + 2 * h + 1, ((h, p), (h,), (h,), (1,))
        self.g_star_known = False
        self.L_f = 1.0
        self.L_g = 2.0 * self._hessian_norm(self.x0)

    def _unpack(self, x):
        h, p = self.h, self.p
        return x[: h * p].reshape(h, p), x[h * p : h * p + h], x[h * p + h : h * p + 2 * h], x[-1]

    def _forward(self, x):
        W1, b1, w2, b2 = self._unpack(x)
        H = np.tanh(self.X @ W1.T + b1)
        return H, H @ w2 + b2 - self.t

    def f(self, x):
        return 0.5 * float(x @ x)

    def g(self, x):
        _, res = self._forward(x)
        return 0.5 * float(res @ res) / self.n

    def grad_f(self, x):
        return x.copy()

    def grad_g(self, x):
        _, _, w2, _ = self._unpack(x)
        H, res = self._forward(x)
        r = res / self.n
        delta = (r[:, None] * w2[None, :]) * (1.0 - H * H)
        return np.concatenate([(delta.T @ self.X).ravel(), delta.sum(axis=0), H.T @ r, [r.sum()]])

    def _hessian_norm(self, x: np.ndarray, iters: int = 100, h: float = 1e-5) -> float:
        """``‖∇²g(x)‖₂`` by power iteration on central-difference Hessian-vector products of the exact gradient
        (seeded start; the largest-magnitude eigenvalue, so negative curvature counts)."""
        v = np.random.default_rng(0).standard_normal(self.dim)
        lam = 0.0
        for _ in range(iters):
            v /= np.linalg.norm(v)
            hv = (self.grad_g(x + h * v) - self.grad_g(x - h * v)) / (2 * h)
            lam = float(np.linalg.norm(hv))
            if lam == 0.0:
                return 0.0
            v = hv
        return lam


class RegressionInstance(_Instance):
    """G4: ``g = ½‖Ax − b‖²``, ``f = ½‖x‖²``, ``x* = A⁺b``."""

    family = "min-norm-regression"

    def __init__(self, m: int, n: int, seed: int):
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(3, m, n)))
        self.A = rng.standard_normal((m, n)) / math.sqrt(m)
        self.x_true = rng.standard_normal(n)
        self.b = self.A @ self.x_true
        self.dim, self.shapes = n, ((n,),)
        self.x0 = np.zeros(n)
        self.L_f, self.L_g = 1.0, float(np.linalg.norm(self.A, 2)) ** 2
        self.x_star = np.linalg.pinv(self.A) @ self.b
        self.f_star = 0.5 * float(self.x_star @ self.x_star)

    def f(self, x):
        return 0.5 * float(x @ x)

    def g(self, x):
        r = self.A @ x - self.b
        return 0.5 * float(r @ r)

    def grad_f(self, x):
        return x.copy()

    def grad_g(self, x):
        return self.A.T @ (self.A @ x - self.b)


def make_instance(params: dict[str, Any], seed: int) -> _Instance:
    """The private instance of ``params`` (an :class:`InstanceRef`'s params) and ``seed``."""
    fam = check_names(params.get("family"), "family", FAMILIES)[0]
    if fam == "circle":
        return CircleInstance(check_ints(params.get("d"), "d", 1)[0], seed)
    if fam == "balanced-factorisation":
        m, r = check_ints(params.get("m"), "m", TRUE_RANK)[0], check_ints(params.get("r"), "r", TRUE_RANK)[0]
        return FactorisationInstance(m, r, seed)
    if fam == "min-norm-network":
        return NetworkInstance(
            check_ints(params.get("n_points"), "n_points", 1)[0],
            check_ints(params.get("input_dim"), "input_dim", 1)[0],
            check_ints(params.get("hidden"), "hidden", 1)[0],
            check_ints(params.get("teacher_hidden"), "teacher_hidden", 1)[0],
            seed,
        )
    m, n = check_ints(params.get("m"), "m", 1)[0], check_ints(params.get("n"), "n", 2)[0]
    return RegressionInstance(m, n, seed)


# ---------------------------------------------------------------------------------------------- oracle
class SimpleBilevelOracle:
    """The trusted oracle of one solve: counts work (:data:`WORK_COSTS`) and gradient query points."""

    def __init__(self, inst: _Instance, max_work: float):
        self.inst, self.max_work = inst, float(max_work)
        self.work = 0.0
        self.grad_points = 0
        self._last_grad_x: np.ndarray | None = None

    def _take(self, name: str, x: Any) -> np.ndarray:
        d = self.inst.dim
        try:
            xa = np.asarray(x)
        except Exception as exc:  # noqa: BLE001 - anything that is not an array is a bad input
            raise ValueError(f"oracle.{name}: x must be a real array of shape ({d},): {exc}") from None
        if xa.dtype.kind not in "iuf":
            raise ValueError(f"oracle.{name}: x must hold real numbers, got dtype {xa.dtype}")
        if xa.shape != (d,):
            raise ValueError(f"oracle.{name}: x must have shape ({d},), got {xa.shape}")
        xv = xa.astype(float, copy=True)
        if not np.all(np.isfinite(xv)):
            raise ValueError(
                f"oracle.{name}: x must be finite (entry {int(np.argmin(np.isfinite(xv)))} is "
                f"{xv[np.argmin(np.isfinite(xv))]})"
            )
        cost = WORK_COSTS[name]
        if self.work + cost > self.max_work + 1e-9:
            raise BudgetExceeded(
                f"oracle.{name} costs {cost:g} work units; {self.work:g} of max_work = {self.max_work:g} are used"
            )
        self.work += cost
        if name in ("grads", "grad_f", "grad_g"):
            if name == "grads" or self._last_grad_x is None or not np.array_equal(xv, self._last_grad_x):
                self.grad_points += 1
            self._last_grad_x = xv
        return xv

    def grads(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        xv = self._take("grads", x)
        with np.errstate(over="ignore", invalid="ignore"):
            return self.inst.grad_f(xv), self.inst.grad_g(xv)

    def grad_f(self, x: Any) -> np.ndarray:
        xv = self._take("grad_f", x)
        with np.errstate(over="ignore", invalid="ignore"):
            return self.inst.grad_f(xv)

    def grad_g(self, x: Any) -> np.ndarray:
        xv = self._take("grad_g", x)
        with np.errstate(over="ignore", invalid="ignore"):
            return self.inst.grad_g(xv)

    def values(self, x: Any) -> tuple[float, float]:
        xv = self._take("values", x)
        with np.errstate(over="ignore", invalid="ignore"):
            return self.inst.f(xv), self.inst.g(xv)

    def f(self, x: Any) -> float:
        xv = self._take("f", x)
        with np.errstate(over="ignore", invalid="ignore"):
            return self.inst.f(xv)

    def g(self, x: Any) -> float:
        xv = self._take("g", x)
        with np.errstate(over="ignore", invalid="ignore"):
            return self.inst.g(xv)

    def work_used(self) -> float:
        return float(self.work)


@dataclass(frozen=True)
class SimpleBilevelOracleView:
    """``problem.oracle``: every call runs in the evaluator (costs in the module docstring); each is the trusted
    oracle's method behind :func:`~papergym.envs.tasks.sealed.seal`, so the known answers (``x*``, ``f*``) are not
    reachable from the problem."""

    grads: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    grad_f: Callable[[np.ndarray], np.ndarray]
    grad_g: Callable[[np.ndarray], np.ndarray]
    values: Callable[[np.ndarray], tuple[float, float]]
    f: Callable[[np.ndarray], float]
    g: Callable[[np.ndarray], float]
    work_used: Callable[[], float]


@dataclass(frozen=True)
class SimpleBilevelProblem:
    """The public problem (module docstring)."""

    family: str
    dim: int
    x0: np.ndarray
    L_f: float
    L_g: float
    g_star: float | None
    eps_f: float
    eps_g: float
    max_work: float
    shapes: tuple[tuple[int, ...], ...]
    oracle: SimpleBilevelOracleView

    PRIVATE_FIELDS = ()


# ------------------------------------------------------------------------------------------- evaluator
class SimpleBilevelEvaluator:
    """Private scorer (module docstring); remembers the first reported ``(ε_f, ε_g)``-stationary iterate."""

    def __init__(self, inst: _Instance, oracle: SimpleBilevelOracle, eps_f: float, eps_g: float):
        self.inst, self.oracle, self.eps_f, self.eps_g = inst, oracle, float(eps_f), float(eps_g)
        self.first_work: float | None = None
        self.first_iter: int | None = None
        self.g_explode = EXPLODE * (1.0 + abs(inst.g(inst.x0)))  # g above this: the run exploded

    def evaluate(self, solution: Any) -> dict[str, float]:
        inst, d = self.inst, self.inst.dim
        try:
            xa = np.asarray(solution)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"solution must be a real array of shape ({d},): {exc}") from None
        if xa.dtype.kind not in "iuf":
            raise ValueError(f"solution must hold real numbers, got dtype {xa.dtype}")
        if xa.shape != (d,):
            raise ValueError(f"solution must have shape ({d},), got {xa.shape}")
        x = xa.astype(float)
        nan, inf = math.nan, math.inf
        f = g = inf
        r_f = r_g = inf
        if np.all(np.isfinite(x)):
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                f, g = inst.f(x), inst.g(x)
                r_f, r_g, _ = stationarity(inst.grad_f(x), inst.grad_g(x))
            f = f if math.isfinite(f) else inf
            g = g if math.isfinite(g) else inf
        diverged = not (math.isfinite(r_f) and math.isfinite(r_g) and math.isfinite(f) and g <= self.g_explode)
        stationary = r_f <= self.eps_f and r_g <= self.eps_g
        if stationary and self.first_work is None:
            self.first_work, self.first_iter = self.oracle.work, self.oracle.grad_points
        f_gap = abs(f - inst.f_star) if math.isfinite(inst.f_star) else nan
        if inst.x_star is not None:
            dist = float(np.linalg.norm(x - inst.x_star)) if np.all(np.isfinite(x)) else inf
        else:
            dist = nan
        big = 1e300
        solved = self.first_work is not None and not diverged
        return {
            "par2_calls": float(self.first_work if solved else 2 * self.oracle.max_work),
            "iters_to_stationary": float(self.first_iter) if self.first_iter is not None else nan,
            "stationary": float(stationary),
            "r_f": min(r_f, big),
            "r_g": min(r_g, big),
            "f": min(f, big),
            "f_gap": min(f_gap, big) if not math.isnan(f_gap) else nan,
            "g_gap": min(g - inst.g_star, big),
            "dist_to_solution": min(dist, big) if not math.isnan(dist) else nan,
            "work": float(self.oracle.work),
            "diverged": float(diverged),
        }


# ------------------------------------------------------------------------------------------------ task
class SimpleBilevelTask:
    """``SimpleBilevel-v0`` (module docstring). Kwargs: ``instance`` (family names), ``circle_dims``, ``ranks``,
    ``factor_rows``, ``hidden``, ``net_points``, ``input_dim``, ``teacher_hidden``, ``regression_rows``,
    ``regression_dim``, ``paper_scale``, ``eps_f``, ``eps_g``, ``max_work``, ``seeds``, ``max_seconds``."""

    id = TASK_ID
    primary = "par2_calls"
    metrics = {
        "par2_calls": "min",
        "iters_to_stationary": "min",
        "stationary": "max",
        "r_f": "min",
        "r_g": "min",
        "f": "min",
        "f_gap": "min",
        "g_gap": "min",
        "dist_to_solution": "min",
        "work": "min",
        "diverged": "min",
    }
    table_metrics = ("iters_to_stationary", "stationary", "r_f", "r_g", "f_gap", "g_gap")

    def __init__(
        self,
        instance: Any = FAMILIES,
        circle_dims: Any = (2, 10),
        ranks: Any = (5, 8),
        factor_rows: int | None = None,
        hidden: int | None = None,
        net_points: int = 20,
        input_dim: int = 5,
        teacher_hidden: int = 5,
        regression_rows: int = 40,
        regression_dim: int = 100,
        paper_scale: bool = False,
        eps_f: float = 1e-3,
        eps_g: float = 1e-3,
        max_work: float = 1e5,
        seeds: Any = (0, 1, 2, 3, 4),
        max_seconds: float = 60.0,
    ):
        self.families = check_names(instance, "instance", FAMILIES)
        if not isinstance(paper_scale, (bool, np.bool_)):
            raise ValueError(f"paper_scale must be True or False, got {paper_scale!r}")
        self.paper_scale = bool(paper_scale)
        self.circle_dims = check_ints(circle_dims, "circle_dims", 1)
        self.ranks = check_ints(ranks, "ranks", TRUE_RANK)
        self.factor_rows = check_ints(
            factor_rows if factor_rows is not None else (100 if paper_scale else 30), "factor_rows", TRUE_RANK
        )[0]
        self.hidden = check_ints(hidden if hidden is not None else (200 if paper_scale else 50), "hidden", 1)[0]
        self.net_points = check_ints(net_points, "net_points", 1)[0]
        self.input_dim = check_ints(input_dim, "input_dim", 1)[0]
        self.teacher_hidden = check_ints(teacher_hidden, "teacher_hidden", 1)[0]
        self.regression_rows = check_ints(regression_rows, "regression_rows", 1)[0]
        self.regression_dim = check_ints(regression_dim, "regression_dim", 2)[0]
        if self.regression_rows >= self.regression_dim:
            raise ValueError(
                f"regression_rows must be < regression_dim = {self.regression_dim} (an underdetermined "
                f"system, so argmin g is a subspace), got {self.regression_rows}"
            )
        self.eps_f = check_floats(eps_f, "eps_f", above=0.0)[0]
        self.eps_g = check_floats(eps_g, "eps_g", above=0.0)[0]
        self.max_work = check_floats(max_work, "max_work", at_least=1.0)[0]
        self.seeds = check_ints(seeds, "seeds", 0)
        ms = check_floats(max_seconds, "max_seconds", above=0.0)[0]
        self.default_budget = Budget(max_seconds=ms, max_work=self.max_work)

    def _configs(self) -> list[tuple[str, dict[str, Any]]]:
        common = {"eps_f": self.eps_f, "eps_g": self.eps_g, "max_work": self.max_work}
        out: list[tuple[str, dict[str, Any]]] = []
        for fam in self.families:
            if fam == "circle":
                out += [(f"circle/d={d}", {"family": fam, "d": d, **common}) for d in self.circle_dims]
            elif fam == "balanced-factorisation":
                out += [
                    (
                        f"{fam}/r={r}" + (f",m={self.factor_rows}" if self.factor_rows != 30 else ""),
                        {"family": fam, "m": self.factor_rows, "r": r, **common},
                    )
                    for r in self.ranks
                ]
            elif fam == "min-norm-network":
                out.append(
                    (
                        f"{fam}/h={self.hidden}",
                        {
                            "family": fam,
                            "n_points": self.net_points,
                            "input_dim": self.input_dim,
                            "hidden": self.hidden,
                            "teacher_hidden": self.teacher_hidden,
                            **common,
                        },
                    )
                )
            else:
                out.append(
                    (
                        f"{fam}/m={self.regression_rows},n={self.regression_dim}",
                        {"family": fam, "m": self.regression_rows, "n": self.regression_dim, **common},
                    )
                )
        return out

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        return split_instances(TASK_ID, split, self._configs(), self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[SimpleBilevelProblem, SimpleBilevelEvaluator]:
        p = instance_params(ref, TASK_ID)
        inst = make_instance(p, ref.seed)
        eps_f = check_floats(p.get("eps_f", self.eps_f), "eps_f", above=0.0)[0]
        eps_g = check_floats(p.get("eps_g", self.eps_g), "eps_g", above=0.0)[0]
        max_work = check_floats(p.get("max_work", self.max_work), "max_work", at_least=1.0)[0]
        oracle = SimpleBilevelOracle(inst, max_work)
        view = SimpleBilevelOracleView(
            **{
                name: seal(getattr(oracle, name), f"oracle.{name}")
                for name in ("grads", "grad_f", "grad_g", "values", "f", "g", "work_used")
            }
        )
        problem = SimpleBilevelProblem(
            family=inst.family,
            dim=inst.dim,
            x0=inst.x0.copy(),
            L_f=float(inst.L_f),
            L_g=float(inst.L_g),
            g_star=inst.g_star if inst.g_star_known else None,
            eps_f=eps_f,
            eps_g=eps_g,
            max_work=max_work,
            shapes=inst.shapes,
            oracle=view,
        )
        return problem, SimpleBilevelEvaluator(inst, oracle, eps_f, eps_g)

    def report(self, runs: Any, curves: Any = None) -> str:
        """Per family and solver: median and worst work (PAR-2) and iterations to ``(ε_f, ε_g)``-stationarity, the
        fraction that reached it, median final ``f``, ``f − f*``, ``g − g*``."""
        from papergym.envs.tasks.simple_bilevel.report import report_table

        return report_table(runs, curves)

    def figures(self, runs: Any, folder: Any, curves: Any = None) -> list[Any]:
        """``stationarity_vs_work``: ``r_f`` (top row) and ``r_g`` (bottom row) against oracle work, log-log, one
        column per family, one line per solver (median over the family's instances), ``ε`` dashed (PNG + SVG)."""
        from papergym.envs.tasks.simple_bilevel.report import residual_figure

        return residual_figure(runs, folder, curves)


register_task(TASK_ID, SimpleBilevelTask)
