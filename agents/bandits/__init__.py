"""Bandit agents of the papers (importing this package registers them)."""
