"""Baseline and reference solvers of the solver-benchmark tasks (importing this package registers them)."""
from papergym.baselines.solvers import dual_lssvm, pinn, solve_ivp  # noqa: F401  (NystromODE-v0; pinn imports torch lazily)
