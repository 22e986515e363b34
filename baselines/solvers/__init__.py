"""Baseline and reference solvers of the solver-benchmark tasks (importing this package registers them)."""

from papergym.baselines.solvers import (  # noqa: F401  (registers them; pinn imports torch lazily)
    continual,
    data_selection,
    decentralized_bilevel,
    deep_gd,
    distributed,
    dual_lssvm,
    lipschitz_nets,
    low_rank,
    persistent_homology,
    pinn,
    plrf_sgd,
    preference,
    simple_bilevel,
    solve_ivp,
    staircase,
    subspace,
)
