"""Baselines of ``DecentralizedBilevel-v0`` (``docs/papers/adasdbo.md``): fixed-step decentralized bilevel
methods on the same vectorised oracle as ``adasdbo`` (agents talk only through ``problem.oracle.mix``; every
``mix`` is one of the ``T`` communication rounds, so a double-loop method spends several per outer iteration).
Step sizes ``(α_y, α_v, α_x) = γ · (1, 1, 0.1)`` [design] with ``γ = gamma`` the base step swept by the
task's step-size grid. References as cited by the paper; the update structures are [secondary], the inner-loop
lengths, Neumann truncations and momentum weights [design] (align them with the original
papers before publishing comparisons; tags: see docs/conventions.md).

Notation: ``g^y = ∇_y l_i``, ``g^v = ∇²_yy l_i v − ∇_y f_i``, ``u = ∇_x f_i − ∇²_xy l_i v`` (local hypergradient
estimate at the agent's ``(x_i, y_i, v_i)``). A "mixed step" on ``y`` (or ``v``) is adapt-then-combine decentralized
gradient descent ``y_i ← Σ_j W_ij (y_j − α_y g^y_j)``; gradient tracking of ``x`` is adapt-then-combine too,
``h_i ← Σ_j W_ij (h_j + u_{j,t} − u_{j,t−1})``, with ``x_i ← Σ_j W_ij x_j − α_x h_i`` (the tracker and ``x`` travel in
one ``mix``). With ``W = 11ᵀ/n`` every baseline is therefore exactly its centralised counterpart (tested for
``sldbo``).

* ``sldbo`` — Dong, Ma, Yang & Yin 2023 (arXiv:2311.08945), single loop: per round one mixed step on ``y``
  (``α_y``), one on the linear-system variable ``v`` (``α_v``) and one tracked hypergradient step on ``x``; one
  ``mix`` of ``[x, y, v, h]`` per round, five oracle calls.
* ``ma-dsbo`` — Chen, Huang, Ma & Balasubramanian, ICML 2023: per outer iteration ``T_in = 5`` mixed steps on
  ``y`` and then ``N_in = 5`` on ``v`` (one ``mix`` each, warm-started across outer iterations), then the
  moving-average hypergradient ``z ← (1 − β) z + β u`` (``β = 0.1``; ``z`` starts at the first ``u``) and a tracked
  ``x`` step (one ``mix``): 11 rounds per outer iteration.
* ``mdbo`` — Gao, Gu & Thai, AISTATS 2023, single loop with momentum: ``v_i`` is a local truncated Neumann
  series ``(1/L̂_i) Σ_{k<K_N} (I − ∇²_yy l_i/L̂_i)^k ∇_y f_i`` (``K_N = 10``, no communication: each agent inverts its
  own Hessian, as in the original), ``z ← β_m z + (1 − β_m) u`` (momentum ``β_m = 0.9``; ``z`` starts at the first
  ``u``), a tracked ``x`` step and a mixed ``y`` step (one ``mix`` of ``[x, y, h]`` per round; ``K_N + 3`` oracle
  calls per round, so the ``10·n·T`` work cap ends the run after about ``10T/13`` rounds).
* ``dbo`` — Chen, Huang & Ma, Optimization Letters 2024, double loop: per outer iteration ``T_in = 10`` mixed
  ``y`` steps, a *mixed* Neumann series (``q ← W(q − ∇²_yy l_i q/L̂_i)``, one ``mix`` per term, ``K_N = 10``
  terms) for the Hessian-inverse-vector product, and a tracked ``x`` step: 20 rounds per outer iteration.

``L̂_i`` (``mdbo``, ``dbo``): 10 local power iterations on ``∇²_yy l_i`` at the current point, redone every
``power_every = 200`` rounds (the Hessian grows with ``e^x``), seeded by the solver seed.

Default ``gamma`` per solver: the best median final ``hypergrad_sq`` on the dev split of the ``c_l = c_f = 1``
instances over ``{1e−3, 1e−2, 1e−1, 1, 10}`` (frozen for all scales; the task's tuning protocol). Tuning command::

    bench("DecentralizedBilevel-v0", solvers=["sldbo", "ma-dsbo", "mdbo", "dbo", "adasdbo"],
          task_kwargs={"family": "syn", "scales": ["1:1"], "seeds": [0, 1, 2]},
          sweep={s: {"gamma": [1e-3, 1e-2, 1e-1, 1.0, 10.0]} for s in (...)})

Result (``family="syn"``, graphs ring/er/complete, ``h ∈ {0, 1}``, dev seeds 0–2: 18 instances; median / worst
final ``log10 hypergrad_sq`` per ``gamma``; 300 = diverged)::

    gamma     1e-3         1e-2          1e-1         1            10
    sldbo     0.14/0.24   -0.38/-0.24   -1.92/300     300/300      300/300
    ma-dsbo   0.18/0.31    0.14/0.25    -0.29/300     300/300      300/300
    mdbo      0.16/0.28   -0.21/0.02    -1.55/300     300/300      300/300
    dbo       0.18/0.31    0.17/0.29    -0.05/300     300/300      300/300
    (adasdbo, independent rule: 0.18/0.31, 0.04/0.17, -2.14/-1.84, -4.96/-4.84, -4.90/-3.55)

so every baseline's default is ``gamma = 0.1`` (best median; it diverges on some instances even at ``c_l = c_f = 1``,
and more often at the other scales: the point of the benchmark). The tuning used the ``syn`` family only (the
``digits`` evaluations make the sweep ~10× slower); an open point.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.agents.solvers.adasdbo import TASK, Comms, split_cols
from papergym.validate import in_range, positive_float, positive_int

__all__ = ["SLDBO", "MADSBO", "MDBO", "DBO"]

STEP_RATIOS = (1.0, 1.0, 0.1)  # (alpha_y, alpha_v, alpha_x) / gamma


class _FixedStep:
    """Shared state of the fixed-step baselines: step sizes and the tracked ``x`` step."""

    def __init__(self, gamma: float, report_every: int, seed: Any):
        g = positive_float(gamma, "gamma")
        self.gamma = g
        self.ay, self.av, self.ax = (g * r for r in STEP_RATIOS)
        self.report_every = positive_int(report_every, "report_every", 1)
        self.seed = seed

    def _start(self, problem: Any, budget: Any, report: Callable[..., None]):
        c = Comms(problem, budget, report, self.report_every)
        n, dx, dy = c.n, int(problem.d_x), int(problem.d_y)
        X = np.tile(np.asarray(problem.x0, dtype=float), (n, 1))
        return c, n, dx, dy, X, np.zeros((n, dy)), np.zeros((n, dy))

    @staticmethod
    def _finite(*arrays: np.ndarray) -> bool:
        return all(bool(np.all(np.isfinite(a))) for a in arrays)

    def _finish(self, c: Comms, X: np.ndarray, *state: np.ndarray) -> np.ndarray:
        """The final report and solution; a run whose state went non-finite returns (and reports) a NaN
        stack: its ``x`` is then meaningless, even where it is still finite."""
        if not self._finite(X, *state):
            X = np.full_like(X, np.nan)
        c.report(X, force=True)
        return X

    def _power(self, c: Comms, X: np.ndarray, Y: np.ndarray, rng: np.random.Generator, iters: int = 10) -> np.ndarray:
        """``L̂_i``: ``iters`` local power iterations on ``∇²_yy l_i`` (no communication)."""
        q = rng.standard_normal(Y.shape)
        L = np.ones(len(Y))
        for _ in range(iters):
            q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-300)
            Hq = c.hvp(X, Y, q)
            L = np.linalg.norm(Hq, axis=1)
            q = Hq
        return np.maximum(L, 1e-12)


class SLDBO(_FixedStep):
    def __init__(self, *, seed: Any = None, gamma: float = 0.1, report_every: int = 10):
        super().__init__(gamma, report_every, seed)

    @np.errstate(over="ignore", invalid="ignore", divide="ignore")
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        c, n, dx, dy, X, Y, V = self._start(problem, budget, report)
        h, u_prev = np.zeros((n, dx)), np.zeros((n, dx))
        while c.afford(1, 5):
            gy = c.grad_y_l(X, Y)
            gv = c.hvp(X, Y, V) - c.grad_y_f(X, Y)
            u = c.grad_x_f(X, Y) - c.jvp(X, Y, V)
            Xw, Y, V, h = split_cols(
                c.mix(np.hstack([X, Y - self.ay * gy, V - self.av * gv, h + u - u_prev])), [dx, dy, dy, dx]
            )
            u_prev = u
            X = Xw - self.ax * h
            if not self._finite(X, Y, V):
                break
            c.report(X)
        return self._finish(c, X, Y, V)


class MADSBO(_FixedStep):
    def __init__(
        self,
        *,
        seed: Any = None,
        gamma: float = 0.1,
        inner_y: int = 5,
        inner_v: int = 5,
        beta: float = 0.1,
        report_every: int = 10,
    ):
        super().__init__(gamma, report_every, seed)
        self.inner_y, self.inner_v = positive_int(inner_y, "inner_y", 1), positive_int(inner_v, "inner_v", 1)
        self.beta = in_range(beta, "beta", 0, 1, high_closed=True)  # the moving-average weight

    @np.errstate(over="ignore", invalid="ignore", divide="ignore")
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        c, n, dx, dy, X, Y, V = self._start(problem, budget, report)
        h, z, z_prev = np.zeros((n, dx)), None, np.zeros((n, dx))
        while c.afford(self.inner_y + self.inner_v + 1, self.inner_y + 2 * self.inner_v + 2):
            for _ in range(self.inner_y):
                Y = c.mix(Y - self.ay * c.grad_y_l(X, Y))
            for _ in range(self.inner_v):
                V = c.mix(V - self.av * (c.hvp(X, Y, V) - c.grad_y_f(X, Y)))
            u = c.grad_x_f(X, Y) - c.jvp(X, Y, V)
            z = u if z is None else (1 - self.beta) * z + self.beta * u
            Xw, h = split_cols(c.mix(np.hstack([X, h + z - z_prev])), [dx, dx])
            z_prev = z
            X = Xw - self.ax * h
            if not self._finite(X, Y, V):
                break
            c.report(X)
        return self._finish(c, X, Y, V)


class MDBO(_FixedStep):
    def __init__(
        self,
        *,
        seed: Any = None,
        gamma: float = 0.1,
        neumann: int = 10,
        momentum: float = 0.9,
        power_every: int = 200,
        report_every: int = 10,
    ):
        super().__init__(gamma, report_every, seed)
        self.neumann = positive_int(neumann, "neumann", 1)
        self.momentum = in_range(momentum, "momentum", 0, 1, low_closed=True)
        self.power_every = positive_int(power_every, "power_every", 1)

    @np.errstate(over="ignore", invalid="ignore", divide="ignore")
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        c, n, dx, dy, X, Y, _ = self._start(problem, budget, report)
        rng = np.random.default_rng(0 if self.seed is None else self.seed)
        h, z, z_prev = np.zeros((n, dx)), None, np.zeros((n, dx))
        L, last_power = None, -self.power_every
        per_round = self.neumann + 3
        while c.afford(1, per_round + (10 if c.rounds - last_power >= self.power_every else 0)):
            if c.rounds - last_power >= self.power_every:
                L, last_power = self._power(c, X, Y, rng)[:, None], c.rounds
            gy = c.grad_y_l(X, Y)
            q = c.grad_y_f(X, Y)
            p = q / L
            for _ in range(self.neumann - 1):  # local truncated Neumann series
                q = q - c.hvp(X, Y, q) / L
                p = p + q / L
            u = c.grad_x_f(X, Y) - c.jvp(X, Y, p)
            z = u if z is None else self.momentum * z + (1 - self.momentum) * u
            Xw, Y, h = split_cols(c.mix(np.hstack([X, Y - self.ay * gy, h + z - z_prev])), [dx, dy, dx])
            z_prev = z
            X = Xw - self.ax * h
            if not self._finite(X, Y):
                break
            c.report(X)
        return self._finish(c, X, Y)


class DBO(_FixedStep):
    def __init__(
        self,
        *,
        seed: Any = None,
        gamma: float = 0.1,
        inner_y: int = 10,
        neumann: int = 10,
        power_every: int = 200,
        report_every: int = 10,
    ):
        super().__init__(gamma, report_every, seed)
        self.inner_y = positive_int(inner_y, "inner_y", 1)
        self.neumann = positive_int(neumann, "neumann", 1)
        self.power_every = positive_int(power_every, "power_every", 1)

    @np.errstate(over="ignore", invalid="ignore", divide="ignore")
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        c, n, dx, dy, X, Y, _ = self._start(problem, budget, report)
        rng = np.random.default_rng(0 if self.seed is None else self.seed)
        h, u_prev, p = np.zeros((n, dx)), np.zeros((n, dx)), np.zeros((n, dy))
        L, last_power = None, -self.power_every
        mixes = self.inner_y + self.neumann - 1 + 1
        calls = self.inner_y + self.neumann + 2
        while c.afford(mixes, calls + (10 if c.rounds - last_power >= self.power_every else 0)):
            if c.rounds - last_power >= self.power_every:
                L, last_power = self._power(c, X, Y, rng)[:, None], c.rounds
            for _ in range(self.inner_y):
                Y = c.mix(Y - self.ay * c.grad_y_l(X, Y))
            q = c.grad_y_f(X, Y)
            p = q / L
            for _ in range(self.neumann - 1):  # mixed Neumann series
                q = c.mix(q - c.hvp(X, Y, q) / L)
                p = p + q / L
            u = c.grad_x_f(X, Y) - c.jvp(X, Y, p)
            Xw, h = split_cols(c.mix(np.hstack([X, h + u - u_prev])), [dx, dx])
            u_prev = u
            X = Xw - self.ax * h
            if not self._finite(X, Y, p):
                break
            c.report(X)
        return self._finish(c, X, Y, p)


_DESC = {
    "sldbo": "SLDBO: single-loop, mixed y and v steps, gradient-tracked hypergradient step (fixed steps)",
    "ma-dsbo": "MA-DSBO: 5 mixed y + 5 mixed v steps per outer, moving-average tracked hypergradient (fixed steps)",
    "mdbo": "MDBO: single-loop momentum method, local Neumann-series hypergradient (K_N = 10), tracked x (fixed steps)",
    "dbo": "DBO: double loop, 10 mixed y steps, mixed Neumann series (K_N = 10), tracked x step (fixed steps)",
}
_CLASSES = {"sldbo": SLDBO, "ma-dsbo": MADSBO, "mdbo": MDBO, "dbo": DBO}
_DEFAULTS = {
    "sldbo": {"gamma": 0.1, "report_every": 10},
    "ma-dsbo": {"gamma": 0.1, "inner_y": 5, "inner_v": 5, "beta": 0.1, "report_every": 10},
    "mdbo": {"gamma": 0.1, "neumann": 10, "momentum": 0.9, "power_every": 200, "report_every": 10},
    "dbo": {"gamma": 0.1, "inner_y": 10, "neumann": 10, "power_every": 200, "report_every": 10},
}


def _factory(cls):
    def make(*, seed=None, **hp):
        return cls(seed=seed, **hp)

    make.__name__ = f"_{cls.__name__.lower()}"
    make.__qualname__ = make.__name__
    return make


_sldbo, _ma_dsbo, _mdbo, _dbo = (_factory(_CLASSES[k]) for k in ("sldbo", "ma-dsbo", "mdbo", "dbo"))
for _name, _fac in (("sldbo", _sldbo), ("ma-dsbo", _ma_dsbo), ("mdbo", _mdbo), ("dbo", _dbo)):
    register_solver(_name, _fac, tasks=[TASK], role="baseline", description=_DESC[_name], defaults=_DEFAULTS[_name])
