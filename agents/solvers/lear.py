"""``lear``: Learning Expandable and Adaptable Representations (LEAR; Yu, Liu, Ye, Bors, Hu et al., NeurIPS 2025,
OpenReview ``uXKgVqYTJ2``), the paper method of ``ContinualDomains-v0`` at gym scale (structure
from the official code ``yrluestc/NeurIPS2025-LEAR``, files ``models/LEAR.py``, ``backbone/LEAR.py``,
``backbone/utils/hsic.py``; sizes [design]; torch extra).

Model. The shipped stand-in backbone ``relu(W2 relu(W1 x + b1) + b2)`` (``problem.backbone``) plays the ViT: its first
layer is frozen (the frozen ViT blocks), its second layer — the analogue of the last three trainable blocks — exists in
four copies: the *global* layer ``G`` and the *local* layer ``L`` (both trained), the never-updated *selection* copy
``S`` (``Forever_freezed_blocks``) and, from the second domain on, the snapshots ``G_prev``, ``L_prev`` of ``G``, ``L``
at the end of the previous domain (``Freezed_global_blocks`` / ``Freezed_local_blocks``). With ``h`` the frozen
hidden layer: ``g = relu(G h)``, ``l = relu(L h)``, ``s = relu(S h)`` (128-d each).

1. Expert ``t`` (``CreateNewExper``): ``fc_t`` = Linear(128 → ``fc_dim`` = 64) on the local feature, classifier
   ``c_t`` = Linear(128 + 64 → ``n_classes_t``) on ``concat(g, fc_t(l))`` (``forward_expert``); predictions are
   ``label_offset_t + argmax c_t(...)``.
2. New domain ``t > 1`` (``begin_task``): the mean Mahalanobis distance ``sqrt(δᵀ Σ_j⁻¹ δ)``, ``δ = fc_j(s) − μ_j``, of
   the domain's training rows to every stored expert Gaussian ``N(μ_j, Σ_j)``; ``fc_t`` starts as a copy of the closest
   expert's ``fc_j`` (``init_expert="closest"``; ``"fresh"``: PyTorch's default initialisation); ``c_t`` is fresh. The
   official code averages over 50 training batches; here every training row.
3. Loss per batch (``observe``): domain 1: ``CE + s·HSIC(g, l)``; later domains
   ``CE + w_kl·KL_feat(l, l_prev) + w_mse·MSE(g, g_prev) + s·w_hsic·HSIC(g, l)`` with ``s = hsic_sign`` (−1: the
   code's ``loss_hsic = −hsic(...)``, maximising dependence; +1: the abstract's "distinct information") and
   ``l_prev = relu(L_prev h)``, ``g_prev = relu(G_prev h)``.

   * ``KL_feat`` (:func:`kl_feat`, the code's ``kl_loss``): L2-normalise both, ``p = (f + 1)/2``, then
     ``F.kl_div(log(p_student + 1e−10), p_teacher, reduction="batchmean")`` =
     ``(1/m) Σ p_t (log p_t − log(p_s + 1e−10))`` with the teacher detached.
   * The abstract's mutual-information prediction alignment is the code's ``MSELoss`` on global features (``loss_mi``;
     the code's comment gives efficiency as the reason) — :func:`torch.nn.functional.mse_loss`, element mean.
   * ``HSIC`` (:func:`hsic`, the code's ``hsic.py``): ``K_ab = exp(−‖a − b‖²/σ)``, ``H = I − 11ᵀ/m``,
     ``HSIC = tr(L H K H)/(m − 1)²``; ``σ = hsic_sigma``, by default ``"median"``: the median pairwise squared
     distance of the batch, per feature set, detached (the median heuristic of kernel dependence tests, Gretton et
     al., "Measuring statistical dependence with Hilbert–Schmidt norms", ALT 2005, and NeurIPS 2007). The official
     code calls ``hsic(global, local)`` with the function's default ``σ = 1`` (``hsic_sigma=1.0`` reproduces it).
     With σ = 1 the kernel matrix is the identity whenever the rows are more than a few units apart: on the gym's
     128-d features the median pairwise squared distance of a batch is about 270, so ``HSIC = tr(H H)/(m − 1)² =
     1/(m − 1)`` for dependent and independent features alike and the term has no gradient (measured norm 2e−6 to
     4e−4 against about 1e−2 with the median width; ``tests/envs/tasks/test_continual_fidelity.py``). The same
     holds at the paper's scale: rows of the 768-d layer-normalised ViT output have squared norm about 768 before
     the affine map, so two images whose features have cosine ``c`` lie at squared distance about ``1536 (1 − c)``,
     far above 1 unless the features are nearly collinear. σ = 1 therefore switches off the paper's HSIC-based
     collaboration of the two backbones; the median width is the documented rule that keeps it a dependence
     measure. The norm of the term's gradient (w.r.t. the trained parameters, at the first batch of every epoch) is
     logged as ``meta["hsic_grad_norm"]`` (mean per domain).
   * Trained: ``G``, ``L``, ``fc_t``, ``c_t``; SGD (no momentum, Mammoth's default), ``lr`` 0.03, mini-batches of 32
     (reshuffled per epoch, seeded; a batch of one row skips the HSIC term), ``epochs`` per domain from the problem (5).
4. End of domain (``end_task``): ``N(μ_t, Σ_t)`` fitted to ``fc_t(s)`` over the training rows with Ledoit–Wolf shrinkage
   (``covariance="ledoit-wolf"``, :func:`ledoit_wolf_gaussian`; about 210 rows in 64-d make the raw covariance
   near-singular — the code inverts ``torch.cov`` directly, ``covariance="empirical"`` does so with a pseudo-inverse);
   ``fc_t``, ``c_t`` frozen; ``G_prev``, ``L_prev`` ← copies of ``G``, ``L``.
5. Prediction: protocol (i) (``selection="batch"``): the batch's mean Mahalanobis distance per expert picks one expert
   for the batch (the code's dataset-level selection, at batch granularity); ``selection="sample"`` picks per sample.
   In the per-sample pass every batch is one sample, so both select per sample. The routed expert is returned to the
   stream (``experts``) for ``selection_acc``.

Parameters added per domain (declared as ``params_added``): ``fc_t`` and ``c_t`` (``128·64 + 64 + 192·n_c + n_c``);
the stored Gaussian (``64 + 64²`` floats) is reported separately as ``meta["stored_floats"]``.

Shared with the baselines (:mod:`papergym.baselines.solvers.continual`): :func:`run_stream` (drives the evaluator's
stream: ``next_domain`` → learn → ``test_batches`` → ``answer``, then the per-sample pass; declares the work —
training samples processed — through one final ``report``), :class:`StreamLearner` (seeding, threads, the time guard,
the frozen first layer), :func:`ledoit_wolf_gaussian`, :func:`mahalanobis`.

Time guard [design]: once ``time_fraction · max_seconds`` seconds have passed since the solve started
(``time_fraction`` = 0.8), training stops (the current domain's and every later one's; predictions and the remaining
passes still run; ``meta["stopped_early"]`` counts the domains cut short), so the sequence ends inside the budget on a
slow machine. At the default sizes a solve takes 1–15 s, far from the guard, so results do not depend on the load.
Randomness: a ``numpy`` generator from ``seed`` (batch order) and a ``torch.Generator`` seeded from it (initialisation);
``torch.set_num_threads(1)`` during ``solve`` (restored); float32.

Hyperparameters (enter the cell key)
------------------------------------
=================  ===============  ==========================================================================
name               default          provenance
=================  ===============  ==========================================================================
``epochs``         ``None``         ``None`` = ``problem.epochs`` (5; 10 at paper scale)
``lr``             ``0.03``         the code's SGD learning rate
``batch_size``     ``32``           the code's batch size
``fc_dim``         ``64``           [design; the code's 500 for 768-d features]
``use_kl``         ``True``         ablation: the KL_feat term
``use_mse``        ``True``         ablation: the MSE (MI-alignment) term
``use_hsic``       ``True``         ablation: the HSIC term
``hsic_sign``      ``-1``           −1 the code, +1 the abstract
``hsic_sigma``     ``"median"``     the median heuristic (item 3); ``1.0``: the code's literal σ, a constant term
``w_kl``           ``1.0``          the code's weights (all 1)
``w_mse``          ``1.0``
``w_hsic``         ``1.0``
``selection``      ``"batch"``      ``batch`` (protocol (i), the code) or ``sample``
``selection_score`` ``"mahalanobis"`` the code's routing distance; ``loglik`` adds the log-determinant
                                     (:func:`expert_score`; a diagnostic: see ``ContinualDomains-v0`` in README)
``covariance``     ``"ledoit-wolf"``  [design] ``ledoit-wolf`` or ``empirical`` (the code's raw covariance)
``init_expert``    ``"closest"``    the code's initialisation from the closest expert, or ``fresh`` [design ablation]
``time_fraction``  ``0.8``          [design] time guard (above)
=================  ===============  ==========================================================================

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.validate import boolean, one_of, positive_float, positive_int

__all__ = [
    "LEAR",
    "StreamLearner",
    "run_stream",
    "hsic",
    "median_sigma",
    "kl_feat",
    "ledoit_wolf_gaussian",
    "ledoit_wolf_covariance",
    "mahalanobis",
    "expert_score",
    "TASK",
]

TASK = "ContinualDomains-v0"
SELECTIONS = ("batch", "sample")
COVARIANCES = ("ledoit-wolf", "empirical")
INITS = ("closest", "fresh")
SCORES = ("mahalanobis", "loglik")


# ------------------------------------------------------------------------------------------ loss terms
def hsic(x: Any, y: Any, sigma_x: Any = 1.0, sigma_y: Any = 1.0) -> Any:
    """``tr(L H K H)/(m − 1)²`` with Gaussian kernels ``K_ab = exp(−‖x_a − x_b‖²/σ_x)`` (``L`` likewise on ``y``),
    ``H = I − 11ᵀ/m`` — the official ``backbone/utils/hsic.py``. ``sigma="median"``: :func:`median_sigma`."""
    import torch

    m = x.shape[0]

    def gram(z: Any, s: Any) -> Any:
        n = (z * z).sum(-1, keepdim=True)
        d = (n + n.T - 2.0 * z @ z.T).clamp_min(0.0)
        s = median_sigma(z) if isinstance(s, str) else s
        return torch.exp(-d / s)

    K, L = gram(x, sigma_x), gram(y, sigma_y)
    H = torch.eye(m, dtype=x.dtype) - 1.0 / m
    return torch.trace(L @ (H @ (K @ H))) / (m - 1) ** 2


def median_sigma(z: Any) -> Any:
    """The median off-diagonal pairwise squared distance of the rows of ``z`` (detached; 1 if it is 0)."""
    import torch

    with torch.no_grad():
        n = (z * z).sum(-1, keepdim=True)
        d = (n + n.T - 2.0 * z @ z.T).clamp_min(0.0)
        iu = torch.triu_indices(len(z), len(z), offset=1)
        med = d[iu[0], iu[1]].quantile(0.5) if len(z) > 1 else torch.tensor(1.0)  # numpy median (even: the mean)
        return med if float(med) > 0 else torch.tensor(1.0)


def kl_feat(student: Any, teacher: Any) -> Any:
    """The code's ``kl_loss``: ``F.kl_div(log((ŝ + 1)/2 + 1e−10), (t̂ + 1)/2, reduction="batchmean")``, ``ŝ``, ``t̂`` the
    L2-normalised rows, the teacher detached."""
    import torch
    import torch.nn.functional as F

    ps = (F.normalize(student, p=2, dim=1) + 1.0) / 2.0
    pt = (F.normalize(teacher, p=2, dim=1).detach() + 1.0) / 2.0
    return F.kl_div(torch.log(ps + 1e-10), pt, reduction="batchmean")


def ledoit_wolf_covariance(Z: np.ndarray) -> np.ndarray:
    """The Ledoit–Wolf shrunk covariance of the rows of ``Z`` (Ledoit & Wolf, J. Multivariate Anal. 2004):
    ``(1 − ρ) S + ρ (tr S / p) I`` with ``S`` the maximum-likelihood covariance (``1/n``) and the closed-form
    ``ρ = min(β, δ)/δ``, ``δ = ‖S − μI‖_F²/p``, ``β = (1/(n²p)) Σ_i ‖x_i x_iᵀ − S‖_F²`` — the estimator of
    ``sklearn.covariance.LedoitWolf`` (numpy, no iteration; the tests compare the two)."""
    X = np.asarray(Z, dtype=float)
    X = X - X.mean(axis=0)
    n, p = X.shape
    S = X.T @ X / n
    mu = np.trace(S) / p
    X2 = X**2
    beta_ = float(np.sum(X2.T @ X2)) / n**2  # (1/n²) Σ_i ‖x_i‖⁴ summed over coordinate pairs
    delta_ = float(np.sum(S**2))
    beta = (beta_ - delta_ / n) / p  # (1/(n²p)) Σ_i ‖x_i x_iᵀ − S‖_F²
    delta = (delta_ - 2.0 * mu * np.trace(S) + p * mu**2) / p
    rho = 0.0 if delta == 0 else min(beta, delta) / delta
    return (1.0 - rho) * S + rho * mu * np.eye(p)


def ledoit_wolf_gaussian(Z: np.ndarray, covariance: str = "ledoit-wolf") -> tuple[np.ndarray, np.ndarray]:
    """``(μ, Σ⁻¹)`` of the rows of ``Z``: the Ledoit–Wolf shrunk covariance (:func:`ledoit_wolf_covariance`; positive
    definite whenever the rows are not all equal) or the raw covariance (``empirical``, as the official code's
    ``torch.cov``, inverted by a pseudo-inverse since it is singular with fewer rows than dimensions). Constant data
    (a zero covariance) get ``1e−6 I``."""
    Z = np.asarray(Z, dtype=float)
    mu = Z.mean(axis=0)
    if covariance == "ledoit-wolf":
        cov = ledoit_wolf_covariance(Z)
        if not np.trace(cov) > 0:
            cov = cov + 1e-6 * np.eye(len(mu))
        return mu, np.linalg.inv(cov)
    cov = np.cov(Z, rowvar=False) if len(Z) > 1 else np.zeros((len(mu), len(mu)))
    return mu, np.linalg.pinv(np.atleast_2d(cov), hermitian=True)


def mahalanobis(Z: np.ndarray, mu: np.ndarray, precision: np.ndarray) -> np.ndarray:
    """``sqrt((z − μ)ᵀ P (z − μ))`` per row of ``Z`` (clipped at 0 before the root)."""
    D = np.asarray(Z, dtype=float) - mu
    return np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", D, precision, D), 0.0))


def expert_score(Z: np.ndarray, mu: np.ndarray, precision: np.ndarray, rule: str = "mahalanobis") -> np.ndarray:
    """The routing score of the rows of ``Z`` for one expert Gaussian ``N(μ, P⁻¹)``, lower = closer:
    ``"mahalanobis"`` — the distance ``sqrt(δᵀ P δ)`` (the official code's rule); ``"loglik"`` — the negative
    Gaussian log-likelihood up to a constant shared by all experts, ``(δᵀ P δ − log det P)/2`` (the quadratic
    discriminant rule: it adds the log-determinant that the distance leaves out, so a broad Gaussian no longer
    attracts the rows of a narrower domain that lies inside it)."""
    d = mahalanobis(Z, mu, precision)
    if rule == "mahalanobis":
        return d
    if rule == "loglik":
        _, logdet = np.linalg.slogdet(precision)
        return 0.5 * (d * d - logdet)
    raise ValueError(f"selection_score must be one of {', '.join(SCORES)}, got {rule!r}")


# ------------------------------------------------------------------------------------------ the driver
def run_stream(problem: Any, learner: StreamLearner, budget: Any, report: Callable[..., None]) -> dict[str, Any]:
    """Drive the evaluator's stream to the end with ``learner`` (``learn(domain)``, ``predict(batches) -> (labels,
    experts | None)``): every domain, its protocol-(i) pass, then the per-sample pass. Returns ``{"params_added",
    "meta"}`` after one ``report`` (iteration = T, work = training samples processed)."""
    stream = problem.stream
    learner.start(problem, budget)
    while True:
        d = stream.next_domain()
        if d is None:
            break
        learner.learn(d)
        labels, experts = learner.predict(stream.test_batches())
        stream.answer(labels, experts)
    labels, experts = learner.predict(stream.test_batches())  # protocol (ii): one sample per batch
    stream.answer(labels, experts)
    summary = {"params_added": [int(p) for p in learner.params_added], "meta": learner.meta()}
    report(summary, iteration=int(problem.n_domains), work=float(learner.work))
    return summary


class StreamLearner:
    """Common machinery of the stream learners: hyperparameters ``epochs``, ``lr``, ``batch_size``,
    ``time_fraction``; the seeded generators; the frozen first layer ``h = relu(W1 x + b1)``; the time guard;
    ``params_added`` per domain and ``work`` (training samples processed)."""

    def __init__(
        self,
        *,
        seed: Any = None,
        epochs: Any = None,
        lr: float = 0.03,
        batch_size: int = 32,
        time_fraction: float = 0.8,
    ):
        self.epochs_hp = None if epochs is None else positive_int(epochs, "epochs")
        self.lr = positive_float(lr, "lr")
        self.time_fraction = positive_float(time_fraction, "time_fraction")
        self.batch_size = positive_int(batch_size, "batch_size")
        self.seed = 0 if seed is None else int(seed)

    # -- lifecycle
    def start(self, problem: Any, budget: Any) -> None:
        import torch

        self.torch = torch
        self.t0 = time.perf_counter()
        self.T = int(problem.n_domains)
        self.epochs = int(problem.epochs) if self.epochs_hp is None else int(self.epochs_hp)
        self.max_seconds = getattr(budget, "max_seconds", None)
        self.rng = np.random.default_rng(self.seed)
        self.gen = torch.Generator().manual_seed(int(self.rng.integers(2**62)))
        bb = problem.backbone
        self.W1 = torch.tensor(np.asarray(bb.W1), dtype=torch.float32)
        self.b1 = torch.tensor(np.asarray(bb.b1), dtype=torch.float32)
        self.W2 = np.asarray(bb.W2, dtype=np.float32)
        self.b2 = np.asarray(bb.b2, dtype=np.float32)
        self.params_added: list[int] = []
        self.work = 0
        self.stopped_early = 0
        self.stage = 0

    def hidden(self, X: Any) -> Any:
        """The frozen first layer ``relu(W1 x + b1)`` (float32 tensor)."""
        x = self.torch.as_tensor(np.asarray(X, dtype=np.float32))
        return self.torch.relu(x @ self.W1.T + self.b1)

    def backbone_layer(self) -> Any:
        """A fresh copy of the pretrained second layer (Linear 128 → 128)."""
        lin = self.torch.nn.Linear(self.W2.shape[1], self.W2.shape[0])
        with self.torch.no_grad():
            lin.weight.copy_(self.torch.as_tensor(self.W2))
            lin.bias.copy_(self.torch.as_tensor(self.b2))
        return lin

    def linear(self, i: int, o: int) -> Any:
        """Linear(i → o) with PyTorch's default law ``U(±1/√i)`` drawn from the solver's generator."""
        lin = self.torch.nn.Linear(i, o)
        b = 1.0 / math.sqrt(i)
        with self.torch.no_grad():
            lin.weight.uniform_(-b, b, generator=self.gen)
            lin.bias.uniform_(-b, b, generator=self.gen)
        return lin

    def batches(self, n: int) -> list[np.ndarray]:
        perm = self.rng.permutation(n)
        return [perm[i : i + self.batch_size] for i in range(0, n, self.batch_size)]

    def out_of_time(self) -> bool:
        """The time guard of the current stage (module docstring)."""
        if not self.max_seconds:
            return False
        return time.perf_counter() - self.t0 > self.time_fraction * float(self.max_seconds)

    def train_epochs(self, n: int, step: Callable[[np.ndarray], None]) -> None:
        """``epochs`` passes of seeded mini-batches over ``n`` rows, ``step(rows)`` per batch, the time guard
        checked after every step."""
        for _ in range(self.epochs):
            for rows in self.batches(n):
                step(rows)
                self.work += len(rows)
                if self.out_of_time():
                    self.stopped_early += 1
                    return

    def meta(self) -> dict[str, Any]:
        return {
            "work": int(self.work),
            "stopped_early": int(self.stopped_early),
            "seconds": time.perf_counter() - self.t0,
        }

    # -- to implement
    def learn(self, domain: Any) -> None:
        raise NotImplementedError

    def predict(self, batches: Sequence[Any]) -> tuple[list[np.ndarray], list[Any] | None]:
        raise NotImplementedError

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict[str, Any]:
        from threadpoolctl import threadpool_limits

        from papergym.agents.base import torch_single_thread

        with torch_single_thread(), threadpool_limits(limits=1):
            return run_stream(problem, self, budget, report)


def route(dist: np.ndarray, sizes: Sequence[int], per_sample: bool) -> tuple[list[np.ndarray], list[Any]]:
    """Expert choice from ``dist`` (``E × n``, rows of the stacked batches): per batch (argmin of the batch's mean
    distance) or per sample. Returns the per-row expert of every batch and the ``experts`` entry for the stream."""
    rows, entries, i = [], [], 0
    for b in sizes:
        d = dist[:, i : i + b]
        if per_sample:
            k = d.argmin(axis=0)
            rows.append(k)
            entries.append(k.astype(np.int64))
        else:
            k = int(d.mean(axis=1).argmin())
            rows.append(np.full(b, k))
            entries.append(k)
        i += b
    return rows, entries


# ---------------------------------------------------------------------------------------------- LEAR
class LEAR(StreamLearner):
    """The paper's method (module docstring)."""

    def __init__(
        self,
        *,
        seed: Any = None,
        epochs: Any = None,
        lr: float = 0.03,
        batch_size: int = 32,
        fc_dim: int = 64,
        use_kl: bool = True,
        use_mse: bool = True,
        use_hsic: bool = True,
        hsic_sign: int = -1,
        hsic_sigma: Any = "median",
        w_kl: float = 1.0,
        w_mse: float = 1.0,
        w_hsic: float = 1.0,
        selection: str = "batch",
        selection_score: str = "mahalanobis",
        covariance: str = "ledoit-wolf",
        init_expert: str = "closest",
        time_fraction: float = 0.8,
    ):
        super().__init__(seed=seed, epochs=epochs, lr=lr, batch_size=batch_size, time_fraction=time_fraction)
        self.fc_dim = positive_int(fc_dim, "fc_dim")
        self.use_kl = boolean(use_kl, "use_kl")
        self.use_mse = boolean(use_mse, "use_mse")
        self.use_hsic = boolean(use_hsic, "use_hsic")
        if hsic_sign not in (-1, 1) or isinstance(hsic_sign, bool):
            raise ValueError(f"hsic_sign must be -1 (the code) or +1 (the abstract), got {hsic_sign!r}")
        if not (
            hsic_sigma == "median"
            or (
                isinstance(hsic_sigma, (int, float))
                and not isinstance(hsic_sigma, bool)
                and math.isfinite(hsic_sigma)
                and hsic_sigma > 0
            )
        ):
            raise ValueError(f"hsic_sigma must be a positive number or 'median', got {hsic_sigma!r}")
        self.w_kl = positive_float(w_kl, "w_kl", allow_zero=True)
        self.w_mse = positive_float(w_mse, "w_mse", allow_zero=True)
        self.w_hsic = positive_float(w_hsic, "w_hsic", allow_zero=True)
        self.selection = one_of(selection, "selection", SELECTIONS)
        self.covariance = one_of(covariance, "covariance", COVARIANCES)
        self.init_expert = one_of(init_expert, "init_expert", INITS)
        self.selection_score = one_of(selection_score, "selection_score", SCORES)
        self.hsic_sign = int(hsic_sign)
        self.hsic_sigma = hsic_sigma if hsic_sigma == "median" else float(hsic_sigma)

    def start(self, problem: Any, budget: Any) -> None:
        super().start(problem, budget)
        self.G, self.L = self.backbone_layer(), self.backbone_layer()
        self.S = self.backbone_layer().requires_grad_(False)  # Forever_freezed_blocks
        self.G_prev = self.L_prev = None  # Freezed_global / local_blocks
        self.experts: list[dict[str, Any]] = []  # fc, clf, offset, mu, precision
        self.hsic_norms: list[float] = []
        self.init_from: list[int | None] = []
        self.loss_log: list[dict[str, float]] = []

    def _selection_features(self, h: Any) -> Any:
        return self.torch.relu(self.S(h))

    def expert_distances(self, h: Any) -> np.ndarray:
        """``E × n``: the routing score (:func:`expert_score`, ``selection_score``; by default the Mahalanobis
        distance) of ``fc_j(s)`` for expert ``j``'s Gaussian, per row."""
        with self.torch.no_grad():
            s = self._selection_features(h)
            return np.stack(
                [expert_score(e["fc"](s).numpy(), e["mu"], e["precision"], self.selection_score) for e in self.experts]
            )

    def learn(self, domain: Any) -> None:
        torch, F = self.torch, self.torch.nn.functional
        self.stage = int(domain["t"])
        h = self.hidden(domain["X"])
        y = torch.as_tensor(np.asarray(domain["y"], dtype=np.int64))
        n_c = int(domain["n_classes"])
        src = None
        fc = self.linear(self.G.in_features, self.fc_dim)
        if self.experts and self.init_expert == "closest":  # begin_task: the closest expert
            src = int(self.expert_distances(h).mean(axis=1).argmin())
            fc.load_state_dict(self.experts[src]["fc"].state_dict())
        self.init_from.append(src)
        clf = self.linear(self.G.out_features + self.fc_dim, n_c)
        params = [*self.G.parameters(), *self.L.parameters(), *fc.parameters(), *clf.parameters()]
        opt = torch.optim.SGD(params, lr=self.lr)
        later = self.G_prev is not None
        norms: list[float] = []
        sums = {"ce": 0.0, "kl": 0.0, "mse": 0.0, "hsic": 0.0, "n": 0}
        first = [True]

        def step(rows: np.ndarray) -> None:
            hb = h[torch.as_tensor(rows)]
            g, loc = torch.relu(self.G(hb)), torch.relu(self.L(hb))
            out = clf(torch.cat([g, fc(loc)], dim=1))  # forward_expert
            loss = F.cross_entropy(out, y[torch.as_tensor(rows)])
            sums["ce"] += float(loss.detach())
            if later and self.use_kl:
                with torch.no_grad():
                    l_prev = torch.relu(self.L_prev(hb))
                kl = kl_feat(loc, l_prev)
                loss = loss + self.w_kl * kl
                sums["kl"] += float(kl.detach())
            if later and self.use_mse:
                with torch.no_grad():
                    g_prev = torch.relu(self.G_prev(hb))
                mse = F.mse_loss(g, g_prev)
                loss = loss + self.w_mse * mse
                sums["mse"] += float(mse.detach())
            if self.use_hsic and len(rows) > 1:
                hs = hsic(g, loc, self.hsic_sigma, self.hsic_sigma)
                term = self.hsic_sign * self.w_hsic * hs
                if first[0]:
                    gr = torch.autograd.grad(term, params, retain_graph=True, allow_unused=True)
                    norms.append(float(torch.sqrt(sum((x * x).sum() for x in gr if x is not None))))
                    first[0] = False
                loss = loss + term
                sums["hsic"] += float(hs.detach())
            sums["n"] += 1
            opt.zero_grad()
            loss.backward()
            opt.step()

        n = len(y)
        for _ in range(self.epochs):
            first[0] = True
            stop = False
            for rows in self.batches(n):
                step(rows)
                self.work += len(rows)
                if self.out_of_time():
                    self.stopped_early += 1
                    stop = True
                    break
            if stop:
                break
        # end_task: the expert's Gaussian on fc_t(selection features), freeze, snapshot
        with torch.no_grad():
            z = fc(self._selection_features(h)).numpy()
        mu, prec = ledoit_wolf_gaussian(z, self.covariance)
        fc.requires_grad_(False)
        clf.requires_grad_(False)
        self.experts.append({"fc": fc, "clf": clf, "offset": int(domain["label_offset"]), "mu": mu, "precision": prec})
        self.G_prev = copy.deepcopy(self.G).requires_grad_(False)
        self.L_prev = copy.deepcopy(self.L).requires_grad_(False)
        self.hsic_norms.append(float(np.mean(norms)) if norms else math.nan)
        k = max(sums["n"], 1)
        self.loss_log.append({key: sums[key] / k for key in ("ce", "kl", "mse", "hsic")})
        self.params_added.append(sum(p.numel() for p in fc.parameters()) + sum(p.numel() for p in clf.parameters()))

    def predict(self, batches: Sequence[Any]) -> tuple[list[np.ndarray], list[Any]]:
        torch = self.torch
        sizes = [len(b) for b in batches]
        h = self.hidden(
            np.concatenate([np.asarray(b, dtype=np.float32).reshape(-1, self.W1.shape[1]) for b in batches])
        )
        dist = self.expert_distances(h)
        with torch.no_grad():
            g, loc = torch.relu(self.G(h)), torch.relu(self.L(h))
            preds = np.stack(
                [e["offset"] + e["clf"](torch.cat([g, e["fc"](loc)], dim=1)).argmax(1).numpy() for e in self.experts]
            )  # E × n
        rows, entries = route(dist, sizes, self.selection == "sample")
        labels, i = [], 0
        for b, k in zip(sizes, rows):
            labels.append(preds[k, np.arange(i, i + b)].astype(np.int64))
            i += b
        return labels, entries

    def meta(self) -> dict[str, Any]:
        m = super().meta()
        m.update(
            {
                "hsic_grad_norm": self.hsic_norms,
                "init_from": self.init_from,
                "losses": self.loss_log,
                "stored_floats": self.fc_dim + self.fc_dim**2,
            }
        )
        return m


def _lear(*, seed: Any = None, **hp: Any) -> LEAR:
    return LEAR(seed=seed, **hp)


DEFAULTS = {
    "epochs": None,
    "lr": 0.03,
    "batch_size": 32,
    "fc_dim": 64,
    "use_kl": True,
    "use_mse": True,
    "use_hsic": True,
    "hsic_sign": -1,
    "hsic_sigma": "median",
    "w_kl": 1.0,
    "w_mse": 1.0,
    "w_hsic": 1.0,
    "selection": "batch",
    "selection_score": "mahalanobis",
    "covariance": "ledoit-wolf",
    "init_expert": "closest",
    "time_fraction": 0.8,
}

register_solver(
    "lear",
    _lear,
    tasks=[TASK],
    role="paper",
    description="global + local backbone layers with one expert per domain (fc + classifier), KL_feat / "
    "MSE / -HSIC alignment, Ledoit-Wolf expert Gaussians, Mahalanobis expert selection "
    "without task identity",
    defaults=DEFAULTS,
    requires=("torch",),
)
