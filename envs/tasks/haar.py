"""Random orthogonal matrices: the one Haar sampler of the task generators.

:func:`haar` draws a standard Gaussian matrix and orthonormalises it with :func:`orthonormalize` (QR,
then each column's sign flipped so that ``R`` has a non-negative diagonal). Without the sign
correction numpy's QR is not Haar-distributed (its ``R`` diagonal signs follow LAPACK's convention);
with it, the ``n x n`` draw is Haar on ``O(n)`` and the ``n x k`` draw is Haar on the Stiefel manifold
(Mezzadri, "How to generate random matrices from the classical compact groups", Notices of the AMS
54(5), 2007, arXiv:math-ph/0609050).

The shape of the Gaussian draw is part of a generator's definition (it fixes how many numbers are
taken from ``rng``, so every later draw of an instance depends on it): ``square_draw=True`` draws
``n x n`` and keeps the first ``k`` columns, ``square_draw=False`` draws ``n x k``. Each task keeps the
form it was published with, so instances stay bit-identical.
"""

from __future__ import annotations

import numpy as np

__all__ = ["haar", "orthonormalize"]


def orthonormalize(A: np.ndarray) -> np.ndarray:
    """``Q`` of the reduced QR of ``A`` (``n x k``, ``n >= k``) with the column signs chosen so that
    ``R``'s diagonal is non-negative (a zero pivot keeps its column's sign)."""
    q, r = np.linalg.qr(A)
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


def haar(rng: np.random.Generator, n: int, k: int | None = None, *, square_draw: bool = False) -> np.ndarray:
    """An ``n x k`` matrix with orthonormal columns, Haar-distributed (``k=None``: ``n x n``, orthogonal).
    ``square_draw``: draw ``n x n`` normals and keep the first ``k`` columns (module docstring)."""
    k = n if k is None else k
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got n={n}, k={k}")
    if square_draw:
        return orthonormalize(rng.standard_normal((n, n)))[:, :k]
    return orthonormalize(rng.standard_normal((n, k)))
