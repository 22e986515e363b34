"""Solvers of the papers' solver-benchmark tasks (importing this package registers them)."""
from papergym.agents.solvers import bcd, dana, local_sgd, nystrom_lssvm, radagrad  # noqa: F401  (registers them)
