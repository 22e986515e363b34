"""papergym.validate: the shared argument checks (values, conversions and the exact messages that the
per-module validators they replaced raised)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pytest

from papergym.validate import finite_float, in_range, one_of, positive_float, positive_int


def _msg(fn, *a, **kw):
    with pytest.raises(ValueError) as exc:
        fn(*a, **kw)
    return str(exc.value)


def test_positive_int():
    assert positive_int(3, "n") == 3 and type(positive_int(np.int64(3), "n")) is int
    assert positive_int(0, "n", 0) == 0 and positive_int(5, "n", minimum=5) == 5
    for bad in (0, -2, 1.0, 2.5, True, np.bool_(True), "3", None, np.float64(2.0)):
        assert _msg(positive_int, bad, "n") == f"n must be an integer >= 1, got {bad!r}"
    assert _msg(positive_int, 1, "m", 2) == "m must be an integer >= 2, got 1"
    assert _msg(positive_int, -1, "n_top", 0) == "n_top must be an integer >= 0, got -1"


def test_finite_float():
    assert finite_float(-2, "x") == -2.0 and type(finite_float(np.float32(0.5), "x")) is float
    assert finite_float(Fraction(1, 4), "x") == 0.25
    for bad in (math.nan, math.inf, -np.inf, True, "1.0", None, [1.0]):
        assert _msg(finite_float, bad, "x") == f"x must be a finite number, got {bad!r}"


def test_positive_float():
    assert positive_float(2, "lr") == 2.0 and positive_float(np.float64(1e-9), "lr") == 1e-9
    assert positive_float(0, "c", allow_zero=True) == 0.0
    for bad in (0, 0.0, -1, math.inf, math.nan, True, np.bool_(False), "0.5", None):
        assert _msg(positive_float, bad, "lr") == f"lr must be a positive finite number, got {bad!r}"
    assert _msg(positive_float, -1e-3, "c", allow_zero=True) == "c must be a non-negative finite number, got -0.001"


def test_in_range():
    assert in_range(0.5, "rho", 0, 1) == 0.5
    assert in_range(1, "rho", 0, 1, high_closed=True) == 1.0 and in_range(0, "rho", 0, 1, low_closed=True) == 0.0
    assert in_range(1e9, "x", 0) == 1e9 and in_range(-1e9, "x", high=0) == -1e9
    assert _msg(in_range, 1, "rho", 0, 1) == "rho must be a number in (0, 1), got 1"
    assert _msg(in_range, 0, "rho", 0, 1) == "rho must be a number in (0, 1), got 0"
    assert _msg(in_range, 2, "rho", 0, 1, low_closed=True, high_closed=True) == "rho must be a number in [0, 1], got 2"
    assert _msg(in_range, 0, "lr", 0) == "lr must be a number in (0, inf), got 0"
    assert _msg(in_range, 1, "x", high=1) == "x must be a number in (-inf, 1), got 1"
    for bad in (math.nan, math.inf, True, "0.5", None):
        assert "rho must be a number in (0, 1)" in _msg(in_range, bad, "rho", 0, 1)


def test_one_of():
    assert one_of("rbf", "kernel", ("rbf", "matern")) == "rbf"
    assert one_of(2, "k", iter([1, 2])) == 2
    assert _msg(one_of, "x", "kernel", ("rbf", "matern")) == "kernel must be one of 'rbf', 'matern'; got 'x'"
    assert re.match(r"v must be one of 'a'; got array", _msg(one_of, np.array([1, 2]), "v", ("a",)))


def test_moved_callers_keep_their_messages():
    """Solvers whose private validators moved here raise what they raised before."""
    from papergym.agents.solvers.nystrom_lssvm import NystromLSSVM

    with pytest.raises(ValueError, match=re.escape("m must be an integer >= 2, got 1")):
        NystromLSSVM(m=1)
    with pytest.raises(ValueError, match="init must be one of"):
        NystromLSSVM(init="nope")

    from papergym.agents.solvers.adasdbo import AdaSDBO
    from papergym.agents.solvers.dbgd import DBGD
    from papergym.baselines.solvers.solve_ivp import SolveIVP

    with pytest.raises(ValueError, match=re.escape("report_every must be an integer >= 1, got 0")):
        DBGD(report_every=0)
    with pytest.raises(ValueError, match=re.escape("report_every must be an integer >= 1, got 2.0")):
        AdaSDBO(report_every=2.0)
    with pytest.raises(ValueError, match=re.escape("rtol must be a positive finite number, got -1.0")):
        SolveIVP(rtol=-1.0)
    assert SolveIVP(rtol=np.float32(1e-6)).rtol == pytest.approx(1e-6)
