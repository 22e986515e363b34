"""``SubspaceDisentangle-v0``: recovering content and style subspaces and transferring style under weak supervision,
the setting of *Can Diffusion Models Disentangle? A Theoretical Perspective* (Wang, Mirza, Gong, Gong, Zhang, Tracey,
Placek, Vilela & Glass, NeurIPS 2025, arXiv:2504.00220).

**LS-GMM** (latent-subspace Gaussian mixture, ``family="ls-gmm"``, the default; [design]):

* ``D = 16``; ``[U V]`` = the first 4 columns of a Haar orthogonal matrix (QR of a Gaussian matrix with the signs of
  ``diag R`` fixed), ``U, V ∈ ℝ^{16×2}``, ``UᵀV = 0``;
* content ``z`` ~ mixture of ``K = 4`` isotropic Gaussians (std 0.3) with means equally spaced on a circle of radius 2,
  style ``g`` ~ mixture of ``M = 3`` Gaussians (std 0.3), means equally spaced on a circle of radius 4; each circle
  gets a random phase [design], the mixture weights are uniform [design];
* ``x = Uz + V_θ g + 0.1 ε``, ``ε ~ N(0, I_16)``;
* ``angle`` θ (degrees, default 0): ``V_θ = cos θ · V + sin θ · U`` (column ``j`` of ``V`` rotated towards column ``j``
  of ``U``), so ``V_θ`` keeps orthonormal columns, ``UᵀV_θ = sin θ · I`` and both principal angles between the content
  and the style subspace are ``90° − θ``. The content subspace stays ``span U``.

Weak supervision (``supervision=``): ``labels`` — the style component index ``m`` of every training sample is public;
``views`` — every training sample ``x`` comes with a second view ``x′`` with the same style vector ``g`` (same
component and value), a fresh content ``z`` and fresh noise.

**Digits colourisation proxy** (``family="digits"``, not in the default family): scikit-learn's bundled
``load_digits`` 8×8 greyscale images scaled to ``[0, 1]``, multiplied by one of 4 fixed RGB tints (:data:`TINTS`:
red, green, blue, yellow [design]) and raised to the power ``γ = 0.8``: ``x = (img ⊗ tint)^γ ∈ ℝ^{192}``
(channel-major, ``3 × 64``); content = the digit image, style = the tint. [design] The
instance seed splits the 1,797 images into 1,297 training images and 500 held-out query images (so a solver cannot
look a query's answer up among its training data); the training set holds every training image under every tint
(``n = 5,188``; ``labels``: the tint index; ``views``: ``x′`` = another random training image under the same tint).
Subspace dimensions: style 3 (= the number of tints − 1, what a linear discriminant of the tints spans), content
``192 − 3 = 189`` (everything else) [design]; ``U_hat`` is validated but not scored on digits.

**Public problem** (:class:`SubspaceProblem`): ``family``, ``supervision``, ``X_train`` (``n × D``), ``labels``
(``n`` ints; ``labels`` only, else ``None``), ``X_view`` (``n × D``; ``views`` only), ``content_dim`` (2),
``style_dim`` (2), ``n_styles`` (3; 4 tints on digits — the view baselines' pseudo-labelling uses this count, so it is
public), ``query_source`` (``Q × D``, ``Q = 1,000``), ``query_style`` (target style index, ``labels``) or ``query_ref``
(a reference sample drawn from the target style component with fresh content and noise, ``views``), ``max_steps``
(3,000, declared). Query sources are fresh samples (not training points); the target style always differs from the
source's [design: so the identity map scores no style accuracy]. The generator's truth (:class:`LSGMMTruth` /
:class:`DigitsTruth`: ``U``, ``V``, the component means, the tints) is **not** in the public problem: the evaluator
keeps it (``SubspaceEvaluator.truth``), and the problem's ``oracle`` field is always ``None``. Only the
``oracle-subspace`` reference solver (role ``reference``, never ranked) gets it: ``papergym bench`` hands a
reference-role solver ``evaluator.reference_problem()`` (the problem with ``oracle`` set) instead of the public
problem; everything a paper, baseline or submitted solver receives holds no path to the truth.

**Solution**: a mapping ``{"U_hat": D × content_dim, "transfer": Q × D}``; ``U_hat`` must have orthonormal columns
(``max |ÛᵀÛ − I| ≤ 1e−4``; the evaluator re-orthonormalises by QR before scoring, so float32 round-off is harmless);
both finite. Anything else (not a mapping, a missing key, a wrong shape, NaN/inf, non-orthonormal columns) is a
``ValueError`` naming the field. An optional ``"meta"`` entry is ignored.

**Metrics**:

| metric | dir | definition |
|---|---|---|
| ``disentangle_score`` (primary) | max | LS-GMM: mean of ``1 − subspace_error``, ``content_acc``, ``style_acc``; digits: mean of ``digit_acc`` and ``tint_acc`` |
| ``subspace_error`` | min | ``‖ÛÛᵀ − UUᵀ‖_F / 2 ∈ [0, 1]`` (``= sqrt((sin²θ₁ + sin²θ₂)/2)`` for principal angles ``θ₁, θ₂``) |
| ``content_acc`` | max | the content mean nearest to ``Uᵀx̂`` is the source's component; with ``angle ≠ 0`` the coordinates are the least-squares coefficients ``[U V_θ]⁺x̂`` |
| ``style_acc`` | max | the style mean nearest to ``Vᵀx̂`` (same least-squares rule) is the target style |
| ``recolor_mse`` | min | digits: mean squared error to the true recolouring ``(img ⊗ tint_target)^γ`` |
| ``digit_acc`` | max | digits: a logistic regression trained once, deterministically, on all 1,797 greyscale images (each scaled to max 1), applied to the luminance of ``x̂`` (channel mean of ``x̂^{1/γ}``, scaled to max 1) |
| ``tint_acc`` | max | digits: the tint whose chromaticity (channel sums of ``x̂^{1/γ}``, normalised to sum 1) is nearest |

Metrics that do not apply to a family are NaN. Budget: ``max_seconds`` = 60 (600 with ``paper_scale``),
``max_iterations`` = 3,000 optimiser steps (declared by the solver).

**Sizes**: default ``n = 4,000``, ``labels`` and ``views``, ``angle = 0``; ``paper_scale=True``: ``n ∈ {256, 1k, 4k,
16k}``, ``angle ∈ {0°, 30°}`` and the digits family added. Instance names: ``ls-gmm/labels/n=4000/angle=0/s0``,
``digits/views/s0``.

The exact score of the noised LS-GMM (what the ``oracle-subspace`` reference samples with) is
:func:`gmm_score`; :func:`gmm_logpdf` is its log-density (tests compare the score with finite differences).

Deviations and open points: the digits training/query split, subspace dimensions and tints are [design] (above); the
source≠target rule for queries is [design]; the paper's MNIST/CIFAR-10/speech experiments are replaced by LS-GMM and
bundled digits. ``figures`` draws per-configuration bars of the score and the subspace error and, with
``paper_scale``, the score against ``n`` (a scatter of ``Ûᵀx`` would need the solutions, which runs do not keep).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""  # noqa: E501 - markdown table rows cannot wrap

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from papergym.envs.tasks.base import (
    Budget,
    InstanceRef,
    check_floats,
    check_ints,
    check_names,
    instance_params,
    register_task,
    split_instances,
)
from papergym.envs.tasks.haar import haar

__all__ = [
    "SubspaceTask",
    "SubspaceProblem",
    "SubspaceEvaluator",
    "LSGMMTruth",
    "DigitsTruth",
    "subspace_error",
    "gmm_score",
    "gmm_logpdf",
    "make_lsgmm",
    "FAMILIES",
    "SUPERVISIONS",
    "TINTS",
    "GAMMA",
    "N_QUERIES",
]

TASK_ID = "SubspaceDisentangle-v0"
FAMILIES = ("ls-gmm", "digits")
SUPERVISIONS = ("labels", "views")
N_TEST_SEEDS = 5
N_QUERIES = 1000
# LS-GMM constants
DIM = 16
K_CONTENT, M_STYLE = 4, 3
CONTENT_RADIUS, STYLE_RADIUS = 2.0, 4.0
COMPONENT_STD, NOISE_STD = 0.3, 0.1
# digits proxy (tints [design])
TINTS = np.array(
    [
        [0.90, 0.15, 0.10],  # red
        [0.10, 0.85, 0.20],  # green
        [0.15, 0.30, 0.95],  # blue
        [0.95, 0.85, 0.10],
    ]
)  # yellow
GAMMA = 0.8
N_DIGIT_QUERY_IMAGES = 500
ORTHO_TOL = 1e-4
PAPER_N = (256, 1000, 4000, 16000)
PAPER_ANGLES = (0.0, 30.0)


# -------------------------------------------------------------------------------------------------- truths
@dataclass(frozen=True)
class LSGMMTruth:
    """The generator of an LS-GMM instance (private): ``U``, ``V`` (``V_θ`` with the angle), component means
    (``K × 2`` content, ``M × 2`` style), stds, noise level."""

    U: np.ndarray
    V: np.ndarray
    content_means: np.ndarray
    style_means: np.ndarray
    content_std: float = COMPONENT_STD
    style_std: float = COMPONENT_STD
    noise_std: float = NOISE_STD
    angle: float = 0.0

    @property
    def mixing(self) -> np.ndarray:
        return np.hstack([self.U, self.V])

    def coordinates(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Content and style coordinates of the rows of ``X``: ``(XU, XV)`` at angle 0, else the least-squares
        coefficients ``[U V]⁺x``."""
        if self.angle == 0.0:
            return X @ self.U, X @ self.V
        coef = X @ np.linalg.pinv(self.mixing).T
        k = self.U.shape[1]
        return coef[:, :k], coef[:, k:]

    def nearest_content(self, X: np.ndarray) -> np.ndarray:
        z, _ = self.coordinates(X)
        return np.argmin(((z[:, None, :] - self.content_means[None]) ** 2).sum(-1), axis=1)

    def nearest_style(self, X: np.ndarray) -> np.ndarray:
        _, g = self.coordinates(X)
        return np.argmin(((g[:, None, :] - self.style_means[None]) ** 2).sum(-1), axis=1)

    def component_means(self) -> np.ndarray:
        """``(K, M, D)``: the mean ``U a_k + V b_m`` of each (content, style) component."""
        return (self.content_means @ self.U.T)[:, None, :] + (self.style_means @ self.V.T)[None, :, :]

    def covariance(self) -> np.ndarray:
        """The (shared) covariance ``s_c² UUᵀ + s_s² VVᵀ + η² I`` of every component."""
        D = self.U.shape[0]
        return (
            self.content_std**2 * self.U @ self.U.T
            + self.style_std**2 * self.V @ self.V.T
            + self.noise_std**2 * np.eye(D)
        )


@dataclass(frozen=True)
class DigitsTruth:
    """The digits proxy's generator (private): the tints and the gamma."""

    tints: np.ndarray
    gamma: float = GAMMA


def _gmm_components(truth: LSGMMTruth, alpha: float, sigma: float, style: int | None):
    means = truth.component_means()
    means = means[:, [style], :] if style is not None else means
    mu = alpha * means.reshape(-1, means.shape[-1])
    cov = alpha**2 * truth.covariance() + sigma**2 * np.eye(mu.shape[1])
    return mu, cov


def gmm_logpdf(
    truth: LSGMMTruth, X: np.ndarray, alpha: float = 1.0, sigma: float = 0.0, style: int | None = None
) -> np.ndarray:
    """``log p_t(x)`` of the LS-GMM noised to ``x_t = α x_0 + σ ε`` (uniform weights), conditioned on the style
    component ``style`` if given; rows of ``X``."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    mu, cov = _gmm_components(truth, alpha, sigma, style)
    L = np.linalg.cholesky(cov)
    diff = X[:, None, :] - mu[None]
    sol = np.linalg.solve(L, diff.reshape(-1, X.shape[1]).T).T.reshape(diff.shape)
    logdet = 2.0 * np.sum(np.log(np.diag(L)))
    logn = -0.5 * (sol**2).sum(-1) - 0.5 * logdet - 0.5 * X.shape[1] * math.log(2 * math.pi)
    mx = logn.max(axis=1, keepdims=True)
    return mx[:, 0] + np.log(np.exp(logn - mx).mean(axis=1))


def gmm_score(
    truth: LSGMMTruth, X: np.ndarray, alpha: float = 1.0, sigma: float = 0.0, style: int | None = None
) -> np.ndarray:
    """Exact score ``∇ₓ log p_t(x)`` of the noised LS-GMM (see :func:`gmm_logpdf`):
    ``Σ_j r_j(x) · (−Σ_t⁻¹ (x − α μ_j))``, ``Σ_t = α² C + σ² I``, ``r_j`` the component posteriors."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    mu, cov = _gmm_components(truth, alpha, sigma, style)
    P = np.linalg.inv(cov)
    diff = X[:, None, :] - mu[None]  # (n, J, D)
    pd_ = diff @ P  # Σ⁻¹(x − μ_j)
    logn = -0.5 * (pd_ * diff).sum(-1)
    r = np.exp(logn - logn.max(axis=1, keepdims=True))
    r /= r.sum(axis=1, keepdims=True)
    return -(r[:, :, None] * pd_).sum(axis=1)


# ---------------------------------------------------------------------------------------------- generators
def _circle(k: int, radius: float, rng: np.random.Generator) -> np.ndarray:
    phase = rng.uniform(0.0, 2.0 * math.pi)
    a = phase + 2.0 * math.pi * np.arange(k) / k
    return radius * np.stack([np.cos(a), np.sin(a)], axis=1)


def make_lsgmm(seed: int, angle: float = 0.0) -> LSGMMTruth:
    """The LS-GMM generator of instance seed ``seed`` (module docstring)."""
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(0,)))
    W = haar(rng, DIM, 4, square_draw=True)
    U, V = W[:, :2], W[:, 2:]
    th = math.radians(angle)
    V = math.cos(th) * V + math.sin(th) * U
    return LSGMMTruth(
        U=U,
        V=V,
        content_means=_circle(K_CONTENT, CONTENT_RADIUS, rng),
        style_means=_circle(M_STYLE, STYLE_RADIUS, rng),
        angle=float(angle),
    )


def _sample(truth: LSGMMTruth, k: np.ndarray, g: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``x = Uz + Vg + η ε`` for content components ``k`` (drawn ``z``) and given style vectors ``g``."""
    z = truth.content_means[k] + truth.content_std * rng.standard_normal((len(k), 2))
    return z @ truth.U.T + g @ truth.V.T + truth.noise_std * rng.standard_normal((len(k), truth.U.shape[0]))


def _styles(truth: LSGMMTruth, m: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return truth.style_means[m] + truth.style_std * rng.standard_normal((len(m), 2))


def _other(m: np.ndarray, n_classes: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random class different from each entry of ``m``."""
    return (m + rng.integers(1, n_classes, size=len(m))) % n_classes


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data / 16.0, d.target.copy()


def tint_images(images: np.ndarray, tint_idx: np.ndarray, gamma: float = GAMMA) -> np.ndarray:
    """``(img ⊗ tint)^γ`` flattened channel-major: rows of ``images`` (``n × 64``) -> ``n × 192``."""
    t = TINTS[np.asarray(tint_idx)]  # (n, 3)
    return ((t[:, :, None] * images[:, None, :]) ** gamma).reshape(len(images), -1)


def _linear_rgb(X: np.ndarray, gamma: float = GAMMA) -> np.ndarray:
    return np.clip(X, 0.0, None).reshape(len(X), 3, -1) ** (1.0 / gamma)


def luminance(X: np.ndarray, gamma: float = GAMMA) -> np.ndarray:
    """Channel mean of ``x^{1/γ}``, each image scaled to max 1 (what the digit classifier reads)."""
    lum = _linear_rgb(X, gamma).mean(axis=1)
    return lum / np.maximum(lum.max(axis=1, keepdims=True), 1e-12)


def tint_of(X: np.ndarray, gamma: float = GAMMA) -> np.ndarray:
    """Nearest tint by chromaticity (channel sums of ``x^{1/γ}`` normalised to sum 1)."""
    s = _linear_rgb(X, gamma).sum(axis=2)
    s = s / np.maximum(s.sum(axis=1, keepdims=True), 1e-12)
    ref = TINTS / TINTS.sum(axis=1, keepdims=True)
    return np.argmin(((s[:, None, :] - ref[None]) ** 2).sum(-1), axis=1)


@functools.lru_cache(maxsize=1)
def digit_classifier():
    """The fixed digit classifier: a logistic regression (lbfgs, C = 1, 2,000 iterations) on all 1,797 greyscale
    images, each scaled to max 1; trained once per process, deterministically."""
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    imgs, y = _digits()
    Xg = imgs / np.maximum(imgs.max(axis=1, keepdims=True), 1e-12)
    with threadpool_limits(limits=1):
        return LogisticRegression(C=1.0, max_iter=2000).fit(Xg, y)


# ------------------------------------------------------------------------------------------------ problem
@dataclass(frozen=True)
class SubspaceProblem:
    """The public problem (module docstring); ``oracle`` is ``None`` except in the problem that
    :meth:`SubspaceEvaluator.reference_problem` builds for reference solvers."""

    family: str
    supervision: str
    X_train: np.ndarray
    labels: np.ndarray | None
    X_view: np.ndarray | None
    content_dim: int
    style_dim: int
    n_styles: int
    query_source: np.ndarray
    query_style: np.ndarray | None
    query_ref: np.ndarray | None
    max_steps: int = 3000
    oracle: Any = None

    PRIVATE_FIELDS = ("oracle",)

    @property
    def dim(self) -> int:
        return int(self.X_train.shape[1])


def _field_array(solution: Mapping[str, Any], name: str, shape: tuple[int, int]) -> np.ndarray:
    if name not in solution:
        raise ValueError(f"solution is missing the {name!r} entry (got keys {sorted(map(str, solution))})")
    try:
        a = np.asarray(solution[name], dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"solution[{name!r}] must be a real array of shape {shape}: {exc}") from None
    if a.shape != shape:
        raise ValueError(f"solution[{name!r}] must have shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"solution[{name!r}] must be finite ({int((~np.isfinite(a)).sum())} non-finite entries)")
    return a


def check_solution(solution: Any, D: int, content_dim: int, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """``(U_hat, transfer)`` of a solution (``U_hat`` re-orthonormalised by QR), or a ``ValueError`` naming the
    offending field."""
    if not isinstance(solution, Mapping):
        raise ValueError(f"solution must be a mapping with 'U_hat' and 'transfer', got {type(solution).__name__}")
    U_hat = _field_array(solution, "U_hat", (D, content_dim))
    dev = float(np.max(np.abs(U_hat.T @ U_hat - np.eye(content_dim))))
    if dev > ORTHO_TOL:
        raise ValueError(
            f"solution['U_hat'] must have orthonormal columns (max |U_hatᵀU_hat − I| = {dev:.3g} > {ORTHO_TOL:g})"
        )
    transfer = _field_array(solution, "transfer", (n_queries, D))
    q, _ = np.linalg.qr(U_hat)
    return q, transfer


def subspace_error(U_hat: np.ndarray, U: np.ndarray) -> float:
    """``‖ÛÛᵀ − UUᵀ‖_F / 2`` (orthonormal columns; ``∈ [0, 1]`` for 2-D subspaces)."""
    return float(np.linalg.norm(U_hat @ U_hat.T - U @ U.T) / 2.0)


class SubspaceEvaluator:
    """Private scorer (module docstring): the truth, the queries' source components / images and target styles, the
    true recolourings and the fixed classifiers (digits)."""

    def __init__(
        self,
        problem: SubspaceProblem,
        truth: LSGMMTruth | DigitsTruth,
        source_content: np.ndarray,
        target_style: np.ndarray,
        true_transfer: np.ndarray | None = None,
    ):
        self.p, self.truth = problem, truth
        self.source_content, self.target_style = np.asarray(source_content), np.asarray(target_style)
        self.true_transfer = true_transfer

    def reference_problem(self) -> SubspaceProblem:
        """The problem with the generator's truth in ``oracle``: for reference-role solvers only (the
        ``oracle-subspace`` line), never for ranked or submitted ones."""
        return dataclasses.replace(self.p, oracle=self.truth)

    def evaluate(self, solution: Any) -> dict[str, float]:
        p, nan = self.p, float("nan")
        U_hat, T = check_solution(solution, p.dim, p.content_dim, len(p.query_source))
        out = dict.fromkeys(SubspaceTask.metrics, nan)
        if isinstance(self.truth, LSGMMTruth):
            err = subspace_error(U_hat, self.truth.U)
            c_acc = float(np.mean(self.truth.nearest_content(T) == self.source_content))
            s_acc = float(np.mean(self.truth.nearest_style(T) == self.target_style))
            out.update(
                subspace_error=err,
                content_acc=c_acc,
                style_acc=s_acc,
                disentangle_score=float(np.mean([1.0 - err, c_acc, s_acc])),
            )
        else:
            d_acc = float(np.mean(digit_classifier().predict(luminance(T, self.truth.gamma)) == self.source_content))
            t_acc = float(np.mean(tint_of(T, self.truth.gamma) == self.target_style))
            out.update(
                recolor_mse=float(np.mean((T - self.true_transfer) ** 2)),
                digit_acc=d_acc,
                tint_acc=t_acc,
                disentangle_score=0.5 * (d_acc + t_acc),
            )
        return out


# --------------------------------------------------------------------------------------------------- task
class SubspaceTask:
    """``SubspaceDisentangle-v0`` (module docstring). Kwargs: ``family`` (``ls-gmm``; ``digits``), ``supervision``
    (``labels``, ``views``), ``n`` (4,000; LS-GMM training samples), ``angle`` (0; degrees in ``[0, 90)``), ``seeds``
    (dev, 0–4), ``max_steps`` (3,000; the declared iteration budget), ``max_seconds`` (60; 600 with ``paper_scale``),
    ``paper_scale`` (``False``; ``True`` sets ``n``, ``angle`` and ``family`` to the paper-scale grid unless
    given)."""

    id = TASK_ID
    primary = "disentangle_score"
    metrics = {
        "disentangle_score": "max",
        "subspace_error": "min",
        "content_acc": "max",
        "style_acc": "max",
        "recolor_mse": "min",
        "digit_acc": "max",
        "tint_acc": "max",
    }
    table_metrics = ("subspace_error", "content_acc", "style_acc", "digit_acc", "tint_acc")

    def __init__(
        self,
        family: Any = None,
        supervision: Any = ("labels", "views"),
        n: Any = None,
        angle: Any = None,
        seeds: Any = (0, 1, 2, 3, 4),
        max_steps: int = 3000,
        max_seconds: float | None = None,
        paper_scale: bool = False,
    ):
        if not isinstance(paper_scale, (bool, np.bool_)):
            raise ValueError(f"paper_scale must be True or False, got {paper_scale!r}")
        self.paper_scale = bool(paper_scale)
        if family is None:
            family = FAMILIES if self.paper_scale else ("ls-gmm",)
        self.family = check_names(family, "family", FAMILIES)
        self.supervision = check_names(supervision, "supervision", SUPERVISIONS)
        self.n = check_ints(PAPER_N if n is None and self.paper_scale else (4000 if n is None else n), "n", 16)
        self.angle = check_floats(
            PAPER_ANGLES if angle is None and self.paper_scale else (0.0 if angle is None else angle),
            "angle",
            at_least=0.0,
            below=90.0,
        )
        self.seeds = check_ints(seeds, "seeds", 0)
        self.max_steps = check_ints(max_steps, "max_steps", 1)[0]
        ms = check_floats(
            (600.0 if self.paper_scale else 60.0) if max_seconds is None else max_seconds, "max_seconds", above=0.0
        )[0]
        self.default_budget = Budget(max_seconds=ms, max_iterations=self.max_steps)

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        configs = []
        for fam in self.family:
            for sup in self.supervision:
                if fam == "digits":
                    configs.append((f"digits/{sup}", {"family": fam, "supervision": sup, "max_steps": self.max_steps}))
                    continue
                for n, a in itertools.product(self.n, self.angle):
                    configs.append(
                        (
                            f"ls-gmm/{sup}/n={n}/angle={a:g}",
                            {"family": fam, "supervision": sup, "n": n, "angle": a, "max_steps": self.max_steps},
                        )
                    )
        return split_instances(TASK_ID, split, configs, self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[SubspaceProblem, SubspaceEvaluator]:
        p = instance_params(ref, TASK_ID)
        fam = check_names(p.get("family"), "family", FAMILIES)[0]
        sup = check_names(p.get("supervision"), "supervision", SUPERVISIONS)[0]
        steps = check_ints(p.get("max_steps", self.max_steps), "max_steps", 1)[0]
        if fam == "digits":
            return _make_digits(int(ref.seed), sup, steps)
        n = check_ints(p.get("n"), "n", 16)[0]
        a = check_floats(p.get("angle", 0.0), "angle", at_least=0.0, below=90.0)[0]
        return _make_lsgmm(int(ref.seed), sup, n, a, steps)

    def report(self, runs: Any) -> str:
        """Per configuration and solver: mean (and min-max over seeds) of the score, subspace error, content / style
        accuracy (digits: digit / tint accuracy and recolouring MSE) and seconds."""
        from papergym.envs.tasks.subspace_disentangle.report import report_table

        return report_table(runs)

    def figures(self, runs: Any, folder: Any) -> list[Any]:
        """``disentangle_bars``: score and subspace error per configuration and solver (mean over seeds, min-max
        whiskers); with several ``n``: ``score_vs_n`` (PNG + SVG)."""
        from papergym.envs.tasks.subspace_disentangle.report import figures

        return figures(runs, folder)


def _make_lsgmm(seed: int, sup: str, n: int, angle: float, steps: int) -> tuple[SubspaceProblem, SubspaceEvaluator]:
    truth = make_lsgmm(seed, angle)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1, n)))
    m = rng.integers(0, M_STYLE, size=n)
    g = _styles(truth, m, rng)
    X = _sample(truth, rng.integers(0, K_CONTENT, size=n), g, rng)
    X_view = _sample(truth, rng.integers(0, K_CONTENT, size=n), g, rng) if sup == "views" else None
    qr = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
    k_src, m_src = qr.integers(0, K_CONTENT, size=N_QUERIES), qr.integers(0, M_STYLE, size=N_QUERIES)
    m_tgt = _other(m_src, M_STYLE, qr)
    Xq = _sample(truth, k_src, _styles(truth, m_src, qr), qr)
    Xref = _sample(truth, qr.integers(0, K_CONTENT, size=N_QUERIES), _styles(truth, m_tgt, qr), qr)
    problem = SubspaceProblem(
        family="ls-gmm",
        supervision=sup,
        X_train=X,
        labels=m if sup == "labels" else None,
        X_view=X_view,
        content_dim=2,
        style_dim=2,
        n_styles=M_STYLE,
        query_source=Xq,
        query_style=m_tgt if sup == "labels" else None,
        query_ref=Xref if sup == "views" else None,
        max_steps=steps,
    )
    return problem, SubspaceEvaluator(problem, truth, k_src, m_tgt)


def _make_digits(seed: int, sup: str, steps: int) -> tuple[SubspaceProblem, SubspaceEvaluator]:
    imgs, _ = _digits()
    T = len(TINTS)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(3,)))
    perm = rng.permutation(len(imgs))
    q_idx, tr_idx = perm[:N_DIGIT_QUERY_IMAGES], perm[N_DIGIT_QUERY_IMAGES:]
    img_idx = np.repeat(tr_idx, T)
    tint = np.tile(np.arange(T), len(tr_idx))
    X = tint_images(imgs[img_idx], tint)
    X_view = None
    if sup == "views":
        other = tr_idx[rng.integers(0, len(tr_idx), size=len(img_idx))]
        X_view = tint_images(imgs[other], tint)
    qi = q_idx[rng.integers(0, len(q_idx), size=N_QUERIES)]
    t_src = rng.integers(0, T, size=N_QUERIES)
    t_tgt = _other(t_src, T, rng)
    Xq = tint_images(imgs[qi], t_src)
    Xref = tint_images(imgs[tr_idx[rng.integers(0, len(tr_idx), size=N_QUERIES)]], t_tgt)
    truth = DigitsTruth(tints=TINTS.copy())
    D = X.shape[1]
    problem = SubspaceProblem(
        family="digits",
        supervision=sup,
        X_train=X,
        labels=tint if sup == "labels" else None,
        X_view=X_view,
        content_dim=D - (T - 1),
        style_dim=T - 1,
        n_styles=T,
        query_source=Xq,
        query_style=t_tgt if sup == "labels" else None,
        query_ref=Xref if sup == "views" else None,
        max_steps=steps,
    )
    _, y = _digits()
    return problem, SubspaceEvaluator(problem, truth, y[qi], t_tgt, tint_images(imgs[qi], t_tgt))


register_task(TASK_ID, SubspaceTask)
