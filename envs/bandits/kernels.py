"""numba kernels shared by the bandit environments' change-point bookkeeping.

Both the non-stationary Lipschitz oracle (:mod:`papergym.envs.bandits.lipschitz.oracle`) and the semi-bandit
instances (:mod:`papergym.envs.bandits.semibandit.instances`) store a piecewise-constant schedule as the sorted
start rounds of its segments; :func:`last_le` finds the segment of a round.
"""

from __future__ import annotations

from numba import njit

__all__ = ["last_le"]


@njit(cache=True)
def last_le(starts, t):  # pragma: no cover - compiled
    """Largest ``p`` with ``starts[p] <= t`` (binary search; ``starts`` ascending, ``starts[0] <= t``)."""
    lo = 0
    hi = starts.shape[0] - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= t:
            lo = mid
        else:
            hi = mid - 1
    return lo
