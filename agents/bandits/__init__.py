"""Bandit agents of the papers (importing this package registers them)."""

from papergym.agents.bandits import (
    ftpl_frechet,  # noqa: F401  (ftpl-frechet)
    gp_ucb,  # noqa: F401  (gp-ucb)
    mdbe,  # noqa: F401
)
