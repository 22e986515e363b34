"""The public part of a problem as the sandboxed child receives it: gymnasium spaces and
:class:`papergym.envs.spec.ProblemSpec` as plain JSON values and arrays (rebuilt inside the sandbox by
:func:`papergym.leaderboard.board._sandbox_child.problem_from_public`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.leaderboard.board import channel as _ch

__all__ = ["problem_to_public", "roundtrip", "space_to_public"]

# ------------------------------------------------------------------------------- public problem
_BASE_KEYS = {
    "n",
    "nvec",
    "low",
    "high",
    "dtype",
    "shape",
    "start",
    "spaces",
    "bounded_below",
    "bounded_above",
    "low_repr",
    "high_repr",
    "seed",
}


def _scalar(v: Any) -> bool:
    return isinstance(v, (bool, int, float, str, np.bool_, np.integer, np.floating))


def space_to_public(space: Any) -> dict[str, Any]:
    """A gymnasium space as a plain description (Box / Discrete / MultiBinary / MultiDiscrete / Dict /
    Tuple). A subclass (e.g. papergym's ``MSet(MultiBinary)``) is described as its gymnasium base
    class plus ``attrs``: its public scalar attributes and properties (``m``, ``d``)."""
    from gymnasium import spaces

    bases = (spaces.Box, spaces.Discrete, spaces.MultiBinary, spaces.MultiDiscrete, spaces.Dict, spaces.Tuple)
    base = next((c for c in type(space).__mro__ if c in bases), None)
    if base is None:
        raise TypeError(
            f"space {type(space).__name__} cannot be sent to a sandbox (supported: "
            f"{', '.join(b.__name__ for b in bases)} and their subclasses)"
        )
    d: dict[str, Any] = {"type": base.__name__}
    if base is spaces.Box:
        d.update(low=np.asarray(space.low), high=np.asarray(space.high), dtype=str(space.dtype))
    elif base is spaces.Discrete:
        d.update(n=int(space.n), start=int(space.start))
    elif base is spaces.MultiBinary:
        n = space.n
        d.update(n=[int(x) for x in n] if isinstance(n, (tuple, list, np.ndarray)) else int(n))
    elif base is spaces.MultiDiscrete:
        d.update(nvec=np.asarray(space.nvec), dtype=str(space.dtype), start=np.asarray(space.start))
    elif base is spaces.Dict:
        d.update(spaces={str(k): space_to_public(v) for k, v in space.spaces.items()})
    else:
        d.update(spaces=[space_to_public(v) for v in space.spaces])
    if type(space) is not base:
        attrs = {}
        for k, v in vars(space).items():
            if not k.startswith("_") and k not in _BASE_KEYS and _scalar(v):
                attrs[k] = v.item() if isinstance(v, np.generic) else v
        for cls in type(space).__mro__:
            if cls is base:
                break
            for k, v in vars(cls).items():
                if isinstance(v, property) and not k.startswith("_") and k not in _BASE_KEYS and k not in attrs:
                    try:
                        val = getattr(space, k)
                    except Exception:  # noqa: BLE001, S112 - a property that cannot be read is not sent
                        continue
                    if _scalar(val):
                        attrs[k] = val.item() if isinstance(val, np.generic) else val
        d["class"] = type(space).__name__
        d["attrs"] = attrs
    return d


def problem_to_public(problem: Any) -> dict[str, Any]:
    """The public part of a :class:`papergym.envs.spec.ProblemSpec` as JSON values and arrays:
    ``env_id``, ``horizon``, ``params`` and the two spaces (:func:`space_to_public`). The child
    rebuilds a look-alike with attribute access to the parameters and real gymnasium spaces."""
    params = {}
    for k, v in dict(problem.params).items():
        params[str(k)] = v
    return {
        "env_id": str(problem.env_id),
        "horizon": int(problem.horizon),
        "params": params,
        "action_space": space_to_public(problem.action_space),
        "observation_space": space_to_public(problem.observation_space),
    }


def roundtrip(value: Any) -> Any:
    """``value`` through the channel's codec (what the child receives)."""
    frame = _ch.encode(0, value)
    return _ch.decode(memoryview(frame)[4:])[1]
