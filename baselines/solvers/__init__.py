"""Baseline and reference solvers of the solver-benchmark tasks (importing this package registers them)."""
