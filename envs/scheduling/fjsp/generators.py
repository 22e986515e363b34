"""Synthetic FJSP instance generators: SD1 (Song et al.) and SD2 (DANIEL, Wang et al.);
see ``docs/papers/fjsp-mistar.md``.

Training sizes ``n x m``: 10x5, 20x5, 15x10, 20x10; generalisation sizes 30x10, 40x10.

``sd1_instance`` [code: fjsp-drl ``env/case_generator.py``]
    operations per job ``~ U{⌊0.8m⌋..⌊1.2m⌋}``; eligible count ``~ U{1..m}`` with the machines drawn
    without replacement; a base time ``p̄ ~ U{1..20}`` per operation and, per eligible machine,
    ``p ~ U{max(1, round(0.8 p̄))..min(20, round(1.2 p̄))}`` (correlated ±20 %).
``sd2_instance`` [code: DANIEL ``data_utils.py::SD2_instance_generator``]
    ``m`` operations per job; eligible count ``k ~ U{1..m}`` ("mix"; ``mode="nf"``: no flexibility,
    ``k = 1`` for every operation);
    ``p ~ U{1..99}`` i.i.d. per (operation, machine), then ``m − k`` machines zeroed.
``sd2_published``
    regenerates DANIEL's published SD2 sets with NumPy's legacy global RNG in the reference call order:
    ``np.random.seed(200)`` (test; 100 = validation) once per (size, split), then for instances 1..100:
    (1) ``randint(1, m+1, size=n·m)`` eligible counts, (2) ``randint(1, 100, size=(n·m, m))`` times,
    (3) for each row with ``k < m`` zero the columns ``choice(arange(m), m − k, replace=False)``.
    The legacy state is saved and restored around the call, so the caller's global RNG is untouched.

Environments draw their own instances from a ``numpy.random.Generator`` (the instance stream of
``SeedSequence(seed)``), never from the legacy RNG.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import numpy as np

from papergym.envs.scheduling.fjsp.instance import Instance
from papergym.validate import one_of, positive_int

__all__ = ["SIZES", "sd1_instance", "sd2_instance", "sd2_published", "parse_size"]

SIZES = ((10, 5), (20, 5), (15, 10), (20, 10), (30, 10), (40, 10))


def parse_size(size: str) -> tuple[int, int]:
    """``"10x5"`` → ``(10, 5)`` (jobs, machines)."""
    try:
        a, b = str(size).lower().split("x")
        n, m = int(a), int(b)
    except ValueError:
        raise ValueError(f"size must look like '10x5' (jobs x machines), got {size!r}") from None
    if n < 1 or m < 1:
        raise ValueError(f"size must have at least one job and one machine, got {size!r}")
    return n, m


def sd1_instance(n_jobs: int, n_machines: int, rng: np.random.Generator, *, name: str = "") -> Instance:
    """One SD1 instance (see the module docstring)."""
    n_jobs, m = positive_int(n_jobs, "n_jobs"), positive_int(n_machines, "n_machines")
    lo, hi = max(1, int(0.8 * m)), max(1, int(1.2 * m))
    job_ops = rng.integers(lo, hi + 1, size=int(n_jobs))
    N = int(job_ops.sum())
    proc = np.zeros((N, m), dtype=np.int64)
    for o in range(N):
        k = int(rng.integers(1, m + 1))
        machines = rng.choice(m, size=k, replace=False)
        base = int(rng.integers(1, 21))
        plo, phi = max(1, round(0.8 * base)), min(20, round(1.2 * base))
        proc[o, machines] = rng.integers(plo, phi + 1, size=k)
    return Instance(job_ops.astype(np.int64), proc, name=name)


def sd2_instance(
    n_jobs: int, n_machines: int, rng: np.random.Generator, *, mode: str = "mix", name: str = ""
) -> Instance:
    """One SD2 instance drawn from a ``numpy.random.Generator`` (``mode``: ``"mix"`` or ``"nf"``)."""
    n, m = positive_int(n_jobs, "n_jobs"), positive_int(n_machines, "n_machines")
    one_of(mode, "mode", ("mix", "nf"))
    N = n * m
    counts = rng.integers(1, m + 1, size=N) if mode == "mix" else np.ones(N, dtype=np.int64)
    proc = rng.integers(1, 100, size=(N, m)).astype(np.int64)
    for o in range(N):
        k = int(counts[o])
        if k < m:
            proc[o, rng.choice(m, size=m - k, replace=False)] = 0
    return Instance(np.full(n, m, dtype=np.int64), proc, name=name)


def sd2_published(
    n_jobs: int, n_machines: int, *, split: str = "test", count: int = 100, name_prefix: str | None = None
) -> list[Instance]:
    """DANIEL's published SD2 ``mix`` sets, regenerated (seed 200 = ``"test"``, 100 = ``"validation"``)."""
    n, m = positive_int(n_jobs, "n_jobs"), positive_int(n_machines, "n_machines")
    seeds = {"test": 200, "validation": 100}
    one_of(split, "split", seeds)
    prefix = f"sd2-{n}x{m}" if name_prefix is None else name_prefix
    saved = np.random.get_state()
    try:
        np.random.seed(seeds[split])
        out = []
        for i in range(int(count)):
            counts = np.random.randint(1, m + 1, size=n * m)
            proc = np.random.randint(1, 100, size=(n * m, m)).astype(np.int64)
            for o in range(n * m):
                k = int(counts[o])
                if k < m:
                    proc[o, np.random.choice(np.arange(m), m - k, replace=False)] = 0
            out.append(Instance(np.full(n, m, dtype=np.int64), proc, name=f"{prefix}/{i + 1:03d}"))
        return out
    finally:
        np.random.set_state(saved)
