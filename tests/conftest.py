"""Shared test helpers.

``needs`` fixture: ``needs(module)`` a test that needs an optional dependency or service skips on a user's machine
without it, but fails in CI (``CI=true``), so a missing install step cannot hide.
"""

from __future__ import annotations

import importlib
import os

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _needs(module: str):
    try:
        return importlib.import_module(module)
    except ImportError:
        if IN_CI:
            pytest.fail(f"{module} is required in CI (install the project's extras)")
        pytest.skip(f"{module} not installed")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Cell files of every test go to a temporary folder, never to the user's cache."""
    monkeypatch.setenv("PAPERGYM_CACHE", str(tmp_path_factory.mktemp("cells")))


@pytest.fixture
def needs():
    """``needs("distributed")`` imports an optional module: skip locally, fail in CI, if it is missing."""
    return _needs
