"""papergym: a benchmark gym built from NeurIPS 2025 papers.

The subpackages are :mod:`papergym.envs` (Gymnasium environments and solver tasks), :mod:`papergym.agents`
(reference agents and solvers), :mod:`papergym.baselines` and :mod:`papergym.leaderboard` (runners, the
``papergym`` command, the boards). Importing ``papergym`` itself loads none of them.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__: str = version("papergym")
except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
    __version__ = "unknown (not installed)"

__all__ = ["__version__"]
