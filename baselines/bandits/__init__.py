"""Bandit baselines (importing this package registers them)."""
