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
