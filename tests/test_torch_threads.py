"""papergym.torch_threads: the one torch thread guard (context manager and decorator)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from papergym.torch_threads import torch_threads
from papergym_tests import require

torch = require("torch", "torch")


@pytest.fixture
def two_threads():
    old = torch.get_num_threads()
    torch.set_num_threads(2)
    yield 2
    torch.set_num_threads(old)


def test_context_manager_sets_and_restores(two_threads):
    with torch_threads(1) as t:
        assert t is torch and torch.get_num_threads() == 1
    assert torch.get_num_threads() == two_threads
    with torch_threads(3):
        assert torch.get_num_threads() == 3
        with torch_threads(1):  # nested guards restore in order
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 3
    assert torch.get_num_threads() == two_threads


def test_restored_when_the_block_raises(two_threads):
    with pytest.raises(RuntimeError, match="boom"), torch_threads(1):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == two_threads


def test_decorator_each_call(two_threads):
    seen = []

    @torch_threads(1)
    def f(x):
        """doc of f"""
        seen.append(torch.get_num_threads())
        if x < 0:
            raise ValueError("negative")
        return 2 * x

    assert f.__name__ == "f" and f.__doc__ == "doc of f"
    assert f(3) == 6 and f(4) == 8
    with pytest.raises(ValueError, match="negative"):
        f(-1)
    assert seen == [1, 1, 1] and torch.get_num_threads() == two_threads


@pytest.mark.parametrize("bad", [0, -1, 1.0, True, "1"])
def test_bad_count(bad):
    with pytest.raises(ValueError, match="n must be a positive integer"), torch_threads(bad):
        pass


def test_callers_use_the_guard(two_threads):
    from papergym.agents.base import torch_single_thread

    with torch_single_thread() as t:
        assert t is torch and torch.get_num_threads() == 1
    assert torch.get_num_threads() == two_threads


def test_imports_without_loading_torch():
    code = "import sys, papergym.torch_threads; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
