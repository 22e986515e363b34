"""``DeepRegression-v0``: training deep fully connected networks to (near) zero loss, the setting of *Block
Coordinate Descent for Neural Networks Provably Finds Global Minima* (Akiyama, NeurIPS 2025, arXiv
2510.22667).

Network (no biases): ``h_0 = x``, ``h_j = σ(W_j h_{j−1})`` (with ``skip``: ``h_j = σ(W_j h_{j−1}) + h_{j−1}`` for
``j ≥ 2``), ``f(x) = W_L h_{L−1}``; ``W_1 ∈ ℝ^{r×d_in}``, ``W_j ∈ ℝ^{r×r}``, ``W_L ∈ ℝ^{d_out×r}``. Training loss
``(1/n) Σ_i ‖f(x_i) − y_i‖²``.

Instance families [design] (``family=``):

* ``teacher``: ``n = 200`` inputs ``x ~ N(0, I/d_in)``, ``d_in = 256`` (so the ``n`` columns of ``X`` are linearly
  independent, the paper's assumption), ``d_out = 10``, targets ``y = W₂ tanh(W₁x)`` from a random width-64
  teacher rescaled to unit variance; 1,000 held-out points from the same law;
* ``random``: the same inputs with ``N(0, 1)`` random labels (memorisation);
* ``digits``: scikit-learn's bundled digits (pixels / 16), a fixed Gaussian lift to 512 dimensions followed by
  ``tanh`` (so ``n = 500 ≤ d_in``), one-hot targets; the other 1,297 images held out.

Activations (``activation=``): ``leaky-relu`` (slope 0.1; the main case), ``tanh``, ``softplus``, ``identity``
(a deep linear net) — strictly increasing, so ``bcd`` applies — and ``relu`` (not strictly increasing: such
instances set ``skip = True``, the network ``bcd-skip`` trains).

Public problem (:class:`DeepProblem`): ``X`` (``d_in × n``), ``Y`` (``d_out × n``), ``depth``, ``width``,
``activation``, ``skip`` and the common initial weights ``W0`` (Gaussian, variance ``1/fan_in``). Solution: the
weights ``[W_1, ..., W_L]`` or ``{"weights": [...], "V": [V_1, ..., V_{L−1}], "gamma": γ}`` (block coordinate
descent's auxiliary blocks, ``width × n`` each, and the weight of its lifted objective; any other entry is ignored).
The evaluator recomputes every metric from the weights (and ``V``, ``γ``) alone; nothing a solver states about its own
progress is read:

| metric | dir | definition |
|---|---|---|
| ``train_loss`` (primary) | min | ``(1/n) Σ ‖f(x_i) − y_i‖²`` (``bench``'s geometric mean ``= 10^mean log10``) |
| ``log10_train_loss`` | min | its ``log10`` |
| ``rel_train_loss`` | min | ``train_loss`` / the initial weights' loss |
| ``test_mse`` | min | the same on the held-out data |
| ``reports_to_1e-6`` | min | from the evaluator's own record of the iterates it scored (one per ``report`` call; the \
returned solution, when equal to the last report, is not a new one): the 1-based index of the first with \
``rel_train_loss ≤ 1e−6`` among the first ``max_reports`` (``max_reports + 1`` if none) |
| ``solved`` | max | 1 if the final ``rel_train_loss ≤ 1e−6`` |
| ``aux_objective`` | min | the lifted objective ``F(W, V)`` (:func:`lifted_objective`) recomputed from the \
solution's ``V`` and ``γ`` (NaN when it carries none) |
| ``diverged`` | min | 1 if the loss is non-finite or above ``100 ×`` the initial weights' loss, or a weight entry \
exceeds ``1e6 × max(1, max |W0|)`` (exploded weights whose dead ReLUs hide it in the loss); such a run gets the \
failure value ``train_loss`` = the initial loss (``rel_train_loss = 1``), ``test_mse`` NaN, and is not ``ok`` |

``reports_to_1e-6`` counts reports, so it compares solvers that report once per sweep / epoch (every solver shipped
here); the wall-clock comparison is the anytime curve's ``seconds``, which the runner measures.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
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
    save_figure,
    split_instances,
)

__all__ = [
    "DeepTask",
    "DeepProblem",
    "DeepEvaluator",
    "ACTIVATIONS",
    "activation",
    "forward",
    "network_loss",
    "lifted_objective",
]

TASK_ID = "DeepRegression-v0"
N_TEST_SEEDS = 5
FAMILIES = ("teacher", "random", "digits")
ACTIVATIONS = ("leaky-relu", "tanh", "softplus", "identity", "relu")
LEAK = 0.1
SOLVED_REL = 1e-6  # rel_train_loss that counts as solved
DIVERGED_REL = 1e2  # a final loss above 100 x the initial weights' loss (or non-finite) is a diverged run
DIVERGED_WEIGHT = 1e6  # so is a weight entry above 1e6 x max(1, the largest initial entry)


def activation(name: str) -> tuple[Any, Any, float]:
    """``(σ, σ′, sup|σ′|)`` of an activation name."""
    if name == "leaky-relu":
        return (lambda z: np.where(z > 0, z, LEAK * z)), (lambda z: np.where(z > 0, 1.0, LEAK)), 1.0
    if name == "tanh":
        return np.tanh, (lambda z: 1.0 - np.tanh(z) ** 2), 1.0
    if name == "softplus":
        return (lambda z: np.logaddexp(0.0, z)), (lambda z: 0.5 * (1.0 + np.tanh(0.5 * z))), 1.0
    if name == "identity":
        return (lambda z: z), (lambda z: np.ones_like(z)), 1.0
    if name == "relu":
        return (lambda z: np.maximum(z, 0.0)), (lambda z: (z > 0).astype(float)), 1.0
    raise ValueError(f"unknown activation {name!r}; valid: {', '.join(ACTIVATIONS)}")


def forward(weights: list[np.ndarray], X: np.ndarray, act: str, skip: bool) -> np.ndarray:
    """``f(X)`` (``d_out × n``) of the network (module docstring)."""
    s, _, _ = activation(act)
    h = X
    for j, W in enumerate(weights[:-1]):
        z = s(W @ h)
        h = z + h if (skip and j >= 1) else z
    return weights[-1] @ h


def network_loss(weights: list[np.ndarray], X: np.ndarray, Y: np.ndarray, act: str, skip: bool) -> float:
    """``(1/n) Σ_i ‖f(x_i) − y_i‖²``."""
    r = forward(weights, X, act, skip) - Y
    return float(np.sum(r * r) / X.shape[1])


def _teacher_data(n: int, d_in: int, d_out: int, rng: np.random.Generator, random_labels: bool):
    X = rng.normal(0.0, 1.0 / math.sqrt(d_in), size=(d_in, n + 1000))
    if random_labels:
        Y = rng.standard_normal((d_out, n + 1000))
    else:
        W1 = rng.normal(0.0, 1.0, (64, d_in))
        W2 = rng.normal(0.0, 1.0 / 8.0, (d_out, 64))
        Y = W2 @ np.tanh(W1 @ X)
        Y = Y / Y.std()
    return X[:, :n], Y[:, :n], X[:, n:], Y[:, n:]


def _digits_data(rng: np.random.Generator, n: int = 500, d_in: int = 512):
    from sklearn.datasets import load_digits

    data = load_digits()
    Xd = data.data.T / 16.0  # (64, 1797)
    lift = rng.normal(0.0, 1.0 / math.sqrt(64), size=(d_in, 64))
    X = np.tanh(lift @ Xd)
    Y = np.eye(10)[data.target].T
    perm = rng.permutation(Xd.shape[1])
    tr, te = perm[:n], perm[n:]
    return X[:, tr], Y[:, tr], X[:, te], Y[:, te]


@dataclass(frozen=True)
class DeepProblem:
    """The public problem (module docstring)."""

    X: np.ndarray
    Y: np.ndarray
    depth: int
    width: int
    activation: str
    skip: bool
    W0: list = field(default_factory=list)
    max_reports: int = 500

    PRIVATE_FIELDS = ()


def lifted_objective(
    W: list[np.ndarray], V: list[np.ndarray], Y: np.ndarray, act: str, skip: bool, gamma: float
) -> float:
    """``F(W, V) = ‖W_L V_{L−1} − Y‖_F² + γ Σ_{j=1}^{L−1} ‖σ(W_j V_{j−1}) − V_j‖_F²`` (``V_0 = X``; with ``skip`` the
    layer map is ``σ(W_j V_{j−1}) + V_{j−1}`` for ``j ≥ 2``): the lifted objective block coordinate descent
    minimises."""
    s, _, _ = activation(act)
    L = len(W)
    r = W[-1] @ V[L - 1] - Y
    F = float(np.sum(r * r))
    for j in range(1, L):
        pre = s(W[j - 1] @ V[j - 1]) + (V[j - 1] if skip and j >= 2 else 0.0)
        F += gamma * float(np.sum((pre - V[j]) ** 2))
    return F


def solution_weights(
    solution: Any, shapes: list[tuple[int, int]], n: int | None = None
) -> tuple[list[np.ndarray], Any, float]:
    """``(weights, V, gamma)`` of a solution (``V``: the hidden auxiliary blocks ``[V_1, ..., V_{L−1}]`` and
    ``gamma`` the lifted objective's weight, ``None`` / NaN when the solution does not carry them; ``V_j`` must be
    ``width × n``); ``ValueError`` naming what is wrong otherwise."""
    V, gamma = None, float("nan")
    if isinstance(solution, Mapping):
        if "weights" not in solution:
            raise ValueError(f"solution mapping needs a 'weights' entry, got keys {sorted(solution)}")
        if solution.get("V") is not None:
            try:
                V = [np.asarray(v, dtype=float) for v in solution["V"]]
                gamma = float(solution.get("gamma", float("nan")))
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"solution['V'] must be a list of {len(shapes) - 1} real matrices and "
                    f"solution['gamma'] a number: {exc}"
                ) from None
            if len(V) != len(shapes) - 1:
                raise ValueError(f"solution['V'] must hold {len(shapes) - 1} hidden blocks V_1..V_(L-1), got {len(V)}")
            if not (gamma > 0 and math.isfinite(gamma)):
                raise ValueError(
                    f"solution['gamma'] must be a finite number > 0 when 'V' is given, got {solution.get('gamma')!r}"
                )
        solution = solution["weights"]
    try:
        ws = [np.asarray(w, dtype=float) for w in solution]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"solution must be a list of {len(shapes)} weight matrices: {exc}") from None
    if len(ws) != len(shapes):
        raise ValueError(f"solution must have {len(shapes)} weight matrices, got {len(ws)}")
    for j, (w, sh) in enumerate(zip(ws, shapes)):
        if w.shape != sh:
            raise ValueError(f"weight {j + 1} must have shape {sh}, got {w.shape}")
    if V is not None:
        for j, v in enumerate(V):
            want = (shapes[j][0], v.shape[-1] if n is None else n)
            if v.shape != want:
                raise ValueError(f"solution['V'][{j}] (V_{j + 1}) must have shape {want}, got {v.shape}")
    return ws, V, gamma


class DeepEvaluator:
    """Private scorer (module docstring): held-out data, the loss of the initial weights and its own record of
    every scored report (the reports-to-tolerance count is computed from that record, nothing the solver says)."""

    def __init__(self, problem: DeepProblem, X_test: np.ndarray, Y_test: np.ndarray):
        self.p, self.X_test, self.Y_test = problem, X_test, Y_test
        self.shapes = [w.shape for w in problem.W0]
        self.L0 = network_loss(problem.W0, problem.X, problem.Y, problem.activation, problem.skip)
        self.history: list[float] = []  # rel_train_loss of every distinct scored solution, in order
        self._w0_max = max([1.0] + [float(np.abs(w).max()) for w in problem.W0 if np.size(w)])
        self._last: list[np.ndarray] | None = None

    def _record(self, ws: list[np.ndarray], rel: float) -> None:
        """Append ``rel`` unless ``ws`` are the weights scored last (the returned solution is usually the last
        report, scored again: not a new iterate)."""
        if self._last is not None and all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(ws, self._last)):
            return
        self.history.append(rel)
        self._last = [w.copy() for w in ws]

    def reports_to_tolerance(self, tol: float = SOLVED_REL) -> float:
        """1-based index of the first recorded iterate with ``rel_train_loss ≤ tol`` among the first
        ``max_reports`` (``max_reports + 1`` if none)."""
        cap = self.p.max_reports
        for i, rel in enumerate(self.history[:cap]):
            if rel <= tol:
                return float(i + 1)
        return float(cap + 1)

    def evaluate(self, solution: Any) -> dict[str, float]:
        p = self.p
        ws, V, gamma = solution_weights(solution, self.shapes, p.X.shape[1])
        finite = all(np.all(np.isfinite(w)) for w in ws)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            tr = network_loss(ws, p.X, p.Y, p.activation, p.skip) if finite else float("inf")
            te = network_loss(ws, self.X_test, self.Y_test, p.activation, p.skip) if math.isfinite(tr) else float("inf")
            aux = (
                lifted_objective(ws, [p.X] + V, p.Y, p.activation, p.skip, gamma)
                if V is not None and finite
                else float("nan")
            )
        rel = tr / self.L0
        # weights blown up by DIVERGED_WEIGHT over the start also diverged, even where dead ReLUs leave the
        # training loss at the zero-output loss (full-batch GD at a large step on digits)
        w_max = max((float(np.abs(w).max()) for w in ws if w.size), default=0.0) if finite else math.inf
        exploded = not w_max <= DIVERGED_WEIGHT * self._w0_max
        diverged = exploded or not (math.isfinite(tr) and rel <= DIVERGED_REL)
        if diverged:  # the failure value: no progress over the initial weights
            tr, te, rel = self.L0, float("nan"), 1.0
        self._record(ws, rel)
        return {
            "train_loss": tr,
            "log10_train_loss": math.log10(tr) if tr > 0 else -300.0,
            "rel_train_loss": rel,
            "test_mse": te,
            "reports_to_1e-6": self.reports_to_tolerance(),
            "solved": float(rel <= SOLVED_REL),
            "aux_objective": aux if math.isfinite(aux) else float("nan"),
            "diverged": float(diverged),
        }


class DeepTask:
    """``DeepRegression-v0`` (module docstring). Kwargs: ``family`` (teacher, random, digits), ``activation``,
    ``depth`` (3, 5), ``width`` (64), ``n`` (200; digits uses 500), ``seeds`` (dev, 0–4), ``max_sweeps`` (500),
    ``max_seconds`` (60)."""

    id = TASK_ID
    primary = "train_loss"
    metrics = {
        "train_loss": "min",
        "log10_train_loss": "min",
        "rel_train_loss": "min",
        "test_mse": "min",
        "reports_to_1e-6": "min",
        "solved": "max",
        "aux_objective": "min",
        "diverged": "min",
    }
    table_metrics = ("log10_train_loss", "rel_train_loss", "test_mse", "reports_to_1e-6")

    def __init__(
        self,
        family: Any = ("teacher", "random", "digits"),
        activation: Any = "leaky-relu",
        depth: Any = (3, 5),
        width: int = 64,
        n: int = 200,
        seeds: Any = (0, 1, 2, 3, 4),
        max_sweeps: int = 500,
        max_seconds: float = 60.0,
    ):
        self.family = check_names(family, "family", FAMILIES)
        self.activation = check_names(activation, "activation", ACTIVATIONS)
        self.depth = check_ints(depth, "depth", 2)
        self.width = check_ints(width, "width", 1)[0]
        self.n = check_ints(n, "n", 1)[0]
        if self.n > 256:
            raise ValueError(f"n must be <= d_in = 256 (the inputs must be linearly independent), got {self.n}")
        self.seeds = check_ints(seeds, "seeds", 0)
        self.max_sweeps = check_ints(max_sweeps, "max_sweeps", 1)[0]
        ms = check_floats(max_seconds, "max_seconds", above=0.0)[0]
        self.default_budget = Budget(max_seconds=ms, max_iterations=self.max_sweeps)

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        configs = [
            (
                f"{fam}/{act}/L={L}",
                {
                    "family": fam,
                    "activation": act,
                    "depth": L,
                    "width": self.width,
                    "n": self.n,
                    "max_sweeps": self.max_sweeps,
                },
            )
            for fam, act, L in itertools.product(self.family, self.activation, self.depth)
        ]
        return split_instances(TASK_ID, split, configs, self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[DeepProblem, DeepEvaluator]:
        p = instance_params(ref, TASK_ID)
        fam = check_names(p.get("family"), "family", FAMILIES)[0]
        act = check_names(p.get("activation"), "activation", ACTIVATIONS)[0]
        L, r = check_ints(p.get("depth"), "depth", 2)[0], check_ints(p.get("width"), "width", 1)[0]
        rng = np.random.default_rng(np.random.SeedSequence(int(ref.seed), spawn_key=(0,)))
        if fam == "digits":
            X, Y, Xt, Yt = _digits_data(rng)
        else:
            X, Y, Xt, Yt = _teacher_data(check_ints(p.get("n"), "n", 1)[0], 256, 10, rng, fam == "random")
        d_in, d_out = X.shape[0], Y.shape[0]
        wr = np.random.default_rng(np.random.SeedSequence(int(ref.seed), spawn_key=(1,)))
        dims = [d_in] + [r] * (L - 1) + [d_out]
        W0 = [wr.normal(0.0, 1.0 / math.sqrt(dims[j]), size=(dims[j + 1], dims[j])) for j in range(L)]
        problem = DeepProblem(
            X=X,
            Y=Y,
            depth=L,
            width=r,
            activation=act,
            skip=(act == "relu"),
            W0=W0,
            max_reports=int(p.get("max_sweeps", self.max_sweeps)),
        )
        return problem, DeepEvaluator(problem, Xt, Yt)

    def figures(self, runs: Any, folder: Any, curves: Any = None) -> list[Any]:
        """``loss_vs_sweeps``: training loss against sweeps/epochs and against seconds, one row per instance
        configuration, median over seeds per solver (PNG + SVG)."""
        import matplotlib

        matplotlib.use("Agg", force=False)
        from pathlib import Path

        import matplotlib.pyplot as plt

        if curves is None or curves.empty or "train_loss" not in curves:
            return []
        c = curves[np.isfinite(curves.train_loss.astype(float))].copy()
        c["config"] = c.instance.map(lambda s: s.rsplit("/", 1)[0])
        configs = list(dict.fromkeys(c.config))
        fig, axes = plt.subplots(len(configs), 2, figsize=(11, 3.6 * len(configs)), squeeze=False)
        for (ax1, ax2), cfg in zip(axes, configs):
            g = c[c.config == cfg]
            for label, h in g.groupby("label", sort=False):
                by_it = h.groupby("iteration").train_loss.median()
                ax1.semilogy(by_it.index.to_numpy(dtype=float), by_it.to_numpy(dtype=float), label=label)
                one = h[h.seed == h.seed.min()].sort_values("seconds")
                ax2.semilogy(one.seconds.to_numpy(dtype=float), one.train_loss.to_numpy(dtype=float), label=label)
            ax1.set(
                title=f"{cfg}: training loss vs sweeps / epochs",
                xlabel="sweep (BCD) / epoch (GD, Adam)",
                ylabel="training loss",
            )
            ax2.set(title=f"{cfg}: vs seconds (first seed)", xlabel="seconds", ylabel="training loss")
            for ax in (ax1, ax2):
                ax.grid(alpha=0.3, which="both")
                ax.legend(fontsize=7, frameon=False)
        fig.tight_layout()
        save_figure(fig, Path(folder) / "loss_vs_sweeps", dpi=130)
        return [fig]


register_task(TASK_ID, DeepTask)
