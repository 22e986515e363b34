"""What passes between the board's service, its store and its workers: a queued evaluation
(:class:`Job`) and what a worker found (:class:`JobOutcome`).

A submission to a shared board is a *job*: the service stores the submitted file and its settings in
the store with status ``queued``; a worker (:mod:`papergym.leaderboard.board.worker`) claims it under a
lease, evaluates it in the sandbox and writes the outcome -- every run row and the final status -- in one
transaction. Splits:

``validation``
    public seeds, the same for everyone (derived without the secret); full feedback to the author: each
    run's status and metrics, the submission's stderr tail.
``test``
    the hidden seeds (derived from the evaluator's secret); feedback is the aggregate score with its
    confidence interval and each run's status only. Ranked.
``local``
    a submission evaluated by ``papergym submit`` without ``--server`` on the submitter's own machine:
    never ranked on a shared board.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["JOB_SPLITS", "Job", "JobOutcome"]

#: the splits a submission can be evaluated on (module docstring)
JOB_SPLITS: tuple[str, ...] = ("validation", "test", "local")


@dataclass(frozen=True)
class Job:
    """One queued submission, as a worker claims it from the store.

    ``code`` is the submitted Python file's bytes, ``code_name`` its file name (``my_agent.py``) and
    ``attr`` the factory inside it. ``attempts`` counts the claims so far (1 on the first); a job whose
    worker died is claimed again with the same ``submission_id``, so everything derived from it (the
    agent seeds of a test run) is the same on the retry.
    """

    submission_id: int
    benchmark_id: str
    version: str
    name: str
    author: str
    kind: str  # "agent" | "solver"
    split: str  # one of JOB_SPLITS
    code: bytes
    code_name: str
    attr: str
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    attempts: int = 1


@dataclass
class JobOutcome:
    """What the evaluation of a job produced: the submission's ``status`` (``ok`` | ``partial`` |
    ``error`` | ``timeout`` | ``oom`` | ``invalid_action`` | ``diverged``), its run rows (the format of
    :meth:`papergym.leaderboard.board.store.Store.add_runs`), a ``message`` and the ``stderr_tail`` --
    both empty for a test-split job, whose feedback is aggregate only -- the seconds, and the isolation
    used (``full`` for ranked evaluation)."""

    status: str
    rows: list[dict[str, Any]]
    message: str = ""
    stderr_tail: str = ""
    wall_seconds: float | None = None
    cpu_seconds: float | None = None
    sandbox: str = ""
