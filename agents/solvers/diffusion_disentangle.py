"""``diffusion-disentangle``: a dual-branch, content-bottlenecked diffusion model with style guidance, the paper-proxy
method of ``SubspaceDisentangle-v0`` ([design, in the spirit of Wang et al.,
NeurIPS 2025, arXiv:2504.00220]; torch extra). The shared numerics (schedule, networks, training, DDIM transfer) live
here once; the ``cond-diffusion`` and ``dual-encoder-noguide`` baselines and the ``oracle-subspace`` reference
(``papergym.baselines.solvers.subspace``) reuse them with other options.

Model (items (1)–(6), cited by number below):

(1) ``[Û V̂] = qf(A)``, the Q factor (signs of ``diag R`` fixed to +) of a free ``D × (k + m)`` matrix ``A``: a
    parametrisation of the Stiefel manifold ``St(D, k + m)``; ``Û`` = the first ``k = content_dim`` columns (content),
    ``V̂`` the next ``m = style_dim`` (style).
(2) ``s(x_t, t, c) = Û h_Z([Ûᵀx_t, t]) + V̂ h_G([V̂ᵀx_t, c, t]) − a(t) P⊥ x_t``, ``P⊥ = I − ÛÛᵀ − V̂V̂ᵀ``; ``h_Z``,
    ``h_G`` MLPs with 2 hidden layers of ``width`` = 64 SiLU units, ``a(t)`` a small MLP of ``t`` (1 → 16 → 1,
    softplus output). The content branch never sees ``c`` (unless ``content_sees_style``). The style code ``c`` is
    ``[one_hot(m), 0]`` under labels and ``[enc(x′), 0]`` under views, ``enc`` an MLP ``D → 64 → 64 → 4``
    (``encoder_dim``) trained jointly; the null token is ``[0, …, 0, 1]``.
    Implemented in the equivalent noise-prediction form ``s = −ε̂/σ_t`` with
    ``ε̂ = Û h_Z + V̂ h_G + b(t) P⊥ x_t`` (i.e. ``h ← −h/σ_t``, ``a(t) = b(t)/σ_t``): the same function class and
    bottleneck, with network outputs of order one at every ``t``.
(3) VP-SDE, ``β(t) = β_min + t (β_max − β_min)``, ``β_min = 0.1``, ``β_max = 20``, ``t ~ U[t_min, 1]``,
    ``t_min = 1e−3``; ``α_t = exp(−½ ∫₀ᵗ β)``, ``σ_t² = 1 − α_t²``, ``x_t = α_t x_0 + σ_t ε``.
(4) Denoising score matching weighted by ``σ_t²``: ``E ‖σ_t s(x_t, t, c) + ε‖² = E ‖ε̂ − ε‖²``; Adam, ``lr`` 2e−3,
    ``steps`` 3,000, ``batch_size`` 256.
(5) Style guidance: ``c`` is replaced by the null token with probability ``p_uncond`` = 0.2 during training; at
    sampling ``s = s(·, ∅) + w (s(·, c) − s(·, ∅))``, ``w = guidance`` = 2. With ``content_sees_style=True`` the content
    branch gets ``[Ûᵀx_t, c, t]`` and the regulariser ``λ_sg ‖Ûᵀ(s(x_t, t, c) − s(x_t, t, c′))‖²`` (``c′`` a random
    other style: another label, or the code of another sample's view; ``λ_sg`` = 0.1) is added, σ_t²-weighted like
    (4), i.e. ``λ_sg ‖Ûᵀ(ε̂(c) − ε̂(c′))‖²``.
(6) Transfer: ``x_{t_start} = α x_src + σ ε`` (``t_start`` = 0.6, seeded ``ε``), then a deterministic DDIM with
    ``ddim_steps`` = 200 uniform steps down to ``t_min`` under the guided score with the target code (labels: one-hot
    of the target index; views: ``enc(x_ref)``). "Keep ``Ûᵀx_source``" [design detail]: at every step the content
    coordinates are reset to ``α_t Ûᵀx_src`` (the noise-free forward path of the source's content) and the returned
    sample's content coordinates are exactly ``Ûᵀx_src``. DDIM step:
    ``x̂_0 = (x_t − σ_t ε̂)/α_t``, ``x_{t'} = α_{t'} x̂_0 + σ_{t'} ε̂``; the result is ``x̂_0`` at the last step.

Initialisation: ``init="supervised"`` (default) starts ``A`` at :func:`supervised_frame`, the subspaces the weak
supervision identifies. The paper's identifiability argument is that the style subspace is the one along which the
supervision signal (the label, or what two views share) changes the data distribution; its moment form is
:func:`style_moment`: under labels the between-class scatter of the class means (``E[x | c] − E x ∈ span V``), under
views the symmetrised cross-covariance of ``x`` and ``x′`` (``Cov(x, x′) = V Cov(g) Vᵀ``: the views share only the
style). ``V̂₀`` = its top ``m`` eigenvectors, ``Û₀`` = the top ``k`` principal directions of the data in the
orthogonal complement of ``V̂₀``; the diffusion loss then refines the frame. Why: the DSM objective has a second,
stable basin with content and style swapped (``Û`` on the style plane, where the content branch models the style
marginal, the code-fed branch on the content plane, DSM loss ≈ 10 % higher), and the label-free starts reach it.
``init="pca"`` ([design], the earlier default) is :func:`balanced_pca_frame`: each content column an equal mix of a
leading and a following principal direction, each style column the opposite mix — exactly between the two planes
(subspace error 1/√2), so which basin wins is decided by the first few hundred steps' noise; measured on LS-GMM
labels at ``n = 16,000`` it ends swapped on fresh instance seed 2002 (error 0.84 at step 250, 1.0 from step 750 on;
1 of 12 runs on seeds 2002–2007, labels and views), while without style dropout (``p_uncond = 0``, the
``dual-encoder-noguide`` setting) the same seed converges — the 20 % null-token steps weaken the label's pull on
``V̂``. The supervised start converges on all of them (subspace error 0.0024–0.0037). ``init="random"``: ``A`` with
i.i.d. ``N(0, 1)`` entries; on LS-GMM labels, ``n = 4,000``, it ends in a wrong basin in 4 of 4 runs (subspace error
0.71–1.0: both branches race to the high-variance style plane and the content branch keeps it).

Architecture ``full`` (the ``cond-diffusion`` baseline): ``ε̂ = MLP([x_t, c, t])`` (2 hidden layers of
``width``; no bottleneck), no guidance; afterwards ``V̂`` = the top ``m`` principal directions of
``s(x_t, t, c) − s(x_t, t, c′)`` at ``t = probe_t`` = 0.1 over the training points and pairs ``c ≠ c′`` (labels: each
point with every other label; views: the code of its own view against that of a random other sample's view), ``Û`` =
the top ``k`` principal directions of the training data after projecting out ``V̂`` [design].

Solution: ``{"U_hat": Û (float64, orthonormal), "transfer": Q × D, "meta": {"steps", "loss", "stopped",
"fit_seconds"}}``. Every ``report_every`` steps (and at the end) the current solution is passed to
``report(solution, iteration=step, work=step)``; a step is one optimiser step (the task's iteration and work unit).
Training stops at ``min(steps, budget.max_iterations)`` or once ``stop_fraction · budget.max_seconds`` have elapsed
(the rest of the budget is left for the transfer). Randomness: a local ``torch.Generator`` seeded from
``numpy.random.default_rng(seed)`` (parameters initialised with it: ``U(±1/√fan_in)``, PyTorch's default law), so a
run is deterministic without touching torch's global RNG; ``torch.set_num_threads(1)`` during ``solve`` (restored).
float32 throughout.

Hyperparameters (enter the cell key)
------------------------------------
======================  ==============  ==============================================================================
name                    default         provenance
======================  ==============  ==============================================================================
``steps``               ``3000``        item (4)
``lr``                  ``2e-3``        item (4), Adam
``batch_size``          ``256``         item (4)
``width``               ``64``          item (2): hidden units of ``h_Z``, ``h_G``, the encoder (``full``: the MLP)
``p_uncond``            ``0.2``         item (5): style dropout
``guidance``            ``2.0``         item (5): ``w``
``content_sees_style``  ``False``       item (5)
``lambda_sg``           ``0.1``         item (5): weight of the style-leakage regulariser (with the option only)
``t_start``             ``0.6``         item (6)
``ddim_steps``          ``200``         item (6)
``beta_min``            ``0.1``         item (3)
``beta_max``            ``20.0``        item (3)
``t_min``               ``1e-3``        item (3)
``encoder_dim``         ``4``           item (2): output of the views encoder
``architecture``        ``dual``        ``dual`` (this method) or ``full`` (``cond-diffusion``)
``probe_t``             ``0.1``         baseline rule: ``t`` of the score-difference probe (``full`` only)
``init``                ``supervised``  start of the frame: ``supervised`` (the supervision-identified subspaces),
                                        ``pca`` (balanced, label-free) or ``random`` (above)
``report_every``        ``1000``        [design] steps between anytime reports (``0``: final only)
``stop_fraction``       ``0.75``        [design] fraction of ``max_seconds`` after which training stops
``frame_average``       ``0.5``         fraction of the steps, at the end, whose frames are averaged (below; ``0``: the
                                        last iterate)
======================  ==============  ==============================================================================

Content subspace estimate (``dual``): Adam at the constant step 2e−3 leaves the frame fluctuating around the
minimiser of the empirical loss, and that fluctuation, set by the step and the batch, not by ``n``, floors the
subspace error of the last iterate: measured on LS-GMM labels, instance seed 0, the last iterate's error sits
at 0.011–0.016 from step 500 to step 3,000 at ``n = 16,000`` (reports every 250 steps) and is 0.016 at
``n = 1,000`` and 0.013 at ``n = 16,000``. ``Û`` is therefore the tail (Polyak–Ruppert suffix) average: the top
``k`` eigenvectors of the mean of the projectors ``Û_sÛ_sᵀ`` over the last ``frame_average`` = half of the steps
(the usual suffix-averaging rule, not tuned on any instance; projectors, not frames, since a frame is defined
up to a rotation). Same instance: 0.0089 at ``n = 1,000`` and 0.0033 at ``n = 16,000``. The transfer uses the
averaged ``Û`` for the content it keeps. The last iterate stays available as ``solver.last_iterate_U_``.

Measured cost (2-core CPU, torch 2.13, LS-GMM n = 4,000, D = 16; one thread): a full solve (3,000 steps, three
intermediate reports with transfers, final transfer) takes about 9 s alone under labels; in ``papergym bench`` with
two workers on a shared, loaded machine 18–33 s (labels and views, 10 instances) — inside the 60 s budget. A 200-step
DDIM transfer of the 1,000 queries takes well under 1 s.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.validate import boolean, in_range, one_of, positive_float, positive_int

__all__ = [
    "DiffusionDisentangle",
    "VPSchedule",
    "ddim_transfer",
    "balanced_pca_frame",
    "supervised_frame",
    "style_moment",
    "principal_directions",
    "TASK",
]

TASK = "SubspaceDisentangle-v0"
ARCHITECTURES = ("dual", "full")
INITS = ("supervised", "pca", "random")


# ---------------------------------------------------------------------------------------------- schedule
class VPSchedule:
    """VP-SDE with ``β(t) = β_min + t (β_max − β_min)`` (item (3)): ``α_t = exp(−½ ∫₀ᵗ β)``,
    ``σ_t = sqrt(1 − α_t²)``."""

    def __init__(self, beta_min: float = 0.1, beta_max: float = 20.0, t_min: float = 1e-3):
        self.beta_min, self.beta_max, self.t_min = float(beta_min), float(beta_max), float(t_min)

    def integral(self, t: Any) -> Any:
        return self.beta_min * t + 0.5 * (self.beta_max - self.beta_min) * t * t

    def alpha(self, t: Any) -> Any:
        return np.exp(-0.5 * self.integral(np.asarray(t, dtype=float)))

    def sigma(self, t: Any) -> Any:
        return np.sqrt(-np.expm1(-self.integral(np.asarray(t, dtype=float))))


def ddim_transfer(
    eps_fn: Callable[[np.ndarray, float], np.ndarray],
    x_src: np.ndarray,
    U_hat: np.ndarray,
    schedule: VPSchedule,
    t_start: float,
    n_steps: int,
    rng: np.random.Generator,
    projector: np.ndarray | None = None,
) -> np.ndarray:
    """Style transfer by deterministic DDIM from the noised source (item (6); module docstring):
    ``eps_fn(x_t, t)`` is the (guided) noise prediction ``ε̂ = −σ_t s``; the content coordinates ``Ûᵀx`` are held on
    the source's forward path ``α_t Ûᵀx_src`` and equal ``Ûᵀx_src`` in the result. ``projector``: the content part
    as ``x ↦ x @ projector`` (rows), default the orthogonal ``ÛÛᵀ`` (the oracle passes the oblique projection onto
    ``span U`` along ``span V`` when ``UᵀV ≠ 0``)."""
    x_src = np.asarray(x_src, dtype=float)
    P = U_hat @ U_hat.T if projector is None else np.asarray(projector, dtype=float)
    content = x_src @ P
    a0, s0 = float(schedule.alpha(t_start)), float(schedule.sigma(t_start))
    x = a0 * x_src + s0 * rng.standard_normal(x_src.shape)
    ts = np.linspace(t_start, schedule.t_min, n_steps + 1)
    x0 = x_src
    for i in range(n_steps):
        t, tn = float(ts[i]), float(ts[i + 1])
        a, s = float(schedule.alpha(t)), float(schedule.sigma(t))
        x = x - x @ P + a * content  # keep the content on its forward path
        eps = eps_fn(x, t)
        x0 = (x - s * eps) / a  # DDIM: predicted x_0
        an, sn = float(schedule.alpha(tn)), float(schedule.sigma(tn))
        x = an * x0 + sn * eps  # deterministic DDIM step (η = 0)
    return x0 - x0 @ P + content


def principal_directions(X: np.ndarray, k: int) -> np.ndarray:
    """The top ``k`` principal directions (``D × k``, orthonormal) of the rows of ``X``: eigenvectors of the ``D × D``
    scatter matrix of the centred data, largest eigenvalue first (cheaper than an SVD of the tall data matrix)."""
    Xc = np.asarray(X, dtype=float)
    Xc = Xc - Xc.mean(axis=0)
    w, E = np.linalg.eigh(Xc.T @ Xc)
    return E[:, np.argsort(w, kind="stable")[::-1][:k]].copy()


def balanced_pca_frame(X: np.ndarray, k: int, m: int) -> np.ndarray:
    """The label-free start of the frame (module docstring, "Initialisation"): with ``p_1, p_2, …`` the principal
    directions of ``X`` and ``r = min(k, m)``, ``Û_i = (p_i + p_{r+i})/√2`` and ``V̂_i = (p_i − p_{r+i})/√2`` for
    ``i < r`` (each column equally on the leading and the next principal directions), then the remaining content
    columns ``p_{2r+1}, …`` and style columns after them; orthonormal, spanning the top ``k + m`` directions."""
    P = principal_directions(X, k + m)
    r = min(k, m)
    a, b = P[:, :r], P[:, r : 2 * r]
    rest = P[:, 2 * r :]
    U0 = np.hstack([(a + b) / math.sqrt(2.0), rest[:, : k - r]])
    V0 = np.hstack([(a - b) / math.sqrt(2.0), rest[:, k - r :]])
    return np.hstack([U0, V0])


def style_moment(X: np.ndarray, labels: np.ndarray | None = None, X_view: np.ndarray | None = None) -> np.ndarray:
    """The ``D × D`` second moment of what the weak supervision shares, whose range is the style subspace in the
    LS-GMM population (module docstring, "Initialisation"): ``labels``, the between-class scatter
    ``Σ_c n_c (μ_c − μ)(μ_c − μ)ᵀ`` of the style labels (``E[x | c] = U E z + V b_c``, so ``μ_c − μ ∈ span V``);
    views, the symmetrised cross-covariance ``(C + Cᵀ)/2``, ``C = Cov(x, x′)`` (the two views share only the style:
    ``C = V Cov(g) Vᵀ``). Exactly one of ``labels`` and ``X_view`` must be given."""
    X = np.asarray(X, dtype=float)
    if (labels is None) == (X_view is None):
        raise ValueError("style_moment needs exactly one of labels (style labels) and X_view (paired views)")
    mu = X.mean(axis=0)
    if labels is not None:
        lab = np.asarray(labels)
        if lab.shape != (len(X),):
            raise ValueError(f"labels must have shape ({len(X)},), got {lab.shape}")
        S = np.zeros((X.shape[1], X.shape[1]))
        for c in np.unique(lab):
            d = X[lab == c].mean(axis=0) - mu
            S += float(np.sum(lab == c)) * np.outer(d, d)
        return S
    Xv = np.asarray(X_view, dtype=float)
    if Xv.shape != X.shape:
        raise ValueError(f"X_view must have the shape of X_train {X.shape}, got {Xv.shape}")
    C = (X - mu).T @ (Xv - Xv.mean(axis=0)) / len(X)
    return 0.5 * (C + C.T)


def supervised_frame(
    X: np.ndarray, k: int, m: int, labels: np.ndarray | None = None, X_view: np.ndarray | None = None
) -> np.ndarray:
    """The supervision-identified start of the frame (module docstring, "Initialisation"): ``V̂₀`` = the top ``m``
    eigenvectors of :func:`style_moment`, ``Û₀`` = the top ``k`` principal directions of the data inside the
    orthogonal complement of ``V̂₀``; returns ``[Û₀ V̂₀]`` (``D × (k + m)``, orthonormal)."""
    X = np.asarray(X, dtype=float)
    D = X.shape[1]
    if k + m > D:
        raise ValueError(f"content_dim + style_dim = {k + m} exceeds the data dimension {D}")
    w, E = np.linalg.eigh(style_moment(X, labels, X_view))
    V0 = E[:, np.argsort(w, kind="stable")[::-1][:m]]
    Q, _ = np.linalg.qr(np.hstack([V0, np.eye(D)]))  # Q[:, m:D] spans the complement of V̂₀
    C = Q[:, m:D]
    U0 = C @ principal_directions(X @ C, k)
    return np.hstack([U0, V0])


# ------------------------------------------------------------------------------------------------- solver
class DiffusionDisentangle:
    """The paper-proxy method and its variants (module docstring)."""

    def __init__(
        self,
        *,
        seed: Any = None,
        steps: int = 3000,
        lr: float = 2e-3,
        batch_size: int = 256,
        width: int = 64,
        p_uncond: float = 0.2,
        guidance: float = 2.0,
        content_sees_style: bool = False,
        lambda_sg: float = 0.1,
        t_start: float = 0.6,
        ddim_steps: int = 200,
        beta_min: float = 0.1,
        beta_max: float = 20.0,
        t_min: float = 1e-3,
        encoder_dim: int = 4,
        architecture: str = "dual",
        probe_t: float = 0.1,
        init: str = "supervised",
        report_every: int = 1000,
        stop_fraction: float = 0.75,
        frame_average: float = 0.5,
    ):
        self.seed = seed
        # frame_average: the fraction of the steps averaged
        self.frame_average = in_range(frame_average, "frame_average", 0, 1, low_closed=True)
        self.last_iterate_U_: np.ndarray | None = None
        self.init = one_of(init, "init", INITS)
        self.steps = positive_int(steps, "steps")
        self.lr = positive_float(lr, "lr")
        self.batch_size = positive_int(batch_size, "batch_size")
        self.width = positive_int(width, "width")
        self.p_uncond = in_range(p_uncond, "p_uncond", 0, 1, low_closed=True)
        self.guidance = positive_float(guidance, "guidance", allow_zero=True)
        self.content_sees_style = boolean(content_sees_style, "content_sees_style")
        self.lambda_sg = positive_float(lambda_sg, "lambda_sg", allow_zero=True)
        self.t_min = in_range(t_min, "t_min", 0, 0.5, high_closed=True)
        self.t_start = in_range(t_start, "t_start", self.t_min, 1, high_closed=True)
        self.ddim_steps = positive_int(ddim_steps, "ddim_steps")
        self.beta_min = positive_float(beta_min, "beta_min")
        self.beta_max = in_range(beta_max, "beta_max", self.beta_min, low_closed=True)
        self.encoder_dim = positive_int(encoder_dim, "encoder_dim")
        self.architecture = one_of(architecture, "architecture", ARCHITECTURES)
        self.probe_t = in_range(probe_t, "probe_t", self.t_min, 1, low_closed=True, high_closed=True)
        self.report_every = positive_int(report_every, "report_every", 0)
        self.stop_fraction = in_range(stop_fraction, "stop_fraction", 0, 1, high_closed=True)
        self.schedule = VPSchedule(self.beta_min, self.beta_max, self.t_min)

    # ------------------------------------------------------------------------------------------- solve
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict[str, Any]:
        from papergym.agents.base import torch_single_thread

        with torch_single_thread() as torch:
            return self._solve(torch, problem, budget, report)

    def _solve(self, torch: Any, problem: Any, budget: Any, report: Callable[..., None]) -> dict[str, Any]:
        start = time.perf_counter()
        nprng = np.random.default_rng(self.seed)
        gen = torch.Generator().manual_seed(int(nprng.integers(2**62)))
        X = torch.as_tensor(np.asarray(problem.X_train, dtype=np.float32))
        n, D = X.shape
        k, m = int(problem.content_dim), int(problem.style_dim)
        views = problem.supervision == "views"
        if views:
            Xv = torch.as_tensor(np.asarray(problem.X_view, dtype=np.float32))
            n_codes = self.encoder_dim
        else:
            labels = torch.as_tensor(np.asarray(problem.labels, dtype=np.int64))
            n_codes = int(problem.n_styles)
        net = _Net(torch, D, k, m, n_codes, self.width, self.architecture, self.content_sees_style, views, gen)
        if net.A is not None and self.init != "random":
            Xtr = np.asarray(problem.X_train, dtype=float)
            if self.init == "supervised":  # (1) start identified by the supervision
                A0 = supervised_frame(
                    Xtr, k, m, labels=None if views else problem.labels, X_view=problem.X_view if views else None
                )
            else:  # (1) [design] balanced PCA start
                A0 = balanced_pca_frame(Xtr, k, m)
            with torch.no_grad():
                net.A.copy_(torch.as_tensor(A0, dtype=torch.float32))
        opt = torch.optim.Adam(net.parameters(), lr=self.lr)
        sch = self.schedule

        def codes_of(idx: Any, other: bool = False) -> Any:
            """Style codes of training rows ``idx`` (``other``: a random different style — c′ of the regulariser)."""
            if views:
                rows = idx if not other else torch.randint(0, n, (len(idx),), generator=gen)
                return net.encode(Xv[rows])
            lab = labels[idx]
            if other:
                lab = (lab + torch.randint(1, n_codes, (len(idx),), generator=gen)) % n_codes
            return torch.nn.functional.one_hot(lab, n_codes).float()

        max_it = getattr(budget, "max_iterations", None)
        n_steps = min(self.steps, int(max_it)) if max_it else self.steps
        t_stop = (
            None if getattr(budget, "max_seconds", None) is None else self.stop_fraction * float(budget.max_seconds)
        )
        bs = min(self.batch_size, n)
        stopped, loss_v, step = "steps", float("nan"), 0
        avg_from = math.floor((1.0 - self.frame_average) * n_steps) + 1 if self.frame_average > 0 else None
        self._P_sum, self._P_count = None, 0  # tail average of ÛÛᵀ (Polyak–Ruppert)
        for step in range(1, n_steps + 1):
            idx = torch.randint(0, n, (bs,), generator=gen)
            x0 = X[idx]
            t = sch.t_min + (1.0 - sch.t_min) * torch.rand(bs, 1, generator=gen)
            integ = sch.beta_min * t + 0.5 * (sch.beta_max - sch.beta_min) * t * t
            alpha = torch.exp(-0.5 * integ)
            sigma = torch.sqrt(-torch.expm1(-integ))
            eps = torch.randn(bs, D, generator=gen)
            xt = alpha * x0 + sigma * eps  # (3) forward VP-SDE marginal
            c = codes_of(idx)
            drop = torch.rand(bs, 1, generator=gen) < self.p_uncond  # (5) style dropout -> null token
            cc = net.with_null(c, drop)
            W = net.frame()
            eps_hat = net.eps(xt, t, cc, W)
            loss = ((eps_hat - eps) ** 2).sum(1).mean()  # (4) E||σ_t s + ε||² = E||ε̂ − ε||²
            if self.content_sees_style and self.lambda_sg > 0:
                c2 = net.with_null(codes_of(idx, other=True), torch.zeros_like(drop))
                diff = (eps_hat - net.eps(xt, t, c2, W)) @ W[:, :k]  # Ûᵀ(ε̂(c) − ε̂(c′)), (5)
                loss = loss + self.lambda_sg * (diff**2).sum(1).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss_v = float(loss.detach())
            if avg_from is not None and step >= avg_from and net.A is not None:
                Uk = W.detach()[:, :k].double().numpy()  # this step's frame (before its update)
                self._P_sum = Uk @ Uk.T + (0.0 if self._P_sum is None else self._P_sum)
                self._P_count += 1
            if not math.isfinite(loss_v):
                stopped = "non-finite loss"
                break
            if self.report_every and step % self.report_every == 0 and step < n_steps:
                report(
                    self._solution(torch, net, problem, nprng, step, loss_v, "running", start),
                    iteration=step,
                    work=step,
                )
            if t_stop is not None and time.perf_counter() - start >= t_stop:
                stopped = "max_seconds"
                break
        sol = self._solution(torch, net, problem, nprng, step, loss_v, stopped, start)
        report(sol, iteration=step, work=step)
        return sol

    # ---------------------------------------------------------------------------------------- outputs
    def _solution(
        self,
        torch: Any,
        net: Any,
        problem: Any,
        nprng: np.random.Generator,
        step: int,
        loss: float,
        stopped: str,
        start: float,
    ) -> dict[str, Any]:
        fit = time.perf_counter() - start
        with torch.no_grad():
            U_hat = self._content_basis(torch, net, problem, nprng)
            transfer = self._transfer(torch, net, problem, U_hat, np.random.default_rng(nprng.integers(2**62)))
        return {
            "U_hat": U_hat,
            "transfer": transfer,
            "meta": {"steps": step, "loss": loss, "stopped": stopped, "fit_seconds": fit},
        }

    def _content_basis(self, torch: Any, net: Any, problem: Any, nprng: np.random.Generator) -> np.ndarray:
        k, m = int(problem.content_dim), int(problem.style_dim)
        X = np.asarray(problem.X_train, dtype=float)
        if net.architecture == "dual":
            W = net.frame().double().numpy()
            q, _ = np.linalg.qr(W[:, :k])  # re-orthonormalise in float64
            self.last_iterate_U_ = q
            if getattr(self, "_P_count", 0) > 0:  # top-k eigenvectors of the mean projector
                _, vecs = np.linalg.eigh(self._P_sum / self._P_count)
                return np.ascontiguousarray(vecs[:, ::-1][:, :k])
            return q
        # full: V̂ from score differences at t = probe_t, Û from PCA after projecting V̂ out (baseline rule)
        t = self.probe_t
        a, s = float(self.schedule.alpha(t)), float(self.schedule.sigma(t))
        xt = a * X + s * nprng.standard_normal(X.shape)
        xt_t = torch.as_tensor(xt, dtype=torch.float32)
        tt = torch.full((len(X), 1), t)
        diffs = []
        if problem.supervision == "views":
            Xv = torch.as_tensor(np.asarray(problem.X_view, dtype=np.float32))
            c1 = net.with_null(net.encode(Xv), None)
            c2 = net.with_null(net.encode(Xv[torch.as_tensor(nprng.permutation(len(X)))]), None)
            diffs.append((net.eps(xt_t, tt, c1) - net.eps(xt_t, tt, c2)).double().numpy() / s)
        else:
            M = int(problem.n_styles)
            lab = np.asarray(problem.labels)
            eye = np.eye(M, dtype=np.float32)
            base = net.eps(xt_t, tt, net.with_null(torch.as_tensor(eye[lab]), None)).double().numpy()
            for sh in range(1, M):
                other = net.with_null(torch.as_tensor(eye[(lab + sh) % M]), None)
                diffs.append((base - net.eps(xt_t, tt, other).double().numpy()) / s)
        V_hat = principal_directions(np.vstack(diffs), m)
        return principal_directions(X - (X @ V_hat) @ V_hat.T, k)

    def _transfer(self, torch: Any, net: Any, problem: Any, U_hat: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if problem.supervision == "views":
            code = net.encode(torch.as_tensor(np.asarray(problem.query_ref, dtype=np.float32)))
        else:
            code = torch.nn.functional.one_hot(
                torch.as_tensor(np.asarray(problem.query_style, dtype=np.int64)), int(problem.n_styles)
            ).float()
        cond = net.with_null(code, None)
        null = net.with_null(torch.zeros_like(code), torch.ones(len(code), 1, dtype=torch.bool))
        w = self.guidance
        W = net.frame()

        def eps_fn(x: np.ndarray, t: float) -> np.ndarray:
            xt = torch.as_tensor(x, dtype=torch.float32)
            tt = torch.full((len(x), 1), t)
            e_c = net.eps(xt, tt, cond, W)
            if w == 1.0:
                return e_c.double().numpy()
            e_0 = net.eps(xt, tt, null, W)
            return (e_0 + w * (e_c - e_0)).double().numpy()  # (5) guided score (same σ_t scale)

        return ddim_transfer(
            eps_fn,
            np.asarray(problem.query_source, dtype=float),
            U_hat,
            self.schedule,
            self.t_start,
            self.ddim_steps,
            rng,
        )


class _Net:
    """The networks of one model (module docstring), parameters initialised from ``gen``."""

    def __init__(
        self,
        torch: Any,
        D: int,
        k: int,
        m: int,
        n_codes: int,
        width: int,
        architecture: str,
        content_sees_style: bool,
        views: bool,
        gen: Any,
    ):
        nn = torch.nn
        self.torch, self.architecture, self.k, self.m = torch, architecture, k, m
        self.csty = content_sees_style
        cdim = n_codes + 1  # code + null flag

        def mlp(i: int, o: int, h: int = width, depth: int = 2) -> Any:
            layers: list[Any] = []
            d = i
            for _ in range(depth):
                layers += [nn.Linear(d, h), nn.SiLU()]
                d = h
            layers.append(nn.Linear(d, o))
            return nn.Sequential(*layers)

        self.mods = nn.ModuleDict()
        if architecture == "dual":
            self.A = nn.Parameter(torch.randn(D, k + m, generator=gen))
            self.mods["h_z"] = mlp(k + 1 + (cdim if content_sees_style else 0), k)
            self.mods["h_g"] = mlp(m + cdim + 1, m)
            self.mods["a"] = mlp(1, 1, h=16, depth=1)
        else:
            self.A = None
            self.mods["f"] = mlp(D + cdim + 1, D)
        if views:
            self.mods["enc"] = mlp(D, n_codes)
        with torch.no_grad():
            for mod in self.mods.modules():
                if isinstance(mod, nn.Linear):
                    b = 1.0 / math.sqrt(mod.in_features)
                    mod.weight.uniform_(-b, b, generator=gen)
                    mod.bias.uniform_(-b, b, generator=gen)

    def parameters(self) -> list[Any]:
        return list(self.mods.parameters()) + ([self.A] if self.A is not None else [])

    def frame(self) -> Any:
        """``[Û V̂]``: the Q factor of ``A`` with ``diag R ≥ 0`` (item (1))."""
        if self.A is None:
            return None
        q, r = self.torch.linalg.qr(self.A)
        return q * self.torch.sign(self.torch.sign(self.torch.diagonal(r)) + 0.5)

    def encode(self, xv: Any) -> Any:
        return self.mods["enc"](xv)

    def with_null(self, c: Any, drop: Any) -> Any:
        """``[c, 0]``, or the null token ``[0, …, 0, 1]`` where ``drop``."""
        torch = self.torch
        if drop is None:
            return torch.cat([c, torch.zeros(len(c), 1)], dim=1)
        d = drop.float()
        return torch.cat([c * (1.0 - d), d], dim=1)

    def eps(self, xt: Any, t: Any, c: Any, W: Any = None) -> Any:
        """Noise prediction ``ε̂ = −σ_t s(x_t, t, c)`` (module docstring, (2))."""
        torch = self.torch
        if self.architecture == "full":
            return self.mods["f"](torch.cat([xt, c, t], dim=1))
        W = self.frame() if W is None else W
        Uh, Vh = W[:, : self.k], W[:, self.k :]
        u, v = xt @ Uh, xt @ Vh
        zin = [u, c, t] if self.csty else [u, t]
        perp = xt - u @ Uh.T - v @ Vh.T  # P⊥ x_t
        b = torch.nn.functional.softplus(self.mods["a"](t))
        return (
            self.mods["h_z"](torch.cat(zin, dim=1)) @ Uh.T
            + self.mods["h_g"](torch.cat([v, c, t], dim=1)) @ Vh.T
            + b * perp
        )


def _diffusion_disentangle(*, seed: Any = None, **hp: Any) -> DiffusionDisentangle:
    return DiffusionDisentangle(seed=seed, **hp)


DEFAULTS = {
    "steps": 3000,
    "lr": 2e-3,
    "batch_size": 256,
    "width": 64,
    "p_uncond": 0.2,
    "guidance": 2.0,
    "content_sees_style": False,
    "lambda_sg": 0.1,
    "t_start": 0.6,
    "ddim_steps": 200,
    "beta_min": 0.1,
    "beta_max": 20.0,
    "t_min": 1e-3,
    "encoder_dim": 4,
    "architecture": "dual",
    "probe_t": 0.1,
    "init": "supervised",
    "report_every": 1000,
    "stop_fraction": 0.75,
    "frame_average": 0.5,
}

register_solver(
    "diffusion-disentangle",
    _diffusion_disentangle,
    tasks=[TASK],
    role="paper",
    description="dual-branch content-bottlenecked diffusion (QR Stiefel frame, VP-SDE DSM) with style "
    "dropout and guidance w = 2; transfer by DDIM from t = 0.6 keeping the content",
    defaults=DEFAULTS,
    requires=("torch",),
)
