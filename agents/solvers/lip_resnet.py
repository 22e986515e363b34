"""``lip-resnet``: 1-Lipschitz ResNets from explicit Euler steps of negative gradient flows, the paper's method of
``LipschitzApprox-v0`` (Murari, Furuya & Schönlieb, *Approximation theory for 1-Lipschitz ResNets*, NeurIPS 2025,
arXiv 2505.12003; code ``davidemurari/1LipschitzResNets``). torch extra.

Building block (the paper's Φ)::

    Φ(z) = z − h Wᵀ relu(Wz + b) = z − h ∇V(z),   V(z) = Σ_j ½ relu(w_jᵀz + b_j)²

its Jacobian ``I − h WᵀDW`` (``0 ⪯ D ⪯ I``) has eigenvalues in ``[1 − h‖W‖₂², 1]``, so Φ is 1-Lipschitz iff
``h ≤ 2/‖W‖₂²``.

Architecture ``G`` (``arch="G"``, default; the paper's Theorem 3.1 network, ``theorem4=False`` in the code):

1. lifting ``z = Qx + q``, ``Q ∈ ℝ^{w×d}``: initialised like ``nn.Linear`` with the upper three rows
   row-normalised (the code's ``lift_upper``; the lower part is made orthogonal with zero bias when ``w − 3 = d``);
   the gym keeps ``‖Q‖₂ ≤ 1`` by exact SVD rescaling after every optimiser step [design fix; the code leaves the
   lower lifting unnormalised, so its network is not certifiably 1-Lipschitz];
2. ``depth`` blocks ``z ← z − h_l W_lᵀ relu(W_l z + b_l)``, ``W_l`` initialised orthogonal (``exp(½(R − Rᵀ))``,
   ``R ~ N(0, 1)``), one learnable step ``h_l`` per block (the code's ``taus`` vector, initialised at 2.0) clamped
   in every forward pass to ``[0, 2/σ_l²]``;
3. ``σ_l ≈ ‖W_l‖₂`` by power iteration on ``W_lᵀW_l``: ``power_iters_init = 10,000`` warm-up iterations at
   construction, then one per optimiser step with the singular vector carried over (stale by one step, as in the
   code); at export ``σ_l`` is exact (SVD) and ``h_l`` is re-clamped;
4. output ``c · vᵀz`` (no bias; ``c`` a learnable scale clamped to ``[−L, L]``, ``L = problem.lipschitz_target``,
   initialised at 1) with ``‖v‖₁ ≤ 1`` by projection after every step (the code's choice, stricter than the
   theorem's ``‖v‖₂ ≤ 1``); exported as ``Output(c·v, 0)``. For a multi-class problem (``out_dim > 1``) the head is
   a ``Linear`` kept at ``‖A‖₂ ≤ 1`` by SVD rescaling [design; the code's MNIST head is unconstrained].

Architecture ``Ĝ`` (``arch="G_hat"``, width fixed to ``d + 3``; the paper's Theorem 4.1 network, ``theorem4=True``):
each block applies the sort gadget ``x − relu(wᵀx) w``, ``w = (−1, 1, 0)`` with step 1, to coordinates 1–3 (it maps
``(x₁, x₂)`` to ``(max, min)``; ``‖w‖² = 2`` so the step is exactly at the 1-Lipschitz limit) and a gradient step
to coordinates 4 onward; then an affine map ``M_l z + m_l`` whose top three rows are learnable (initialised at
``e₁, e₂, e₃``, projected after every step to ``|a₁| + |a₂| + |a₃| + ‖a_{4:}‖₂ ≤ 1``) and whose lower block is
``[0 | exp(½(S − Sᵀ))]`` (orthogonal; ``S ~ N(0, 1)``), bias ``m_l ~ N(0, 1)`` (the code's init). Export per
block: ``BlockDiag([[GradStep(w, 0, 1)], [GradStep(W_l, b_l, h_l)]], split=3)`` then ``Linear(M_l, m_l)``.

``ghat_norm="mixed"`` (default) keeps the paper's constraints, under which Ĝ is 1-Lipschitz through the mixed norm
``N(z) = max(|z₁|, |z₂|, |z₃|, ‖z_{4:}‖₂)``: the lifting's upper rows are row-normalised after every step (code) and
its lower block ``Q_{4:}`` SVD-rescaled to ``‖Q_{4:}‖₂ ≤ 1`` [design fix: the code leaves it unnormalised], so
``x ↦ Qx`` is ℓ2 → ``N`` non-expansive; the sort gadget is non-expansive in ℓ∞ on coordinates 1–3 and the gradient
step in ℓ2 on the rest; the maps ``M_l`` are ``N → N`` non-expansive by their row bound and orthogonal lower block;
the scalar head is kept at ``|v₁| + |v₂| + |v₃| + ‖v_{4:}‖₂ ≤ 1`` (the dual of ``N``; the code's ``‖v‖₁ ≤ 1`` is
stricter) and ``|c| ≤ L`` (a multi-class head at ``Σ_{j≤3} ‖A_{:,j}‖₂ + ‖A_{:,4:}‖₂ ≤ 1``). The evaluator's
mixed-norm certificate (:func:`papergym.envs.tasks.lipschitz_approx.mixed_norm_bound`) certifies the result at 1.
The export recomputes the orthogonal block in float64 and re-projects the rows. ``ghat_norm="l2"``: the earlier
spectral rescaling (``M_l`` and the whole ``Q`` to spectral norm ≤ 1 after every step, a constant factor without
gradient), certifiable by the ℓ2 product of layer norms.

``official_constraints=True`` reproduces the code's constraints only (no SVD rescaling of ``Q`` or ``M_l``; for
``G`` the upper lifting rows are normalised at construction only): such networks are generally not certified
(``error = 1.0``) — reported, never ranked.

Training (the code's ``main.py``): Adam on minibatches of ``batch_size = 256`` (reshuffled every
epoch, last incomplete batch dropped like the code's ``DataLoader(drop_last=True)``) with ``OneCycleLR`` from
``lr_min = 5e−3`` up to ``lr_max = 1e−1`` (``div_factor = lr_max / lr_min``), warm-up fraction ``pct_start = 0.5``,
cosine annealing, ``final_div_factor = 1e4`` (PyTorch's default: final lr 5e−7) and PyTorch's default momentum
cycling (Adam's β₁ between 0.85 and 0.95). Loss: MSE (``approx``), BCE-with-logits (``robust``), cross-entropy
(``digits``). The code passes ``epochs × n_train`` as OneCycle's ``total_steps`` instead of ``epochs × batches per
epoch``, so its schedule never leaves warm-up (lr stays ≈ 5e−3); the gym uses the corrected count,
``onecycle_bug_compat=True`` reproduces the code's.

Budget, anytime curve: ``epochs`` = ``budget.max_iterations`` (or the problem's default); training stops early,
returning the current network, once ``stop_fraction × budget.max_seconds`` of its own time (time spent inside
``report`` excluded) have passed. Every ``report_fraction`` of the epochs the exported network is passed to
``report(solution, iteration=epoch, work=optimiser steps)``. A non-finite loss stops training and returns the
last exported network.

Solution: ``{"layers": [...vocabulary...], "meta": {"epochs", "steps", "train_seconds", "loss", "stopped",
"n_trainable", "arch", "width", "depth"}}``.

Determinism: all initial values from ``numpy.random.default_rng(seed)`` (``seed=None`` → 0), the minibatch order
likewise; ``torch.set_num_threads(1)`` during ``solve`` (restored).

Hyperparameters (enter the cell key)
------------------------------------
=========================  ===========  ===========================================================================
name                       default      provenance
=========================  ===========  ===========================================================================
``arch``                   ``"G"``      [code] ``G`` or ``G_hat``
``width``                  ``None``     [design] 16 for ``G``; ``G_hat`` is fixed at ``d + 3`` (other values refused)
``depth``                  ``8``        [design] blocks (paper sweeps 2–64; paper-scale up to 32)
``epochs``                 ``None``     ``budget.max_iterations``, else ``problem.epochs``; if set, capped by the budget
``batch_size``             ``256``      [code]
``lr_min`` / ``lr_max``    5e-3 / 1e-1  [code]
``final_div_factor``       ``1e4``      [code] (PyTorch default)
``pct_start``              ``0.5``      [code]
``onecycle_bug_compat``    ``False``    [code] ``True``: the code's ``total_steps = epochs × n_train``
``official_constraints``   ``False``    [code] ``True``: the code's constraints only (not certified)
``power_iters_init``       ``10000``    [code] warm-up power iterations
``output_norm``            ``"l2"``     [paper] the theorem's ``‖v‖₂ ≤ 1``; ``"l1"``: the code's ``‖v‖₁ ≤ 1`` (``G``)
``ghat_norm``              ``"mixed"``  [paper] ``G_hat``: Ĝ's own norm (certified by the mixed-norm composition);
                                        ``"l2"``: spectral rescaling of every map
``report_fraction``        ``0.1``      [design] report every 10 % of the epochs
``stop_fraction``          ``0.9``      [design] fraction of ``max_seconds`` after which training stops
``dtype``                  float32      [code] training precision (export is float64)
=========================  ===========  ===========================================================================

Measured interplay of the code's ``‖v‖₁`` head with the gym's ``‖Q‖₂ ≤ 1`` fix [finding]. The code rescales ``v`` by
``max(1, ‖v‖₁)`` (not a Euclidean projection onto the ℓ1 ball, which would sparsify); Adam's dense updates then keep
``v`` spread over the ``w`` coordinates, so ``‖v‖₂ ≈ ‖v‖₁/√w`` and, with a lifting of norm ≤ 1, the network's gain
stalls near ``1/√16 ≈ 0.25`` (certified bound ≈ 0.26–0.29 after 200 epochs; test error 0.73 on ``|x|`` at d = 1 and
on ``f3`` at d = 2, against 0.08 on ``f3`` with ``output_norm="l2"``). In the code the unnormalised lower lifting
compensates (and breaks the certificate). The default is therefore the theorem's ``‖v‖₂ ≤ 1`` [paper], a deviation
from the code's default; ``output_norm="l1"`` reproduces the code's head.

Measured fit of ``Ĝ`` under the two certificates [finding]. With ``ghat_norm="l2"`` (certifiable by the product of
ℓ2 layer norms) the gym rescales ``Q`` and every ``M_l`` to spectral norm ≤ 1. For ``M_l = [R; 0 | O]``
(``O`` orthogonal) ``M_lᵀM_l = RᵀR + diag(0, 0, 0, I)``: as soon as the top rows read the lower coordinates, the
rescaling shrinks the orthogonal lower block too, in every block, and the gain decays geometrically with depth;
and ``|x₁|`` through the gadget needs the lifting rows ``x₁`` and ``−x₁``, spectral norm √2. Measured on
``f1 = |x₁|`` (d = 1, seed 0, depth 8, 200 epochs, budget not binding): relative RMSE 0.72, empirical Lipschitz
constant 0.28; after 40 epochs the lower blocks' singular values are 0.61–0.85 (1 in the paper's network), their
product ≈ 0.12, and the lifting has put all of ``x`` in the lower channel. With ``official_constraints=True`` (the
code's per-row bounds, no spectral rescaling) the same network fits ``|x₁|`` to relative RMSE 1e−4 (d = 1; 3e−4 at
d = 2) -- the architecture's capacity is there -- but its ℓ2 product bound is 1.8 (7.3 at d = 2) and at d = 2 its
empirical Lipschitz constant is 1.29 (the code leaves the lower lifting unnormalised), so it is not certified. With
the default ``ghat_norm="mixed"`` and the evaluator's mixed-norm certificate (certified bound 1.000; the ℓ2 product of
the same networks is 3.8–6.9) the relative RMSE on ``|x₁|`` (depth 8, 200 epochs, dev seeds 0 and 1) is 0.0062 /
0.0018 at d = 1 and 0.043 / 0.055 at d = 2, against 0.72 / 0.72 and 0.65 / 0.63 with ``ghat_norm="l2"``. The
paper's Ĝ is genuinely 1-Lipschitz ℓ2 → ℓ2 (no √2-type factor): the √2 is an artefact of bounding the ``[x; −x]``
lifting by its spectral norm instead of its rows. ``G`` (the default) is unaffected.

The training loop (:func:`train_model`), the exact-norm projection (:func:`svd_rescale_`), the power iteration
and the base class :class:`LipschitzSolver` are shared with the baselines
(``papergym.baselines.solvers.lipschitz_nets``).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.envs.tasks.base import Budget
from papergym.validate import boolean, in_range, one_of, positive_float, positive_int

__all__ = [
    "TASK",
    "GradBlocks",
    "Lifting",
    "LipResNet",
    "LipschitzSolver",
    "count_lip_resnet",
    "onecycle_total_steps",
    "power_iteration",
    "spectral_norm",
    "svd_rescale_",
    "to_numpy",
    "train_model",
    "uniform",
]

TASK = "LipschitzApprox-v0"
SORT_W = np.array([[-1.0, 1.0, 0.0]])  # the sort gadget: (x1, x2, x3) -> (max, min, x3) with step 1


# ============================================================================================ numerics
def spectral_norm(A: np.ndarray) -> float:
    """Exact ``‖A‖₂`` (largest singular value)."""
    A = np.asarray(A, dtype=float)
    if not np.all(np.isfinite(A)):
        return math.inf
    return float(np.linalg.norm(A, 2)) if A.size else 0.0


def power_iteration(W: np.ndarray, u: np.ndarray | None, k: int, rng: np.random.Generator) -> tuple[float, np.ndarray]:
    """``k`` steps of ``u ← WᵀWu / ‖WᵀWu‖`` (the code's ``power_method``); returns ``(√‖WᵀWu‖, u)``, a lower
    estimate of ``‖W‖₂``. ``u`` is carried over between calls (warm start)."""
    W = np.asarray(W, dtype=float)
    if u is None or u.shape != (W.shape[1],):
        u = rng.standard_normal(W.shape[1])
    u = u / max(math.sqrt(float(u @ u)), 1e-300)
    G = W.T @ W
    nrm = 0.0
    for _ in range(max(int(k), 1)):
        v = G @ u
        nrm = math.sqrt(float(v @ v))
        if nrm == 0.0 or not math.isfinite(nrm):
            return 0.0 if nrm == 0.0 else math.inf, u
        u = v / nrm
    return math.sqrt(nrm), u


def onecycle_total_steps(epochs: int, n_train: int, batches_per_epoch: int, bug_compat: bool) -> int:
    """OneCycle's ``total_steps``: ``epochs × batches per epoch`` (corrected) or the code's ``epochs × n_train``."""
    return int(epochs) * (int(n_train) if bug_compat else int(batches_per_epoch))


def to_numpy(t: Any) -> np.ndarray:
    """A float64 numpy copy of the torch tensor ``t`` (detached, on the CPU)."""
    return t.detach().cpu().double().numpy().copy()


def svd_rescale_(t: Any, bound: float = 1.0) -> float:
    """In place: ``t ← t / max(1, ‖t‖₂ / bound)`` with the exact spectral norm; returns the norm before."""
    s = spectral_norm(to_numpy(t))
    if bound < s < math.inf:
        t.data.mul_(bound / s)
    return s


def _orthogonal(rng: np.random.Generator, n: int) -> np.ndarray:
    from scipy.linalg import expm

    R = rng.standard_normal((n, n))
    return expm(0.5 * (R - R.T))


def uniform(rng: np.random.Generator, fan_in: int, shape: tuple[int, ...]) -> np.ndarray:
    """torch's default ``nn.Linear`` init: ``U(-1/√fan_in, 1/√fan_in)`` of ``shape``, drawn from ``rng``."""
    a = 1.0 / math.sqrt(max(fan_in, 1))
    return rng.uniform(-a, a, shape)


# ============================================================================================== heads
class ProjectedHead:
    """A linear readout ``z ↦ Az + c`` (``k × m``) kept at ``‖A‖₂ ≤ bound`` by exact SVD rescaling after every step
    (``project=False``: unconstrained); exported as ``Output`` (``k = 1``) or ``Linear``."""

    def __init__(
        self,
        torch: Any,
        m: int,
        k: int,
        rng: np.random.Generator,
        dtype: Any,
        project: bool = True,
        bound: float = 1.0,
        mixed_split: int | None = None,
    ):
        self.torch, self.project, self.bound, self.mixed_split = torch, project, bound, mixed_split
        self.A = torch.tensor(uniform(rng, m, (k, m)), dtype=dtype, requires_grad=True)
        self.c = torch.tensor(uniform(rng, m, (k,)), dtype=dtype, requires_grad=True)
        self.params = [self.A, self.c]
        self.after_step()

    def forward(self, z: Any) -> Any:
        return z @ self.A.T + self.c

    def _norm(self, A: np.ndarray) -> float:
        """``‖A‖₂``, or with ``mixed_split = s`` the bound Σ_{j<s} ‖A_{:,j}‖₂ + ‖A_{:,s:}‖₂ of ``A`` from the mixed
        norm ``max(|z₁|, …, |z_s|, ‖z_{s+1:}‖₂)`` to ℓ2."""
        if self.mixed_split is None:
            return spectral_norm(A)
        s = self.mixed_split
        return float(np.sum(np.linalg.norm(A[:, :s], axis=0))) + spectral_norm(A[:, s:])

    def after_step(self) -> None:
        if self.project:
            with self.torch.no_grad():
                nrm = self._norm(to_numpy(self.A))
                if self.bound < nrm < math.inf:
                    self.A.mul_(self.bound / nrm)

    def export(self) -> list[dict]:
        A, c = to_numpy(self.A), to_numpy(self.c)
        if self.project:
            A = A / max(1.0, self._norm(A) / self.bound)
        if A.shape[0] == 1:
            return [{"type": "Output", "v": A[0], "c": float(c[0])}]
        return [{"type": "Linear", "A": A, "c": c}]

    @staticmethod
    def count(m: int, k: int) -> int:
        return k * m + k


class CodeHead:
    """The code's scalar readout ``c · vᵀz``: ``‖v‖₁ ≤ 1`` (``norm="l1"``; ``"l2"``: the theorem's ``‖v‖₂ ≤ 1``) and
    ``c ∈ [−L, L]`` by projection after every step."""

    def __init__(self, torch: Any, m: int, rng: np.random.Generator, dtype: Any, L: float, norm: str = "l2"):
        self.torch, self.L, self.norm = torch, float(L), norm
        self.v = torch.tensor(uniform(rng, m, (m,)), dtype=dtype, requires_grad=True)
        self.c = torch.tensor(1.0, dtype=dtype, requires_grad=True)
        self.params = [self.v, self.c]
        self.after_step()

    def forward(self, z: Any) -> Any:
        return (self.c * (z @ self.v))[:, None]

    def after_step(self) -> None:
        with self.torch.no_grad():
            self.c.clamp_(-self.L, self.L)
            self.v.div_(max(1.0, self._vnorm(self.v)))

    def _vnorm(self, v: Any) -> float:
        if self.norm == "mixed":  # dual of Ĝ's norm max(|z₁|, |z₂|, |z₃|, ‖z_{4:}‖₂)
            return float(v[:3].abs().sum() + v[3:].norm())
        return float(v.abs().sum()) if self.norm == "l1" else float(v.norm())

    def export(self) -> list[dict]:
        v = to_numpy(self.v)
        if self.norm == "mixed":
            nrm = float(np.abs(v[:3]).sum() + np.linalg.norm(v[3:]))
        else:
            nrm = float(np.abs(v).sum()) if self.norm == "l1" else float(np.linalg.norm(v))
        v = v / max(1.0, nrm)
        c = float(np.clip(to_numpy(self.c), -self.L, self.L))
        return [{"type": "Output", "v": c * v, "c": 0.0}]

    @staticmethod
    def count(m: int, k: int) -> int:
        return m + 1


# ====================================================================================== lip-resnet nets
class Lifting:
    """``z = Qx + q`` (``w × d``); ``upper_rows``: row-normalise the top three rows (the code's ``lift_upper``);
    ``svd``: keep ``‖Q‖₂ ≤ 1`` by exact SVD rescaling."""

    def __init__(self, torch: Any, d: int, w: int, rng: np.random.Generator, dtype: Any, *, code_init: bool, svd: bool):
        Q = uniform(rng, d, (w, d))
        q = uniform(rng, d, (w,))
        if code_init:
            Q[:3] /= np.maximum(np.linalg.norm(Q[:3], axis=1, keepdims=True), 1.0)
            if w - 3 == d and d > 0:
                Q[3:] = _orthogonal(rng, d)
                q[3:] = 0.0
        self.torch, self.svd = torch, svd
        self.Q = torch.tensor(Q, dtype=dtype, requires_grad=True)
        self.q = torch.tensor(q, dtype=dtype, requires_grad=True)
        self.params = [self.Q, self.q]
        self.after_step()

    def forward(self, x: Any) -> Any:
        return x @ self.Q.T + self.q

    def normalise_upper_rows(self) -> None:
        with self.torch.no_grad():
            r = self.Q[:3].norm(dim=1, keepdim=True).clamp(min=1.0)
            self.Q[:3] /= r

    def after_step(self) -> None:
        if self.svd == "lower":
            with self.torch.no_grad():
                svd_rescale_(self.Q[3:])
        elif self.svd:
            with self.torch.no_grad():
                svd_rescale_(self.Q)

    def export(self) -> dict:
        Q = to_numpy(self.Q)
        if self.svd == "lower":  # Ĝ's mixed norm: unit upper rows, ‖Q_{4:}‖₂ ≤ 1
            Q[:3] /= np.maximum(np.linalg.norm(Q[:3], axis=1, keepdims=True), 1.0)
            Q[3:] /= max(1.0, spectral_norm(Q[3:]))
        elif self.svd:
            Q = Q / max(1.0, spectral_norm(Q))
        return {"type": "Linear", "A": Q, "c": to_numpy(self.q)}


class GradBlocks:
    """``depth`` gradient steps ``z ← z − h_l W_lᵀ relu(W_l z + b_l)`` on width ``n`` with the code's clamp
    ``h_l ∈ [0, 2/σ_l²]`` (σ_l by warm-started power iteration)."""

    def __init__(
        self, torch: Any, n: int, depth: int, rng: np.random.Generator, dtype: Any, power_iters: int, h0: float = 2.0
    ):
        self.torch, self.rng = torch, rng
        self.W = [torch.tensor(_orthogonal(rng, n), dtype=dtype, requires_grad=True) for _ in range(depth)]
        self.b = [torch.tensor(uniform(rng, n, (n,)), dtype=dtype, requires_grad=True) for _ in range(depth)]
        self.h = torch.tensor(np.full(depth, h0), dtype=dtype, requires_grad=True)
        self.params = [*self.W, *self.b, self.h]
        self.u: list[np.ndarray | None] = [None] * depth
        self.sigma = [0.0] * depth
        self.update_norms(power_iters)

    def update_norms(self, k: int = 1) -> None:
        for i, W in enumerate(self.W):
            self.sigma[i], self.u[i] = power_iteration(to_numpy(W), self.u[i], k, self.rng)

    def step(self, z: Any, i: int) -> Any:
        thr = 2.0 / max(self.sigma[i], 1e-12) ** 2
        h = self.torch.clamp(self.h[i], 0.0, thr)  # clamp in every forward pass (the code's taus)
        W = self.W[i]
        return z - h * self.torch.relu(z @ W.T + self.b[i]) @ W  # Φ(z) = z − h Wᵀ relu(Wz + b)

    def export(self, i: int) -> dict:
        W = to_numpy(self.W[i])
        s = spectral_norm(W)
        h = float(np.clip(to_numpy(self.h)[i], 0.0, 2.0 / s**2 if s > 0 else np.inf))  # exact norm, re-clamped
        return {"type": "GradStep", "W": W, "b": to_numpy(self.b[i]), "h": np.full(W.shape[0], h)}


class LipResNetG:
    """Architecture ``G`` (module docstring)."""

    def __init__(
        self,
        torch: Any,
        d: int,
        out_dim: int,
        width: int,
        depth: int,
        rng: np.random.Generator,
        dtype: Any,
        *,
        official: bool,
        L: float,
        power_iters: int,
        output_norm: str = "l2",
    ):
        self.torch = torch
        self.lift = Lifting(torch, d, width, rng, dtype, code_init=True, svd=not official)
        self.blocks = GradBlocks(torch, width, depth, rng, dtype, power_iters)
        self.head = (
            CodeHead(torch, width, rng, dtype, L, output_norm)
            if out_dim == 1
            else ProjectedHead(torch, width, out_dim, rng, dtype)
        )
        self.params = [*self.lift.params, *self.blocks.params, *self.head.params]

    def forward(self, x: Any) -> Any:
        z = self.lift.forward(x)
        for i in range(len(self.blocks.W)):
            z = self.blocks.step(z, i)
        return self.head.forward(z)

    def after_step(self) -> None:
        # the code's order: power iteration, clip c, (Ĝ: normalise), project v; plus the gym's SVD fix of Q
        self.blocks.update_norms(1)
        self.head.after_step()
        self.lift.after_step()

    def export(self) -> list[dict]:
        return [self.lift.export(), *(self.blocks.export(i) for i in range(len(self.blocks.W))), *self.head.export()]

    @staticmethod
    def count(d: int, width: int, depth: int, out_dim: int) -> int:
        head = CodeHead.count(width, 1) if out_dim == 1 else ProjectedHead.count(width, out_dim)
        return width * d + width + depth * (width * width + width) + depth + head


class LipResNetGHat:
    """Architecture ``Ĝ`` (module docstring): width ``d + 3``."""

    def __init__(
        self,
        torch: Any,
        d: int,
        out_dim: int,
        width: int,
        depth: int,
        rng: np.random.Generator,
        dtype: Any,
        *,
        official: bool,
        L: float,
        power_iters: int,
        output_norm: str = "l2",
        ghat_norm: str = "mixed",
    ):
        self.torch, self.official = torch, official
        self.mixed = ghat_norm == "mixed" and not official
        w = d + 3
        self.lift = Lifting(
            torch, d, w, rng, dtype, code_init=True, svd=False if official else ("lower" if self.mixed else True)
        )
        self.blocks = GradBlocks(torch, d, depth, rng, dtype, power_iters)
        eye = np.eye(w)
        self.rows = [torch.tensor(eye[:3].copy(), dtype=dtype, requires_grad=True) for _ in range(depth)]
        self.S = [torch.tensor(rng.standard_normal((d, d)), dtype=dtype, requires_grad=True) for _ in range(depth)]
        self.mb = [torch.tensor(rng.standard_normal(w), dtype=dtype, requires_grad=True) for _ in range(depth)]
        self.scale = [1.0] * depth
        self.sort_w = torch.tensor(SORT_W[0], dtype=dtype)
        if self.mixed:
            self.head = (
                CodeHead(torch, w, rng, dtype, L, "mixed")
                if out_dim == 1
                else ProjectedHead(torch, w, out_dim, rng, dtype, mixed_split=3)
            )
        else:
            self.head = (
                CodeHead(torch, w, rng, dtype, L, output_norm)
                if out_dim == 1
                else ProjectedHead(torch, w, out_dim, rng, dtype)
            )
        self.params = [*self.lift.params, *self.blocks.params, *self.rows, *self.S, *self.mb, *self.head.params]
        self._normalise_affines()

    def _matrix(self, i: int) -> Any:
        torch = self.torch
        d = self.S[i].shape[0]
        low = torch.cat(
            [torch.zeros((d, 3), dtype=self.S[i].dtype), torch.linalg.matrix_exp(0.5 * (self.S[i] - self.S[i].T))],
            dim=1,
        )
        return torch.cat([self.rows[i], low], dim=0)

    def _normalise_affines(self) -> None:
        torch = self.torch
        with torch.no_grad():
            for i, R in enumerate(self.rows):
                # the code: |a1| + |a2| + |a3| + ‖a_{4:}‖₂ ≤ 1 per row; ‖S‖₂ ≤ 1 (irrelevant for exp(skew))
                l1 = R[:, :3].abs().sum(dim=1) + R[:, 3:].norm(dim=1)
                R /= l1.clamp(min=1.0)[:, None]
                svd_rescale_(self.S[i])
                # the gym's fix: ‖M_l‖₂ ≤ 1 (constant factor; the forward pass and the export use it alike). With the
                # lower block [0 | O], O orthogonal: MᵀM = RᵀR + diag(0, 0, 0, I), so no matrix exponential is needed
                if not self.official and not self.mixed:
                    Rn = to_numpy(R)
                    G = Rn.T @ Rn
                    G[3:, 3:] += np.eye(G.shape[0] - 3)
                    self.scale[i] = 1.0 / max(1.0, math.sqrt(max(float(np.linalg.eigvalsh(G)[-1]), 0.0)))

    def forward(self, x: Any) -> Any:
        torch = self.torch
        z = self.lift.forward(x)
        w = self.sort_w
        for i in range(len(self.blocks.W)):
            top = z[:, :3]
            top = top - torch.relu(top @ w)[:, None] * w  # sort gadget: (x1, x2) -> (max, min), step 1
            low = self.blocks.step(z[:, 3:], i)
            z = torch.cat([top, low], dim=1)
            z = z @ (self.scale[i] * self._matrix(i)).T + self.mb[i]
        return self.head.forward(z)

    def after_step(self) -> None:
        self.blocks.update_norms(1)
        self.head.after_step()
        self.lift.normalise_upper_rows()  # the code does this after every step for Ĝ
        self.lift.after_step()
        self._normalise_affines()

    def export(self) -> list[dict]:
        out = [self.lift.export()]
        for i in range(len(self.blocks.W)):
            sort = {"type": "GradStep", "W": SORT_W.copy(), "b": np.zeros(1), "h": np.ones(1)}
            out.append({"type": "BlockDiag", "nets": [[sort], [self.blocks.export(i)]], "split": 3})
            M = to_numpy(self._matrix(i)) * self.scale[i]
            if self.mixed:  # exact in float64: orthogonal lower block, top rows in the dual mixed norm ≤ 1
                from scipy.linalg import expm

                S = to_numpy(self.S[i])
                M[3:, 3:] = expm(0.5 * (S - S.T))
                M[:3] /= np.maximum(np.abs(M[:3, :3]).sum(1) + np.linalg.norm(M[:3, 3:], axis=1), 1.0)[:, None]
            elif not self.official:
                M = M / max(1.0, spectral_norm(M))
            out.append({"type": "Linear", "A": M, "c": to_numpy(self.mb[i])})
        return out + self.head.export()

    @staticmethod
    def count(d: int, width: int, depth: int, out_dim: int) -> int:
        w = d + 3
        head = CodeHead.count(w, 1) if out_dim == 1 else ProjectedHead.count(w, out_dim)
        return w * d + w + depth * (d * d + d + 3 * w + d * d + w) + depth + head


def count_lip_resnet(arch: str, d: int, width: int, depth: int, out_dim: int = 1) -> int:
    """Trainable parameters of ``lip-resnet`` (``arch`` ``G`` or ``G_hat``)."""
    return (LipResNetG if arch == "G" else LipResNetGHat).count(d, width, depth, out_dim)


# ====================================================================================== training loop
def train_model(
    torch: Any,
    model: Any,
    problem: Any,
    budget: Budget,
    report: Callable[..., None] | None,
    *,
    epochs: int,
    batch_size: int,
    lr_min: float,
    lr_max: float,
    final_div_factor: float,
    pct_start: float,
    onecycle_bug_compat: bool,
    report_fraction: float,
    stop_fraction: float,
    rng: np.random.Generator,
    dtype: Any,
    meta: dict[str, Any],
) -> dict:
    """Adam + OneCycle minibatch training of ``model`` (``forward``, ``after_step``, ``export``, ``params``) with
    anytime reports and the time budget (module docstring). Shared by every solver of the task."""
    t0 = time.perf_counter()
    excluded = 0.0
    X = torch.tensor(np.asarray(problem.X, dtype=float), dtype=dtype)
    loss_name = str(problem.loss)
    if loss_name == "ce":
        Y = torch.tensor(np.asarray(problem.y, dtype=np.int64))
    else:
        Y = torch.tensor(np.asarray(problem.y, dtype=float).reshape(-1), dtype=dtype)
    if loss_name not in ("mse", "bce", "ce"):
        raise ValueError(f"problem.loss must be mse, bce or ce, got {loss_name!r}")
    n = X.shape[0]
    bs = min(int(batch_size), n)
    nb = max(n // bs, 1)
    # OneCycle needs a warm-up phase of at least one step (pct_start · total > 1); only tiny runs are affected
    total = max(onecycle_total_steps(epochs, n, nb, onecycle_bug_compat), int(1.0 / pct_start) + 1)
    opt = torch.optim.Adam(model.params, lr=lr_min, foreach=True)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt,
        max_lr=lr_max,
        div_factor=lr_max / lr_min,
        final_div_factor=final_div_factor,
        total_steps=total,
        pct_start=pct_start,
        anneal_strategy="cos",
    )
    F = torch.nn.functional
    every = max(1, int(math.ceil(epochs * report_fraction)))
    t_stop = None if budget.max_seconds is None else stop_fraction * float(budget.max_seconds)
    steps, ep, last_loss, stopped = 0, 0, math.nan, "completed"

    def elapsed() -> float:
        return time.perf_counter() - t0 - excluded

    def solution() -> dict:
        return {
            "layers": model.export(),
            "meta": {
                **meta,
                "epochs": ep,
                "steps": steps,
                "train_seconds": elapsed(),
                "loss": last_loss,
                "stopped": stopped,
            },
        }

    snapshot = solution()
    for ep_i in range(1, epochs + 1):
        perm = rng.permutation(n)
        for bi in range(nb):
            idx = torch.from_numpy(perm[bi * bs : (bi + 1) * bs])
            out = model.forward(X[idx])
            yb = Y[idx]
            if loss_name == "mse":
                loss = torch.mean((out[:, 0] - yb) ** 2)
            elif loss_name == "bce":
                loss = F.binary_cross_entropy_with_logits(out[:, 0], yb)
            else:
                loss = F.cross_entropy(out, yb)
            if not math.isfinite(float(loss.detach())):  # stop before a non-finite step corrupts the weights
                stopped = "non-finite loss"
                break
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            model.after_step()
            steps += 1
            last_loss = float(loss.detach())
            if t_stop is not None and elapsed() >= t_stop:
                stopped = "max_seconds"
                break
        ep = ep_i
        if stopped == "non-finite loss":  # the last exported network (a copy: the reported one is not touched)
            return {**snapshot, "meta": {**snapshot["meta"], "stopped": stopped, "train_seconds": elapsed()}}
        if ep % every == 0 or ep == epochs or stopped != "completed":
            snapshot = solution()
            if report is not None:
                t_r = time.perf_counter()
                report(snapshot, iteration=ep, work=steps)
                excluded += time.perf_counter() - t_r
        if stopped != "completed":
            break
    return {**snapshot, "meta": {**snapshot["meta"], "train_seconds": elapsed()}}


# ============================================================================================= solvers
class LipschitzSolver:
    """Common solver skeleton of ``LipschitzApprox-v0``: the optimiser schedule's hyperparameters, seeding,
    threads, and :func:`train_model`. Subclasses implement ``build(torch, problem, rng, dtype) -> model``."""

    def __init__(
        self,
        *,
        seed: Any = None,
        depth: int = 8,
        epochs: int | None = None,
        batch_size: int = 256,
        lr_min: float = 5e-3,
        lr_max: float = 1e-1,
        final_div_factor: float = 1e4,
        pct_start: float = 0.5,
        onecycle_bug_compat: bool = False,
        report_fraction: float = 0.1,
        stop_fraction: float = 0.9,
        dtype: str = "float32",
    ):
        self.seed = 0 if seed is None else int(seed)
        self.depth = positive_int(depth, "depth")
        self.epochs = None if epochs is None else positive_int(epochs, "epochs")
        self.batch_size = positive_int(batch_size, "batch_size")
        self.lr_min = positive_float(lr_min, "lr_min")
        self.lr_max = positive_float(lr_max, "lr_max")
        if self.lr_max < self.lr_min:
            raise ValueError(f"lr_max must be >= lr_min, got {lr_max!r} < {lr_min!r}")
        self.final_div_factor = positive_float(final_div_factor, "final_div_factor")
        self.pct_start = in_range(pct_start, "pct_start", 0, 1.0 - 1e-9, high_closed=True)
        self.onecycle_bug_compat = boolean(onecycle_bug_compat, "onecycle_bug_compat")
        self.report_fraction = in_range(report_fraction, "report_fraction", 0, 1, high_closed=True)
        self.stop_fraction = in_range(stop_fraction, "stop_fraction", 0, 1, high_closed=True)
        self.dtype = one_of(dtype, "dtype", ("float32", "float64"))

    def build(self, torch: Any, problem: Any, rng: np.random.Generator, dtype: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    def describe(self, problem: Any) -> dict[str, Any]:
        return {}

    def solve(self, problem: Any, budget: Budget | None = None, report: Callable[..., None] | None = None) -> dict:
        from papergym.agents.base import torch_single_thread

        budget = budget if budget is not None else Budget()
        epochs = self.epochs if self.epochs is not None else int(budget.max_iterations or problem.epochs)
        if budget.max_iterations is not None:
            epochs = min(epochs, int(budget.max_iterations))
        with torch_single_thread() as torch:
            rng = np.random.default_rng(self.seed)
            dtype = getattr(torch, self.dtype)
            model = self.build(torch, problem, rng, dtype)
            meta = {
                "n_trainable": int(sum(p.numel() for p in model.params)),
                "depth": self.depth,
                **self.describe(problem),
            }
            return train_model(
                torch,
                model,
                problem,
                budget,
                report,
                epochs=epochs,
                batch_size=self.batch_size,
                lr_min=self.lr_min,
                lr_max=self.lr_max,
                final_div_factor=self.final_div_factor,
                pct_start=self.pct_start,
                onecycle_bug_compat=self.onecycle_bug_compat,
                report_fraction=self.report_fraction,
                stop_fraction=self.stop_fraction,
                rng=rng,
                dtype=dtype,
                meta=meta,
            )


class LipResNet(LipschitzSolver):
    """``lip-resnet`` (module docstring)."""

    def __init__(
        self,
        *,
        seed: Any = None,
        arch: str = "G",
        width: int | None = None,
        official_constraints: bool = False,
        power_iters_init: int = 10_000,
        output_norm: str = "l2",
        ghat_norm: str = "mixed",
        **common: Any,
    ):
        super().__init__(seed=seed, **common)
        self.arch = one_of(arch, "arch", ("G", "G_hat"))
        self.width = None if width is None else positive_int(width, "width", 4 if arch == "G" else 1)
        self.official = boolean(official_constraints, "official_constraints")
        self.power_iters_init = positive_int(power_iters_init, "power_iters_init")
        self.output_norm = one_of(output_norm, "output_norm", ("l1", "l2"))  # the code's / the theorem's
        self.ghat_norm = one_of(ghat_norm, "ghat_norm", ("mixed", "l2"))  # Ĝ's own norm / spectral rescaling

    def _width(self, problem: Any) -> int:
        d = int(problem.d)
        if self.arch == "G_hat":
            if self.width is not None and self.width != d + 3:
                raise ValueError(f"arch 'G_hat' has the fixed width d + 3 = {d + 3}, got width={self.width}")
            return d + 3
        return 16 if self.width is None else self.width

    def describe(self, problem: Any) -> dict[str, Any]:
        return {
            "arch": self.arch,
            "width": self._width(problem),
            "official_constraints": self.official,
            "output_norm": self.output_norm,
            **({"ghat_norm": self.ghat_norm} if self.arch == "G_hat" else {}),
        }

    def build(self, torch: Any, problem: Any, rng: np.random.Generator, dtype: Any) -> Any:
        cls = LipResNetG if self.arch == "G" else LipResNetGHat
        return cls(
            torch,
            int(problem.d),
            int(problem.out_dim),
            self._width(problem),
            self.depth,
            rng,
            dtype,
            official=self.official,
            L=float(problem.lipschitz_target),
            power_iters=self.power_iters_init,
            output_norm=self.output_norm,
            **({"ghat_norm": self.ghat_norm} if self.arch == "G_hat" else {}),
        )


register_solver(
    "lip-resnet",
    LipResNet,
    tasks=[TASK],
    role="paper",
    description="1-Lipschitz ResNet of negative gradient-flow steps (G: width 16, depth 8; G_hat: width d + 3), "
    "Adam + OneCycle 5e-3 -> 1e-1, batch 256, SVD-certified lifting",
    defaults={
        "arch": "G",
        "width": None,
        "depth": 8,
        "epochs": None,
        "batch_size": 256,
        "lr_min": 5e-3,
        "lr_max": 1e-1,
        "final_div_factor": 1e4,
        "pct_start": 0.5,
        "onecycle_bug_compat": False,
        "official_constraints": False,
        "power_iters_init": 10_000,
        "output_norm": "l2",
        "ghat_norm": "mixed",
        "report_fraction": 0.1,
        "stop_fraction": 0.9,
        "dtype": "float32",
    },
    requires=("torch",),
)
