"""Bandit agents of the papers (importing this package registers them)."""
from papergym.agents.bandits import mdbe  # noqa: F401
from papergym.agents.bandits import gp_ucb  # noqa: F401,E402  (gp-ucb)
from papergym.agents.bandits import ftpl_frechet  # noqa: F401,E402  (ftpl-frechet)
