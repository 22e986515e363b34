"""``NystromODE-v0``: initial-value problems solved by collocation, scored against exact solutions.

This package: :mod:`.task`, :mod:`.report`. The task's public names are re-exported here."""

from papergym.envs.tasks.ode.task import (
    DEFAULT_GATE,
    DEFAULT_GATES,
    LINEAR_PROBLEMS,
    N_TEST_SEEDS,
    NONLINEAR_PROBLEMS,
    PROBLEMS,
    TASK_ID,
    LinearForm,
    ODEEvaluator,
    ODEProblem,
    ODETask,
    collocation_times,
    exact_solution,
    family,
    make_problem,
    problem_params,
    query_times,
    served_problem,
    solution_array,
)

__all__ = [
    "DEFAULT_GATE",
    "DEFAULT_GATES",
    "LINEAR_PROBLEMS",
    "LinearForm",
    "NONLINEAR_PROBLEMS",
    "N_TEST_SEEDS",
    "ODEEvaluator",
    "ODEProblem",
    "ODETask",
    "PROBLEMS",
    "TASK_ID",
    "collocation_times",
    "exact_solution",
    "family",
    "make_problem",
    "problem_params",
    "query_times",
    "served_problem",
    "solution_array",
]
