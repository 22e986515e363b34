"""Bandit baselines (importing this package registers them)."""
from papergym.baselines.bandits import binning_ucb  # noqa: F401,E402  (binning-ucb, binning-ucb-oracle)
from papergym.baselines.bandits import sliding  # noqa: F401,E402  (sw-ucb, d-ucb)
from papergym.baselines.bandits import exp3  # noqa: F401,E402  (exp3s, rexp3)
from papergym.baselines.bandits import uniform  # noqa: F401,E402  (uniform-random)
from papergym.baselines.bandits import zooming  # noqa: F401,E402  (zooming)
from papergym.baselines.bandits import blin  # noqa: F401,E402  (blin)
from papergym.baselines.bandits import phase_elimination  # noqa: F401,E402  (pe-mvr, reds)
