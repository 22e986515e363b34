"""The board's worker: claims queued submissions from the store and evaluates them.

``papergym worker`` runs a :class:`Worker` over the store of a shared board: it takes the oldest queued
job (:meth:`papergym.leaderboard.board.store.Store.claim_job`) under a lease, evaluates it with the
callable it was given -- the CLI passes
:func:`papergym.leaderboard.board.evaluate.evaluate_job` (the sandbox, the hidden seeds) -- while a
:class:`LeaseKeeper` thread renews the lease every third of its length, and writes the outcome in one
fenced transaction (:meth:`~papergym.leaderboard.board.store.Store.complete_job`). Any number of workers,
on any machines, can serve one store:

* a worker that dies (SIGKILL, a lost machine) stops renewing; once its lease expires the next worker's
  :meth:`~papergym.leaderboard.board.store.Store.requeue_expired` puts the job back in the queue (after
  ``max_attempts`` losses it ends as ``error``). The retry has the same ``submission_id``, so its seeds are
  the same.
* a worker that lost its lease (paused past it, cut off from the database) writes nothing: its
  ``complete_job`` is refused, so every job is stored exactly once.
* an exception from the evaluate callable is the evaluator's failure, not the submission's: the job ends
  as ``error`` with the exception's type and message (no stderr of the submission is shown).

Stopping: :meth:`Worker.run` in the main thread handles SIGTERM and SIGINT. The first signal lets the
current job finish and then stops; a second one abandons the job (nothing of it is stored, its lease
expires and another worker evaluates it again).
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import threading
from collections.abc import Callable
from typing import Any, Self

from papergym.validate import positive_float, positive_int

from .jobs import Job, JobOutcome

__all__ = ["LeaseKeeper", "Worker", "default_worker_id"]

log = logging.getLogger(__name__)


def default_worker_id() -> str:
    """``"<hostname>:<pid>:<8 random hex digits>"``: unique per worker, and says where it runs."""
    return f"{socket.gethostname()[:150]}:{os.getpid()}:{secrets.token_hex(4)}"


class LeaseKeeper:
    """Renews ``worker_id``'s lease on a running submission every ``lease_seconds / 3`` on a daemon
    thread, until :meth:`stop` (or the ``with`` block ends).

    :attr:`lost` becomes true when the store says the lease is no longer this worker's (the thread then
    ends: the result will be refused by ``complete_job`` anyway). A failing heartbeat call (the database
    briefly unreachable) is logged and retried at the next tick; the lease survives two missed ticks.
    Also usable by a process that evaluates a submission it created itself
    (:meth:`papergym.leaderboard.board.store.Store.create_submission` with a lease).
    """

    def __init__(self, store: Any, submission_id: int, worker_id: str, lease_seconds: float):
        self.store = store
        self.submission_id = int(submission_id)
        self.worker_id = worker_id
        self.lease_seconds = positive_float(lease_seconds, "lease_seconds")
        self.lost = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"lease-{self.submission_id}", daemon=True)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stopped.wait(self.lease_seconds / 3):
            try:
                held = self.store.heartbeat(self.submission_id, self.worker_id, self.lease_seconds)
            except Exception as exc:  # noqa: BLE001 -- any failure of the store: retried at the next tick; the lease outlives two missed ones
                log.warning("heartbeat of submission %d failed: %s: %s", self.submission_id, type(exc).__name__, exc)
                continue
            if not held:
                self.lost = True
                log.warning(
                    "worker %s lost its lease on submission %d: its result will not be stored",
                    self.worker_id,
                    self.submission_id,
                )
                return


class _Abandon(BaseException):
    """Raised in the main thread by a second SIGTERM/SIGINT: leave the current job to the lease."""


class Worker:
    """Evaluates queued submissions of a store, one at a time (module docstring).

    Parameters
    ----------
    store
        A :class:`papergym.leaderboard.board.store.Store`.
    evaluate
        ``evaluate(job) -> JobOutcome``; the CLI passes
        :func:`papergym.leaderboard.board.evaluate.evaluate_job` with the secret and the sandbox bound.
    worker_id
        The lease owner's name; default :func:`default_worker_id`.
    lease_seconds
        How long a claim lasts without a heartbeat (renewed every third of it).
    poll_seconds
        The wait between two looks at an empty queue.
    max_attempts
        Claims of one job before a lost evaluation ends it as ``error`` (``requeue_expired``).
    """

    def __init__(
        self,
        store: Any,
        evaluate: Callable[[Job], JobOutcome],
        *,
        worker_id: str | None = None,
        lease_seconds: float = 60.0,
        poll_seconds: float = 0.5,
        max_attempts: int = 3,
    ):
        if not callable(evaluate):
            raise ValueError(f"evaluate must be a callable job -> JobOutcome, got {type(evaluate).__name__}")
        max_attempts = positive_int(max_attempts, "max_attempts")
        if worker_id is not None and (not isinstance(worker_id, str) or not worker_id.strip()):
            raise ValueError(f"worker_id must be a non-empty string, got {worker_id!r}")
        self.store = store
        self.evaluate = evaluate
        self.worker_id = worker_id if worker_id is not None else default_worker_id()
        self.lease_seconds = positive_float(lease_seconds, "lease_seconds")
        self.poll_seconds = positive_float(poll_seconds, "poll_seconds")
        self.max_attempts = int(max_attempts)
        self._current: int | None = None

    def __repr__(self) -> str:
        return f"Worker({self.worker_id!r}, {self.store!r})"

    def _evaluate(self, job: Job) -> JobOutcome:
        try:
            outcome = self.evaluate(job)
            if not isinstance(outcome, JobOutcome):
                raise TypeError(f"the evaluate callable returned {type(outcome).__name__}, not a JobOutcome")
        except Exception as exc:
            log.exception("evaluating submission %d failed", job.submission_id)
            return JobOutcome(status="error", rows=[], message=f"evaluator failure: {type(exc).__name__}: {exc}")
        return outcome

    def run_once(self) -> int | None:
        """Requeue expired jobs, claim the oldest queued one, evaluate it under a renewed lease and store
        the outcome; return its submission id, or ``None`` when the queue is empty.

        The id is returned also when the outcome was refused because the lease was lost meanwhile (a
        warning is logged; the job belongs to whoever claimed it next).
        """
        expired = self.store.requeue_expired(self.max_attempts)
        if expired:
            log.info("expired leases handled: submissions %s", expired)
        job = self.store.claim_job(self.worker_id, self.lease_seconds)
        if job is None:
            return None
        sid = job.submission_id
        log.info(
            "worker %s evaluates submission %d (%s on %s, %s split, attempt %d)",
            self.worker_id,
            sid,
            job.name,
            job.benchmark_id,
            job.split,
            job.attempts,
        )
        self._current = sid
        try:
            with LeaseKeeper(self.store, sid, self.worker_id, self.lease_seconds):
                outcome = self._evaluate(job)
        finally:
            self._current = None
        try:
            stored = self.store.complete_job(sid, self.worker_id, outcome)
        except ValueError as exc:  # the outcome itself is invalid: the evaluator's failure
            log.exception("the outcome of submission %d cannot be stored", sid)
            stored = self.store.complete_job(
                sid,
                self.worker_id,
                JobOutcome(
                    status="error",
                    rows=[],
                    message=f"evaluator failure: its outcome cannot be stored: {exc}",
                    wall_seconds=outcome.wall_seconds,
                    cpu_seconds=outcome.cpu_seconds,
                    sandbox=outcome.sandbox,
                ),
            )
        if stored:
            log.info("submission %d: %s", sid, outcome.status)
        else:
            log.warning("submission %d: the lease was lost before the outcome was stored; nothing written", sid)
        return sid

    def run(self, stop: threading.Event | None = None, max_jobs: int | None = None) -> int:
        """Evaluate jobs until ``stop`` is set or ``max_jobs`` have been handled; return how many were.

        An empty queue is polled every ``poll_seconds``. An error of the store (e.g. the database briefly
        unreachable) is logged and the loop goes on after ``poll_seconds``. In the main thread SIGTERM
        and SIGINT stop the loop after the current job; a second signal abandons it (module docstring).
        """
        if max_jobs is not None:
            max_jobs = positive_int(max_jobs, "max_jobs", 0)
        stop = stop if stop is not None else threading.Event()
        previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():

            def on_signal(signum: int, frame: Any) -> None:
                if stop.is_set() and self._current is not None:
                    raise _Abandon(signum)
                stop.set()
                if self._current is not None:
                    log.warning(
                        "%s: stopping after submission %d (again to abandon it)",
                        signal.Signals(signum).name,
                        self._current,
                    )

            for sig in (signal.SIGTERM, signal.SIGINT):
                previous[sig] = signal.signal(sig, on_signal)
        done = 0
        try:
            while not stop.is_set() and (max_jobs is None or done < max_jobs):
                try:
                    sid = self.run_once()
                except _Abandon:
                    raise
                except Exception:
                    log.exception("worker %s: the store failed; retrying in %.1f s", self.worker_id, self.poll_seconds)
                    stop.wait(self.poll_seconds)
                    continue
                if sid is None:
                    stop.wait(self.poll_seconds)
                else:
                    done += 1
        except _Abandon:
            log.warning(
                "worker %s abandoned its job: its lease expires within %.0f s and it is evaluated again",
                self.worker_id,
                self.lease_seconds,
            )
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return done
