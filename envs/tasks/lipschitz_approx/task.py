"""``LipschitzApprox-v0``: certified 1-Lipschitz function approximation and robust classification, the setting of
*Approximation theory for 1-Lipschitz ResNets* (Murari, Furuya & Schönlieb, NeurIPS 2025, arXiv 2505.12003; code
``davidemurari/1LipschitzResNets``).

A solver trains a network and hands it back in a fixed, **certifiable layer vocabulary**; the evaluator certifies
it (exact spectral norms), estimates its empirical Lipschitz constant, and scores it on a private test set. A
network whose certified bound exceeds ``1 + cert_tol`` scores ``error = 1.0`` whatever its fit.

Instances [design] (``families=``)
---------------------------------
* ``approx`` — fit a scalar 1-Lipschitz target on ``[−1, 1]^d`` (``dims``, default 1, 2, 5) from ``n_train = 4096``
  uniform samples (noise-free), ``targets`` (default all four):

  - ``f1 = |x₁|``;
  - ``f2 = min_i ‖x − p_i‖``, distance to ``n_centres = 5`` points ``p_i ~ U[−1, 1]^d``;
  - ``f3 = max(min(a₁ᵀx + b₁, a₂ᵀx + b₂), min(a₃ᵀx + b₃, a₄ᵀx + b₄))``, ``a_i`` uniform on the unit sphere, ``b_i ~
    U[−f3_bias, f3_bias]`` (``f3_bias = 0.5``);
  - ``f4 = sin(f4_freq · wᵀx) / f4_freq``, ``w`` uniform on the unit sphere (``f4_freq = 4``).

  Private test sets: a ``grid_1d = 10⁴``-point grid (d = 1), a ``grid_2d² = 200²`` grid (d = 2), ``n_test_uniform =
  10⁵`` uniform points (d ≥ 3). Loss ``mse``.
* ``robust`` — two moons ``make_moons(4000, noise=0.1, random_state=seed)``, ``StandardScaler`` fitted on all 4000
  points (as the official ``main.py``), 80/20 stratified split (``random_state=seed``); the 800-point split is the
  private test set. Labels 0/1, loss ``bce``; the network's sign is the prediction (``f > 0`` ↔ class 1).
* ``digits`` — only when named in ``families`` or with ``paper_scale=True``: scikit-learn's bundled 8×8 digits
  (pixels / 16 ∈ [0, 1]^64, the offline stand-in for the paper's MNIST runs), 80/20 stratified split; 10 logits,
  loss ``ce``.

Seeds: ``dev`` = ``seeds`` (0–4) per configuration; ``test`` = 5 HMAC-derived seeds per configuration
(``$PAPERGYM_TEST_SECRET``). Each seed draws the target's parameters, the training inputs and the test points from
independent ``SeedSequence(seed).spawn`` streams.

Public problem (:class:`LipschitzProblem`)
-----------------------------------------
``X`` (n × d), ``y`` (targets, 0/1 labels, or class indices), ``d``, ``family``, ``target`` (the family's *name*,
``f1``..``f4``, ``moons``, ``digits``; never its parameters), ``loss`` (``mse``/``bce``/``ce``), ``out_dim`` (1 or
10), ``domain`` (the input box of ``approx``; ``None`` otherwise), ``lipschitz_target`` (1), ``epochs`` (the
default epoch budget), ``eps`` (the certified radii).

Solution: the layer vocabulary
------------------------------
A list of layers, or ``{"layers": [...], "meta": {...}}`` (``meta`` is not scored). Each layer is a plain dict of
numpy arrays (so it crosses the sandbox channel); rows are points, ``n`` is the layer's input width:

==============  ===========================================  ======================================================
layer           fields                                       map and certified bound
==============  ===========================================  ======================================================
``Linear``      ``A`` (m × n), ``c`` (m)                     ``z ↦ Az + c``; bound ``‖A‖₂`` (exact, SVD)
``GradStep``    ``W`` (k × n), ``b`` (k), ``h`` (k or        ``z ↦ z − Wᵀ diag(h) relu(Wz + b)``, ``h ≥ 0``; bound
                scalar)                                      ``max(1, max(h)·‖W‖₂² − 1)`` (its Jacobian
                                                             ``I − Wᵀ diag(h) D W`` is symmetric with eigenvalues in
                                                             ``[1 − max(h)‖W‖₂², 1]``)
``Act``         ``fn``: ``relu``, ``tanh``, ``abs``,         bound 1; ``maxmin`` maps consecutive pairs
                ``maxmin``                                   ``(z₁, z₂), (z₃, z₄), ...`` to ``(max, min)`` (an odd last
                                                             coordinate passes through)
``BlockDiag``   ``nets`` = [net₁, net₂] (layer lists, may    ``(z[:split], z[split:]) ↦ (net₁(·), net₂(·))``; bound
                be empty = identity), ``split``              ``max`` of the parts' bounds
``SLL``         ``W`` (n × k), ``b`` (k), ``q`` (k, > 0),    ``z ↦ z − 2 W T⁻¹ relu(Wᵀz + b)`` (Araujo et al. 2023);
                optional ``t`` (k, > 0)                      ``T = diag(t)`` if given, else ``T_ii = Σ_j |WᵀW|_ij
                                                             q_j / q_i`` (a zero column contributes 0); bound 1 if the
                                                             diagonal condition ``T ⪰ WᵀW`` holds (by construction
                                                             without ``t``; checked by eigenvalues with it), else ∞
``Output``      ``v`` (n), ``c`` (scalar)                    ``z ↦ vᵀz + c``; bound ``‖v‖₂``; only as the last layer
==============  ===========================================  ======================================================

The network's output width must be ``out_dim`` (a final ``Output``, or a ``Linear`` with ``out_dim`` rows).
Validation is strict: an unknown layer type or field, a missing field, a wrong shape or input width, a non-real or
non-finite array, a negative ``h``, a non-positive ``q`` or ``t``, an ``Output`` that is not last, or a network
beyond the size limits (``MAX_PARAMS`` entries, ``MAX_LAYERS`` layers, ``MAX_WIDTH``, ``MAX_NESTING``) is a
``ValueError`` naming the layer (``layer 3 (GradStep).h``, nested ``layer 2 (BlockDiag).nets[1][0] (Linear).A``).

Evaluator
---------
* Certified bound (:func:`certified_bound`): the smaller of two true upper bounds of the ℓ2 → ℓ2 Lipschitz
  constant (∞ if any layer's bound is ∞):

  - the product over the top-level layers of the ℓ2 bounds above;
  - the *mixed-norm composition* (:func:`mixed_norm_bound`). A mixed norm on ℝⁿ is a partition of the coordinates
    into contiguous groups, ``N_P(z) = max_g ‖z_g‖₂`` (one group: ℓ2; singletons: ℓ∞). The network is bounded by
    ``Π_l Lip(layer_l; N_{l−1} → N_l)`` with ``N_0``, ``N_L`` = ℓ2 and the interface norms chosen by dynamic
    programming among ℓ2 and, at widths where a ``BlockDiag`` splits at ``s``, ℓ∞, ℓ∞/ℓ2 and ℓ2/ℓ∞ on either side
    of ``s``, and ℓ2 on each side. Per layer: ``Linear``/``Output`` ``max_g min(Σ_h ‖A_gh‖₂, √G ‖A_g‖₂)`` (g: output
    groups, h: the ``G`` input groups); ``GradStep`` with at most 10 units (width ≤ 64) the maximum of that matrix
    bound over the Jacobians ``I − Wᵀ diag(h·D) W`` at the ``2^k`` activation patterns ``D`` (the bound is convex
    in ``D``, so it holds on the convex hull the mean-value integral lives in); ``Act`` 1 from a norm to itself
    (``maxmin``: when each pair lies in one group or in two singletons); ``BlockDiag`` the maximum of its parts'
    bounds (each part by the same composition) when both norms split at the block boundary, or both are ℓ2; any
    other case ``√G × `` the layer's ℓ2 bound (since ``‖z‖₂ ≤ √G N_P(z)`` and ``N_Q(z) ≤ ‖z‖₂``). Restricted to
    ℓ2 at every interface the composition is the product, so the certificate is never looser than it.
    This certifies the paper's Ĝ (sort gadgets on ``max(|z₁|, |z₂|, |z₃|, ‖z_{4:}‖₂)``) at its true constant 1,
    where the ℓ2 product charges each inter-block map ``√2``-type factors.
* Empirical Lipschitz constant (a lower bound of the true one on the box): ``max ‖∇f(x)‖₂`` (``‖J(x)‖₂`` for 10
  logits) over ``emp_points = 10⁴`` uniform points of the box, by exact backpropagation through the vocabulary
  (numpy, no autograd, no finite differences), then ``emp_steps = 50`` steps of projected normalised gradient
  ascent on ``‖f(x) − f(y)‖ / ‖x − y‖`` from the ``emp_starts = 16`` best points (``y`` started at ``x`` plus
  ``0.1 ×`` the box's mean side along the local steepest direction; step ``0.05 ×`` side, decaying as ``1/√t``;
  projection = clipping to the box); the estimate is the larger of the two maxima. The box is ``[−1, 1]^d``
  (``approx``), the training inputs' bounding box widened by 10 % of its range per side (``robust``), ``[0, 1]^64``
  (``digits``) [design]. The points come from a stream of the instance seed, so the estimate is deterministic.

Metrics
-------
| metric | dir | definition |
|---|---|---|
| ``error`` (primary) | min | ``approx``: RMSE / std(target) on the test set; ``robust``/``digits``: 1 − ``cert_acc@0.1``; **1.0 if ``cert_bound > 1 + cert_tol``** (``cert_tol = 1e−6``) |
| ``rel_rmse`` | min | ``approx``: RMSE / std(target) whatever the certificate (the uncertified reference's fit) |
| ``certified`` | max | 1 if ``cert_bound ≤ 1 + cert_tol`` |
| ``cert_bound`` | min | certified Lipschitz bound (capped at 1e300) |
| ``emp_lip`` | min | empirical Lipschitz constant (never above ``cert_bound`` for a valid certificate) |
| ``sup_err`` | min | ``approx``: max absolute error on the test set |
| ``clean_acc`` | max | ``robust``: sign(f) correct; ``digits``: top-1 correct |
| ``cert_acc@0.05/0.1/0.2`` | max | ``robust``: correct and ``|f(x)| > ε·cert_bound``; ``digits``: the top logit is correct and exceeds every other by more than ``√2·ε·cert_bound`` |
| ``n_params`` | min | number of array entries of the submitted network (the vocabulary's storage, e.g. ``h`` per unit) |
| ``diverged`` | min | 1 when the network's outputs are non-finite on the test or training set, or its training loss (computed here) exceeds ``EXPLODE_FACTOR = 10⁶`` × the best constant predictor's; then ``error = 1.0`` (``rel_rmse``/``sup_err`` 1e300, accuracies 0) |
| ``train_seconds`` | min | the solve's wall seconds (the runner's clock via :meth:`LipschitzTask.finalize`; the evaluator alone reports NaN: a solver's ``meta`` is never trusted) |

Budget: ``max_seconds = 60`` (600 paper-scale), ``max_iterations = epochs`` (200; 1,000 paper-scale); work =
optimiser steps (solver-declared).

Deviations and choices [design]
-------------------------------
* ``f3`` with random unit ``a``'s is exactly representable by the paper's structure-aware argument (its Ĝ
  architecture); under this evaluator's conservative product-of-norms certificate an exact certified
  representation is available when the ``a``'s are orthonormal (lift by the orthonormal rows, sort gadgets,
  ``e₂`` readout; the tests build it), not in general by the ℓ2 product; the mixed-norm composition tries ℓ∞
  interfaces only at widths where a ``BlockDiag`` splits, so a plain ``Linear``/``maxmin`` chain is certified in ℓ2.
* Under the ℓ2 product alone, ``lip-resnet``'s ``arch="G_hat"`` had to rescale its maps to spectral norm ≤ 1 and fit
  ``|x₁|`` at relative RMSE 0.72 (d = 1); certified by the mixed-norm composition it trains under the paper's own
  constraints (measured in :mod:`papergym.agents.solvers.lip_resnet`).
* The ``maxmin`` pairing (consecutive coordinates, odd tail passes through), ``Output``-only-last, the SLL ``t``
  option and the size limits are the vocabulary's own choices.
* ``rel_rmse`` and ``certified`` are extra metrics (so the uncertified reference line shows its actual fit).
* ``approx``'s ``error`` is not capped: the best constant predictor (certified bound 0) scores exactly 1.0, the
  same as any uncertified network; a certified network fitting worse than a constant scores above 1.

Version History: v0 — initial version.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""  # noqa: E501 - markdown table rows cannot wrap

from __future__ import annotations

import itertools
import math
import numbers
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

__all__ = [
    "ACTIVATIONS",
    "LAYER_TYPES",
    "TASK_ID",
    "LipschitzEvaluator",
    "LipschitzProblem",
    "LipschitzTask",
    "Network",
    "certified_bound",
    "empirical_lipschitz",
    "mixed_norm_bound",
    "parse_network",
    "target_function",
]

TASK_ID = "LipschitzApprox-v0"
N_TEST_SEEDS = 5
FAMILIES = ("approx", "robust", "digits")
TARGETS = ("f1", "f2", "f3", "f4")
LAYER_TYPES = ("Linear", "GradStep", "Act", "BlockDiag", "SLL", "Output")
ACTIVATIONS = ("relu", "tanh", "abs", "maxmin")
EPS = (0.05, 0.1, 0.2)
BIG = 1e300
MAX_PARAMS = 2_000_000
MAX_LAYERS = 1024
MAX_WIDTH = 4096
MAX_NESTING = 8
EXPLODE_FACTOR = 1e6  # a training loss above this multiple of the constant predictor's is an exploded run

_FIELDS = {  # type -> (required, optional)
    "Linear": (("A", "c"), ()),
    "GradStep": (("W", "b", "h"), ()),
    "Act": (("fn",), ()),
    "BlockDiag": (("nets", "split"), ()),
    "SLL": (("W", "b", "q"), ("t",)),
    "Output": (("v", "c"), ()),
}


# ============================================================================================ targets
def target_function(name: str, params: Mapping[str, Any]):
    """The target ``f(X) -> (N,)`` of ``approx`` from its (private) parameters."""
    if name == "f1":
        return lambda X: np.abs(X[:, 0])
    if name == "f2":
        P = np.asarray(params["centres"], dtype=float)
        return lambda X: np.sqrt(np.min(np.sum((X[:, None, :] - P[None]) ** 2, axis=2), axis=1))
    if name == "f3":
        A = np.asarray(params["a"], dtype=float)
        b = np.asarray(params["b"], dtype=float)

        def f3(X):
            L = X @ A.T + b
            return np.maximum(np.minimum(L[:, 0], L[:, 1]), np.minimum(L[:, 2], L[:, 3]))

        return f3
    if name == "f4":
        w = np.asarray(params["w"], dtype=float)
        k = float(params["freq"])
        return lambda X: np.sin(k * (X @ w)) / k
    raise ValueError(f"unknown target {name!r}; valid: {', '.join(TARGETS)}")


def _unit(rng: np.random.Generator, k: int, d: int) -> np.ndarray:
    v = rng.standard_normal((k, d))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _target_params(name: str, d: int, rng: np.random.Generator, p: Mapping[str, Any]) -> dict[str, Any]:
    if name == "f1":
        return {}
    if name == "f2":
        return {"centres": rng.uniform(-1.0, 1.0, (int(p.get("n_centres", 5)), d))}
    if name == "f3":
        bb = float(p.get("f3_bias", 0.5))
        return {"a": _unit(rng, 4, d), "b": rng.uniform(-bb, bb, 4)}
    if name == "f4":
        return {"w": _unit(rng, 1, d)[0], "freq": float(p.get("f4_freq", 4.0))}
    raise ValueError(f"unknown target {name!r}; valid: {', '.join(TARGETS)}")


def _test_points(d: int, rng: np.random.Generator, p: Mapping[str, Any]) -> np.ndarray:
    if d == 1:
        return np.linspace(-1.0, 1.0, int(p.get("grid_1d", 10_000)))[:, None]
    if d == 2:
        g = np.linspace(-1.0, 1.0, int(p.get("grid_2d", 200)))
        return np.stack(np.meshgrid(g, g, indexing="ij"), axis=-1).reshape(-1, 2)
    return rng.uniform(-1.0, 1.0, (int(p.get("n_test_uniform", 100_000)), d))


# ========================================================================================= vocabulary
def _arr(v: Any, where: str, ndim: int | tuple[int, ...], shape: tuple[int | None, ...] | None = None) -> np.ndarray:
    if isinstance(v, (str, bytes, Mapping)) or v is None:
        raise ValueError(f"{where} must be a real array, got {type(v).__name__}")
    try:
        a = np.asarray(v)
    except Exception as exc:  # noqa: BLE001
        raise ValueError(f"{where} must be a real array: {exc}") from None
    if a.dtype.kind not in "iuf":
        raise ValueError(f"{where} must hold real numbers, got dtype {a.dtype}")
    ndims = (ndim,) if isinstance(ndim, int) else ndim
    if a.ndim not in ndims:
        raise ValueError(f"{where} must have {' or '.join(map(str, ndims))} dimension(s), got shape {a.shape}")
    if shape is not None and a.ndim == len(shape):
        for i, (s, e) in enumerate(zip(a.shape, shape)):
            if e is not None and s != e:
                raise ValueError(
                    f"{where} must have shape {tuple('*' if x is None else x for x in shape)}, got "
                    f"{a.shape} (axis {i} must be {e})"
                )
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{where} must be finite (got NaN or inf)")
    if any(s > MAX_WIDTH for s in a.shape):
        raise ValueError(f"{where} has shape {a.shape}; widths are limited to {MAX_WIDTH}")
    return a


def _int(v: Any, where: str) -> int:
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ValueError(f"{where} must be an integer, got {v!r}")
    return int(v)


class _Layer:
    kind = ""
    n_in = n_out = 0

    def n_params(self) -> int:
        return 0

    def bound(self) -> float:
        return 1.0


class _Linear(_Layer):
    kind = "Linear"

    def __init__(self, A, c):
        self.A, self.c = A, c
        self.n_out, self.n_in = A.shape

    def n_params(self):
        return self.A.size + self.c.size

    def bound(self):
        return float(np.linalg.norm(self.A, 2)) if self.A.size else 0.0

    def forward(self, x):
        return x @ self.A.T + self.c, None

    def vjp(self, cache, g):
        return g @ self.A


class _GradStep(_Layer):
    kind = "GradStep"

    def __init__(self, W, b, h):
        self.W, self.b, self.h = W, b, h
        self.n_in = self.n_out = W.shape[1]

    def n_params(self):
        return self.W.size + self.b.size + self.h.size

    def bound(self):
        s = float(np.linalg.norm(self.W, 2))
        return max(1.0, float(np.max(self.h)) * s * s - 1.0)

    def forward(self, x):
        u = x @ self.W.T + self.b
        return x - (np.maximum(u, 0.0) * self.h) @ self.W, u > 0

    def vjp(self, mask, g):
        return g - (((g @ self.W.T) * self.h) * mask) @ self.W


class _Act(_Layer):
    kind = "Act"

    def __init__(self, fn, n):
        self.fn, self.n_in, self.n_out = fn, n, n

    def forward(self, x):
        if self.fn == "relu":
            return np.maximum(x, 0.0), x > 0
        if self.fn == "abs":
            return np.abs(x), np.sign(x)
        if self.fn == "tanh":
            y = np.tanh(x)
            return y, 1.0 - y * y
        m = (x.shape[1] // 2) * 2
        a, b = x[:, 0:m:2], x[:, 1:m:2]
        swap = b > a
        y = x.copy()
        y[:, 0:m:2] = np.maximum(a, b)
        y[:, 1:m:2] = np.minimum(a, b)
        return y, swap

    def vjp(self, cache, g):
        if self.fn != "maxmin":
            return g * cache
        m = (g.shape[1] // 2) * 2
        ga, gb = g[:, 0:m:2], g[:, 1:m:2]
        out = g.copy()
        out[:, 0:m:2] = np.where(cache, gb, ga)
        out[:, 1:m:2] = np.where(cache, ga, gb)
        return out


class _SLL(_Layer):
    kind = "SLL"

    def __init__(self, W, b, q, t):
        self.W, self.b, self.q, self.t = W, b, q, t
        self.n_in = self.n_out = W.shape[0]
        if t is None:
            G = np.abs(W.T @ W)
            T = (G @ q) / q
        else:
            T = t
        self.invT = np.where(T > 0, 1.0 / np.where(T > 0, T, 1.0), 0.0)
        self.T = T

    def n_params(self):
        return self.W.size + self.b.size + self.q.size + (self.t.size if self.t is not None else 0)

    def bound(self):
        if self.t is None:
            return 1.0
        M = np.diag(self.t) - self.W.T @ self.W
        lam = float(np.min(np.linalg.eigvalsh(0.5 * (M + M.T)))) if M.size else 0.0
        return 1.0 if lam >= -1e-12 * max(1.0, float(np.max(self.t))) else math.inf

    def forward(self, x):
        u = x @ self.W + self.b
        return x - 2.0 * (np.maximum(u, 0.0) * self.invT) @ self.W.T, u > 0

    def vjp(self, mask, g):
        return g - 2.0 * (((g @ self.W) * self.invT) * mask) @ self.W.T


class _Output(_Layer):
    kind = "Output"

    def __init__(self, v, c):
        self.v, self.c = v, c
        self.n_in, self.n_out = v.shape[0], 1

    def n_params(self):
        return self.v.size + 1

    def bound(self):
        return float(np.linalg.norm(self.v))

    def forward(self, x):
        return (x @ self.v + self.c)[:, None], None

    def vjp(self, cache, g):
        return g[:, :1] * self.v[None, :]


class _BlockDiag(_Layer):
    kind = "BlockDiag"

    def __init__(self, nets, split, n):
        self.nets, self.split = nets, split
        self.n_in = n
        self.n_out = sum(net.n_out for net in nets)

    def n_params(self):
        return sum(net.n_params() for net in self.nets) + 1

    def bound(self):
        return max(net.bound() for net in self.nets)

    def forward(self, x):
        xs = (x[:, : self.split], x[:, self.split :])
        outs, caches = zip(*(net.forward_cache(xi) for net, xi in zip(self.nets, xs)))
        return np.concatenate(outs, axis=1), caches

    def vjp(self, caches, g):
        m = self.nets[0].n_out
        gs = (g[:, :m], g[:, m:])
        return np.concatenate([net.vjp(c, gi) for net, c, gi in zip(self.nets, caches, gs)], axis=1)


class Network:
    """A validated vocabulary network: ``forward``, ``vjp`` (backpropagation of an output cotangent), ``bound``
    (the certified Lipschitz bound), ``n_params``; built by :func:`parse_network`."""

    def __init__(self, layers: list[_Layer], n_in: int):
        self.layers = layers
        self.n_in = n_in
        self.n_out = layers[-1].n_out if layers else n_in

    def n_params(self) -> int:
        return int(sum(layer.n_params() for layer in self.layers))

    def layer_bounds(self) -> list[float]:
        return [layer.bound() for layer in self.layers]

    def bound(self) -> float:
        out = 1.0
        for b in self.layer_bounds():
            if not math.isfinite(b):
                return math.inf
            out *= b
        return out

    def forward_cache(self, x: np.ndarray):
        caches = []
        for layer in self.layers:
            x, c = layer.forward(x)
            caches.append(c)
        return x, caches

    def vjp(self, caches, g: np.ndarray) -> np.ndarray:
        for layer, c in zip(reversed(self.layers), reversed(caches)):
            g = layer.vjp(c, g)
        return g

    def __call__(self, x: np.ndarray, chunk: int = 20_000) -> np.ndarray:
        """``f(x)``: ``(N, out_dim)``."""
        x = np.asarray(x, dtype=float)
        with np.errstate(all="ignore"):
            return np.concatenate(
                [self.forward_cache(x[i : i + chunk])[0] for i in range(0, len(x), chunk)]
                or [np.zeros((0, self.n_out))],
                axis=0,
            )


def _parse_layers(
    layers: Any, n: int, where: str, depth: int, counter: list[int], allow_output: bool
) -> tuple[list[_Layer], int]:
    if isinstance(layers, (str, bytes, Mapping)) or not isinstance(layers, (list, tuple)):
        raise ValueError(f"{where or 'solution'} must be a list of layer dicts, got {type(layers).__name__}")
    out: list[_Layer] = []
    for i, spec in enumerate(layers):
        counter[0] += 1
        if counter[0] > MAX_LAYERS:
            raise ValueError(f"the network has more than {MAX_LAYERS} layers")
        loc = f"{where}[{i}]" if where else f"layer {i}"
        if not isinstance(spec, Mapping):
            raise ValueError(f"{loc} must be a dict with a 'type' entry, got {type(spec).__name__}")
        kind = spec.get("type")
        if kind not in _FIELDS:
            raise ValueError(f"{loc} has unknown type {kind!r}; valid: {', '.join(LAYER_TYPES)}")
        loc = f"{loc} ({kind})"
        req, opt = _FIELDS[kind]
        extra = sorted(set(map(str, spec)) - {"type", *req, *opt})
        if extra:
            raise ValueError(f"{loc} has unknown field(s) {', '.join(extra)}; fields: {', '.join(req + opt)}")
        missing = [k for k in req if k not in spec]
        if missing:
            raise ValueError(f"{loc} is missing field(s) {', '.join(missing)}")
        if kind == "Linear":
            A = _arr(spec["A"], f"{loc}.A", 2, (None, n))
            if A.shape[0] < 1:
                raise ValueError(f"{loc}.A must have at least one row")
            layer: _Layer = _Linear(A, _arr(spec["c"], f"{loc}.c", 1, (A.shape[0],)))
        elif kind == "GradStep":
            W = _arr(spec["W"], f"{loc}.W", 2, (None, n))
            k = W.shape[0]
            if k < 1:
                raise ValueError(f"{loc}.W must have at least one row")
            b = _arr(spec["b"], f"{loc}.b", 1, (k,))
            h = _arr(spec["h"], f"{loc}.h", (0, 1), (k,))
            if np.any(h < 0):
                raise ValueError(f"{loc}.h must be >= 0 (a negative step is not a gradient step), got min {h.min():g}")
            layer = _GradStep(W, b, np.broadcast_to(h, (k,)).copy())
        elif kind == "Act":
            fn = spec["fn"]
            if fn not in ACTIVATIONS:
                raise ValueError(f"{loc}.fn must be one of {', '.join(ACTIVATIONS)}, got {fn!r}")
            layer = _Act(fn, n)
        elif kind == "SLL":
            W = _arr(spec["W"], f"{loc}.W", 2, (n, None))
            k = W.shape[1]
            if k < 1:
                raise ValueError(f"{loc}.W must have at least one column")
            b = _arr(spec["b"], f"{loc}.b", 1, (k,))
            q = _arr(spec["q"], f"{loc}.q", 1, (k,))
            if np.any(q <= 0):
                raise ValueError(f"{loc}.q must be > 0, got min {q.min():g}")
            t = None
            if spec.get("t") is not None:
                t = _arr(spec["t"], f"{loc}.t", 1, (k,))
                if np.any(t <= 0):
                    raise ValueError(f"{loc}.t must be > 0, got min {t.min():g}")
            layer = _SLL(W, b, q, t)
        elif kind == "Output":
            if not allow_output or i != len(layers) - 1:
                raise ValueError(f"{loc} must be the last layer of the network")
            v = _arr(spec["v"], f"{loc}.v", 1, (n,))
            c = _arr(spec["c"], f"{loc}.c", (0, 1), (1,)).reshape(-1)
            layer = _Output(v, float(c[0]))
        else:  # BlockDiag
            if depth >= MAX_NESTING:
                raise ValueError(f"{loc}: BlockDiag nesting is limited to {MAX_NESTING} levels")
            split = _int(spec["split"], f"{loc}.split")
            if not 0 < split < n:
                raise ValueError(f"{loc}.split must satisfy 0 < split < {n} (the input width), got {split}")
            nets = spec["nets"]
            if isinstance(nets, (str, bytes, Mapping)) or not isinstance(nets, (list, tuple)) or len(nets) != 2:
                raise ValueError(f"{loc}.nets must be a list of two layer lists")
            parts = []
            for j, (sub, width) in enumerate(zip(nets, (split, n - split))):
                sl, _ = _parse_layers(sub, width, f"{loc}.nets[{j}]", depth + 1, counter, False)
                parts.append(Network(sl, width))
            layer = _BlockDiag(parts, split, n)
        out.append(layer)
        n = layer.n_out
    return out, n


def parse_network(solution: Any, d: int, out_dim: int = 1) -> Network:
    """Validate a solution (module docstring) against input width ``d`` and output width ``out_dim``; a
    ``ValueError`` naming the layer and field otherwise."""
    layers = solution
    if isinstance(solution, Mapping):
        if "layers" not in solution:
            raise ValueError(f"solution mapping needs a 'layers' entry, got keys {sorted(map(str, solution))}")
        extra = sorted(set(map(str, solution)) - {"layers", "meta"})
        if extra:
            raise ValueError(f"solution mapping has unknown key(s) {', '.join(extra)} (allowed: layers, meta)")
        layers = solution["layers"]
    parsed, n = _parse_layers(layers, int(d), "", 0, [0], True)
    if not parsed:
        raise ValueError("solution has no layers")
    if n != out_dim:
        raise ValueError(
            f"the network's output width is {n}, the problem needs {out_dim} "
            f"(end with an Output layer{' or a Linear with ' + str(out_dim) + ' rows' if out_dim > 1 else ''})"
        )
    net = Network(parsed, int(d))
    if net.n_params() > MAX_PARAMS:
        raise ValueError(f"the network has {net.n_params()} parameters; the limit is {MAX_PARAMS}")
    return net


def _product_bound(net: Network) -> float:
    """Product over the top-level layers of their ℓ2 bounds (the vocabulary table)."""
    return net.bound()


# ------------------------------------------------------------------------------ mixed-norm certificate
# A *mixed norm* on ℝⁿ is given by a partition of the coordinates into contiguous groups (a tuple of group sizes):
# N_P(z) = max over the groups g of ‖z_g‖₂. (n,) is ℓ2, (1,)·n is ℓ∞, (1, 1, 1, n − 3) is the norm of Ĝ.
MAX_VERTEX_UNITS = 10  # GradStep: Jacobian vertices 2^k enumerated for k <= this (and width <= MAX_VERTEX_WIDTH)
MAX_VERTEX_WIDTH = 64


def _offsets(P: tuple[int, ...]) -> list[int]:
    return [0, *itertools.accumulate(P)]


def _cut(P: tuple[int, ...], s: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """``P`` restricted to ``[:s]`` and ``[s:]`` if ``s`` is a group boundary of ``P``, else ``None``."""
    off = _offsets(P)
    if s not in off:
        return None
    i = off.index(s)
    return P[:i], P[i:]


def _fallback(P: tuple[int, ...], l2: float) -> float:
    """A map with ℓ2 bound ``l2`` is ``√(#groups of P) · l2``-Lipschitz from ``N_P`` to any mixed norm (‖z‖₂ ≤
    √G · N_P(z) and N_Q(z) ≤ ‖z‖₂)."""
    return math.sqrt(len(P)) * l2


def _matrix_bound(A: np.ndarray, P: tuple[int, ...], Q: tuple[int, ...]) -> float:
    """An upper bound of the operator norm of ``A`` (m × n) from ``N_P`` to ``N_Q``: the maximum over the output
    groups g of min(Σ_h ‖A_gh‖₂, √G_P ‖A_g‖₂) (exact for ℓ2 → ℓ2, for ℓ∞ → ℓ∞ and for scalar rows)."""
    if A.size == 0:
        return 0.0
    oi, oo = _offsets(P), _offsets(Q)
    G = len(P)
    out = 0.0
    for g in range(len(Q)):
        Ag = A[oo[g] : oo[g + 1]]
        if G == 1:
            val = float(np.linalg.norm(Ag, 2)) if min(Ag.shape) > 1 else float(np.linalg.norm(Ag))
        else:
            if all(p == 1 for p in P):  # ℓ∞ input: Σ_h ‖A_gh‖₂ = Σ_h ‖column h of A_g‖₂
                s = float(np.sum(np.linalg.norm(Ag, axis=0)))
            else:
                s = 0.0
                for h in range(G):
                    B = Ag[:, oi[h] : oi[h + 1]]
                    s += float(np.linalg.norm(B, 2)) if min(B.shape) > 1 else float(np.linalg.norm(B))
            full = float(np.linalg.norm(Ag, 2)) if min(Ag.shape) > 1 else float(np.linalg.norm(Ag))
            val = min(s, math.sqrt(G) * full)
        out = max(out, val)
    return out


def _gradstep_vertices(layer: _GradStep, P: tuple[int, ...], Q: tuple[int, ...]) -> float:
    """max over the activation patterns D ∈ {0, 1}^k of the bound of ``I − Wᵀ diag(h·D) W`` from N_P to N_Q. The
    map's Jacobian lies in the convex hull of these matrices and the bound is convex in D, so along every segment
    the mean-value integral is bounded by it."""
    W, h = layer.W, layer.h
    k, n = W.shape
    best = 0.0
    for bits in itertools.product((0.0, 1.0), repeat=k):
        J = np.eye(n) - W.T @ ((h * np.asarray(bits))[:, None] * W)
        best = max(best, _matrix_bound(J, P, Q))
    return best


def _maxmin_ok(P: tuple[int, ...], n: int) -> bool:
    """maxmin is non-expansive in N_P when every pair lies in one group or both of its coordinates are singletons."""
    gid = np.repeat(np.arange(len(P)), P)
    size = np.asarray(P)[gid]
    for i in range(0, (n // 2) * 2, 2):
        if gid[i] != gid[i + 1] and not (size[i] == 1 and size[i + 1] == 1):
            return False
    return True


def _layer_mixed(layer: _Layer, P: tuple[int, ...], Q: tuple[int, ...], memo: dict) -> float:
    l2 = layer.bound()
    if not math.isfinite(l2):
        return math.inf
    if len(P) == 1 and len(Q) == 1 and not isinstance(layer, _BlockDiag):
        return l2
    fb = _fallback(P, l2)
    if isinstance(layer, _Linear):
        return min(fb, _matrix_bound(layer.A, P, Q))
    if isinstance(layer, _Output):
        return min(fb, _matrix_bound(layer.v[None, :], P, Q))
    if isinstance(layer, _Act):
        if P == Q and (layer.fn != "maxmin" or _maxmin_ok(P, layer.n_in)):
            return 1.0
        return fb
    if isinstance(layer, _GradStep):
        k, n = layer.W.shape
        if k <= MAX_VERTEX_UNITS and n <= MAX_VERTEX_WIDTH:
            return min(fb, _gradstep_vertices(layer, P, Q))
        return fb
    if isinstance(layer, _BlockDiag):
        s, s_out = layer.split, layer.nets[0].n_out
        cp, cq = _cut(P, s), _cut(Q, s_out)
        if cp is not None and cq is not None:  # N_P = max(N_P1, N_P2): the parts' bounds' maximum
            return min(
                fb, max(_net_mixed(layer.nets[0], cp[0], cq[0], memo), _net_mixed(layer.nets[1], cp[1], cq[1], memo))
            )
        if len(P) == 1 and len(Q) == 1:  # ℓ2: ‖(a, b)‖² = ‖a‖² + ‖b‖², again the parts' maximum
            n0, n1 = layer.nets
            return min(
                l2,
                max(
                    _net_mixed(n0, (s,), (s_out,), memo),
                    _net_mixed(n1, (layer.n_in - s,), (layer.n_out - s_out,), memo),
                ),
            )
        return fb
    return fb  # SLL: 1-Lipschitz in ℓ2 only


def _candidates(net: Network, n: int, extra: tuple) -> set:
    """Mixed norms tried at an interface of width ``n``: ℓ2, the boundary norms ``extra`` of that width, and for
    every BlockDiag split s of width n in ``net``: ℓ∞, and ℓ∞ / ℓ2 on either side of s, and ℓ2 on each side."""
    out = {(n,)} | {P for P in extra if sum(P) == n}
    for layer in net.layers:
        if isinstance(layer, _BlockDiag):
            for s, w in ((layer.split, layer.n_in), (layer.nets[0].n_out, layer.n_out)):
                if w == n and 0 < s < n:
                    out |= {(1,) * n, (1,) * s + (n - s,), (s,) + (1,) * (n - s), (s, n - s)}
    return out


def _net_mixed(net: Network, P: tuple[int, ...], Q: tuple[int, ...], memo: dict) -> float:
    """Upper bound of ``net``'s Lipschitz constant from N_P to N_Q: the smallest product of per-layer bounds over
    all choices of mixed norms at the interfaces (dynamic programming over the candidate norms)."""
    key = (id(net), P, Q)
    if key in memo:
        return memo[key]
    if not net.layers:
        val = _matrix_bound(np.eye(net.n_in), P, Q)
    else:
        best = {P: 1.0}
        for i, layer in enumerate(net.layers):
            last = i == len(net.layers) - 1
            cands = {Q} if last else _candidates(net, layer.n_out, (P, Q))
            nxt = {}
            for R in cands:
                v = math.inf
                for S, b in best.items():
                    if b < v:
                        v = min(v, b * _layer_mixed(layer, S, R, memo))
                nxt[R] = v
            best = nxt
        val = best[Q]
    memo[key] = val
    return val


def mixed_norm_bound(net: Network) -> float:
    """Upper bound of ``net``'s ℓ2 → ℓ2 Lipschitz constant composed through mixed norms (module docstring)."""
    return _net_mixed(net, (net.n_in,), (net.n_out,), {})


def certified_bound(net: Network) -> float:
    """The certified ℓ2 → ℓ2 Lipschitz bound: the smaller of the product of the layers' ℓ2 bounds and the mixed-norm
    composition :func:`mixed_norm_bound` (module docstring); both are true upper bounds."""
    if any(not math.isfinite(b) for b in net.layer_bounds()):  # an SLL whose diagonal condition fails
        return math.inf
    return min(_product_bound(net), mixed_norm_bound(net))


# ================================================================================ empirical Lipschitz
def _local_lip(net: Network, X: np.ndarray, chunk: int = 5000) -> np.ndarray:
    """``‖J(x)‖₂`` at every row of ``X`` (``‖∇f(x)‖`` for a scalar output), by backpropagation."""
    out = []
    with np.errstate(all="ignore"):
        for i in range(0, len(X), chunk):
            x = X[i : i + chunk]
            _, caches = net.forward_cache(x)
            k = net.n_out
            if k == 1:
                g = net.vjp(caches, np.ones((len(x), 1)))
                out.append(np.linalg.norm(g, axis=1))
            else:
                J = np.stack([net.vjp(caches, np.tile(np.eye(k)[j], (len(x), 1))) for j in range(k)], axis=1)
                out.append(np.linalg.svd(J, compute_uv=False)[:, 0])
    return np.concatenate(out)


def _top_direction(net: Network, x: np.ndarray) -> np.ndarray:
    _, caches = net.forward_cache(x)
    k = net.n_out
    J = np.stack([net.vjp(caches, np.tile(np.eye(k)[j], (len(x), 1))) for j in range(k)], axis=1)
    _, _, Vt = np.linalg.svd(J)
    return Vt[:, 0, :]


def empirical_lipschitz(
    net: Network,
    lo: np.ndarray,
    hi: np.ndarray,
    rng: np.random.Generator,
    n_points: int = 10_000,
    steps: int = 50,
    starts: int = 16,
) -> float:
    """A lower bound of ``net``'s Lipschitz constant on the box ``[lo, hi]`` (module docstring)."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    d = len(lo)
    X = rng.uniform(lo, hi, (int(n_points), d))
    g = _local_lip(net, X)
    g = np.where(np.isfinite(g), g, 0.0)
    best = float(np.max(g)) if len(g) else 0.0
    if steps <= 0:
        return best
    side = float(np.mean(hi - lo))
    idx = np.argsort(-g)[: int(starts)]
    x = X[idx].copy()
    with np.errstate(all="ignore"):
        u = _top_direction(net, x)
        u = np.where(np.all(np.isfinite(u), axis=1, keepdims=True), u, rng.standard_normal(u.shape))
        u /= np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1e-300)
        y = np.clip(x + 0.1 * side * u, lo, hi)
        for t in range(int(steps) + 1):
            diff = x - y
            r = np.linalg.norm(diff, axis=1)
            small = r < 1e-9 * side
            if np.any(small):  # collapsed pair: push y away again
                e = rng.standard_normal((int(small.sum()), d))
                y[small] = np.clip(x[small] + 0.01 * side * e / np.linalg.norm(e, axis=1, keepdims=True), lo, hi)
                diff = x - y
                r = np.linalg.norm(diff, axis=1)
            fx, cx = net.forward_cache(x)
            fy, cy = net.forward_cache(y)
            df = fx - fy
            nd = np.linalg.norm(df, axis=1)
            q = nd / np.maximum(r, 1e-300)
            ok = np.isfinite(q) & (r > 0)
            if np.any(ok):
                best = max(best, float(np.max(q[ok])))
            if t == steps:
                break
            gdir = df / np.maximum(nd, 1e-300)[:, None]
            gx = net.vjp(cx, gdir) / r[:, None] - (q / r**2)[:, None] * diff
            gy = -net.vjp(cy, gdir) / r[:, None] + (q / r**2)[:, None] * diff
            eta = 0.05 * side / math.sqrt(t + 1.0)
            for z, gz in ((x, gx), (y, gy)):
                nz = np.linalg.norm(gz, axis=1, keepdims=True)
                step = np.where(nz > 0, gz / np.maximum(nz, 1e-300), 0.0)
                step = np.where(np.isfinite(step), step, 0.0)
                z += eta * step
            x = np.clip(x, lo, hi)
            y = np.clip(y, lo, hi)
    return best


# ========================================================================================== problem
@dataclass(frozen=True)
class LipschitzProblem:
    """The public problem (module docstring)."""

    family: str
    target: str
    X: np.ndarray
    y: np.ndarray
    d: int
    out_dim: int
    loss: str
    domain: tuple | None
    lipschitz_target: float = 1.0
    epochs: int = 200
    eps: tuple = EPS

    PRIVATE_FIELDS = ()


class LipschitzEvaluator:
    """Private scorer (module docstring): the test set, the certifier, the empirical Lipschitz estimate."""

    def __init__(
        self,
        problem: LipschitzProblem,
        X_test: np.ndarray,
        y_test: np.ndarray,
        *,
        box: tuple,
        seed: int,
        cert_tol: float = 1e-6,
        emp_points: int = 10_000,
        emp_steps: int = 50,
        emp_starts: int = 16,
    ):
        self.p = problem
        self.X_test = np.asarray(X_test, dtype=float)
        self.y_test = np.asarray(y_test)
        self.box = (np.asarray(box[0], float), np.asarray(box[1], float))
        self.seed = int(seed)
        self.cert_tol = float(cert_tol)
        self.emp = (int(emp_points), int(emp_steps), int(emp_starts))
        if problem.family == "approx":
            self.y_std = float(np.std(self.y_test))

    def train_loss(self, net: Network) -> tuple[float, float]:
        """The submitted network's loss on the public training set and that of the best constant predictor (the
        evaluator's own computation; a solver's reported loss is never used)."""
        p = self.p
        with np.errstate(all="ignore"):
            F = net(p.X)
            y = np.asarray(p.y)
            if p.loss == "mse":
                return float(np.mean((F[:, 0] - y) ** 2)), float(np.var(y))
            if p.loss == "bce":
                z = F[:, 0]
                loss = float(np.mean(np.logaddexp(0.0, z) - y * z))
                m = float(np.clip(np.mean(y), 1e-12, 1 - 1e-12))
                return loss, float(-(m * math.log(m) + (1 - m) * math.log(1 - m)))
            lse = np.logaddexp.reduce(F, axis=1)
            loss = float(np.mean(lse - F[np.arange(len(y)), y.astype(int)]))
            freq = np.bincount(y.astype(int), minlength=F.shape[1]) / len(y)
            freq = freq[freq > 0]
            return loss, float(-np.sum(freq * np.log(freq)))

    def diverged(self, net: Network, F_test: np.ndarray) -> bool:
        """A diverged run: non-finite outputs on the test set or the training set, or a training loss above
        ``EXPLODE_FACTOR`` × that of the best constant predictor."""
        if not np.all(np.isfinite(F_test)):
            return True
        loss, const = self.train_loss(net)
        return not math.isfinite(loss) or loss > EXPLODE_FACTOR * max(const, 1e-12)

    def certify(self, solution: Any) -> tuple[Network, float]:
        net = parse_network(solution, self.p.d, self.p.out_dim)
        return net, certified_bound(net)

    def evaluate(self, solution: Any) -> dict[str, float]:
        p = self.p
        net, cert = self.certify(solution)
        ok = cert <= p.lipschitz_target * (1.0 + self.cert_tol)
        rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(3,)))
        emp = empirical_lipschitz(net, *self.box, rng, *self.emp)
        nan = math.nan
        out = {
            "cert_bound": min(cert, BIG),
            "certified": float(ok),
            "emp_lip": min(emp, BIG),
            "n_params": float(net.n_params()),
            "train_seconds": nan,
            "rel_rmse": nan,
            "sup_err": nan,
            "clean_acc": nan,
            **{f"cert_acc@{e:g}": nan for e in EPS},
        }
        # train_seconds is the runner's clock (LipschitzTask.finalize); a solver's own meta is never trusted
        F = net(self.X_test)
        diverged = self.diverged(net, F)
        out["diverged"] = float(diverged)
        with np.errstate(all="ignore"):
            if diverged:  # the failure value, whatever the certificate
                if p.family == "approx":
                    out.update(rel_rmse=BIG, sup_err=BIG)
                else:
                    out.update(clean_acc=0.0, **{f"cert_acc@{e:g}": 0.0 for e in EPS})
                out["error"] = 1.0
            elif p.family == "approx":
                r = F[:, 0] - self.y_test
                rmse = float(np.sqrt(np.mean(r * r)))
                rel = rmse / self.y_std if self.y_std > 0 else rmse
                rel = rel if math.isfinite(rel) else BIG
                sup = float(np.max(np.abs(r)))
                out.update(rel_rmse=min(rel, BIG), sup_err=min(sup, BIG) if math.isfinite(sup) else BIG)
                out["error"] = min(rel, BIG) if ok else 1.0
            else:
                eff = cert if math.isfinite(cert) else math.inf
                if p.family == "robust":
                    f = F[:, 0]
                    correct = np.where(self.y_test > 0.5, f > 0, f < 0) & np.isfinite(f)
                    margin = np.abs(f)
                else:
                    correct = (np.argmax(F, axis=1) == self.y_test) & np.all(np.isfinite(F), axis=1)
                    top = np.sort(F, axis=1)
                    margin = (top[:, -1] - top[:, -2]) / math.sqrt(2.0)
                out["clean_acc"] = float(np.mean(correct))
                for e in EPS:
                    out[f"cert_acc@{e:g}"] = float(np.mean(correct & (margin > e * eff)))
                out["error"] = 1.0 - out["cert_acc@0.1"] if ok else 1.0
        return out


# ============================================================================================= task
def _robust_data(seed: int, n: int = 4000, noise: float = 0.1):
    from sklearn.datasets import make_moons
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = make_moons(n_samples=n, noise=noise, random_state=seed)
    X = StandardScaler().fit_transform(X)
    return train_test_split(X, y.astype(float), test_size=0.2, random_state=seed, stratify=y)


def _digits_data(seed: int):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()
    return train_test_split(
        data.data / 16.0, data.target.astype(np.int64), test_size=0.2, random_state=seed, stratify=data.target
    )


class LipschitzTask:
    """``LipschitzApprox-v0`` (module docstring). Kwargs: ``families`` (approx, robust; ``digits`` on request),
    ``dims`` (1, 2, 5), ``targets`` (f1–f4), ``epochs`` (200; 1,000 paper-scale), ``paper_scale``, ``seeds`` (dev,
    0–4), ``max_seconds`` (60; 600 paper-scale), ``n_train`` (4096), ``n_centres`` (5), ``f3_bias`` (0.5),
    ``f4_freq`` (4), ``grid_1d`` (10⁴), ``grid_2d`` (200), ``n_test_uniform`` (10⁵), ``moons_noise`` (0.1),
    ``cert_tol`` (1e−6), ``emp_points`` (10⁴), ``emp_steps`` (50), ``emp_starts`` (16)."""

    id = TASK_ID
    primary = "error"
    metrics = {
        "error": "min",
        "rel_rmse": "min",
        "certified": "max",
        "cert_bound": "min",
        "emp_lip": "min",
        "sup_err": "min",
        "clean_acc": "max",
        "cert_acc@0.05": "max",
        "cert_acc@0.1": "max",
        "cert_acc@0.2": "max",
        "n_params": "min",
        "train_seconds": "min",
        "diverged": "min",
    }
    table_metrics = (
        "cert_bound",
        "emp_lip",
        "rel_rmse",
        "sup_err",
        "clean_acc",
        "cert_acc@0.1",
        "n_params",
        "train_seconds",
    )

    def __init__(
        self,
        families: Any = None,
        dims: Any = (1, 2, 5),
        targets: Any = TARGETS,
        epochs: int | None = None,
        paper_scale: bool = False,
        seeds: Any = (0, 1, 2, 3, 4),
        max_seconds: float | None = None,
        n_train: int = 4096,
        n_centres: int = 5,
        f3_bias: float = 0.5,
        f4_freq: float = 4.0,
        grid_1d: int = 10_000,
        grid_2d: int = 200,
        n_test_uniform: int = 100_000,
        moons_noise: float = 0.1,
        cert_tol: float = 1e-6,
        emp_points: int = 10_000,
        emp_steps: int = 50,
        emp_starts: int = 16,
    ):
        if not isinstance(paper_scale, (bool, np.bool_)):
            raise ValueError(f"paper_scale must be True or False, got {paper_scale!r}")
        self.paper_scale = bool(paper_scale)
        if families is None:
            families = FAMILIES if self.paper_scale else ("approx", "robust")
        self.families = check_names(families, "families", FAMILIES)
        self.dims = check_ints(dims, "dims", 1)
        if max(self.dims) > 64:
            raise ValueError(f"dims must be <= 64, got {max(self.dims)}")
        self.targets = check_names(targets, "targets", TARGETS)
        self.epochs = check_ints(epochs if epochs is not None else (1000 if self.paper_scale else 200), "epochs", 1)[0]
        self.seeds = check_ints(seeds, "seeds", 0)
        ms = check_floats(
            max_seconds if max_seconds is not None else (600.0 if self.paper_scale else 60.0), "max_seconds", above=0.0
        )[0]
        self.n_train = check_ints(n_train, "n_train", 2)[0]
        self.n_centres = check_ints(n_centres, "n_centres", 1)[0]
        self.f3_bias = check_floats(f3_bias, "f3_bias", at_least=0.0)[0]
        self.f4_freq = check_floats(f4_freq, "f4_freq", above=0.0)[0]
        self.grid_1d = check_ints(grid_1d, "grid_1d", 2)[0]
        self.grid_2d = check_ints(grid_2d, "grid_2d", 2)[0]
        self.n_test_uniform = check_ints(n_test_uniform, "n_test_uniform", 2)[0]
        self.moons_noise = check_floats(moons_noise, "moons_noise", at_least=0.0)[0]
        self.cert_tol = check_floats(cert_tol, "cert_tol", at_least=0.0)[0]
        self.emp_points = check_ints(emp_points, "emp_points", 1)[0]
        self.emp_steps = check_ints(emp_steps, "emp_steps", 0)[0]
        self.emp_starts = check_ints(emp_starts, "emp_starts", 1)[0]
        self.default_budget = Budget(max_seconds=ms, max_iterations=self.epochs)

    def _common(self) -> dict[str, Any]:
        return {
            "epochs": self.epochs,
            "cert_tol": self.cert_tol,
            "emp_points": self.emp_points,
            "emp_steps": self.emp_steps,
            "emp_starts": self.emp_starts,
        }

    def _configs(self) -> list[tuple[str, dict[str, Any]]]:
        out: list[tuple[str, dict[str, Any]]] = []
        for fam in self.families:
            if fam == "approx":
                for d, t in itertools.product(self.dims, self.targets):
                    prm = {"family": fam, "d": d, "target": t, "n_train": self.n_train, **self._common()}
                    prm.update(
                        {
                            "f2": {"n_centres": self.n_centres},
                            "f3": {"f3_bias": self.f3_bias},
                            "f4": {"f4_freq": self.f4_freq},
                        }.get(t, {})
                    )
                    prm.update(
                        {1: {"grid_1d": self.grid_1d}, 2: {"grid_2d": self.grid_2d}}.get(
                            d, {"n_test_uniform": self.n_test_uniform}
                        )
                    )
                    out.append((f"approx/d={d}/{t}", prm))
            elif fam == "robust":
                out.append(
                    (
                        "robust/moons",
                        {"family": fam, "target": "moons", "moons_noise": self.moons_noise, **self._common()},
                    )
                )
            else:
                out.append(("digits", {"family": fam, "target": "digits", **self._common()}))
        return out

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        return split_instances(TASK_ID, split, self._configs(), self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[LipschitzProblem, LipschitzEvaluator]:
        p = instance_params(ref, TASK_ID)
        fam = check_names(p.get("family"), "family", FAMILIES)[0]
        seed = int(ref.seed)
        epochs = check_ints(p.get("epochs", self.epochs), "epochs", 1)[0]
        ev_kw = {
            "cert_tol": float(p.get("cert_tol", self.cert_tol)),
            "emp_points": int(p.get("emp_points", self.emp_points)),
            "emp_steps": int(p.get("emp_steps", self.emp_steps)),
            "emp_starts": int(p.get("emp_starts", self.emp_starts)),
        }
        streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3)]
        if fam == "approx":
            d = check_ints(p.get("d"), "d", 1)[0]
            tname = check_names(p.get("target"), "target", TARGETS)[0]
            f = target_function(tname, _target_params(tname, d, streams[0], p))
            X = streams[1].uniform(-1.0, 1.0, (check_ints(p.get("n_train", 4096), "n_train", 2)[0], d))
            Xt = _test_points(d, streams[2], p)
            lo, hi = -np.ones(d), np.ones(d)
            problem = LipschitzProblem(
                family=fam,
                target=tname,
                X=X,
                y=f(X),
                d=d,
                out_dim=1,
                loss="mse",
                domain=(lo.copy(), hi.copy()),
                epochs=epochs,
            )
            return problem, LipschitzEvaluator(problem, Xt, f(Xt), box=(lo, hi), seed=seed, **ev_kw)
        if fam == "robust":
            X, Xt, y, yt = _robust_data(seed, noise=float(p.get("moons_noise", 0.1)))
            span = X.max(axis=0) - X.min(axis=0)
            box = (X.min(axis=0) - 0.1 * span, X.max(axis=0) + 0.1 * span)
            problem = LipschitzProblem(
                family=fam, target="moons", X=X, y=y, d=2, out_dim=1, loss="bce", domain=None, epochs=epochs
            )
            return problem, LipschitzEvaluator(problem, Xt, yt, box=box, seed=seed, **ev_kw)
        X, Xt, y, yt = _digits_data(seed)
        problem = LipschitzProblem(
            family=fam, target="digits", X=X, y=y, d=64, out_dim=10, loss="ce", domain=None, epochs=epochs
        )
        return problem, LipschitzEvaluator(problem, Xt, yt, box=(np.zeros(64), np.ones(64)), seed=seed, **ev_kw)

    def finalize(
        self, metrics: Mapping[str, float] | None, seconds: float | None, status: str, budget: Budget | None = None
    ) -> dict[str, float]:
        """``metrics`` with ``train_seconds`` set to the runner's wall seconds of the solve."""
        out = dict(metrics or {})
        if seconds is not None and math.isfinite(float(seconds)):
            out["train_seconds"] = float(seconds)
        return out

    def report(self, runs: Any) -> str:
        """Per configuration (family / d / target) and solver: median error, certified bound, empirical Lipschitz
        constant, uncertified fit (``rel_rmse`` or clean accuracy) and seconds
        (:func:`papergym.envs.tasks.lipschitz_approx.report.report_table`)."""
        from papergym.envs.tasks.lipschitz_approx.report import report_table

        return report_table(runs)

    def figures(self, runs: Any, folder: Any, curves: Any = None) -> list[Any]:
        """``error_vs_bound`` (error against certified bound, one marker per solver) and, with anytime curves,
        ``error_vs_epoch`` (median error against epochs per family) (PNG + SVG)."""
        from papergym.envs.tasks.lipschitz_approx.report import figures

        return figures(runs, folder, curves)


register_task(TASK_ID, LipschitzTask)
