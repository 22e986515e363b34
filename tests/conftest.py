"""Shared test helpers.

``require(module, extra)`` imports an optional dependency: without it a test skips on a user's machine but fails
in CI (``CI=true``, which ``.ci/run`` exports), so a missing install step cannot hide. Test modules that need it
at import time call it at module level (``from papergym_tests import require``; pytest imports every conftest.py
as the one module ``conftest``, so tests/leaderboard/conftest.py would shadow this file under that name); tests
that need it in one function use the ``needs`` fixture, the same helper.
"""

from __future__ import annotations

import importlib
import os
import sys

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(module: str, extra: str | None = None):
    """Import and return ``module``; if it cannot be imported, skip (locally) or fail (``CI=true``).

    ``extra`` names the papergym extra that installs it (``require("torch", "torch")``), for the message.
    Works at module level (the whole file skips, or fails to collect under CI) and inside a test.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        hint = f"pip install -e '.[{extra}]'" if extra else "install the project's extras"
        if IN_CI:
            pytest.fail(f"{module} is required under CI=true but cannot be imported ({exc}); {hint}", pytrace=False)
        pytest.skip(f"{module} not installed ({hint})", allow_module_level=True)


# a stable name for test modules to import the helper from (see the module docstring)
sys.modules["papergym_tests"] = sys.modules[__name__]


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Cell files of every test go to a temporary folder, never to the user's cache."""
    monkeypatch.setenv("PAPERGYM_CACHE", str(tmp_path_factory.mktemp("cells")))


@pytest.fixture
def needs():
    """``needs("distributed")`` imports an optional module: skip locally, fail in CI, if it is missing
    (:func:`require`; ``needs(module, extra)`` names the extra in the message)."""
    return require


def _check_env_state_dependent(env, **kwargs):
    """``gymnasium.utils.env_checker.check_env`` for envs whose legal actions depend on the state
    (``metadata["state_dependent_actions"]``; FJSP: the next operations, the critical path). Gymnasium's
    ``check_step_determinism`` samples its action *before* ``reset(seed)``, and such an action may be
    illegal after the reset (InvalidActionError by design); here the same check samples it after the
    reset. Every other check runs unchanged."""
    import gymnasium.utils.env_checker as ec

    def step_determinism(env, seed: int = 123) -> None:
        env.reset(seed=seed)
        env.action_space.seed(seed)
        action = env.action_space.sample()
        obs0, r0, te0, tr0, _ = env.step(action)
        env.reset(seed=seed)
        obs1, r1, te1, tr1, _ = env.step(action)
        assert ec.data_equivalence(obs0, obs1), "step is not deterministic after reset(seed)"
        assert r0 == r1 and te0 == te1 and tr0 == tr1

    if not env.unwrapped.metadata.get("state_dependent_actions", False):
        return ec.check_env(env, **kwargs)
    original = ec.check_step_determinism
    ec.check_step_determinism = step_determinism
    try:
        return ec.check_env(env, **kwargs)
    finally:
        ec.check_step_determinism = original


@pytest.fixture
def check_env_any():
    """``check_env`` that also serves envs with state-dependent legal actions (see above)."""
    return _check_env_state_dependent
