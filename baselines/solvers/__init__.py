"""Baseline and reference solvers of the solver-benchmark tasks (importing this package registers them)."""
from papergym.baselines.solvers import distributed, dual_lssvm, pinn, plrf_sgd, solve_ivp  # noqa: F401  (pinn: torch lazily)
