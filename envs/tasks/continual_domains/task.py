"""``ContinualDomains-v0``: multi-domain continual learning driven by the evaluator, the setting of *Learning Expandable
and Adaptable Representations for Continual Learning* (LEAR; Yu, Liu, Ye, Bors, Hu et al., NeurIPS 2025, OpenReview
``uXKgVqYTJ2``; official code ``yrluestc/NeurIPS2025-LEAR``).

**Instances** ([design]). Source: scikit-learn's bundled ``load_digits`` (1,797 8×8 images, pixels / 16).
A fixed 297-image *source split* (:func:`source_split`: the first 297 of ``default_rng(0).permutation(1797)``)
pretrained the stand-in backbone; the other 1,500 images form the domain pool. Per instance seed the pool is split
once into a training pool (``round(train_fraction · 1500)`` images) and a test pool (the rest) [design: so no test
image appears, under any transform, in any domain's training set — otherwise a solver could undo a documented
transform and look the label up]; every domain draws ``round(train_fraction · images_per_domain)`` training images
from the training pool and the rest of its ``images_per_domain`` = 300 from the test pool (seeded, without replacement
within a domain; the same image may appear in several domains, transformed differently).

| domain | transform of ``x ∈ [0, 1]^64`` |
|---|---|
| ``original`` (D1) | none |
| ``rot90`` (D2) | the 8×8 image rotated by 90° (``np.rot90``) |
| ``invert`` (D3) | ``1 − x`` |
| ``permute`` (D4) | a fixed pixel permutation (seeded by the instance) |
| ``noise-blur`` (D5) | ``x + noise_sigma · ε`` (σ = 0.25, per image), then a 3×3 box blur (zero padding); not clipped |
| ``contrast`` (D6) | ``contrast_scale · x + contrast_shift`` = ``0.3x + 0.5`` |

``hetero=True`` appends three heterogeneous domains: scikit-learn's ``wine`` (3 classes, 13 features),
``breast-cancer`` (2, 30) and ``iris`` (3, 4), standardised over the whole data set and mapped to 64-d by a random
projection ``P ∈ ℝ^{d×64}``, entries ``N(0, 1/d)`` (seeded by the instance), ``min(images_per_domain, n)`` rows each,
split ``train_fraction`` / rest. The domain order is a seeded permutation of the instance's domains; seed 0 with
``order`` 0 keeps the listed order (D1…D6, then wine, breast-cancer, iris). ``orders`` > 0 (paper scale: 0, 1, 2)
draw further seeded orders of the same data.

**Label spaces.** The digit domains share one 10-class label space (domain-incremental, as the official code's
domain-IL setting); each heterogeneous data set has its own. Predictions are *global* labels: label space ``k`` holds
the global labels ``label_offset_k … label_offset_k + n_classes_k − 1`` (spaces in the fixed order digits, wine,
breast-cancer, iris, over those present; ``n_labels`` in all). A prediction is correct iff it equals
``label_offset + y`` of the sample's domain.

**Public problem** (:class:`ContinualProblem`, nothing private): ``n_domains`` ``T``, ``n_classes`` and
``label_offsets`` (per stage, in stream order), ``n_labels``, ``input_dim`` (64), ``epochs`` (per domain, declared: 5;
10 at paper scale — the solvers' default), ``test_batch_size`` (32), ``backbone`` (:class:`Backbone`: the shipped
weights ``W1`` 128×64, ``b1``, ``W2`` 128×128, ``b2``; features ``relu(W2 relu(W1 x + b1) + b2)``; see
``weights/continual_backbone.md``) and ``stream`` (:class:`Stream`), callables bound to the evaluator's state — the
only way data reaches the solver (served over the sandbox channel to submissions; calls go solver → evaluator):

| call | returns / does |
|---|---|
| ``stream.next_domain()`` | ``{"t", "X", "y", "n_classes", "label_offset"}``: stage ``t`` (1-based), the next domain's training inputs (``n × 64``) and *local* labels (``0 … n_classes − 1``); ``None`` once all ``T`` were handed out and answered (it then opens the per-sample pass) |
| ``stream.test_batches()`` | the current pass's test inputs as a list of arrays (``b × 64``): after stage ``t``, protocol (i) — the test set of **every** domain, cut into domain-homogeneous batches of ``test_batch_size``, the batches shuffled (seeded); in the final pass, protocol (ii) — every test sample alone (``1 × 64``), shuffled. No labels, no domain ids; repeated calls return the same pass |
| ``stream.answer(labels, experts=None)`` | records the predictions of the current pass: ``labels`` one integer array per batch (its length, global labels in ``[0, n_labels)``); ``experts`` optional, one entry per batch: an int (one expert for the batch) or an int array of the batch's length, each in ``[0, t)`` (the stage whose expert was used; ``[0, T)`` in the final pass). Returns ``{"stage", "next"}`` |
| ``stream.status()`` | ``{"stage", "n_domains", "phase"}`` with ``phase`` one of ``train`` (call ``next_domain``), ``test`` (answer the stage), ``final`` (answer the per-sample pass), ``done`` |

The evaluator refuses (``StreamError``, a ``ValueError``, naming what to do) ``next_domain()`` while the current
stage's test pass is unanswered, ``test_batches()`` before the first domain or after the end, ``answer()`` before
``test_batches()`` or twice for one pass, and malformed answers (not a list of one entry per batch, wrong lengths,
non-integers, NaN, out-of-range labels or experts; ``ValueError`` naming ``labels[i]`` / ``experts[i]``; nothing is
recorded then and the pass can be answered again).

[design, deviation from "the test set of every domain *seen so far*" of the task design] Every pass shows the test sets
of all ``T`` domains, not only those learned: with a growing set, the batches that first appear after stage ``t`` are
exactly domain ``t``'s, so a solver could hash its inputs and recover task identity perfectly at test time. Showing
all from the first pass removes that channel and gives the upper triangle of the accuracy matrix (zero-shot accuracy
on domains not yet learned), hence a clean forward transfer. One solve yields both protocols: ``T`` protocol-(i)
passes, then one protocol-(ii) pass after the last domain.

**Solution**: what ``solve`` returns, a mapping; every score comes from the evaluator's own records of the stream,
nothing the solver returns is scored. In particular the parameter count a solver may declare (the bundled solvers
return ``params_added``, one number per domain) is not published: the evaluator cannot count the parameters of a
stateful learner that runs in another process, and a declared count is not a measurement. What the evaluator counts
instead is ``experts_used``: the distinct experts the recorded answers of the last protocol-(i) pass routed to. An
incomplete stream is a ``ValueError`` naming the first missing stage (or the per-sample pass).

**Metrics** (``a_{l,j}`` = accuracy on domain ``j`` after learning ``l`` domains, stages in stream order;
the domain order differs between seeds, so matrices are averaged by stage):

| metric | dir | definition |
|---|---|---|
| ``final_acc`` (primary) | max | ``A_T = (1/T) Σ_j a_{T,j}``, protocol (i) |
| ``final_error`` | min | ``1 − final_acc`` (the board's performance-profile cost) |
| ``avg_inc_acc`` | max | ``(1/T) Σ_l (1/l) Σ_{j≤l} a_{l,j}`` |
| ``forgetting`` | min | mean over ``j < T`` of ``max_{j≤l<T} a_{l,j} − a_{T,j}`` |
| ``bwt`` | max | backward transfer, mean over ``j < T`` of ``a_{T,j} − a_{j,j}`` (Lopez-Paz & Ranzato 2017) |
| ``fwt`` | max | forward transfer, mean over ``j ≥ 2`` of ``a_{j−1,j} − 1/n_classes_j`` (zero-shot accuracy just before learning ``j`` against chance; GEM's reference ``b_j`` of a random model is chance) |
| ``selection_acc`` | max | last protocol-(i) pass: fraction of batches (of samples, where experts are given per sample) routed to their own domain's expert; NaN without experts |
| ``selection_acc_sample`` | max | the same in the per-sample pass |
| ``experts_used`` | min | last protocol-(i) pass: the number of distinct experts the answers routed to, counted by the evaluator (NaN without experts) |
| ``final_acc_sample`` | max | ``A_T`` under protocol (ii) (the per-sample pass) |
| ``a_{l}_{j}`` | max | the accuracy matrix, ``1 ≤ l, j ≤ T_max`` (NaN beyond the instance's ``T``): for ``report`` / ``figures`` |

Budget: ``max_seconds`` = 60 for the whole sequence (600 at paper scale), wall time of the solve,
including the calls to the stream; work = training samples processed, declared by the solvers
(``report(summary, work=...)`` once the stream is complete).

**Sizes**: default ``hetero=False`` (6 digit domains), 5 epochs, order 0; ``paper_scale=True``: ``hetero`` both,
``orders`` 0–2, 10 epochs, 600 s. Instance names ``digits/T=6/s0``, ``hetero/T=9/s0``, ``digits/T=6/order=1/s0``.

**Stand-in backbone**: MLP 64 → 128 → 128 (ReLU) with a 10-way head, trained on the source split by
:func:`train_backbone` (deterministic; ``benchmarks/train_continual_backbone.py`` rewrites the shipped
``weights/continual_backbone.npz`` and its card); the head is discarded.

**Measured** (``papergym bench ContinualDomains-v0``, dev seeds 0–4, 2 shared cores): final accuracy on
``digits/T=6`` — lear 0.604, experts-only 0.570, joint (reference) 0.583, er 0.353, lwf 0.309, finetune 0.307,
ewc 0.306; on ``hetero/T=9`` — lear 0.686, experts-only 0.668, joint 0.603, er 0.350, finetune 0.170, lwf 0.169, ewc
0.143. Selection accuracy of lear 0.83: every misrouted batch is a ``noise-blur`` batch sent to the ``original``
expert (35 of 35 over the five dev seeds; experts-only the same). The blurred digits lie inside the broader
Gaussian of the original ones, so their Mahalanobis distance to it is smaller than to their own (seed 0: 3.73
against 3.92) — a property of the official code's distance rule, not of the batch granularity (the whole test set
averages the same way). The log-likelihood rule (``selection_score="loglik"``) routes every batch right (1.00) but
leaves the final accuracy (0.606) and lear's forgetting (0.023) unchanged: the original expert classifies blurred
digits as well as their own does, and lear's forgetting is the drift of its trained global/local layers under the
old experts (experts-only, whose backbone is frozen, forgets 0.008 with the distance rule and 0.000 with the
log-likelihood rule). Solves take 1–8 s. The paper's margin over sequential baselines holds; LEAR's gain over
experts without adaptation (experts-only) is small at this scale (inside the seeds' spread).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""  # noqa: E501 - markdown table rows cannot wrap

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
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
from papergym.envs.tasks.sealed import seal
from papergym.torch_threads import torch_threads

__all__ = [
    "ContinualTask",
    "ContinualProblem",
    "ContinualEvaluator",
    "ContinualStream",
    "Backbone",
    "Stream",
    "StreamError",
    "Domain",
    "make_domains",
    "load_backbone",
    "train_backbone",
    "backbone_features",
    "source_split",
    "accuracy_metrics",
    "DIGIT_DOMAINS",
    "HETERO_DOMAINS",
    "WEIGHTS_PATH",
]

TASK_ID = "ContinualDomains-v0"
DIGIT_DOMAINS = ("original", "rot90", "invert", "permute", "noise-blur", "contrast")
HETERO_DOMAINS = ("wine", "breast-cancer", "iris")
LABEL_SPACES = ("digits", "wine", "breast-cancer", "iris")  # fixed order of the global label blocks
N_TEST_SEEDS = 5
SOURCE_SIZE = 297
SOURCE_SEED = 0
INPUT_DIM = 64
HIDDEN = 128
WEIGHTS_PATH = Path(__file__).with_name("weights") / "continual_backbone.npz"


class StreamError(ValueError):
    """A call of the stream out of protocol order (the message says what to call instead)."""


# ------------------------------------------------------------------------------------------------- data
@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data / 16.0, d.target.astype(np.int64)


def source_split() -> tuple[np.ndarray, np.ndarray]:
    """``(source, pool)`` image indices: the fixed 297-image pretraining split and the 1,500-image domain pool."""
    perm = np.random.default_rng(SOURCE_SEED).permutation(1797)
    return np.sort(perm[:SOURCE_SIZE]), np.sort(perm[SOURCE_SIZE:])


@functools.lru_cache(maxsize=4)
def _tabular(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets

    loader = {"wine": datasets.load_wine, "breast-cancer": datasets.load_breast_cancer, "iris": datasets.load_iris}
    d = loader[name]()
    X = np.asarray(d.data, dtype=float)
    X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    return X, np.asarray(d.target, dtype=np.int64)


def _box_blur(X: np.ndarray) -> np.ndarray:
    from scipy.ndimage import uniform_filter

    return uniform_filter(X.reshape(-1, 8, 8), size=(1, 3, 3), mode="constant").reshape(len(X), -1)


@dataclass(frozen=True)
class Domain:
    """One domain of an instance (private): name, label space, training and test data (local labels)."""

    name: str
    space: str
    n_classes: int
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def _spawn(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=tuple(int(k) for k in key)))


def make_domains(
    seed: int,
    names: Sequence[str],
    *,
    images_per_domain: int = 300,
    train_fraction: float = 0.7,
    noise_sigma: float = 0.25,
    contrast_scale: float = 0.3,
    contrast_shift: float = 0.5,
    order: int = 0,
) -> list[Domain]:
    """The domains of instance seed ``seed`` in stream order (module docstring)."""
    imgs, y = _digits()
    _, pool = source_split()
    rng = _spawn(seed, 0)
    pool = pool[rng.permutation(len(pool))]
    n_pool_train = int(round(train_fraction * len(pool)))
    train_pool, test_pool = pool[:n_pool_train], pool[n_pool_train:]
    n_tr = int(round(train_fraction * images_per_domain))
    n_te = images_per_domain - n_tr
    if n_tr < 1 or n_te < 1 or n_tr > len(train_pool) or n_te > len(test_pool):
        raise ValueError(
            f"images_per_domain = {images_per_domain} with train_fraction = {train_fraction} needs "
            f"1..{len(train_pool)} training and 1..{len(test_pool)} test images per domain"
        )
    out = []
    for k, name in enumerate(names):
        r = _spawn(seed, 1, k, DIGIT_DOMAINS.index(name) if name in DIGIT_DOMAINS else 10 + HETERO_DOMAINS.index(name))
        if name in DIGIT_DOMAINS:
            tr = train_pool[r.choice(len(train_pool), n_tr, replace=False)]
            te = test_pool[r.choice(len(test_pool), n_te, replace=False)]
            Xtr, Xte = imgs[tr].copy(), imgs[te].copy()
            if name == "rot90":
                Xtr, Xte = (np.rot90(X.reshape(-1, 8, 8), axes=(1, 2)).reshape(len(X), -1).copy() for X in (Xtr, Xte))
            elif name == "invert":
                Xtr, Xte = 1.0 - Xtr, 1.0 - Xte
            elif name == "permute":
                perm = _spawn(seed, 2).permutation(INPUT_DIM)
                Xtr, Xte = Xtr[:, perm], Xte[:, perm]
            elif name == "noise-blur":
                nr = _spawn(seed, 3)
                Xtr = _box_blur(Xtr + noise_sigma * nr.standard_normal(Xtr.shape))
                Xte = _box_blur(Xte + noise_sigma * nr.standard_normal(Xte.shape))
            elif name == "contrast":
                Xtr, Xte = contrast_scale * Xtr + contrast_shift, contrast_scale * Xte + contrast_shift
            out.append(Domain(name, "digits", 10, Xtr, y[tr].copy(), Xte, y[te].copy()))
        else:
            Xd, yd = _tabular(name)
            n = min(images_per_domain, len(Xd))
            idx = r.permutation(len(Xd))[:n]
            m_tr = int(round(train_fraction * n))
            P = _spawn(seed, 4, HETERO_DOMAINS.index(name)).standard_normal((Xd.shape[1], INPUT_DIM))
            P /= math.sqrt(Xd.shape[1])
            Z = Xd[idx] @ P
            out.append(Domain(name, name, int(yd.max()) + 1, Z[:m_tr], yd[idx[:m_tr]], Z[m_tr:], yd[idx[m_tr:]]))
    if seed != 0 or order != 0:
        perm = _spawn(seed, 5, order).permutation(len(out))
        out = [out[i] for i in perm]
    return out


# --------------------------------------------------------------------------------------------- backbone
@dataclass(frozen=True)
class Backbone:
    """The stand-in backbone's weights (public): ``features(x) = relu(W2 relu(W1 x + b1) + b2)``."""

    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray


def backbone_features(bb: Any, X: np.ndarray, layer: int = 2) -> np.ndarray:
    """Backbone features of the rows of ``X`` (``layer`` 1: the frozen hidden layer, 2: the output features)."""
    h = np.maximum(np.asarray(X, dtype=float) @ np.asarray(bb.W1).T + np.asarray(bb.b1), 0.0)
    if layer == 1:
        return h
    return np.maximum(h @ np.asarray(bb.W2).T + np.asarray(bb.b2), 0.0)


@functools.lru_cache(maxsize=1)
def _backbone_arrays() -> dict[str, np.ndarray]:
    with np.load(WEIGHTS_PATH) as z:
        return {k: z[k].astype(np.float64) for k in ("W1", "b1", "W2", "b2")}


def load_backbone() -> Backbone:
    """The shipped stand-in backbone (``weights/continual_backbone.npz``; numpy only)."""
    a = _backbone_arrays()
    return Backbone(**{k: v.copy() for k, v in a.items()})


def train_backbone(
    seed: int = 0, epochs: int = 300, lr: float = 1e-3, batch_size: int = 32, weight_decay: float = 1e-4
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Train the stand-in backbone on the source split, deterministically (torch, one thread, a seeded generator):
    MLP 64 → 128 → 128 → 10 (ReLU), Adam (``lr``, ``weight_decay``), cross-entropy, ``epochs`` passes over the 297
    images in seeded mini-batches; PyTorch's default initialisation drawn from the generator. Returns the weights
    (float32; the 10-way head is dropped) and ``info`` (accuracy on the source split and on the 1,500-image pool)."""
    import torch

    imgs, y = _digits()
    src, pool = source_split()
    with torch_threads(1):
        gen = torch.Generator().manual_seed(int(seed))
        rng = np.random.default_rng(seed)
        layers = [torch.nn.Linear(INPUT_DIM, HIDDEN), torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.Linear(HIDDEN, 10)]
        with torch.no_grad():
            for lin in layers:
                b = 1.0 / math.sqrt(lin.in_features)
                lin.weight.uniform_(-b, b, generator=gen)
                lin.bias.uniform_(-b, b, generator=gen)
        net = torch.nn.Sequential(layers[0], torch.nn.ReLU(), layers[1], torch.nn.ReLU(), layers[2])
        opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
        X = torch.tensor(imgs[src], dtype=torch.float32)
        Y = torch.tensor(y[src])
        for _ in range(epochs):
            perm = rng.permutation(len(src))
            for i in range(0, len(src), batch_size):
                b = torch.as_tensor(perm[i : i + batch_size])
                opt.zero_grad()
                torch.nn.functional.cross_entropy(net(X[b]), Y[b]).backward()
                opt.step()
        with torch.no_grad():
            acc_src = float((net(X).argmax(1) == Y).float().mean())
            acc_pool = float(
                (net(torch.tensor(imgs[pool], dtype=torch.float32)).argmax(1) == torch.tensor(y[pool])).float().mean()
            )
        w = {
            "W1": layers[0].weight.detach().numpy().astype(np.float32).copy(),
            "b1": layers[0].bias.detach().numpy().astype(np.float32).copy(),
            "W2": layers[1].weight.detach().numpy().astype(np.float32).copy(),
            "b2": layers[1].bias.detach().numpy().astype(np.float32).copy(),
        }
    info = {
        "seed": seed,
        "epochs": epochs,
        "lr": lr,
        "batch_size": batch_size,
        "weight_decay": weight_decay,
        "source_accuracy": acc_src,
        "pool_accuracy": acc_pool,
        "n_source": len(src),
        "n_pool": len(pool),
    }
    return w, info


# ------------------------------------------------------------------------------------------------ stream
@dataclass(frozen=True)
class Stream:
    """``problem.stream``: calls into the evaluator's :class:`ContinualStream` (module docstring)."""

    next_domain: Callable[[], Any]
    test_batches: Callable[[], list]
    answer: Callable[..., dict]
    status: Callable[[], dict]


@dataclass(frozen=True)
class ContinualProblem:
    """The public problem (module docstring)."""

    n_domains: int
    n_classes: tuple[int, ...]
    label_offsets: tuple[int, ...]
    n_labels: int
    input_dim: int
    epochs: int
    test_batch_size: int
    backbone: Backbone
    stream: Stream

    PRIVATE_FIELDS = ()


def _int_array(v: Any, name: str, length: int, low: int, high: int) -> np.ndarray:
    """An integer array of ``length`` entries in ``[low, high)``, or a ValueError naming ``name``."""
    if isinstance(v, (str, bytes, Mapping)) or v is None:
        raise ValueError(f"{name} must be a sequence of {length} integers, got {type(v).__name__}")
    try:
        a = np.asarray(v)
    except Exception as exc:  # noqa: BLE001
        raise ValueError(f"{name} must be a sequence of {length} integers: {exc}") from None
    if a.ndim != 1 or len(a) != length:
        raise ValueError(f"{name} must have shape ({length},), got {a.shape}")
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite integers ({int((~np.isfinite(a)).sum())} non-finite entries)")
        if not np.all(a == np.round(a)):
            raise ValueError(f"{name} must hold integers, got non-integral values")
    elif a.dtype.kind not in "iu" and not (
        a.dtype.kind == "O" and all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in a)
    ):
        raise ValueError(f"{name} must hold integers, got dtype {a.dtype}")
    a = a.astype(np.int64)
    if length and (a.min() < low or a.max() >= high):
        bad = a[(a < low) | (a >= high)][0]
        raise ValueError(f"{name} must lie in [{low}, {high}), got {int(bad)}")
    return a


class ContinualStream:
    """The evaluator's side of the stream (module docstring): hands out domains, presents test passes, records the
    answers. ``records[k]`` for pass ``k`` (``1 … T``; ``T + 1`` = the per-sample pass): per presented sample its
    stage index ``j`` (0-based), true global label, prediction, routed expert (``−1`` if not given) and batch id."""

    def __init__(self, domains: Sequence[Domain], offsets: Sequence[int], seed: int, batch_size: int):
        self.domains, self.offsets = list(domains), [int(o) for o in offsets]
        self.T, self.seed, self.batch_size = len(domains), int(seed), int(batch_size)
        self.stage, self.phase = 0, "train"
        self._pass: list[tuple[int, np.ndarray]] | None = None
        self.records: dict[int, dict[str, Any]] = {}
        self.handed_out = 0  # training samples handed out

    # -- calls served to the solver
    def status(self) -> dict[str, Any]:
        return {"stage": self.stage, "n_domains": self.T, "phase": self.phase}

    def next_domain(self) -> dict[str, Any] | None:
        if self.phase == "test":
            raise StreamError(
                f"stage {self.stage}'s test batches are not answered yet: call test_batches() and "
                "answer() before next_domain()"
            )
        if self.phase in ("final", "done"):
            return None
        d = self.domains[self.stage]
        self.stage += 1
        self.phase, self._pass = "test", None
        self.handed_out += len(d.y_train)
        return {
            "t": self.stage,
            "X": d.X_train.copy(),
            "y": d.y_train.copy(),
            "n_classes": d.n_classes,
            "label_offset": self.offsets[self.stage - 1],
        }

    def test_batches(self) -> list[np.ndarray]:
        if self.phase == "train":
            if self.stage == 0:
                raise StreamError("no domain was learned yet: call next_domain() first")
            raise StreamError(f"stage {self.stage}'s test batches were already answered: call next_domain()")
        if self.phase == "done":
            raise StreamError("the stream is finished: every pass was answered")
        if self._pass is None:
            self._pass = self._make_pass()
        return [self.domains[j].X_test[rows].copy() for j, rows in self._pass]

    def answer(self, labels: Any, experts: Any = None) -> dict[str, Any]:
        if self.phase == "train" and self.stage == 0:
            raise StreamError("no domain was learned yet: call next_domain() first")
        if self.phase in ("train", "done"):
            raise StreamError(
                "this pass was already answered"
                + (": call next_domain()" if self.phase == "train" else "; the stream is finished")
            )
        if self._pass is None:
            raise StreamError("call test_batches() before answer()")
        batches = self._pass
        n_exp = self.stage if self.phase == "test" else self.T
        n_labels = max(o + d.n_classes for o, d in zip(self.offsets, self.domains))
        if isinstance(labels, (str, bytes, Mapping, np.ndarray)) or not isinstance(labels, Sequence):
            raise ValueError(
                f"labels must be a list with one integer array per test batch ({len(batches)}), got "
                f"{type(labels).__name__}"
            )
        if len(labels) != len(batches):
            raise ValueError(f"labels must have one entry per test batch: {len(batches)}, got {len(labels)}")
        if experts is not None and (
            isinstance(experts, (str, bytes, Mapping, np.ndarray)) or not isinstance(experts, Sequence)
        ):
            raise ValueError(
                f"experts must be None or a list with one entry per test batch, got {type(experts).__name__}"
            )
        if experts is not None and len(experts) != len(batches):
            raise ValueError(f"experts must have one entry per test batch: {len(batches)}, got {len(experts)}")
        preds, exps, per_batch = [], [], True
        for i, (_j, rows) in enumerate(batches):
            preds.append(_int_array(labels[i], f"labels[{i}]", len(rows), 0, n_labels))
            if experts is not None:
                e = experts[i]
                if isinstance(e, numbers.Integral) and not isinstance(e, bool):
                    exps.append(np.full(len(rows), int(_int_array([e], f"experts[{i}]", 1, 0, n_exp)[0])))
                else:
                    exps.append(_int_array(e, f"experts[{i}]", len(rows), 0, n_exp))
                    per_batch = False
        stage_of = np.concatenate([np.full(len(rows), j) for j, rows in batches])
        truth = np.concatenate([self.domains[j].y_test[rows] + self.offsets[j] for j, rows in batches])
        key = self.stage if self.phase == "test" else self.T + 1
        self.records[key] = {
            "stage_of": stage_of,
            "truth": truth,
            "pred": np.concatenate(preds),
            "expert": np.concatenate(exps) if experts is not None else None,
            "batch": np.concatenate([np.full(len(rows), i) for i, (_, rows) in enumerate(batches)]),
            "per_batch": per_batch if experts is not None else None,
        }
        if self.phase == "test":
            self.phase = "train" if self.stage < self.T else "final"
        else:
            self.phase = "done"
        self._pass = None
        return {"stage": self.stage, "next": self.phase}

    # -- presentation
    def _make_pass(self) -> list[tuple[int, np.ndarray]]:
        final = self.phase == "final"
        rng = _spawn(self.seed, 6, self.stage + (1 if final else 0), int(final))
        chunks: list[tuple[int, np.ndarray]] = []
        for j, d in enumerate(self.domains):
            rows = rng.permutation(len(d.y_test))
            step = 1 if final else self.batch_size
            chunks += [(j, rows[i : i + step]) for i in range(0, len(rows), step)]
        return [chunks[i] for i in rng.permutation(len(chunks))]


# --------------------------------------------------------------------------------------------- evaluator
def accuracy_metrics(A: np.ndarray, n_classes: Sequence[int]) -> dict[str, float]:
    """The matrix metrics of an accuracy matrix ``A[l, j]`` (row ``l``: after learning ``l + 1`` domains; every
    entry present, the upper triangle the zero-shot accuracies): ``final_acc``, ``avg_inc_acc``, ``forgetting``,
    ``bwt``, ``fwt`` (module docstring)."""
    A = np.asarray(A, dtype=float)
    T = A.shape[0]
    out = {"final_acc": float(A[-1].mean()), "avg_inc_acc": float(np.mean([A[l, : l + 1].mean() for l in range(T)]))}
    if T > 1:
        out["forgetting"] = float(np.mean([A[j : T - 1, j].max() - A[T - 1, j] for j in range(T - 1)]))
        out["bwt"] = float(np.mean([A[T - 1, j] - A[j, j] for j in range(T - 1)]))
        out["fwt"] = float(np.mean([A[j - 1, j] - 1.0 / n_classes[j] for j in range(1, T)]))
    else:
        out["forgetting"] = out["bwt"] = out["fwt"] = math.nan
    return out


def _experts_used(rec: Mapping[str, Any]) -> float:
    """The number of distinct experts the answers of a pass routed to, counted from the recorded answers (NaN
    without experts)."""
    return math.nan if rec["expert"] is None else float(len(np.unique(rec["expert"])))


def _selection(rec: Mapping[str, Any]) -> float:
    if rec["expert"] is None:
        return math.nan
    hit = rec["expert"] == rec["stage_of"]
    if rec["per_batch"]:
        return float(np.mean([hit[rec["batch"] == b][0] for b in np.unique(rec["batch"])]))
    return float(hit.mean())


class ContinualEvaluator:
    """Private scorer (module docstring): reads the stream's records."""

    def __init__(self, stream: ContinualStream, t_max: int):
        self.stream, self.t_max = stream, int(t_max)

    def accuracy_matrix(self) -> np.ndarray:
        s = self.stream
        for k in range(1, s.T + 1):
            if k not in s.records:
                raise ValueError(
                    f"incomplete stream: stage {k} of {s.T} was never answered (the solver must drive "
                    "next_domain / test_batches / answer to the end)"
                )
        if s.T + 1 not in s.records:
            raise ValueError(
                f"incomplete stream: the per-sample pass after stage {s.T} was never answered (after "
                "the last stage, next_domain() returns None; then answer test_batches() once more)"
            )
        A = np.empty((s.T, s.T))
        for k in range(1, s.T + 1):
            r = s.records[k]
            for j in range(s.T):
                m = r["stage_of"] == j
                A[k - 1, j] = float(np.mean(r["pred"][m] == r["truth"][m]))
        return A

    def evaluate(self, solution: Any) -> dict[str, float]:
        s = self.stream
        if not isinstance(solution, Mapping):
            raise ValueError(
                f"solution must be a mapping (e.g. {{'params_added': [...]}}), got {type(solution).__name__}"
            )
        A = self.accuracy_matrix()
        ncl = [d.n_classes for d in s.domains]
        out = accuracy_metrics(A, ncl)
        fin = s.records[s.T + 1]
        out["final_error"] = 1.0 - out["final_acc"]
        out["final_acc_sample"] = float(
            np.mean(
                [np.mean(fin["pred"][fin["stage_of"] == j] == fin["truth"][fin["stage_of"] == j]) for j in range(s.T)]
            )
        )
        out["selection_acc"] = _selection(s.records[s.T])
        out["selection_acc_sample"] = _selection(fin)
        out["experts_used"] = _experts_used(s.records[s.T])
        for l in range(self.t_max):
            for j in range(self.t_max):
                out[f"a_{l + 1}_{j + 1}"] = float(A[l, j]) if l < s.T and j < s.T else math.nan
        return out


# ------------------------------------------------------------------------------------------------- task
BASE_METRICS = {
    "final_acc": "max",
    "final_error": "min",
    "avg_inc_acc": "max",
    "forgetting": "min",
    "bwt": "max",
    "fwt": "max",
    "selection_acc": "max",
    "selection_acc_sample": "max",
    "experts_used": "min",
    "final_acc_sample": "max",
}


def _bools(v: Any, name: str) -> tuple[bool, ...]:
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    if not vals or any(not isinstance(x, (bool, np.bool_)) for x in vals):
        raise ValueError(f"{name} must be True, False or a list of them, got {v!r}")
    return tuple(dict.fromkeys(bool(x) for x in vals))


class ContinualTask:
    """``ContinualDomains-v0`` (module docstring). Kwargs: ``hetero`` (``False``; ``True`` or ``[False, True]`` adds
    the three heterogeneous domains), ``domains`` (the digit domains, default all six, in order), ``orders`` (0;
    further seeded domain orders), ``epochs`` (5; 10 with ``paper_scale``), ``images_per_domain`` (300),
    ``train_fraction`` (0.7), ``test_batch_size`` (32), ``noise_sigma`` (0.25), ``contrast_scale`` (0.3),
    ``contrast_shift`` (0.5), ``seeds`` (dev, 0–4), ``max_seconds`` (60; 600 with ``paper_scale``), ``paper_scale``."""

    id = TASK_ID
    primary = "final_acc"
    table_metrics = ("avg_inc_acc", "forgetting", "bwt", "selection_acc", "final_acc_sample", "experts_used")

    def __init__(
        self,
        hetero: Any = None,
        domains: Any = DIGIT_DOMAINS,
        orders: Any = None,
        epochs: Any = None,
        images_per_domain: int = 300,
        train_fraction: float = 0.7,
        test_batch_size: int = 32,
        noise_sigma: float = 0.25,
        contrast_scale: float = 0.3,
        contrast_shift: float = 0.5,
        seeds: Any = (0, 1, 2, 3, 4),
        max_seconds: float | None = None,
        paper_scale: bool = False,
    ):
        if not isinstance(paper_scale, (bool, np.bool_)):
            raise ValueError(f"paper_scale must be True or False, got {paper_scale!r}")
        self.paper_scale = bool(paper_scale)
        self.hetero = _bools(
            (False, True) if hetero is None and self.paper_scale else (False if hetero is None else hetero), "hetero"
        )
        self.domains = check_names(domains, "domains", DIGIT_DOMAINS)
        self.orders = check_ints(
            (0, 1, 2) if orders is None and self.paper_scale else (0 if orders is None else orders), "orders", 0
        )
        self.epochs = check_ints((10 if self.paper_scale else 5) if epochs is None else epochs, "epochs", 1)[0]
        self.images_per_domain = check_ints(images_per_domain, "images_per_domain", 4)[0]
        self.train_fraction = check_floats(train_fraction, "train_fraction", above=0.0, below=1.0)[0]
        self.test_batch_size = check_ints(test_batch_size, "test_batch_size", 1)[0]
        self.noise_sigma = check_floats(noise_sigma, "noise_sigma", at_least=0.0)[0]
        self.contrast_scale = check_floats(contrast_scale, "contrast_scale")[0]
        self.contrast_shift = check_floats(contrast_shift, "contrast_shift")[0]
        self.seeds = check_ints(seeds, "seeds", 0)
        ms = check_floats(
            (600.0 if self.paper_scale else 60.0) if max_seconds is None else max_seconds, "max_seconds", above=0.0
        )[0]
        self.default_budget = Budget(max_seconds=ms)
        n_tr = int(round(self.train_fraction * self.images_per_domain))
        if (
            n_tr < 1
            or n_tr >= self.images_per_domain
            or n_tr > round(self.train_fraction * 1500)
            or self.images_per_domain - n_tr > 1500 - round(self.train_fraction * 1500)
        ):
            raise ValueError(
                f"images_per_domain = {self.images_per_domain} with train_fraction = "
                f"{self.train_fraction} leaves no training or no test image, or exceeds the 1,500-image "
                "pool"
            )
        self.t_max = len(self.domains) + (len(HETERO_DOMAINS) if True in self.hetero else 0)
        self.metrics = dict(BASE_METRICS)
        self.metrics.update({f"a_{l}_{j}": "max" for l in range(1, self.t_max + 1) for j in range(1, self.t_max + 1)})

    def _configs(self) -> list[tuple[str, dict[str, Any]]]:
        common = {
            "epochs": self.epochs,
            "images_per_domain": self.images_per_domain,
            "train_fraction": self.train_fraction,
            "test_batch_size": self.test_batch_size,
            "noise_sigma": self.noise_sigma,
            "contrast_scale": self.contrast_scale,
            "contrast_shift": self.contrast_shift,
        }
        out = []
        for h in self.hetero:
            names = list(self.domains) + (list(HETERO_DOMAINS) if h else [])
            for k in self.orders:
                key = f"{'hetero' if h else 'digits'}/T={len(names)}" + (f"/order={k}" if k else "")
                out.append((key, {"domains": names, "order": k, **common}))
        return out

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        return split_instances(TASK_ID, split, self._configs(), self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[ContinualProblem, ContinualEvaluator]:
        p = instance_params(ref, TASK_ID)
        names = check_names(p.get("domains", list(self.domains)), "domains", DIGIT_DOMAINS + HETERO_DOMAINS)
        order = check_ints(p.get("order", 0), "order", 0)[0]
        epochs = check_ints(p.get("epochs", self.epochs), "epochs", 1)[0]
        bs = check_ints(p.get("test_batch_size", self.test_batch_size), "test_batch_size", 1)[0]
        domains = make_domains(
            int(ref.seed),
            names,
            order=order,
            images_per_domain=check_ints(p.get("images_per_domain", self.images_per_domain), "images_per_domain", 4)[0],
            train_fraction=check_floats(
                p.get("train_fraction", self.train_fraction), "train_fraction", above=0.0, below=1.0
            )[0],
            noise_sigma=check_floats(p.get("noise_sigma", self.noise_sigma), "noise_sigma", at_least=0.0)[0],
            contrast_scale=check_floats(p.get("contrast_scale", self.contrast_scale), "contrast_scale")[0],
            contrast_shift=check_floats(p.get("contrast_shift", self.contrast_shift), "contrast_shift")[0],
        )
        spaces = [s for s in LABEL_SPACES if any(d.space == s for d in domains)]
        base, off = {}, 0
        for s in spaces:
            base[s] = off
            off += next(d.n_classes for d in domains if d.space == s)
        offsets = [base[d.space] for d in domains]
        stream = ContinualStream(domains, offsets, int(ref.seed), bs)
        problem = ContinualProblem(
            n_domains=len(domains),
            n_classes=tuple(d.n_classes for d in domains),
            label_offsets=tuple(offsets),
            n_labels=off,
            input_dim=INPUT_DIM,
            epochs=epochs,
            test_batch_size=bs,
            backbone=load_backbone(),
            stream=Stream(
                next_domain=seal(stream.next_domain, "stream.next_domain"),
                test_batches=seal(stream.test_batches, "stream.test_batches"),
                answer=seal(stream.answer, "stream.answer"),
                status=seal(stream.status, "stream.status"),
            ),
        )
        return problem, ContinualEvaluator(stream, max(self.t_max, len(domains)))

    def report(self, runs: Any) -> str:
        """Per configuration and solver: final accuracy (both protocols), average incremental accuracy, forgetting,
        backward / forward transfer, selection accuracy, experts used and seconds (mean over seeds)."""
        from papergym.envs.tasks.continual_domains.report import report_table

        return report_table(runs)

    def figures(self, runs: Any, folder: Any) -> list[Any]:
        """``accuracy_matrix_<config>``: the accuracy matrix (stage learned × stage evaluated; mean over seeds) as
        a heat map per solver (PNG + SVG)."""
        from papergym.envs.tasks.continual_domains.report import figures

        return figures(runs, folder)


register_task(TASK_ID, ContinualTask)
