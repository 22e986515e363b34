"""Shared test helpers.

``require(module, extra)`` imports an optional dependency: without it a test skips on a user's machine but fails
in CI (``CI=true``, which ``.ci/run`` exports), so a missing install step cannot hide. Test modules that need it
at import time call it at module level (``from papergym_tests import require``; pytest imports every conftest.py
as the one module ``conftest``, so tests/leaderboard/conftest.py would shadow this file under that name); tests
that need it in one function use the ``needs`` fixture, the same helper.

``find_private(problem, [private arrays or objects])`` lists the paths by which a solver could reach private
state from its problem through attributes, closures and ``__self__`` (``from papergym_tests import find_private``).
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


def find_private(root, private, *, scalars=(), max_nodes: int = 200_000) -> list[str]:
    """Paths from ``root`` (a solver's problem) to any of ``private`` (arrays, compared by value, or other
    objects, by identity) or to a float equal to one of ``scalars`` (private parameters), walking what a solver can read
    without ``gc``, frames or module globals: ``vars()``, ``__slots__``, every non-dunder attribute (``dir``, properties
    included), dict / list / tuple / set items, functions' closures, defaults and ``__wrapped__``, bound methods'
    ``__self__`` and ``__func__``, ``functools.partial``'s parts. Modules and classes are not entered (that is module
    state, like ``gc``: only the board's process separation stops it). An empty list means nothing private is
    reachable."""
    import functools
    import types

    import numpy as np

    arrays = [np.asarray(a) for a in private if isinstance(a, np.ndarray)]
    ids = {id(o) for o in private if not isinstance(o, np.ndarray)}

    def is_private(o) -> bool:
        if id(o) in ids:
            return True
        if isinstance(o, np.ndarray) and o.size > 1:
            for a in arrays:
                if o is a or (o.shape == a.shape and o.dtype.kind in "fciub" and np.array_equal(o, a)):
                    return True
                if a.size > 1 and o.size == a.size and o.dtype.kind in "fc" and np.allclose(o.ravel(), a.ravel()):
                    return True
        return False

    found: list[str] = []
    seen: set[int] = set()
    stack = [(root, "problem")]
    secret = {float(x) for x in scalars}
    while stack and len(seen) < max_nodes:
        obj, path = stack.pop()
        if secret and isinstance(obj, (float, np.floating)) and float(obj) in secret:
            found.append(path)
            continue
        if id(obj) in seen or isinstance(
            obj, (types.ModuleType, type, str, bytes, int, float, complex, bool, type(None), types.BuiltinFunctionType)
        ):
            continue
        seen.add(id(obj))
        if is_private(obj):
            found.append(path)
            continue
        if isinstance(obj, np.ndarray):
            if obj.dtype == object:
                stack.extend((v, f"{path}[{i}]") for i, v in enumerate(obj.ravel()[:1000]))
            elif obj.base is not None:
                stack.append((obj.base, f"{path}.base"))
            continue
        kids: list = []
        if isinstance(obj, dict):
            kids += [(v, f"{path}[{k!r}]") for k, v in list(obj.items())] + [(k, f"{path}.key") for k in obj]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            kids += [(v, f"{path}[{i}]") for i, v in enumerate(list(obj)[:10_000])]
        if isinstance(obj, types.MethodType):
            kids += [(obj.__self__, f"{path}.__self__"), (obj.__func__, f"{path}.__func__")]
        if isinstance(obj, types.FunctionType):
            kids += [
                (c.cell_contents, f"{path}.__closure__[{i}]")
                for i, c in enumerate(obj.__closure__ or ())
                if _cell_filled(c)
            ]
            kids += [(obj.__defaults__, f"{path}.__defaults__"), (obj.__kwdefaults__, f"{path}.__kwdefaults__")]
        if isinstance(obj, functools.partial):
            kids += [(obj.func, f"{path}.func"), (obj.args, f"{path}.args"), (obj.keywords, f"{path}.keywords")]
        for name in ("__wrapped__", "__self__", "__func__"):
            try:
                kids.append((object.__getattribute__(obj, name), f"{path}.{name}"))
            except Exception:  # noqa: BLE001, S110 - absent, or refused
                pass
        try:
            kids += [(v, f"{path}.{k}") for k, v in vars(obj).items()]
        except TypeError:
            pass
        for cls in type(obj).__mro__:
            for slot in (
                getattr(cls, "__slots__", ()) if isinstance(getattr(cls, "__slots__", ()), (tuple, list)) else ()
            ):
                try:
                    kids.append((object.__getattribute__(obj, slot), f"{path}.{slot}"))
                except Exception:  # noqa: BLE001, S110
                    pass
        if not isinstance(obj, (dict, list, tuple, set, frozenset, types.FunctionType, types.MethodType)):
            for name in dir(obj):
                if name.startswith("__"):
                    continue
                try:
                    kids.append((getattr(obj, name), f"{path}.{name}"))
                except Exception:  # noqa: BLE001, S110 - a property may refuse
                    pass
        stack.extend(kids)
    return found


def _cell_filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


# a stable name for test modules to import the helpers from (see the module docstring)
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
