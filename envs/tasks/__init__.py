"""Solver-benchmark tasks (docs/adding-a-paper.md): ``papergym.envs.tasks.base`` holds the contracts and
the registry; one module per paper (``ode.py``: ``NystromODE-v0``)."""

from papergym.envs.tasks.base import (  # noqa: F401
    Budget,
    BudgetExceeded,
    InstanceRef,
    Task,
    UnknownTaskError,
    list_tasks,
    make_task,
    register_task,
)
