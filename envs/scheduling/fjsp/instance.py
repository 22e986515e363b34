"""The flexible job-shop instance (``Instance``) shared by the parser, generators, graph code and envs.

An instance has ``J`` jobs and ``M`` machines; job ``i`` is a chain of ``n_i`` operations, numbered
globally ``0..N-1`` job after job (job 0's operations first, in order). ``proc[o, k]`` is the integer
processing time of operation ``o`` on machine ``k`` (0-based), ``0`` meaning machine ``k`` is not eligible.
Every operation has at least one eligible machine and all times are positive integers.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Instance", "InstanceError"]


class InstanceError(ValueError):
    """An instance that violates the FJSP data rules (names the field and the offending entry)."""


@dataclass(frozen=True, eq=False)
class Instance:
    """A flexible job-shop instance.

    Parameters
    ----------
    job_ops:
        ``(J,)`` number of operations of each job (each ≥ 1).
    proc:
        ``(N, M)`` processing times, ``N = sum(job_ops)``; ``proc[o, k] > 0`` iff machine ``k`` can
        process operation ``o``.
    name:
        Free-form label (``"brandimarte/mk01"``, ``"sd2-10x5/001"``); not part of equality.
    """

    job_ops: np.ndarray
    proc: np.ndarray
    name: str = ""
    # derived (filled in __post_init__)
    op_job: np.ndarray = field(init=False, repr=False)
    op_pos: np.ndarray = field(init=False, repr=False)
    job_start: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        job_ops = np.asarray(self.job_ops)
        proc = np.asarray(self.proc)
        if job_ops.ndim != 1 or job_ops.size == 0:
            raise InstanceError(f"job_ops must be a non-empty 1-d array, got shape {job_ops.shape}")
        if not np.issubdtype(job_ops.dtype, np.integer):
            raise InstanceError(f"job_ops must be integers, got dtype {job_ops.dtype}")
        if (job_ops < 1).any():
            j = int(np.argmax(job_ops < 1))
            raise InstanceError(f"job {j} has {int(job_ops[j])} operations; every job needs at least one")
        if proc.ndim != 2 or proc.shape[1] < 1:
            raise InstanceError(f"proc must be a 2-d (operations x machines) array, got shape {proc.shape}")
        if proc.shape[0] != int(job_ops.sum()):
            raise InstanceError(f"proc has {proc.shape[0]} rows but the jobs have {int(job_ops.sum())} operations")
        if not np.issubdtype(proc.dtype, np.integer):
            if not np.all(np.isfinite(proc)) or not np.all(proc == np.round(proc)):
                raise InstanceError("processing times must be integers")
        proc = proc.astype(np.int64)
        if (proc < 0).any():
            o, k = map(int, np.argwhere(proc < 0)[0])
            raise InstanceError(f"operation {o} has a negative processing time {int(proc[o, k])} on machine {k}")
        empty = ~(proc > 0).any(axis=1)
        if empty.any():
            raise InstanceError(f"operation {int(np.argmax(empty))} has no eligible machine")
        job_ops = job_ops.astype(np.int64)
        job_start = np.concatenate([[0], np.cumsum(job_ops)]).astype(np.int64)
        op_job = np.repeat(np.arange(len(job_ops), dtype=np.int64), job_ops)
        op_pos = np.arange(proc.shape[0], dtype=np.int64) - job_start[op_job]
        for name, arr in (
            ("job_ops", job_ops),
            ("proc", proc),
            ("op_job", op_job),
            ("op_pos", op_pos),
            ("job_start", job_start),
        ):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    # ------------------------------------------------------------------ sizes and derived quantities
    @property
    def n_jobs(self) -> int:
        return int(self.job_ops.shape[0])

    @property
    def n_machines(self) -> int:
        return int(self.proc.shape[1])

    @property
    def n_ops(self) -> int:
        return int(self.proc.shape[0])

    @property
    def eligible(self) -> np.ndarray:
        """``(N, M)`` boolean eligibility."""
        return self.proc > 0

    @property
    def flexibility(self) -> float:
        """Mean number of eligible machines per operation (the ``.fjs`` header's third token)."""
        return float(self.eligible.sum(axis=1).mean())

    @property
    def min_proc(self) -> np.ndarray:
        """``(N,)`` shortest eligible processing time of each operation."""
        return np.where(self.proc > 0, self.proc, np.iinfo(np.int64).max).min(axis=1)

    @property
    def mean_proc(self) -> np.ndarray:
        """``(N,)`` mean eligible processing time of each operation."""
        e = self.eligible
        return self.proc.sum(axis=1) / e.sum(axis=1)

    def lower_bound(self) -> int:
        """A simple valid lower bound on the makespan:
        ``max(max_j Σ_{o∈J_j} min_k p_ok, ⌈Σ_o min_k p_ok / M⌉)``."""
        mp = self.min_proc
        job_lb = int(np.add.reduceat(mp, self.job_start[:-1]).max())
        load_lb = int(-(-int(mp.sum()) // self.n_machines))
        return max(job_lb, load_lb)

    def job_of(self, o: int) -> int:
        return int(self.op_job[o])

    def ops_of(self, j: int) -> range:
        return range(int(self.job_start[j]), int(self.job_start[j + 1]))

    # ------------------------------------------------------------------ identity
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Instance):
            return NotImplemented
        return (
            np.array_equal(self.job_ops, other.job_ops)
            and self.proc.shape == other.proc.shape
            and np.array_equal(self.proc, other.proc)
        )

    def __hash__(self) -> int:
        return hash(self.sha256())

    def sha256(self) -> str:
        """Content hash (job structure and times; the name is not included)."""
        h = hashlib.sha256()
        h.update(np.asarray([self.n_jobs, self.n_machines], dtype="<i8").tobytes())
        h.update(self.job_ops.astype("<i8").tobytes())
        h.update(self.proc.astype("<i8").tobytes())
        return h.hexdigest()

    def __repr__(self) -> str:
        nm = f"{self.name!r}, " if self.name else ""
        return (
            f"Instance({nm}{self.n_jobs} jobs x {self.n_machines} machines, {self.n_ops} operations, "
            f"flexibility {self.flexibility:.2f})"
        )

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict:
        """JSON-serialisable form (``from_dict`` inverts it)."""
        return {
            "name": self.name,
            "n_machines": self.n_machines,
            "job_ops": self.job_ops.tolist(),
            "proc": self.proc.tolist(),
        }

    @classmethod
    def from_dict(cls, d: dict) -> Instance:
        try:
            proc = np.asarray(d["proc"], dtype=np.int64).reshape(-1, int(d["n_machines"]))
            return cls(np.asarray(d["job_ops"], dtype=np.int64), proc, name=str(d.get("name", "")))
        except KeyError as exc:
            raise InstanceError(f"instance dict lacks the field {exc.args[0]!r}") from None
