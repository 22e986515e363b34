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

Local worker processes (the loky pool, a ``LocalCluster``'s workers) die with the process that started
them: the first job a worker runs starts a daemon thread (:func:`watch_parent`) that polls, every
:data:`WATCH_INTERVAL` seconds, whether the worker's parent process has changed (it was killed, even with
``kill -9``, and the worker reparented) or the starting process is gone, and then ends the worker at
once. Without it, a busy loky worker outlives a killed ``papergym compare`` until its job ends. (Linux's
``PR_SET_PDEATHSIG`` is not used: it fires when the parent *thread* that forked the worker exits, and loky
may start workers from a thread other than the main one.) Workers of a remote or SLURM cluster are
not watched: their life is the cluster's business.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["BACKENDS", "WATCH_INTERVAL", "dask_client", "default_n_jobs", "run_jobs", "watch_parent"]

BACKENDS: tuple[str, ...] = ("serial", "joblib", "dask")
WATCH_INTERVAL = 0.25  # seconds between two checks of a local worker's parent
_watching: int | None = None  # the pid this process watches for (set once per worker process)
_watch_lock = threading.Lock()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - exists, owned by someone else
        return True
    return True


def watch_parent(owner: int) -> None:
    """End this (worker) process as soon as its parent or the process ``owner`` is gone. Idempotent.

    ``owner`` is the pid of the process that started the pool (it is the worker's parent for loky
    and ``LocalCluster`` workers). Never call it in the main process itself.
    """
    global _watching
    with _watch_lock:
        if _watching is not None or os.getpid() == owner:
            return
        _watching = owner
    parent = os.getppid()

    def orphaned() -> bool:
        return os.getppid() != parent or not _alive(owner)

    if orphaned():  # the owner died before this worker ran its first job
        os._exit(1)

    def watch() -> None:
        while not orphaned():
            time.sleep(WATCH_INTERVAL)
        os._exit(1)  # no cleanup: nobody is left to receive this worker's results

    threading.Thread(target=watch, name="papergym-parent-watch", daemon=True).start()


class _Watched:
    """``fn`` run in a local worker process that ends itself when the process ``owner`` dies."""

    def __init__(self, fn: Callable[..., Any], owner: int):
        self.fn, self.owner = fn, owner

    def __call__(self, *args: Any) -> Any:
        watch_parent(self.owner)
        return self.fn(*args)


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
    watched = _Watched(fn, os.getpid())
    yield from par(delayed(watched)(*job) for job in jobs)


def dask_client(n: int, scheduler: Any):
    """``(client, cluster)`` for ``scheduler``: ``None`` -> a local cluster of ``n`` one-thread worker processes,
    ``"slurm"`` -> a SLURM cluster of ``n`` jobs, an address -> a client of it, a ``Client`` -> itself; ``cluster``
    is ``None`` unless this call started one."""
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

    client, cluster = dask_client(min(n, len(jobs)), scheduler)
    try:
        # pure=False: every job is submitted even if two had equal arguments (they cannot: the
        # runner deduplicates cells), and dask never serves a result from its own cache
        task = _Watched(fn, os.getpid()) if cluster is not None and scheduler is None else fn
        futures = [client.submit(task, *job, pure=False) for job in jobs]
        for fut in as_completed(futures):
            yield fut.result()
            fut.release()
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
