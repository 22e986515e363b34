"""Contracts of the solver-benchmark tasks (docs/adding-a-paper.md; benchopt's component model, without
depending on benchopt).

* :class:`Task` -- a family of problem instances with metrics: ``instances(split)`` lists
  :class:`InstanceRef` s, ``make(ref)`` returns ``(problem, evaluator)``: the **public** problem a
  solver sees and the **private** scorer that holds the answer.
* :class:`InstanceRef` -- a JSON-serialisable handle of one instance (task id, split, name, seed,
  parameters).
* :class:`Budget` -- limits of one solve: wall seconds, iterations, task-defined work units.
* Registry -- ``register_task(task_id, factory)``, ``make_task(task_id, **kwargs)``, ``list_tasks()``.
* Splits -- ``dev`` (public seeds, for local tuning) and ``test`` (seeds derived by HMAC-SHA256 from a
  secret that lives only in the evaluator's configuration: ``$PAPERGYM_TEST_SECRET``; see
  :func:`hidden_seeds`). A task's ``instances("test")`` raises :class:`MissingSecretError` without it.

A solver (``papergym.agents.base.Solver``) gets ``solve(problem, budget, report)`` and returns its
solution; ``report(solution, iteration=..., work=...)`` records anytime points, each scored by the
evaluator with the evaluation time excluded from the solver's clock.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from papergym.canonical import canonical_json as _canonical_json
from papergym.canonical import digest, to_json_value
from papergym.validate import finite_float, in_range, positive_float, positive_int

__all__ = [
    "Budget",
    "InstanceRef",
    "Evaluator",
    "Task",
    "register_task",
    "make_task",
    "list_tasks",
    "check_task_id",
    "UnknownTaskError",
    "MissingSecretError",
    "BudgetExceeded",
    "NotApplicable",
    "hidden_seeds",
    "SECRET_ENV",
]

SECRET_ENV = "PAPERGYM_TEST_SECRET"


class UnknownTaskError(KeyError):
    """A task id that papergym does not register."""

    def __str__(self) -> str:
        return str(self.args[0])


class MissingSecretError(RuntimeError):
    """The test split was asked for without the evaluator's secret."""


class BudgetExceeded(RuntimeError):
    """Raised by a solver that knows it cannot finish within its :class:`Budget` (e.g. a dense
    ``n x n`` system that does not fit): the runner records the cell as ``timeout``."""


class NotApplicable(ValueError):
    """Raised by a solver that has no rule for this kind of instance (e.g. an algorithm for diagonal networks
    given a dense one): the runner records no result for the cell (status ``n/a``), neither a score nor a failure."""


@dataclass(frozen=True)
class InstanceRef:
    """One instance of a task.

    ``name``: human-readable and unique within the task and split (``"L1/n=100/s0"``); ``seed``: the
    instance's randomness (family parameters); ``params``: everything else that defines it (JSON).
    """

    task_id: str
    split: str
    name: str
    seed: int
    params: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "split": self.split,
            "name": self.name,
            "seed": int(self.seed),
            # JSON data; non-finite floats stay floats (the key's rule), non-JSON values are left to the key to refuse
            "params": to_json_value(dict(self.params), nonfinite="keep", unknown="keep"),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> InstanceRef:
        return cls(str(d["task_id"]), str(d["split"]), str(d["name"]), int(d["seed"]), dict(d.get("params", {})))

    @property
    def key(self) -> str:
        return digest(self.as_dict(), 16, nonfinite="keep", compact=False)


@dataclass(frozen=True)
class Budget:
    """Limits of one solve (``None``: no limit). Wall time is measured by the runner and is
    authoritative; iterations and work are declared by the solver through ``report``."""

    max_seconds: float | None = None
    max_iterations: int | None = None
    max_work: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_seconds", "max_iterations", "max_work"):
            positive_float(getattr(self, name), f"Budget.{name}", allow_none=True)  # checked, kept as given

    def as_dict(self) -> dict[str, Any]:
        return {"max_seconds": self.max_seconds, "max_iterations": self.max_iterations, "max_work": self.max_work}


@runtime_checkable
class Evaluator(Protocol):
    """Private scorer of one instance: ``evaluate(solution) -> {metric: value}`` (every metric of
    the task; a malformed solution raises ``ValueError`` naming what is wrong)."""

    def evaluate(self, solution: Any) -> dict[str, float]: ...


@runtime_checkable
class Task(Protocol):
    """A solver-benchmark task (docs/adding-a-paper.md).

    ``metrics``: metric -> ``"min"`` or ``"max"``; ``primary``: the ranked metric; ``default_budget``:
    the :class:`Budget` of a solve unless the user gives one.
    """

    id: str
    metrics: Mapping[str, Literal["min", "max"]]
    primary: str
    default_budget: Budget

    def instances(self, split: Literal["dev", "test"] = "dev") -> list[InstanceRef]: ...

    def make(self, ref: InstanceRef) -> tuple[Any, Evaluator]: ...


# -------------------------------------------------------------------------------------------- splits
def hidden_seeds(task_id: str, key: str, k: int, secret: str | bytes | None = None) -> list[int]:
    """``k`` hidden seeds for the test split of ``(task_id, key)``: HMAC-SHA256 of the secret over
    ``"{task_id}/{key}/{i}"``, reduced to 31 bits. Without ``secret``, ``$PAPERGYM_TEST_SECRET``;
    :class:`MissingSecretError` if neither is set (the test split is the evaluator's)."""
    if secret is None:
        secret = os.environ.get(SECRET_ENV)
    if not secret:
        raise MissingSecretError(
            f"the test split needs the evaluator's secret (${SECRET_ENV}); use split='dev' for local tuning"
        )
    sk = secret.encode() if isinstance(secret, str) else bytes(secret)
    out = []
    for i in range(int(k)):
        mac = hmac.new(sk, f"{task_id}/{key}/{i}".encode(), hashlib.sha256).digest()
        out.append(int.from_bytes(mac[:4], "big") & 0x7FFFFFFF)
    return out


# ------------------------------------------------------------------------------------------ registry
_TASKS: dict[str, tuple[str, Callable[..., Task] | None]] = {}
# task id -> module that registers it (imported lazily, so a task whose extra is missing does not
# break the others)
TASK_MODULES: dict[str, str] = {
    "NystromODE-v0": "papergym.envs.tasks.ode.task",
    "PowerLawRandomFeatures-v0": "papergym.envs.tasks.power_law_features.task",
    "DistributedRegression-v0": "papergym.envs.tasks.distributed_regression.task",
    "DeepRegression-v0": "papergym.envs.tasks.deep_regression.task",
    "LowRankRecovery-v0": "papergym.envs.tasks.low_rank.task",
    "DecentralizedBilevel-v0": "papergym.envs.tasks.decentralized_bilevel.task",
    "SimpleBilevel-v0": "papergym.envs.tasks.simple_bilevel.task",
    "PointCloudPH-v0": "papergym.envs.tasks.persistent_homology.task",
    "FeatureStaircase-v0": "papergym.envs.tasks.staircase.task",
    "SubspaceDisentangle-v0": "papergym.envs.tasks.subspace_disentangle.task",
    "LipschitzApprox-v0": "papergym.envs.tasks.lipschitz_approx.task",
    "ContinualDomains-v0": "papergym.envs.tasks.continual_domains.task",
    "PreferenceHallucination-v0": "papergym.envs.tasks.preference.task",
    "RLDataSelection-v0": "papergym.envs.tasks.data_selection.task",
}


def register_task(task_id: str, factory: Callable[..., Task]) -> None:
    """Register ``factory(**task_kwargs) -> Task`` under ``task_id`` (e.g. ``"NystromODE-v0"``)."""
    mod = getattr(factory, "__module__", "")
    _TASKS[task_id] = (mod, factory)


def list_tasks() -> list[str]:
    """Ids of every papergym solver-benchmark task."""
    return sorted(set(TASK_MODULES) | set(_TASKS))


def check_task_id(task_id: str) -> str:
    """The plain id, or :class:`UnknownTaskError` listing the valid ids."""
    base = task_id.split(":")[-1]
    if base not in TASK_MODULES and base not in _TASKS:
        raise UnknownTaskError(f"unknown task {task_id!r}; valid tasks: {', '.join(list_tasks()) or '(none)'}")
    return base


def _factory(task_id: str) -> Callable[..., Task]:
    base = check_task_id(task_id)
    if base not in _TASKS or _TASKS[base][1] is None:
        importlib.import_module(TASK_MODULES[base])
    if base not in _TASKS:
        raise UnknownTaskError(f"module {TASK_MODULES[base]} did not register task {base!r}")
    return _TASKS[base][1]  # type: ignore[return-value]


def task_factory(task_id: str) -> Callable[..., Task]:
    """The registered factory of ``task_id`` (its signature lists the task kwargs)."""
    return _factory(task_id)


def make_task(task_id: str, **task_kwargs: Any) -> Task:
    """Build the task ``task_id`` with its constructor kwargs (errors name the offending kwarg)."""
    return _factory(task_id)(**task_kwargs)


def canonical_json(obj: Any) -> str:
    """Compact canonical JSON; non-finite floats raise (see :mod:`papergym.canonical`)."""
    return _canonical_json(obj, nonfinite="raise")


def save_figure(fig: Any, stem: Any, dpi: int = 150) -> None:
    """Write a task figure as ``<stem>.png`` and ``<stem>.svg`` (the folder is created)."""
    from pathlib import Path

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(stem.with_suffix(".png"), dpi=dpi, bbox_inches="tight")
    fig.savefig(stem.with_suffix(".svg"), bbox_inches="tight")


# ------------------------------------------------------------------------------- task-argument helpers
def check_ints(v: Any, name: str, minimum: int) -> tuple[int, ...]:
    """A task kwarg that is an integer or a list of integers ``>= minimum`` -> a tuple without repeats."""
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    if not vals:
        raise ValueError(f"{name} must not be empty")
    return tuple(dict.fromkeys(positive_int(x, name, minimum) for x in vals))


def check_floats(
    v: Any, name: str, *, above: float | None = None, at_least: float | None = None, below: float | None = None
) -> tuple[float, ...]:
    """A task kwarg that is a number or a list of numbers, finite and within the given bounds (``above``,
    ``below`` exclusive, ``at_least`` inclusive; at most one of ``above`` / ``at_least``) -> a tuple
    without repeats."""
    if above is not None and at_least is not None:
        raise ValueError("check_floats takes at most one of above= and at_least=")
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    if not vals:
        raise ValueError(f"{name} must not be empty")
    if above is None and at_least is None and below is None:
        return tuple(dict.fromkeys(finite_float(x, name) for x in vals))
    low = above if at_least is None else at_least
    return tuple(dict.fromkeys(in_range(x, name, low, below, low_closed=at_least is not None) for x in vals))


def check_names(v: Any, name: str, valid: Sequence[str]) -> tuple[str, ...]:
    """A task kwarg that is a name or a list of names from ``valid`` -> a tuple without repeats."""
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    if not vals or any(x not in valid for x in vals):
        raise ValueError(f"{name} must be names from {', '.join(valid)}, got {v!r}")
    return tuple(dict.fromkeys(vals))


def split_instances(
    task_id: str,
    split: str,
    configs: Sequence[tuple[str, Mapping[str, Any]]],
    dev_seeds: Sequence[int],
    n_test: int = 5,
) -> list[InstanceRef]:
    """One instance per configuration ``(key, params)`` and seed: ``dev`` -> the public ``dev_seeds`` (named
    ``"{key}/s{seed}"``), ``test`` -> ``n_test`` hidden seeds per key (:func:`hidden_seeds`, ``"{key}/t{i}"``)."""
    if split == "dev":
        return [InstanceRef(task_id, "dev", f"{k}/s{s}", int(s), dict(p)) for k, p in configs for s in dev_seeds]
    if split == "test":
        return [
            InstanceRef(task_id, "test", f"{k}/t{i}", s, dict(p))
            for k, p in configs
            for i, s in enumerate(hidden_seeds(task_id, k, n_test))
        ]
    raise ValueError(f"split must be 'dev' or 'test', got {split!r}")


def instance_params(ref: InstanceRef, task_id: str) -> dict[str, Any]:
    """A copy of ``ref.params`` after checking that ``ref`` is an instance of ``task_id`` (a ``ValueError``
    naming both otherwise); what every task's ``make`` starts with."""
    if ref.task_id.split(":")[-1] != task_id:
        raise ValueError(f"instance {ref.name!r} belongs to task {ref.task_id!r}, not {task_id}")
    return dict(ref.params)


def instances_by_name(task: Task, names: Sequence[str], split: str = "dev") -> list[InstanceRef]:
    """The instances of ``task`` whose names (or name prefixes before ``/``) are in ``names``; a clear
    error lists the valid names otherwise."""
    refs = task.instances(split)
    out = []
    valid = [r.name for r in refs]
    for n in names:
        hit = [r for r in refs if r.name == n or r.name.split("/")[0] == n]
        if not hit:
            raise ValueError(
                f"unknown instance {n!r} of {task.id}; valid: {', '.join(valid[:20])}"
                + (" ..." if len(valid) > 20 else "")
            )
        out += [r for r in hit if r not in out]
    return out
