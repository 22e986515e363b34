"""Canonical JSON and content hashes: the one implementation papergym uses.

Cache keys of ``papergym compare`` / ``papergym bench`` cells, instance keys of solver tasks (which
also derive the hidden test seeds), and the JSON columns of the leaderboard store all go through
:func:`to_json_value` and :func:`canonical_json`; :func:`digest` is their SHA-256 hex prefix.

The rule
--------
:func:`to_json_value` turns a value into plain JSON data:

* mappings become ``dict`` with ``str`` keys (``str(k)``; with ``strict_keys=True`` only ``str`` and
  non-``bool`` ``int`` keys are accepted); lists and **tuples** become ``list``;
* numpy scalars and arrays become Python numbers / nested lists (``.tolist()``), so ``np.float64(0.1)``
  and ``0.1`` give the same JSON and the same hash;
* ``None``, ``bool``, ``str``, ``int`` and finite ``float`` stay as they are;
* **non-finite floats** follow ``nonfinite``:

  - ``"raise"`` (the default): :class:`NonFiniteError`; strict JSON has no NaN or infinity;
  - ``"repr"``: the strings ``"nan"``, ``"inf"``, ``"-inf"`` (Python's ``repr``) -- the rule of the
    cell keys of ``papergym compare`` and ``papergym bench``, whose cached files are named by them;
  - ``"name"``: the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (the JavaScript names) -- the
    rule of the leaderboard store's JSON columns, which read them back as floats;
  - ``"keep"``: they stay floats, and :func:`canonical_json` writes the non-standard literals ``NaN`` /
    ``Infinity`` -- the rule of :attr:`papergym.envs.tasks.base.InstanceRef.key`, which keys the
    hidden test seeds and so must never change;

* anything else -- ``pathlib.Path``, dataclasses, sets, callables, ``datetime`` -- is not a JSON value
  and raises :class:`NotJSONError` (convert it first: ``str(path)``, ``dataclasses.asdict(obj)``), so
  a hash never depends on a ``repr``. ``unknown="keep"`` returns such values unchanged instead (for
  a serialised form that is validated later).

:func:`canonical_json` sorts keys and uses compact separators (``","`` and ``":"``); ``compact=False``
gives ``json.dumps``'s default separators (``", "`` and ``": "``), which the instance keys and the
store's stored rows were written with. Non-ASCII characters are escaped (``ensure_ascii``).

See docs/conventions.md (seeding) for how instance keys derive the test seeds.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

__all__ = ["NONFINITE_RULES", "NonFiniteError", "NotJSONError", "canonical_json", "digest", "to_json_value"]

NonFinite = Literal["raise", "repr", "name", "keep"]
NONFINITE_RULES: tuple[str, ...] = ("raise", "repr", "name", "keep")

_NAMES = {"repr": ("nan", "inf", "-inf"), "name": ("NaN", "Infinity", "-Infinity")}


class NotJSONError(TypeError, ValueError):
    """A value that is not JSON data (a ``TypeError`` and, for the store's contract, a ``ValueError``)."""


class NonFiniteError(ValueError):
    """A NaN or infinity under ``nonfinite="raise"``."""


def to_json_value(
    obj: Any,
    *,
    nonfinite: NonFinite = "raise",
    strict_keys: bool = False,
    unknown: Literal["raise", "keep"] = "raise",
    where: str = "value",
) -> Any:
    """Plain JSON data for ``obj`` under the rule of the module docstring. ``where`` names the value
    in error messages (``"spec"`` -> ``spec['a'][2]: ...``)."""
    if nonfinite not in NONFINITE_RULES:
        raise ValueError(f"nonfinite must be one of {', '.join(NONFINITE_RULES)}, got {nonfinite!r}")
    return _walk(obj, nonfinite, strict_keys, unknown, where)


def _walk(obj: Any, nonfinite: str, strict_keys: bool, unknown: str, where: str) -> Any:
    if isinstance(obj, (np.ndarray, np.generic)):
        obj = obj.tolist()
    if obj is None or isinstance(obj, (bool, str, int)):
        return obj
    if isinstance(obj, float):
        if math.isfinite(obj) or nonfinite == "keep":
            return obj
        if nonfinite == "raise":
            raise NonFiniteError(f"{where}: {obj!r} is not a finite number (strict JSON has no NaN or infinity)")
        nan, pos, neg = _NAMES[nonfinite]
        return nan if math.isnan(obj) else (pos if obj > 0 else neg)
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            if strict_keys and (not isinstance(k, (str, int)) or isinstance(k, bool)):
                raise NotJSONError(f"{where}: key {k!r} is not a string")
            out[str(k)] = _walk(v, nonfinite, strict_keys, unknown, f"{where}[{k!r}]")
        return out
    if isinstance(obj, (list, tuple)):
        return [_walk(v, nonfinite, strict_keys, unknown, f"{where}[{i}]") for i, v in enumerate(obj)]
    if unknown == "keep":
        return obj
    raise NotJSONError(
        f"{where}: {type(obj).__name__} value {obj!r} is not a JSON value (JSON values: "
        "dict, list, tuple, str, int, float, bool, None, numpy numbers and arrays)"
    )


def canonical_json(
    obj: Any, *, nonfinite: NonFinite = "raise", compact: bool = True, strict_keys: bool = False, where: str = "value"
) -> str:
    """``obj`` as JSON text with sorted keys, under the rule of the module docstring; equal data give
    equal text whatever the key order or the numeric types (Python or numpy)."""
    data = to_json_value(obj, nonfinite=nonfinite, strict_keys=strict_keys, where=where)
    return json.dumps(data, sort_keys=True, separators=(",", ":") if compact else None, allow_nan=nonfinite == "keep")


def digest(obj: Any, n: int = 16, *, nonfinite: NonFinite = "raise", compact: bool = True) -> str:
    """The first ``n`` hex digits of the SHA-256 of :func:`canonical_json` of ``obj``."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 64:
        raise ValueError(f"n must be an integer in 1..64, got {n!r}")
    text = canonical_json(obj, nonfinite=nonfinite, compact=compact)
    return hashlib.sha256(text.encode()).hexdigest()[:n]
