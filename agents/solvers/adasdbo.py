"""``adasdbo`` on ``DecentralizedBilevel-v0`` — AdaSDBO of Zhai, Yan & Zhang, *Problem-Parameter-Free
Decentralized Bilevel Optimization*, NeurIPS 2025 (arXiv:2510.24288; spec ``bilevel.md`` §1.5). No public code:
the structure follows the paper's abstract and secondary notes, every detail not stated there is a
hyperparameter [design].

Single loop, every variable updated simultaneously, Hessian-/Jacobian-vector products only. Agent ``i`` holds
``x_i, y_i, v_i``, gradient trackers ``h^s_i`` and scalar accumulators ``m^s_i`` (``s ∈ {x, y, v}``).

0. ``x_i = x_0``, ``y_i = v_i = 0``, ``(m^s_i)² = m0²``, ``h^s_i = g^s_{i,−1} = 0``.
1. Local oracles at ``(x_i, y_i, v_i)`` (round ``t``):
   ``g^y = ∇_y l_i``; ``g^v = ∇²_yy l_i · v − ∇_y f_i``; ``g^x = ∇_x f_i − ∇²_xy l_i · v``.
2. Gradient tracking, ``combine="atc"`` (default): ``h_i ← Σ_j W_ij (h_j + g_{j,t} − g_{j,t−1})``;
   ``combine="cta"`` (the spec's written form): ``h_i ← Σ_j W_ij h_j + g_{i,t} − g_{i,t−1}`` (both give
   ``h_{i,0} = g_{i,0}``-type starts and keep ``mean_i h_i = mean_i g_{i,t}``).
3. Accumulators with step-size tracking: ``(m^s_i)² ← Σ_j W_ij (m^s_j)² + ‖h^s_i‖²``.
4. Step sizes, ``step_rule="hierarchical"`` (the spec's template of S-TFBO, Yang, Ban, Huang, Ma & Ji, ICLR 2025):
   ``η^y = γ_y/m^y``, ``η^v = γ_v/max(m^y, m^v)``, ``η^x = γ_x/(m^x · max(m^y, m^v))``;
   ``step_rule="independent"`` (**default**, a deviation from the spec's default): ``η^s = γ_s/m^s``. The nesting
   divides the ``x`` step by ``max(m^y, m^v)``, which scales with ``c_l`` and ``c_f``: it is not scale-free and stalls
   ``x`` (dev split, ``syn``, ``c_l = c_f = 1``, 18 instances, median / worst final ``log10 hypergrad_sq`` at
   ``γ = 1``: hierarchical −1.59 / −0.67, independent −4.96 / −4.84; best over ``γ ∈ {1e−3, …, 10}``:
   hierarchical −1.59 at ``γ = 1``, independent −4.96 at ``γ = 1``). Same tuning protocol as the baselines
   (``papergym.baselines.solvers.decentralized_bilevel``).
5. Updates: ``y_i ← Σ_j W_ij y_j − η^y_i h^y_i``, ``v_i ← Σ_j W_ij v_j − η^v_i h^v_i`` (optionally projected on the
   ball of radius ``v_radius``), ``x_i ← Σ_j W_ij x_j − η^x_i h^x_i``.

One communication round = one ``mix`` of the stacked ``[x, y, v, h^x, h^y, h^v, (m^x)², (m^y)², (m^v)²]``
(``2(d_x + 2 d_y) + 3`` floats per agent; the trackers sent are the pre-mixed ``h + g_t − g_{t−1}`` under
``atc`` and ``h`` under ``cta``); five oracle calls per round. ``x`` is reported every ``report_every`` rounds.

Structural choices [design], all documented as hyperparameters:

* ``combine``: with ``"atc"`` the tracker is adapted before it is combined, so the step uses the freshly
  mixed tracker and the accumulators its norm; iterates are combined then stepped (``x_i ← Σ_j W_ij x_j −
  η_i h_i``, spec step 5). The fully adapt-then-combine iterate ``x_i ← Σ_j W_ij (x_j − η_j h_j)`` is *not*
  used: its step would have to be taken before the round's tracker is mixed, so the step sizes ``η_j`` would
  differ between agents (or lag one round) and a complete graph would no longer reproduce the centralised
  method. With ``W = 11ᵀ/n`` the default keeps every agent identical and the run is exactly centralised
  AdaGrad-norm-type bilevel descent on the averaged objective (tested).
* the nesting of step 4 (``step_rule``) and the step-size tracking of step 3 (spec §1.10 point 1);
* ``m0`` (initial accumulators; default 1.0), ``gamma`` (base step, default 1.0; ``gamma_x``, ``gamma_y``,
  ``gamma_v`` override it per variable; ``gamma_x = 0`` freezes ``x`` and runs the lower levels alone),
  ``v_radius`` (None: no projection), ``report_every`` (10).

The helpers of this module (:class:`Comms`, :func:`check_positive`) are shared with the baselines
(``papergym.baselines.solvers.decentralized_bilevel``).
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from papergym.agents.base import register_solver

__all__ = ["AdaSDBO", "Comms", "TASK", "check_positive", "check_int", "WORK_PER_ROUND"]

TASK = "DecentralizedBilevel-v0"
WORK_PER_ROUND = 10  # the oracle's work cap is 10 n T units (task docstring)
STEP_RULES = ("independent", "hierarchical", "normalized")


def check_positive(name: str, v: Any, *, allow_none: bool = False) -> float | None:
    if v is None and allow_none:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not (
            math.isfinite(float(v)) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0{' or None' if allow_none else ''}, got {v!r}")
    return float(v)


def check_int(name: str, v: Any, minimum: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {v!r}")
    return int(v)


class Comms:
    """The solver side of one solve: counts the rounds and oracle work it spends (so a solver stops before
    the oracle's caps or the budget), reports the agents' ``x`` stack, and tracks its own wall time (the
    evaluator's scoring time excluded)."""

    def __init__(self, problem: Any, budget: Any, report: Callable[..., None], report_every: int):
        self.o, self.n = problem.oracle, int(problem.n)
        T = int(problem.rounds)
        self.max_rounds = min(T, int(budget.max_iterations)) if budget.max_iterations else T
        cap = WORK_PER_ROUND * self.n * T
        self.max_work = min(cap, float(budget.max_work)) if budget.max_work else cap
        self.max_seconds = budget.max_seconds
        self.rounds = 0
        self.work = 0
        self._report, self.report_every = report, int(report_every)
        self._last_report = -1
        self._t0 = time.perf_counter()
        self._excluded = 0.0

    # -- budget
    def afford(self, mixes: int, calls: int) -> bool:
        """Whether ``mixes`` more rounds and ``calls`` more oracle calls (``n`` units each) fit."""
        if self.max_seconds is not None and time.perf_counter() - self._t0 - self._excluded > 0.95 * self.max_seconds:
            return False
        return self.rounds + mixes <= self.max_rounds and self.work + calls * self.n <= self.max_work

    # -- oracle (counting)
    def _count(self) -> None:
        self.work += self.n

    def grad_y_l(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        self._count()
        return self.o.grad_y_l(X, Y)

    def grad_y_f(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        self._count()
        return self.o.grad_y_f(X, Y)

    def grad_x_f(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        self._count()
        return self.o.grad_x_f(X, Y)

    def hvp(self, X: np.ndarray, Y: np.ndarray, V: np.ndarray) -> np.ndarray:
        self._count()
        return self.o.hvp_yy_l(X, Y, V)

    def jvp(self, X: np.ndarray, Y: np.ndarray, V: np.ndarray) -> np.ndarray:
        self._count()
        return self.o.jvp_xy_l(X, Y, V)

    def mix(self, Z: np.ndarray) -> np.ndarray:
        self.rounds += 1
        return np.asarray(self.o.mix(Z))

    # -- reporting
    def report(self, X: np.ndarray, force: bool = False) -> None:
        """Report ``X`` when ``report_every`` rounds have passed since the last report (or ``force``)."""
        if self.rounds == self._last_report or not (force or self.rounds - max(self._last_report, 0)
                                                     >= self.report_every):
            return
        t = time.perf_counter()
        self._report(X.copy(), iteration=self.rounds, work=self.work)
        self._excluded += time.perf_counter() - t
        self._last_report = self.rounds


def split_cols(Z: np.ndarray, sizes: list[int]) -> list[np.ndarray]:
    """Columns of ``Z`` cut into consecutive blocks of the given widths."""
    return np.split(Z, np.cumsum(sizes)[:-1], axis=1)


class AdaSDBO:
    def __init__(self, *, seed: Any = None, gamma: float = 1.0, gamma_x: float | None = None,
                 gamma_y: float | None = None, gamma_v: float | None = None, m0: float = 1.0,
                 step_rule: str = "independent", combine: str = "atc", v_radius: float | None = None,
                 report_every: int = 10):
        g = check_positive("gamma", gamma)
        if gamma_x == 0 and not isinstance(gamma_x, bool):  # gamma_x = 0 freezes x (the lower levels alone)
            self.gamma_x = 0.0
        else:
            self.gamma_x = g if gamma_x is None else check_positive("gamma_x", gamma_x)
        self.gamma_y = g if gamma_y is None else check_positive("gamma_y", gamma_y)
        self.gamma_v = g if gamma_v is None else check_positive("gamma_v", gamma_v)
        self.m0 = check_positive("m0", m0)
        if step_rule not in STEP_RULES:
            raise ValueError(f"step_rule must be one of {', '.join(map(repr, STEP_RULES))}, got {step_rule!r}")
        if combine not in ("atc", "cta"):
            raise ValueError(f"combine must be 'atc' or 'cta', got {combine!r}")
        self.step_rule, self.combine = step_rule, combine
        self.v_radius = check_positive("v_radius", v_radius, allow_none=True)
        self.report_every = check_int("report_every", report_every, 1)

    def steps(self, m2: np.ndarray, r2: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(η^x, η^y, η^v)`` per agent from the accumulators ``m2 = [(m^x)², (m^y)², (m^v)²]`` (step 4);
        ``step_rule="normalized"`` also takes the tracked first-round references ``r2 = [(r^y)², (r^v)²]``."""
        m = np.sqrt(m2)
        mx, my, mv = m[:, 0], m[:, 1], m[:, 2]
        if self.step_rule == "normalized":
            if r2 is None:
                raise ValueError("step_rule='normalized' needs the first-round references r2")
            ry, rv = np.sqrt(r2[:, 0]), np.sqrt(r2[:, 1])
            mu = np.maximum(my / ry, mv / rv)  # the lower levels' growth factor μ = max(ρ^y, ρ^v)
            return self.gamma_x / (mx * mu), self.gamma_y / my, self.gamma_v / (ry * mu)
        if self.step_rule == "hierarchical":
            myv = np.maximum(my, mv)
            return self.gamma_x / (mx * myv), self.gamma_y / my, self.gamma_v / myv
        return self.gamma_x / mx, self.gamma_y / my, self.gamma_v / mv

    @np.errstate(over="ignore", invalid="ignore", divide="ignore")  # a too-large step diverges: scored
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        c = Comms(problem, budget, report, self.report_every)
        n, dx, dy = c.n, int(problem.d_x), int(problem.d_y)
        X = np.tile(np.asarray(problem.x0, dtype=float), (n, 1))
        Y, V = np.zeros((n, dy)), np.zeros((n, dy))
        sizes = [dx, dy, dy]
        H = np.zeros((n, dx + 2 * dy))      # trackers [h^x, h^y, h^v]
        G_prev = np.zeros_like(H)           # g_{t-1}
        m2 = np.full((n, 3), self.m0 ** 2)  # [(m^x)^2, (m^y)^2, (m^v)^2]
        norm = self.step_rule == "normalized"
        r2 = None                           # normalized: tracked first-round [(r^y)^2, (r^v)^2]
        while c.afford(1, 5):
            # step 1: local oracles at (x_i, y_i, v_i)
            gy = c.grad_y_l(X, Y)
            gv = c.hvp(X, Y, V) - c.grad_y_f(X, Y)
            gx = c.grad_x_f(X, Y) - c.jvp(X, Y, V)
            G = np.hstack([gx, gy, gv])
            # one round: mix [x, y, v, trackers, accumulators]
            send = H + G - G_prev if self.combine == "atc" else H
            stack = [X, Y, V, send, m2] + ([r2] if norm and r2 is not None else [])
            Xw, Yw, Vw, Hw, m2w, *r2w = split_cols(c.mix(np.hstack(stack)), [dx, dy, dy, dx + 2 * dy, 3]
                                                  + ([2] if len(stack) == 6 else []))
            H = Hw if self.combine == "atc" else Hw + G - G_prev  # step 2
            G_prev = G
            hx, hy, hv = split_cols(H, sizes)
            m2 = m2w + np.stack([np.sum(hx * hx, 1), np.sum(hy * hy, 1), np.sum(hv * hv, 1)], axis=1)  # step 3
            if norm:                        # first round: r^s = m^s_1; later rounds: r ← W r (mixed above)
                r2 = m2[:, 1:].copy() if r2 is None else r2w[0]
            ex, ey, ev = self.steps(m2, r2)                                                       # step 4
            Y = Yw - ey[:, None] * hy                                                             # step 5
            V = Vw - ev[:, None] * hv
            if self.v_radius is not None:
                nv = np.linalg.norm(V, axis=1, keepdims=True)
                V = V * np.minimum(1.0, self.v_radius / np.maximum(nv, 1e-300))
            X = Xw - ex[:, None] * hx
            if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Y)) and np.all(np.isfinite(V))):
                X = np.full_like(X, np.nan)  # diverged: x is meaningless even where still finite
                break
            c.report(X)
        c.report(X, force=True)
        self.last_state = {"x": X, "y": Y, "v": V}  # the agents' final iterates (diagnostics)
        return X


def _adasdbo(*, seed=None, **hp):
    return AdaSDBO(seed=seed, **hp)


register_solver("adasdbo", _adasdbo, tasks=[TASK], role="paper",
                description="AdaSDBO: single-loop, gradient-tracked, parameter-free decentralized bilevel method "
                            "(step sizes from tracked cumulative gradient norms)",
                defaults={"gamma": 1.0, "gamma_x": None, "gamma_y": None, "gamma_v": None, "m0": 1.0,
                          "step_rule": "independent", "combine": "atc", "v_radius": None, "report_every": 10})
