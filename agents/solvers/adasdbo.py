"""``adasdbo`` on ``DecentralizedBilevel-v0`` — AdaSDBO of Zhai, Yan & Zhang, *Problem-Parameter-Free
Decentralized Bilevel Optimization*, NeurIPS 2025 (arXiv:2510.24288; ``docs/papers/adasdbo.md``; tags: see
docs/conventions.md). No public code:
the structure follows the paper's abstract and secondary notes, every detail not stated there is a
hyperparameter [design].

Single loop, every variable updated simultaneously, Hessian-/Jacobian-vector products only. Agent ``i`` holds
``x_i, y_i, v_i``, gradient trackers ``h^s_i`` and scalar accumulators ``m^s_i`` (``s ∈ {x, y, v}``).

0. ``x_i = x_0``, ``y_i = v_i = 0``, ``(m^s_i)² = m0²``, ``h^s_i = g^s_{i,−1} = 0``.
1. Local oracles at ``(x_i, y_i, v_i)`` (round ``t``):
   ``g^y = ∇_y l_i``; ``g^v = ∇²_yy l_i · v − ∇_y f_i``; ``g^x = ∇_x f_i − ∇²_xy l_i · v``.
2. Gradient tracking, ``combine="atc"`` (default): ``h_i ← Σ_j W_ij (h_j + g_{j,t} − g_{j,t−1})``;
   ``combine="cta"`` (combine-then-adapt): ``h_i ← Σ_j W_ij h_j + g_{i,t} − g_{i,t−1}`` (both give
   ``h_{i,0} = g_{i,0}``-type starts and keep ``mean_i h_i = mean_i g_{i,t}``).
3. Accumulators with step-size tracking: ``(m^s_i)² ← Σ_j W_ij (m^s_j)² + ‖h^s_i‖²``.
3b. (rules ``normalized``, ``normalized-max``, ``independent-scaled`` only) first-round references
   ``(r^y_i)², (r^v_i)²``: set to ``(m^y_i)², (m^v_i)²`` after round 1, then gossip-averaged, ``r² ← Σ_j W_ij r²_j``,
   in every later round's ``mix`` (2 more floats per agent; agents' references reach consensus).
4. Step sizes (``step_rule``; all keep ``η^y = γ_y/m^y``):

   * ``"hierarchical"`` (the template of S-TFBO, Yang, Ban, Huang, Ma & Ji, ICLR 2025 [design]):
     ``η^v = γ_v/max(m^y, m^v)``, ``η^x = γ_x/(m^x · max(m^y, m^v))``.
   * ``"independent"`` [design], no hierarchy: ``η^s = γ_s/m^s``.
   * ``"normalized"`` (**default**) [design], scale-invariant hierarchy: with the dimensionless growth factors
     ``ρ^y = m^y/r^y``, ``ρ^v = m^v/r^v`` and ``μ = max(ρ^y, ρ^v)``:
     ``η^v = γ_v/(r^y μ) = γ_v (r^v/r^y) / max(m^v, m^y r^v/r^y)``, ``η^x = γ_x/(m^x μ)``.
   * ``"normalized-max"`` [design]: as ``normalized`` but the S-TFBO ``max`` form for ``x`` too:
     ``η^x = γ_x/max(m^x, r^v μ)``.
   * ``"independent-scaled"`` [design], no hierarchy, ablation: ``η^x = γ_x/m^x``, ``η^v = γ_v (r^v/r^y)/m^v``.

   Units [design reasoning]. Scaling ``f → c_f f`` and ``l → c_l l`` leaves ``x*`` and ``y*`` unchanged and
   scales ``v* = [∇²_yy l]⁻¹ ∇_y f`` by ``c_f/c_l``; the oracles scale as ``g^y ~ c_l``, ``g^v ~ c_f``,
   ``g^x = ∇_x f − ∇²_xy l v ~ c_f``, hence ``m^y ~ c_l``, ``m^v, m^x ~ c_f``. The iterates are scale-free iff
   ``η^y ~ 1/c_l``, ``η^v ~ 1/c_l`` (``η^v h^v`` must carry ``v``'s units ``c_f/c_l``) and ``η^x ~ 1/c_f``.
   ``hierarchical`` violates two of them (``η^x ~ 1/(c_f max(c_l, c_f))``, and ``η^v ~ 1/c_f`` once ``m^v``
   dominates): ``x`` stalls at large scales. ``independent`` violates one: its ``v`` step ``γ/m^v ~ 1/c_f`` moves
   ``v`` by ``O(γ)`` whatever ``‖v*‖ ~ c_f/c_l`` is (slow for ``c_f ≫ c_l``, oscillating, even diverging at large
   ``γ``, for ``c_f ≪ c_l``). The AdaGrad-norm base step has the units of its variable; ``r^v/r^y =
   ‖∇_y f‖/‖∇_y l‖`` at the start is a measured ``v``-scale (``c_f/c_l``), so ``γ_v r^v/r^y`` is the unit-correct
   base step for ``v`` (``independent-scaled``). The hierarchy then uses only dimensionless quantities: each
   lower accumulator is measured by its growth since round 1, ``ρ^s = m^s/r^s ≥ 1`` (≈ 1 while that level has
   converged quickly, ~ ``√t`` while it is still moving or oscillating). ``normalized`` is the S-TFBO template with
   ``max(m^y, m^v)`` replaced by ``r^y μ`` in ``η^v`` (``m^v`` converted into ``y``'s units, ``m^v r^y/r^v``, before the
   ``max``) and by the dimensionless ``μ`` in ``η^x``: ``x`` (and ``v``) still wait — their steps shrink by ``μ`` —
   while the lower accumulators grow, holding ``m^x`` fixed, yet every step has the right units. ``m0`` is the
   only unit-bearing constant left (shared by the three accumulators), so the three rules above are exactly
   scale-invariant as ``m0 → 0`` (tested with ``m0 = 1e−12``), approximately so at ``m0 = 1``.

   Measured [design] (dev split, family ``syn``, graphs ring and er, ``h ∈ {0, 1}``, seeds 0–2, scales
   ``c_l:c_f ∈ {1:1, 10:0.1, 0.1:10}``: 36 instances, 12 per scale; final ``log10 hypergrad_sq``, median / worst
   over the instances of each scale and over all 36; ``m0 = 1`` unless noted; 300 = diverged):

   ========================  =====  ===============  ===============  ===============  ===============
   rule                      γ      1:1              10:0.1           0.1:10           all 36
   ========================  =====  ===============  ===============  ===============  ===============
   hierarchical              0.1    0.14 / 0.29      0.18 / 0.31      0.18 / 0.31      0.16 / 0.31
   hierarchical              1      −1.50 / −0.67    −0.02 / 0.22     0.14 / 0.26      −0.36 / 0.26
   hierarchical              10     −1.36 / −0.23    −0.32 / 0.27     −0.90 / 0.01     −0.58 / 0.27
   independent               0.1    −2.14 / −1.84    −1.51 / −1.20    −2.02 / −1.40    −1.89 / −1.20
   independent               1      −5.00 / −4.84    −2.81 / −1.69    −4.51 / −3.74    −4.51 / −1.69
   independent               10     −5.01 / −3.55    −2.07 / 300      −3.70 / 300      −3.49 / 300
   normalized                0.1    −0.18 / −0.13    −0.06 / −0.03    −0.31 / −0.17    −0.20 / −0.03
   normalized                1      −4.53 / −4.35    −3.43 / −3.38    −4.97 / −4.60    −4.53 / −3.38
   normalized                10     −3.16 / −2.38    −3.29 / −2.40    −4.27 / −2.78    −3.32 / −2.38
   normalized, m0 = 1e−6     0.1    −0.32 / −0.24    −0.32 / −0.24    −0.32 / −0.24    −0.32 / −0.24
   normalized, m0 = 1e−6     1      −4.86 / −4.57    −4.86 / −4.57    −4.86 / −4.57    −4.86 / −4.57
   normalized, m0 = 1e−6     10     −3.13 / −2.37    −3.13 / −2.37    −3.13 / −2.37    −3.13 / −2.37
   normalized-max            0.1    −0.64 / −0.23    −0.38 / −0.18    −0.59 / −0.28    −0.57 / −0.18
   normalized-max            1      −3.58 / −2.99    −3.27 / −2.93    −3.53 / −2.99    −3.33 / −2.93
   normalized-max            10     −4.17 / −2.82    −3.99 / −2.78    −4.50 / −2.83    −4.04 / −2.78
   independent-scaled        0.1    −2.15 / −1.83    −1.53 / −1.22    −2.48 / −2.23    −2.14 / −1.22
   independent-scaled        1      −4.99 / −4.83    −3.70 / −3.64    −5.66 / −5.30    −4.99 / −3.64
   independent-scaled        10     −4.99 / −4.02    −4.93 / −4.16    −5.65 / −4.96    −5.00 / −4.02
   ========================  =====  ===============  ===============  ===============  ===============

   At ``γ ∈ {1e−3, 1e−2}`` every rule stays at ``0.15 … 0.18`` median (``x`` barely moves in 2,000 rounds).
   Family ``digits`` (same graphs, ``h``, seeds, scales; ``T = 1,000``; ``γ = 1``; median over the 36 instances):
   ``val_loss`` / ``test_acc`` / ``log10 hypergrad_sq``: independent 0.326 / 0.923 / −3.25, normalized
   0.701 / 0.880 / −2.80, normalized-max 0.579 / 0.888 / −2.85, independent-scaled 0.326 / 0.922 / −3.54.

   Default: ``normalized`` — the paper's method has hierarchical step sizes and is problem-parameter-free, and of
   the rules above only the ``normalized`` ones are both; ``normalized`` is the better of the two at the default
   ``γ = 1``. Against the non-hierarchical ``independent`` rule it fixes the scale dependence (worst over all
   ``syn`` instances at ``γ = 1``: −3.38 against −1.69; no divergence at ``γ = 10``) and ties the pooled median
   (−4.53 vs −4.51), at a price: it is worse at ``c_l = c_f = 1`` (−4.53 vs −5.00), much slower at small ``γ``
   (the ``1/μ`` factor keeps slowing ``x`` while slow lower levels keep growing, ``μ ~ √t``) and worse on
   ``digits`` within ``T = 1,000`` (``test_acc`` 0.880 vs 0.923). The non-hierarchical ablation
   ``independent-scaled`` is the strongest rule measured (−4.99 / −3.64 at ``γ = 1``, −5.00 / −4.02 at ``γ = 10``,
   ``digits`` as ``independent``): the gain on the mismatched scales comes from the unit-correct ``v`` step, and
   the hierarchy costs speed here; ``benchmarks/bench_bilevel.py`` reports the three side by side.
   Step-size robustness (the paper's "robustness across stepsize configurations"; measured, not tuned). The
   method's step is ``γ_s/m^s_t`` with ``m^s_t`` a non-decreasing cumulative-norm accumulator, so its initial step is
   ``η_0 = γ/m0``. In the S-TFBO template there is no ``γ`` (steps ``1/accumulator``): its "initial step sizes" are
   the inverse initial accumulators, here ``m0``; the task's sensitivity grid varies ``γ`` instead, which scales
   every step for all rounds. Both knobs, ``syn``, graphs ring and er, ``h ∈ {0, 1}``, the three scales, ``T =
   2,000``, dev seed 0 (12 instances), median / worst final ``log10 hypergrad_sq``:
   ``γ ∈ {1e−3, 1e−2, 1e−1, 1, 10}`` (``m0 = 1``): 0.28/0.32, 0.27/0.31, −0.17/−0.03, −4.52/−3.40, −3.32/−2.87;
   ``m0 ∈ {1e3, 1e2, 10, 1, 0.1}`` (``γ = 1``, the same ``η_0``): 0.13/0.24, −1.26/−0.23, −3.25/−1.74, −4.52/−3.40,
   −4.74/−4.45. The fixed-step ``sldbo`` on the same instances, ``γ`` grid: 0.22, −0.38, −2.04 (3/12 diverged),
   diverged (7/12), diverged (12/12). So the robustness holds on the *large-step* side only — no divergence at
   any ``η_0``, and ``η_0 ∈ {1, 10}`` lands within 1.2 decades (``γ``) or 0.2 decades (``m0``) — while a too-small
   ``η_0`` is never repaired: the accumulators only grow, so ``η_t ≤ η_0`` for ever and ``T = 2,000`` rounds of
   ``10⁻³``-steps barely move ``x``. This is inherent to cumulative-gradient-norm steps (AdaGrad-norm), not a
   deviation of this implementation: the accumulated quantities (the tracked gradients ``h^s``, step 3), the
   initial values (``m0``, the template's) and the single loop of ``T`` rounds with five oracle calls each (no
   inner loops) are the method's; the lower level is solved accurately (``v``'s relative error ≈ 1e−3 at the end),
   so ``x``'s step is the bottleneck. ``benchmarks/bench_bilevel.py --only initial-steps`` prints both sweeps.
5. Updates: ``y_i ← Σ_j W_ij y_j − η^y_i h^y_i``, ``v_i ← Σ_j W_ij v_j − η^v_i h^v_i`` (optionally projected on the
   ball of radius ``v_radius``), ``x_i ← Σ_j W_ij x_j − η^x_i h^x_i``.

One communication round = one ``mix`` of the stacked ``[x, y, v, h^x, h^y, h^v, (m^x)², (m^y)², (m^v)²]``
(``2(d_x + 2 d_y) + 3`` floats per agent, plus ``[(r^y)², (r^v)²]`` from round 2 under the rules of step 3b;
the trackers sent are the pre-mixed ``h + g_t − g_{t−1}`` under
``atc`` and ``h`` under ``cta``); five oracle calls per round. ``x`` is reported every ``report_every`` rounds.

Structural choices [design], all documented as hyperparameters:

* ``combine``: with ``"atc"`` the tracker is adapted before it is combined, so the step uses the freshly
  mixed tracker and the accumulators its norm; iterates are combined then stepped (``x_i ← Σ_j W_ij x_j −
  η_i h_i``). The fully adapt-then-combine iterate ``x_i ← Σ_j W_ij (x_j − η_j h_j)`` is *not*
  used: its step would have to be taken before the round's tracker is mixed, so the step sizes ``η_j`` would
  differ between agents (or lag one round) and a complete graph would no longer reproduce the centralised
  method. With ``W = 11ᵀ/n`` the default keeps every agent identical and the run is exactly centralised
  AdaGrad-norm-type bilevel descent on the averaged objective (tested).
* the nesting of step 4 (``step_rule``), the step-size tracking of step 3 and the references of step 3b
  (the paper's exact nesting and tracking form are not public);
* ``m0`` (initial accumulators; default 1.0), ``gamma`` (base step, default 1.0; ``gamma_x``, ``gamma_y``,
  ``gamma_v`` override it per variable; ``gamma_x = 0`` freezes ``x`` and runs the lower levels alone),
  ``v_radius`` (None: no projection), ``report_every`` (10).

The round and work accounting of this module (:class:`Comms`) is shared with the baselines
(``papergym.baselines.solvers.decentralized_bilevel``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.validate import one_of, positive_float, positive_int

__all__ = ["AdaSDBO", "Comms", "TASK", "WORK_PER_ROUND"]

TASK = "DecentralizedBilevel-v0"
WORK_PER_ROUND = 10  # the oracle's work cap is 10 n T units (task docstring)
STEP_RULES = ("independent", "hierarchical", "normalized", "normalized-max", "independent-scaled")


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
        if self.rounds == self._last_report or not (
            force or self.rounds - max(self._last_report, 0) >= self.report_every
        ):
            return
        t = time.perf_counter()
        self._report(X.copy(), iteration=self.rounds, work=self.work)
        self._excluded += time.perf_counter() - t
        self._last_report = self.rounds


def split_cols(Z: np.ndarray, sizes: list[int]) -> list[np.ndarray]:
    """Columns of ``Z`` cut into consecutive blocks of the given widths."""
    return np.split(Z, np.cumsum(sizes)[:-1], axis=1)


class AdaSDBO:
    def __init__(
        self,
        *,
        seed: Any = None,
        gamma: float = 1.0,
        gamma_x: float | None = None,
        gamma_y: float | None = None,
        gamma_v: float | None = None,
        m0: float = 1.0,
        step_rule: str = "normalized",
        combine: str = "atc",
        v_radius: float | None = None,
        report_every: int = 10,
    ):
        g = positive_float(gamma, "gamma")
        if gamma_x == 0 and not isinstance(gamma_x, bool):  # gamma_x = 0 freezes x (the lower levels alone)
            self.gamma_x = 0.0
        else:
            self.gamma_x = g if gamma_x is None else positive_float(gamma_x, "gamma_x")
        self.gamma_y = g if gamma_y is None else positive_float(gamma_y, "gamma_y")
        self.gamma_v = g if gamma_v is None else positive_float(gamma_v, "gamma_v")
        self.m0 = positive_float(m0, "m0")
        self.step_rule = one_of(step_rule, "step_rule", STEP_RULES)
        self.combine = one_of(combine, "combine", ("atc", "cta"))
        self.v_radius = positive_float(v_radius, "v_radius", allow_none=True)
        self.report_every = positive_int(report_every, "report_every", 1)

    def steps(self, m2: np.ndarray, r2: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(η^x, η^y, η^v)`` per agent from the accumulators ``m2 = [(m^x)², (m^y)², (m^v)²]`` (step 4); the
        rules ``normalized``, ``normalized-max`` and ``independent-scaled`` also take the tracked first-round
        references ``r2 = [(r^y)², (r^v)²]`` (step 3b)."""
        m = np.sqrt(m2)
        mx, my, mv = m[:, 0], m[:, 1], m[:, 2]
        if self.step_rule == "hierarchical":
            myv = np.maximum(my, mv)
            return self.gamma_x / (mx * myv), self.gamma_y / my, self.gamma_v / myv
        if self.step_rule == "independent":
            return self.gamma_x / mx, self.gamma_y / my, self.gamma_v / mv
        if r2 is None:
            raise ValueError(f"step_rule={self.step_rule!r} needs the first-round references r2")
        ry, rv = np.sqrt(r2[:, 0]), np.sqrt(r2[:, 1])
        if self.step_rule == "independent-scaled":
            return self.gamma_x / mx, self.gamma_y / my, self.gamma_v * rv / (ry * mv)
        mu = np.maximum(my / ry, mv / rv)  # the lower levels' growth factor μ = max(ρ^y, ρ^v), dimensionless
        ev = self.gamma_v / (ry * mu)  # = γ_v (r^v/r^y) / max(m^v, m^y r^v/r^y)
        if self.step_rule == "normalized-max":
            return self.gamma_x / np.maximum(mx, rv * mu), self.gamma_y / my, ev
        return self.gamma_x / (mx * mu), self.gamma_y / my, ev  # normalized

    @np.errstate(over="ignore", invalid="ignore", divide="ignore")  # a too-large step diverges: scored
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        c = Comms(problem, budget, report, self.report_every)
        n, dx, dy = c.n, int(problem.d_x), int(problem.d_y)
        X = np.tile(np.asarray(problem.x0, dtype=float), (n, 1))
        Y, V = np.zeros((n, dy)), np.zeros((n, dy))
        sizes = [dx, dy, dy]
        H = np.zeros((n, dx + 2 * dy))  # trackers [h^x, h^y, h^v]
        G_prev = np.zeros_like(H)  # g_{t-1}
        m2 = np.full((n, 3), self.m0**2)  # [(m^x)^2, (m^y)^2, (m^v)^2]
        norm = self.step_rule in STEP_RULES[2:]
        r2 = None  # tracked first-round references [(r^y)^2, (r^v)^2] (step 3b)
        while c.afford(1, 5):
            # step 1: local oracles at (x_i, y_i, v_i)
            gy = c.grad_y_l(X, Y)
            gv = c.hvp(X, Y, V) - c.grad_y_f(X, Y)
            gx = c.grad_x_f(X, Y) - c.jvp(X, Y, V)
            G = np.hstack([gx, gy, gv])
            # one round: mix [x, y, v, trackers, accumulators]
            send = H + G - G_prev if self.combine == "atc" else H
            stack = [X, Y, V, send, m2] + ([r2] if norm and r2 is not None else [])
            Xw, Yw, Vw, Hw, m2w, *r2w = split_cols(
                c.mix(np.hstack(stack)), [dx, dy, dy, dx + 2 * dy, 3] + ([2] if len(stack) == 6 else [])
            )
            H = Hw if self.combine == "atc" else Hw + G - G_prev  # step 2
            G_prev = G
            hx, hy, hv = split_cols(H, sizes)
            m2 = m2w + np.stack([np.sum(hx * hx, 1), np.sum(hy * hy, 1), np.sum(hv * hv, 1)], axis=1)  # step 3
            if norm:  # first round: r^s = m^s_1; later rounds: r ← W r (mixed above)
                r2 = m2[:, 1:].copy() if r2 is None else r2w[0]
            ex, ey, ev = self.steps(m2, r2)  # step 4
            Y = Yw - ey[:, None] * hy  # step 5
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


register_solver(
    "adasdbo",
    _adasdbo,
    tasks=[TASK],
    role="paper",
    description="AdaSDBO: single-loop, gradient-tracked, parameter-free decentralized bilevel method "
    "(step sizes from tracked cumulative gradient norms)",
    defaults={
        "gamma": 1.0,
        "gamma_x": None,
        "gamma_y": None,
        "gamma_v": None,
        "m0": 1.0,
        "step_rule": "normalized",
        "combine": "atc",
        "v_radius": None,
        "report_every": 10,
    },
)
