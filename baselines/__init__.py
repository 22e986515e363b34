"""Baselines the papers compare with."""
