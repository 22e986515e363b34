"""Per-run random numbers inside numba kernels (shared by the numba agents).

Each run owns a xoshiro256** generator (Blackman & Vigna) whose 4-word state is seeded with four raw
64-bit words of ``numpy.random.default_rng(seed)``, so a run's numbers depend only on its own seed,
whatever it is batched with. (numpy ``Generator`` objects inside numba need a typed list whose first
construction costs ~0.5 s per process and ~1 us per call.)

* :func:`rng_state` -- the ``uint64[4]`` state of one run (Python).
* :func:`rand_uniform` -- the next ``U[0, 1)`` draw of one run (numba, top 53 bits).
* :func:`rand_exponential` -- the next ``Exp(1)`` draw, ``-log(1 - U)`` (numba).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

__all__ = ["rng_state", "rand_uniform", "rand_exponential"]


@njit(cache=True)
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=True)
def rand_uniform(rs):
    """Next U[0, 1) draw of one run: xoshiro256** on the run's state ``rs`` (uint64[4], modified in
    place), top 53 bits."""
    out = _rotl(rs[1] * np.uint64(5), 7) * np.uint64(9)
    t = rs[1] << np.uint64(17)
    rs[2] ^= rs[0]
    rs[3] ^= rs[1]
    rs[1] ^= rs[2]
    rs[0] ^= rs[3]
    rs[2] ^= t
    rs[3] = _rotl(rs[3], 45)
    return (out >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def rand_exponential(rs):
    """Next Exp(1) draw of one run: ``-log(1 - U)`` (finite: ``1 - U >= 2^-53``)."""
    return -math.log(1.0 - rand_uniform(rs))


def rng_state(seed: Any) -> np.ndarray:
    """xoshiro256** state of one run: four raw 64-bit words of ``numpy.random.default_rng(seed)``
    (``seed``: int, SeedSequence, Generator or None)."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    st = rng.bit_generator.random_raw(4).astype(np.uint64)
    if not st.any():  # the all-zero state is the one fixed point of xoshiro
        st[0] = np.uint64(0x9E3779B97F4A7C15)
    return st
