"""Bandit environments: NonStatLipschitz-v0 (lipschitz.py)."""
