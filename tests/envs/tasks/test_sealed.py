"""``seal`` hides an evaluator behind a callable; ``find_private`` (the leak walker the task tests use) finds
every path a solver could read by attributes, closures and ``__self__``."""

from __future__ import annotations

import copy
import functools
import pickle
from dataclasses import dataclass

import numpy as np
import pytest

from papergym.envs.tasks.sealed import SealedCall, seal
from papergym_tests import find_private


class _Evaluator:
    def __init__(self):
        self.x_star = np.arange(5.0)

    def grad(self, x):
        return x - self.x_star


@dataclass
class _Problem:
    grad: object
    x0: np.ndarray


def test_the_walker_finds_bound_methods_partials_closures_and_copies():
    ev = _Evaluator()
    x = ev.x_star
    assert find_private(_Problem(ev.grad, np.zeros(5)), [ev.x_star]) == ["problem.grad.__self__.x_star"]
    assert find_private(_Problem(functools.partial(np.subtract, b=x), np.zeros(5)), [x])
    assert find_private(_Problem(lambda y: y - x, np.zeros(5)), [x])
    assert find_private(_Problem(None, x.copy()), [x]) == ["problem.x0"]  # a copy is found by value
    assert find_private(_Problem(None, {"a": [1, (2, x * 1.0)]}), [x])


def test_a_sealed_callable_computes_the_same_and_reaches_nothing():
    ev = _Evaluator()
    p = _Problem(seal(ev.grad), np.zeros(5))
    assert find_private(p, [ev.x_star]) == []
    np.testing.assert_array_equal(p.grad(np.ones(5)), 1.0 - ev.x_star)
    assert isinstance(p.grad, SealedCall) and seal(p.grad) is p.grad
    assert not hasattr(p.grad, "__dict__") and not hasattr(p.grad, "__self__") and not hasattr(p.grad, "__wrapped__")
    assert "grad" in repr(p.grad)
    assert copy.deepcopy(p.grad) is p.grad
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(p.grad)
    with pytest.raises(TypeError, match="callable"):
        seal(3)
