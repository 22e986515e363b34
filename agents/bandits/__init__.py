"""Bandit agents of the papers (importing this package registers them)."""
from papergym.agents.bandits import mdbe  # noqa: F401
