"""Lint and formatting: ``ruff check .`` and ``ruff format --check .`` pass on the whole repository.

The rules and the formatter's settings are ``[tool.ruff]`` in ``pyproject.toml`` (line length 120, Python 3.11,
pycodestyle / pyflakes / import order / bugbear / pyupgrade / simplify, the sandbox child's ban on importing
papergym). To fix a failure locally: ``python -m ruff check --fix .`` (safe fixes only; review the rest) and
``python -m ruff format .``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from papergym_tests import require

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    require("ruff", "test")
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--no-cache", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_ruff_check_passes():
    res = _ruff("check", "--output-format", "concise")
    if res.returncode != 0:
        pytest.fail(f"ruff check found problems:\n{res.stdout}{res.stderr}", pytrace=False)


def test_ruff_format_check_passes():
    res = _ruff("format", "--check")
    if res.returncode != 0:
        pytest.fail(f"files not formatted (run `python -m ruff format .`):\n{res.stdout}{res.stderr}", pytrace=False)


def test_ruff_reads_the_project_config():
    """The checks above only mean something with the project's settings: ruff must see pyproject.toml's rules."""
    res = _ruff("check", "--show-settings")
    assert res.returncode == 0, res.stderr
    settings = res.stdout
    assert "linter.line_length = 120" in settings, settings[:2000]
    assert "_sandbox_child" in settings, "the per-file rules of pyproject.toml are not in effect"
