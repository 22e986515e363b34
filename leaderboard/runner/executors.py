"""Execution backends for the runner: ``serial``, ``joblib`` (default) and ``dask``.

Every backend runs the same pure job function on the same job arguments, so results are identical,
bit for bit, whichever backend runs them; only wall time differs. Each backend yields results as
jobs complete (in any order); the runner writes each cell file as soon as its result arrives.

* ``serial`` -- in this process, in order. Easiest to debug.
* ``joblib`` -- a local loky process pool (``n_jobs`` workers, default: all cores).
* ``dask`` -- a ``distributed.Client``: a ``LocalCluster`` (``n_jobs`` single-threaded worker
  processes) when no scheduler is given, ``scheduler="tcp://host:8786"`` for a running cluster,
  ``scheduler="slurm"`` for a SLURM cluster through dask-jobqueue (``n_jobs`` single-core jobs), or an
  existing ``distributed.Client`` object passed as ``scheduler``.

BLAS/OpenMP threads are pinned to one per worker (``threadpoolctl`` inside each job), so parallel
jobs do not oversubscribe the cores.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["BACKENDS", "run_jobs", "default_n_jobs"]

BACKENDS: tuple[str, ...] = ("serial", "joblib", "dask")


def default_n_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def run_jobs(
    fn: Callable[..., Any],
    jobs: Sequence[tuple],
    *,
    backend: str = "joblib",
    n_jobs: int | None = None,
    scheduler: Any = None,
) -> Iterator[Any]:
    """Run ``fn(*job)`` for every job, yielding results as they complete."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid backends: {', '.join(BACKENDS)}")
    if not jobs:
        return iter(())
    n = n_jobs or default_n_jobs()
    if backend == "serial":
        return (fn(*job) for job in jobs)
    if backend == "joblib":
        return _run_joblib(fn, jobs, n)
    return _run_dask(fn, jobs, n, scheduler)


def _run_joblib(fn, jobs, n):
    from joblib import Parallel, delayed

    n = min(n, len(jobs))
    if n == 1:
        yield from (fn(*job) for job in jobs)
        return
    par = Parallel(n_jobs=n, backend="loky", return_as="generator_unordered")
    yield from par(delayed(fn)(*job) for job in jobs)


def _dask_client(n: int, scheduler: Any):
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise RuntimeError("the dask backend needs the 'dask' extra: pip install 'papergym[dask]'") from exc
    if scheduler is not None and not isinstance(scheduler, str):
        return scheduler, None  # a Client given by the caller: not ours to close
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        )
        return Client(cluster), cluster
    if scheduler == "slurm":
        try:
            from dask_jobqueue import SLURMCluster
        except ImportError as exc:
            raise RuntimeError("scheduler='slurm' needs dask-jobqueue: pip install 'papergym[slurm]'") from exc
        cluster = SLURMCluster(cores=1, processes=1, memory="4GB")
        cluster.scale(jobs=n)
        return Client(cluster), cluster
    return Client(scheduler), None


def _run_dask(fn, jobs, n, scheduler):
    from distributed import as_completed

    client, cluster = _dask_client(min(n, len(jobs)), scheduler)
    try:
        # pure=False: every job is submitted even if two had equal arguments (they cannot: the
        # runner deduplicates cells), and dask never serves a result from its own cache
        futures = [client.submit(fn, *job, pure=False) for job in jobs]
        for fut in as_completed(futures):
            yield fut.result()
            fut.release()
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
