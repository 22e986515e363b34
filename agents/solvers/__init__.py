"""Solvers of the papers' solver-benchmark tasks (importing this package registers them)."""
