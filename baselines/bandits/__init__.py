"""Bandit baselines (importing this package registers them)."""
from papergym.baselines.bandits import zooming  # noqa: F401,E402  (zooming)
from papergym.baselines.bandits import blin  # noqa: F401,E402  (blin)
