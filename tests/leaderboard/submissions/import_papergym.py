"""Tries to reach the env module (and its oracle)."""

import papergym.envs  # noqa: F401


def make_agent(problem, *, seeds):
    raise AssertionError("unreachable")
