"""Argument validation: the checks that papergym's agents, solvers, environments and tasks share.

Every check takes ``(value, name, ...)``, returns the value converted (``int`` / ``float`` / the
choice) and raises :class:`ValueError` naming the argument, in one wording:

* :func:`positive_int` -- ``"n must be an integer >= 1, got 0"``;
* :func:`finite_float` -- ``"x must be a finite number, got nan"``;
* :func:`positive_float` -- ``"lr must be a positive finite number, got -1"`` (``allow_zero``:
  ``"a non-negative finite number"``);
* :func:`in_range` -- ``"rho must be a number in (0, 1), got 1.5"`` (brackets show open / closed ends);
* :func:`one_of` -- ``"kernel must be one of 'rbf', 'matern'; got 'x'"``;
* :func:`boolean` -- ``"reinit must be True or False, got 1"`` (the one check that takes a ``bool``:
  ``True`` / ``False`` or ``numpy.bool_``, never ``0`` / ``1`` or a string).

Numbers are ``int`` / ``float`` and numpy integers / floats (:class:`numbers.Integral` /
:class:`numbers.Real`); ``bool`` (and ``numpy.bool_``) is refused everywhere, and so are strings, even
numeric ones. Invalid arguments are a ``ValueError`` whatever their type (not ``TypeError``), so a
caller reports every bad argument the same way.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any, Literal, TypeVar, overload

import numpy as np

__all__ = ["boolean", "finite_float", "in_range", "one_of", "positive_float", "positive_int"]

T = TypeVar("T")


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def positive_int(
    value: Any, name: str, minimum: int = 1, *, maximum: int | None = None, integral_float: bool = False
) -> int:
    """``value`` as an ``int`` if it is an integer ``>= minimum`` (``minimum=0``: non-negative).

    ``maximum``: also ``<= maximum`` (``"d must be an integer in [1, 8], got 9"``). ``integral_float``: a
    float with an integral value (``3.0``, e.g. from a JSON or ``--hp`` hyperparameter) counts as that
    integer."""
    if integral_float and isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    if not _is_int(value) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum}], got {value!r}")
    return int(value)


def finite_float(value: Any, name: str) -> float:
    """``value`` as a ``float`` if it is a finite real number."""
    if not _is_real(value) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


@overload
def positive_float(value: Any, name: str, *, allow_zero: bool = ..., allow_none: Literal[False] = ...) -> float: ...
@overload
def positive_float(value: Any, name: str, *, allow_zero: bool = ..., allow_none: bool) -> float | None: ...
def positive_float(value: Any, name: str, *, allow_zero: bool = False, allow_none: bool = False) -> float | None:
    """``value`` as a ``float`` if it is a finite number ``> 0`` (``allow_zero``: ``>= 0``); ``None``
    passes unchanged with ``allow_none``."""
    if value is None and allow_none:
        return None
    if not _is_real(value) or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        what = "a non-negative" if allow_zero else "a positive"
        raise ValueError(f"{name} must be {what} finite number, got {value!r}")
    return float(value)


def in_range(
    value: Any,
    name: str,
    low: float | None = None,
    high: float | None = None,
    *,
    low_closed: bool = False,
    high_closed: bool = False,
) -> float:
    """``value`` as a ``float`` if it is a finite number in the interval from ``low`` to ``high``
    (``None``: unbounded on that side), open at each end unless ``low_closed`` / ``high_closed``."""
    ok = _is_real(value) and math.isfinite(value)
    if ok and low is not None:
        ok = value >= low if low_closed else value > low
    if ok and high is not None:
        ok = value <= high if high_closed else value < high
    if not ok:
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        interval = (
            f"{'[' if low_closed and low is not None else '('}{lo}, "
            f"{hi}{']' if high_closed and high is not None else ')'}"
        )
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}")
    return float(value)


def one_of(value: T, name: str, choices: Iterable[Any]) -> T:
    """``value`` if it is one of ``choices`` (``value in choices``)."""
    choices = tuple(choices)
    try:
        ok = value in choices
    except (TypeError, ValueError):  # e.g. an array, whose comparison has no single truth value
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def boolean(value: Any, name: str) -> bool:
    """``value`` as a ``bool`` if it is ``True`` / ``False`` or a ``numpy.bool_`` (not ``0`` / ``1``)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)
