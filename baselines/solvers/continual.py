"""Baselines and the reference line of ``ContinualDomains-v0`` (torch extra, imported
lazily: importing this module does not import torch).

Every learner shares LEAR's machinery (:class:`papergym.agents.solvers.lear.StreamLearner`: the stand-in backbone
with its first layer frozen and its second layer trainable, SGD without momentum, ``lr`` 0.03, mini-batches of 32,
``epochs`` per domain from the problem, the seeded generators, the time guard) and is driven through the evaluator's
stream by :func:`~papergym.agents.solvers.lear.run_stream`.

Shared head (``finetune``, ``ewc``, ``lwf``, ``er``, ``joint``): one linear head ``128 → n_labels`` over the global
labels. On D1–D6 all domains share the 10 digit logits (domain-incremental); a heterogeneous domain's label space
gets its logits when it first appears (implemented as masking: logits of label spaces not seen yet are excluded from
the softmax and from prediction, so their rows keep their fresh initialisation until then — the same as appending
freshly initialised logits). ``params_added``: the head's rows (weights + bias) that a domain unmasks.

* ``finetune`` — cross-entropy on the current domain only; no protection.
* ``ewc`` — elastic weight consolidation (Kirkpatrick et al., PNAS 2017): after each domain the diagonal empirical
  Fisher ``F = mean_i (∇ log p(y_i | x_i))²`` over its training set (per-sample gradients, true labels) of the
  trainable parameters (second layer and head); the loss adds ``(λ/2) Σ_t Σ_k F_{t,k} (θ_k − θ*_{t,k})²`` over the
  previous domains ``t`` (one penalty per domain, as the paper), ``λ = ewc_lambda`` = 1000. [design]
  ``ewc_update="proximal"`` (default): the penalty is applied by its exact proximal step after each SGD step on the
  cross-entropy, ``θ ← (θ + ηλ Σ_t F_t θ*_t)/(1 + ηλ Σ_t F_t)`` (forward–backward splitting: the same objective,
  unconditionally stable). The plain gradient of the penalty (``"explicit"``) diverges at these constants: the
  measured Fisher maxima are 0.5–1.9, so ``η λ F_max`` = 14–57 ≫ 2 and the weights reach NaN within two domains
  (a test shows it).
* ``lwf`` — learning without forgetting (Li & Hoiem, ECCV 2016 / TPAMI 2018): before domain ``t > 1`` the model is
  copied; the loss adds ``w · KL(softmax(z_old/T) ‖ softmax(z/T))`` (batch mean) over the logits of the label spaces
  seen before, on the current domain's inputs, ``T = temperature`` = 2, ``w = lwf_weight`` = 1. [design]
  The KL form (the paper's soft cross-entropy minus the constant teacher entropy) without Hinton's ``T²`` factor.
* ``er`` — experience replay (Chaudhry et al., "On tiny episodic memories in continual learning", 2019): a reservoir
  buffer of ``buffer_size`` = 200 training samples (reservoir sampling over every sample seen, updated after each
  step); every step trains on the current batch concatenated with a replay batch of ``replay_batch`` = 32 drawn
  uniformly from the buffer. Replayed samples count as work.
* ``joint`` (role ``reference``, never ranked) — the upper line of the shared-head family: before every test pass
  the model is trained for ``epochs`` epochs on the union of every domain seen so far (cumulative training, as
  Avalanche's ``Cumulative`` strategy; it keeps all training data). [design] ``reinit=True`` re-initialises the model
  (pretrained second layer, fresh head) before each stage instead; at 5 epochs that under-trains (measured final
  accuracy 0.30 against 0.60 cumulative on dev seed 0), hence the cumulative default. At gym scale the per-domain
  experts of ``lear`` / ``experts-only`` beat this single shared head, so ``joint`` bounds the shared-head baselines,
  not the expert methods.

Experts without adaptation:

* ``experts-only`` — LEAR without backbone adaptation and alignment losses: the backbone stays as
  pretrained; per domain a linear head ``128 → n_classes_t`` on the backbone features is trained (same optimiser and
  epochs) and a Ledoit–Wolf Gaussian is fitted to the backbone features of the domain's training rows; at test time
  the Mahalanobis distance to every domain's Gaussian routes the batch (``selection="batch"``, its mean distance) or
  each sample (``"sample"``) to one head, whose expert index is returned to the stream.

Hyperparameters (besides ``epochs``, ``lr``, ``batch_size``, ``time_fraction`` of every learner): ``ewc_lambda``
(1000), ``ewc_update`` (``proximal``), ``temperature`` (2), ``lwf_weight`` (1), ``buffer_size`` (200),
``replay_batch`` (32), ``reinit`` (``False``, ``joint``), ``selection`` (``batch``), ``covariance``
(``ledoit-wolf``) and ``selection_score`` (``mahalanobis``, the official LEAR code's routing distance; ``loglik``
adds the Gaussian log-determinant, see :func:`papergym.agents.solvers.lear.expert_score`) for ``experts-only``.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.agents.solvers.lear import (
    COVARIANCES,
    SCORES,
    SELECTIONS,
    StreamLearner,
    expert_score,
    ledoit_wolf_gaussian,
    route,
)
from papergym.validate import boolean, one_of, positive_float, positive_int

__all__ = ["SharedHeadLearner", "FineTune", "EWC", "LwF", "ExperienceReplay", "Joint", "ExpertsOnly"]

TASK = "ContinualDomains-v0"
EWC_UPDATES = ("proximal", "explicit")


class SharedHeadLearner(StreamLearner):
    """A trainable second layer and one masked head over the global labels (module docstring); subclasses add a
    loss term (:meth:`extra_loss`) and hooks before / after each domain."""

    def start(self, problem: Any, budget: Any) -> None:
        super().start(problem, budget)
        self.n_labels = int(problem.n_labels)
        self.layer = self.backbone_layer()
        self.head = self.linear(self.layer.out_features, self.n_labels)
        self.seen = np.zeros(self.n_labels, dtype=bool)

    def parameters(self) -> list[Any]:
        return [*self.layer.parameters(), *self.head.parameters()]

    def logits(self, h: Any, layer: Any = None, head: Any = None, mask: np.ndarray | None = None) -> Any:
        layer = self.layer if layer is None else layer
        head = self.head if head is None else head
        m = self.torch.as_tensor(self.seen if mask is None else mask)
        return head(self.torch.relu(layer(h))).masked_fill(~m, -1e9)

    def learn(self, domain: Any) -> None:
        torch, F = self.torch, self.torch.nn.functional
        self.stage = int(domain["t"])
        h = self.hidden(domain["X"])
        off, n_c = int(domain["label_offset"]), int(domain["n_classes"])
        y = torch.as_tensor(np.asarray(domain["y"], dtype=np.int64) + off)
        new = int((~self.seen[off : off + n_c]).sum())
        self.params_added.append(new * (self.layer.out_features + 1))
        self.prev_seen = self.seen.copy()
        self.seen[off : off + n_c] = True
        self.begin_domain(h, y)
        h_all, y_all = self.training_set(h, y)
        opt = torch.optim.SGD(self.parameters(), lr=self.lr)

        def step(rows: np.ndarray) -> None:
            idx = torch.as_tensor(rows)
            hb, yb = h_all[idx], y_all[idx]
            loss = F.cross_entropy(self.logits(hb), yb) + self.extra_loss(hb, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            self.after_step(hb, yb)

        self.train_epochs(len(y_all), step)
        self.end_domain(h, y)

    # hooks
    def begin_domain(self, h: Any, y: Any) -> None:
        pass

    def training_set(self, h: Any, y: Any) -> tuple[Any, Any]:
        return h, y

    def extra_loss(self, hb: Any, yb: Any) -> Any:
        return 0.0

    def after_step(self, hb: Any, yb: Any) -> None:
        pass

    def end_domain(self, h: Any, y: Any) -> None:
        pass

    def predict(self, batches: Sequence[Any]) -> tuple[list[np.ndarray], None]:
        sizes = [len(b) for b in batches]
        h = self.hidden(
            np.concatenate([np.asarray(b, dtype=np.float32).reshape(-1, self.W1.shape[1]) for b in batches])
        )
        with self.torch.no_grad():
            pred = self.logits(h).argmax(1).numpy().astype(np.int64)
        return list(np.split(pred, np.cumsum(sizes)[:-1])), None


class FineTune(SharedHeadLearner):
    """``finetune`` (module docstring)."""


class EWC(SharedHeadLearner):
    """``ewc`` (module docstring)."""

    def __init__(self, *, ewc_lambda: float = 1000.0, ewc_update: str = "proximal", **kw: Any):
        super().__init__(**kw)
        self.ewc_lambda = positive_float(ewc_lambda, "ewc_lambda", allow_zero=True)
        self.ewc_update = one_of(ewc_update, "ewc_update", EWC_UPDATES)

    def start(self, problem: Any, budget: Any) -> None:
        super().start(problem, budget)
        self.anchors: list[tuple[list[Any], list[Any]]] = []  # (Fisher, θ*) per domain

    def fisher(self, h: Any, y: Any) -> list[Any]:
        """Diagonal empirical Fisher: the mean over the rows of the squared per-sample gradient of ``log p(y|x)``."""
        torch, F = self.torch, self.torch.nn.functional
        params = self.parameters()
        acc = [torch.zeros_like(p) for p in params]
        for i in range(len(y)):
            g = torch.autograd.grad(F.cross_entropy(self.logits(h[i : i + 1]), y[i : i + 1]), params)
            for a, gi in zip(acc, g):
                a += gi.detach() ** 2
        return [a / max(len(y), 1) for a in acc]

    def extra_loss(self, hb: Any, yb: Any) -> Any:
        if not self.anchors or self.ewc_lambda == 0 or self.ewc_update == "proximal":
            return 0.0
        pen = 0.0
        for Fs, stars in self.anchors:
            for p, f, s in zip(self.parameters(), Fs, stars):
                pen = pen + (f * (p - s) ** 2).sum()
        return 0.5 * self.ewc_lambda * pen

    def after_step(self, hb: Any, yb: Any) -> None:
        """``proximal``: the exact proximal step of the penalty after the SGD step on the cross-entropy,
        ``θ ← (θ + η λ Σ_t F_t θ*_t) / (1 + η λ Σ_t F_t)`` (forward–backward splitting)."""
        if not self.anchors or self.ewc_lambda == 0 or self.ewc_update != "proximal":
            return
        c = self.lr * self.ewc_lambda
        with self.torch.no_grad():
            for p, fsum, fstar in zip(self.parameters(), self.f_sum, self.f_star):
                p.copy_((p + c * fstar) / (1.0 + c * fsum))

    def end_domain(self, h: Any, y: Any) -> None:
        Fs = self.fisher(h, y)
        stars = [p.detach().clone() for p in self.parameters()]
        self.anchors.append((Fs, stars))
        self.f_sum = [sum(a[0][k] for a in self.anchors) for k in range(len(Fs))]
        self.f_star = [sum(a[0][k] * a[1][k] for a in self.anchors) for k in range(len(Fs))]


class LwF(SharedHeadLearner):
    """``lwf`` (module docstring)."""

    def __init__(self, *, temperature: float = 2.0, lwf_weight: float = 1.0, **kw: Any):
        super().__init__(**kw)
        self.temperature = positive_float(temperature, "temperature")
        self.lwf_weight = positive_float(lwf_weight, "lwf_weight", allow_zero=True)
        self.old: tuple[Any, Any, np.ndarray] | None = None

    def begin_domain(self, h: Any, y: Any) -> None:
        if self.prev_seen.any():
            self.old = (
                copy.deepcopy(self.layer).requires_grad_(False),
                copy.deepcopy(self.head).requires_grad_(False),
                self.prev_seen.copy(),
            )

    def extra_loss(self, hb: Any, yb: Any) -> Any:
        if self.old is None or self.lwf_weight == 0:
            return 0.0
        F, T = self.torch.nn.functional, self.temperature
        layer, head, mask = self.old
        with self.torch.no_grad():
            z_old = head(self.torch.relu(layer(hb)))[:, mask]
        z = self.head(self.torch.relu(self.layer(hb)))[:, self.torch.as_tensor(mask)]
        return self.lwf_weight * F.kl_div(
            F.log_softmax(z / T, dim=1), F.softmax(z_old / T, dim=1), reduction="batchmean"
        )


class ExperienceReplay(SharedHeadLearner):
    """``er`` (module docstring)."""

    def __init__(self, *, buffer_size: int = 200, replay_batch: int = 32, **kw: Any):
        super().__init__(**kw)
        self.buffer_size = positive_int(buffer_size, "buffer_size")
        self.replay_batch = positive_int(replay_batch, "replay_batch")

    def start(self, problem: Any, budget: Any) -> None:
        super().start(problem, budget)
        self.buf_h: list[Any] = []
        self.buf_y: list[int] = []
        self.n_seen = 0

    def learn(self, domain: Any) -> None:
        torch, F = self.torch, self.torch.nn.functional
        self.stage = int(domain["t"])
        h = self.hidden(domain["X"])
        off, n_c = int(domain["label_offset"]), int(domain["n_classes"])
        y = torch.as_tensor(np.asarray(domain["y"], dtype=np.int64) + off)
        self.params_added.append(int((~self.seen[off : off + n_c]).sum()) * (self.layer.out_features + 1))
        self.seen[off : off + n_c] = True
        opt = torch.optim.SGD(self.parameters(), lr=self.lr)

        def step(rows: np.ndarray) -> None:
            idx = torch.as_tensor(rows)
            hb, yb = h[idx], y[idx]
            if self.buf_y:
                r = self.rng.choice(len(self.buf_y), min(self.replay_batch, len(self.buf_y)), replace=False)
                hb = torch.cat([hb, torch.stack([self.buf_h[i] for i in r])])
                yb = torch.cat([yb, torch.as_tensor([self.buf_y[i] for i in r])])
                self.work += len(r)
            loss = F.cross_entropy(self.logits(hb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            for i in rows:  # reservoir update after the step
                self.n_seen += 1
                if len(self.buf_y) < self.buffer_size:
                    self.buf_h.append(h[int(i)])
                    self.buf_y.append(int(y[int(i)]))
                else:
                    j = int(self.rng.integers(self.n_seen))
                    if j < self.buffer_size:
                        self.buf_h[j], self.buf_y[j] = h[int(i)], int(y[int(i)])

        self.train_epochs(len(y), step)


class Joint(SharedHeadLearner):
    """``joint`` (module docstring): trained on every domain seen so far before each pass."""

    def __init__(self, *, reinit: bool = False, **kw: Any):
        super().__init__(**kw)
        self.reinit = boolean(reinit, "reinit")

    def start(self, problem: Any, budget: Any) -> None:
        super().start(problem, budget)
        self.all_h: list[Any] = []
        self.all_y: list[Any] = []

    def begin_domain(self, h: Any, y: Any) -> None:
        if self.reinit:
            self.layer = self.backbone_layer()
            self.head = self.linear(self.layer.out_features, self.n_labels)
        self.all_h.append(h)
        self.all_y.append(y)

    def training_set(self, h: Any, y: Any) -> tuple[Any, Any]:
        return self.torch.cat(self.all_h), self.torch.cat(self.all_y)


class ExpertsOnly(StreamLearner):
    """``experts-only`` (module docstring)."""

    def __init__(
        self,
        *,
        selection: str = "batch",
        covariance: str = "ledoit-wolf",
        selection_score: str = "mahalanobis",
        **kw: Any,
    ):
        super().__init__(**kw)
        self.selection = one_of(selection, "selection", SELECTIONS)
        self.selection_score = one_of(selection_score, "selection_score", SCORES)
        self.covariance = one_of(covariance, "covariance", COVARIANCES)

    def start(self, problem: Any, budget: Any) -> None:
        super().start(problem, budget)
        self.layer = self.backbone_layer().requires_grad_(False)
        self.experts: list[dict[str, Any]] = []

    def features(self, X: Any) -> Any:
        with self.torch.no_grad():
            return self.torch.relu(self.layer(self.hidden(X)))

    def learn(self, domain: Any) -> None:
        torch, F = self.torch, self.torch.nn.functional
        self.stage = int(domain["t"])
        f = self.features(domain["X"])
        y = torch.as_tensor(np.asarray(domain["y"], dtype=np.int64))
        head = self.linear(f.shape[1], int(domain["n_classes"]))
        opt = torch.optim.SGD(head.parameters(), lr=self.lr)

        def step(rows: np.ndarray) -> None:
            idx = torch.as_tensor(rows)
            loss = F.cross_entropy(head(f[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()

        self.train_epochs(len(y), step)
        mu, prec = ledoit_wolf_gaussian(f.numpy(), self.covariance)
        self.experts.append(
            {"head": head.requires_grad_(False), "offset": int(domain["label_offset"]), "mu": mu, "precision": prec}
        )
        self.params_added.append(sum(p.numel() for p in head.parameters()))

    def predict(self, batches: Sequence[Any]) -> tuple[list[np.ndarray], list[Any]]:
        sizes = [len(b) for b in batches]
        f = self.features(
            np.concatenate([np.asarray(b, dtype=np.float32).reshape(-1, self.W1.shape[1]) for b in batches])
        )
        dist = np.stack([expert_score(f.numpy(), e["mu"], e["precision"], self.selection_score) for e in self.experts])
        with self.torch.no_grad():
            preds = np.stack([e["offset"] + e["head"](f).argmax(1).numpy() for e in self.experts])
        rows, entries = route(dist, sizes, self.selection == "sample")
        labels, i = [], 0
        for b, k in zip(sizes, rows):
            labels.append(preds[k, np.arange(i, i + b)].astype(np.int64))
            i += b
        return labels, entries


# -------------------------------------------------------------------------------------------- registry
_COMMON = {"epochs": None, "lr": 0.03, "batch_size": 32, "time_fraction": 0.8}


def _factory(cls: type) -> Any:
    def make(*, seed: Any = None, **hp: Any) -> Any:
        return cls(seed=seed, **hp)

    make.__name__ = make.__qualname__ = f"_make_{cls.__name__.lower()}"
    return make


_make_finetune = _factory(FineTune)
_make_ewc = _factory(EWC)
_make_lwf = _factory(LwF)
_make_er = _factory(ExperienceReplay)
_make_joint = _factory(Joint)
_make_experts_only = _factory(ExpertsOnly)

register_solver(
    "finetune",
    _make_finetune,
    tasks=[TASK],
    role="baseline",
    defaults=dict(_COMMON),
    description="sequential fine-tuning of the backbone layer and a shared head, no protection",
    requires=("torch",),
)
register_solver(
    "ewc",
    _make_ewc,
    tasks=[TASK],
    role="baseline",
    defaults={**_COMMON, "ewc_lambda": 1000.0, "ewc_update": "proximal"},
    description="elastic weight consolidation, lambda = 1000, diagonal empirical Fisher per domain",
    requires=("torch",),
)
register_solver(
    "lwf",
    _make_lwf,
    tasks=[TASK],
    role="baseline",
    defaults={**_COMMON, "temperature": 2.0, "lwf_weight": 1.0},
    description="learning without forgetting: distillation of the previous model's logits, T = 2",
    requires=("torch",),
)
register_solver(
    "er",
    _make_er,
    tasks=[TASK],
    role="baseline",
    defaults={**_COMMON, "buffer_size": 200, "replay_batch": 32},
    description="experience replay from a 200-sample reservoir, replay batch 32",
    requires=("torch",),
)
register_solver(
    "experts-only",
    _make_experts_only,
    tasks=[TASK],
    role="baseline",
    defaults={**_COMMON, "selection": "batch", "covariance": "ledoit-wolf", "selection_score": "mahalanobis"},
    description="frozen backbone, one linear head per domain, Mahalanobis routing (LEAR without "
    "adaptation and alignment)",
    requires=("torch",),
)
register_solver(
    "joint",
    _make_joint,
    tasks=[TASK],
    role="reference",
    defaults={**_COMMON, "reinit": False},
    description="joint (cumulative) training on the union of every domain seen so far: upper line, never ranked",
    requires=("torch",),
)
