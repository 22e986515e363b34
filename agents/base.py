"""Agent protocols and the agent registry.

An :class:`Agent` plays one run; a :class:`BatchedAgent` plays ``n_envs`` independent runs at once
over a leading batch axis (used by the runner with an env's native vector entry point). A batched
agent must give, for every run, exactly what the per-run agent gives with the same seed: batching is
a speed-up, never a change of algorithm. Agents draw randomness only from generators built from the
seed they are given (see :class:`papergym.envs.spec.UniformStream`).

Registry::

    register_agent("mdbe", factory, envs=["NonStatLipschitz-v0"], role="paper",
                   batched_factory=BatchedMDBE)
    agent = make_agent("mdbe", problem, seed=agent_seed(0), c0=0.4)
    list_agents("NonStatLipschitz-v0")           # -> [AgentInfo(...), ...]

Roles: ``paper`` (the paper's method), ``baseline`` (what the paper compares with) and ``oracle``
(privileged reference lines: the factory also receives ``oracle=`` -- one per run, or a list for the
batched factory -- and the result is drawn as a reference and never ranked).

Diagnostics (optional): an agent may define ``diagnostics() -> dict``; the runner stores it with the
run. Per-run agents return scalars or lists (e.g. ``{"restarts": 3, "restart_times": [...]}``);
batched agents return, for each key, a sequence with one entry per run. ``restarts`` is the
conventional key for the number of restarts / detected changes and is shown in comparison tables.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import inspect
import sys
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "Agent",
    "BatchedAgent",
    "AgentInfo",
    "register_agent",
    "make_agent",
    "make_batched_agent",
    "list_agents",
    "get_agent_info",
    "UnknownAgentError",
    "AgentUnavailableError",
    "UnavailableAgent",
    "list_unavailable_agents",
    "optional_agent_module",
    "extra_of",
    "ROLES",
    "PerRunFromBatched",
    "Solver",
    "SolverInfo",
    "SOLVER_ROLES",
    "register_solver",
    "make_solver",
    "list_solvers",
    "get_solver_info",
    "UnknownSolverError",
]

Role = Literal["paper", "baseline", "oracle"]
ROLES: tuple[str, ...] = ("paper", "baseline", "oracle")

# packages whose import registers agents -> the env ids they register agents for; loaded lazily by the registry
# functions, only those of the env asked (making a game env does not import the scheduling agents' torch)
_BANDIT_ENVS = ("NonStatLipschitz-v0", "NoiseFreeGPBandit-v0", "MSetSemiBandit-v0")
_GAME_ENVS = ("EntropicMeanField-v0", "EntropicMatrixGame-v0", "EntropicMarkovGame-v0")
_AGENT_PACKAGES: dict[str, tuple[str, ...]] = {
    "papergym.agents.bandits": _BANDIT_ENVS,
    "papergym.baselines.bandits": _BANDIT_ENVS,
    "papergym.agents.scheduling": ("FJSPImprove-v0",),
    "papergym.baselines.scheduling": ("FJSP-v0", "FJSPImprove-v0"),
    "papergym.agents.games": _GAME_ENVS,
    "papergym.baselines.games": _GAME_ENVS,
}


@runtime_checkable
class Agent(Protocol):
    """One run. ``__init__(problem, *, seed=None, **hyperparameters)``."""

    def act(self, observation: Any) -> Any:
        """Action for the next round."""

    def update(self, action: Any, reward: float, observation: Any) -> None:
        """Feedback after ``env.step(action)`` returned ``(observation, reward, ...)``."""


@runtime_checkable
class BatchedAgent(Protocol):
    """``n_envs`` independent runs. ``__init__(problem, *, seeds, **hyperparameters)``.

    ``act(observations)`` takes the ``(n_envs, ...)`` observations and returns ``(n_envs, ...)``
    actions; ``update(actions, rewards, observations)`` takes ``(n_envs,)`` rewards.
    """

    n_envs: int

    def act(self, observations: np.ndarray) -> np.ndarray: ...

    def update(self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray) -> None: ...


class UnknownAgentError(KeyError):
    """An agent name that is not registered (for the env asked)."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


class AgentUnavailableError(UnknownAgentError):
    """A known agent whose module cannot be imported here: an optional package (and its extra) is missing."""


@dataclass(frozen=True)
class AgentInfo:
    name: str
    factory: Callable[..., Any]
    envs: tuple[str, ...]
    role: str
    batched_factory: Callable[..., Any] | None = None
    description: str = ""
    defaults: dict[str, Any] = field(default_factory=dict)

    @property
    def code_hash(self) -> str:
        """Hash of the source files of the factories (part of every cell key)."""
        return _code_hash(self.factory, self.batched_factory)


@dataclass(frozen=True)
class UnavailableAgent:
    """An agent that is known but cannot be built here: importing ``module`` failed because the optional package
    ``missing`` is not installed; ``extra`` is the papergym extra that installs it."""

    name: str
    envs: tuple[str, ...]
    role: str
    module: str
    missing: str
    extra: str | None

    @property
    def reason(self) -> str:
        if self.extra:
            return (
                f"needs the {self.extra} extra ({self.missing} is not installed): pip install 'papergym[{self.extra}]'"
            )
        return f"needs the package {self.missing!r}, which is not installed"


# name -> entries; one name may be registered separately for different envs (e.g. ``uniform-random``
# of NonStatLipschitz-v0 and of NoiseFreeGPBandit-v0 are different factories)
_REGISTRY: dict[str, list[AgentInfo]] = {}
# name -> agents whose module failed to import for want of an optional package
_UNAVAILABLE: dict[str, list[UnavailableAgent]] = {}
# agent packages already imported (or whose import failed and was reported)
_LOADED: set[str] = set()


def _source_modules(obj: Any) -> list[Any]:
    """The module defining ``obj`` (a ``functools.partial`` is unwrapped to its function) and, transitively,
    every ``papergym`` module its module-level names refer to: the code that decides what ``obj`` does
    (e.g. a baseline's module, the env helpers and numerics it imports)."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    root = sys.modules.get(getattr(obj, "__module__", "") or "", None)
    if root is None:
        return []
    seen = {root.__name__: root}
    stack = [root]
    while stack:
        mod = stack.pop()
        for v in list(vars(mod).values()):
            name = v.__name__ if isinstance(v, types.ModuleType) else getattr(v, "__module__", None)
            if isinstance(name, str) and name.startswith("papergym.") and name not in seen and name in sys.modules:
                seen[name] = sys.modules[name]
                stack.append(seen[name])
    return [seen[k] for k in sorted(seen)]


def module_file_bytes(obj: Any) -> bytes:
    """Source of ``obj``'s module and of the papergym modules it depends on (:func:`_source_modules`),
    each prefixed by its name; ``repr(obj)`` where no source is found."""
    parts = []
    for mod in _source_modules(obj):
        try:
            path = inspect.getsourcefile(mod)
            if path:
                with open(path, "rb") as fh:
                    parts.append(mod.__name__.encode() + b"\0" + fh.read())
        except (TypeError, OSError):
            continue
    return b"\0\0".join(parts) if parts else repr(obj).encode()


def _code_hash(*objs: Any) -> str:
    h = hashlib.sha256()
    for o in objs:
        if o is not None:
            h.update(module_file_bytes(o))
    return h.hexdigest()[:16]


def register_agent(
    name: str,
    factory: Callable[..., Any],
    envs: Iterable[str],
    role: Role = "baseline",
    *,
    batched_factory: Callable[..., Any] | None = None,
    description: str = "",
    defaults: dict[str, Any] | None = None,
) -> None:
    """Register an agent under a kebab-case ``name`` for the env ids in ``envs``.

    ``factory(problem, *, seed=None, **hp)`` builds an :class:`Agent`; the optional
    ``batched_factory(problem, *, seeds, **hp)`` a :class:`BatchedAgent`. Oracle-role factories also
    take ``oracle=`` (batched: ``oracles=``, a list). ``defaults`` documents the hyperparameters and
    their default values (shown by ``papergym list``).
    """
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    if not name or name != name.lower() or "_" in name or " " in name:
        raise ValueError(f"agent names are kebab-case, got {name!r}")
    info = AgentInfo(
        name=name,
        factory=factory,
        envs=tuple(envs),
        role=role,
        batched_factory=batched_factory,
        description=description,
        defaults=dict(defaults or {}),
    )
    entries = _REGISTRY.setdefault(name, [])
    clash = [e for e in entries if set(e.envs) & set(info.envs)]
    for e in clash:
        if _qualname(e.factory) != _qualname(factory):
            raise ValueError(
                f"agent {name!r} is already registered for {sorted(set(e.envs) & set(info.envs))} "
                f"by {_qualname(e.factory)}"
            )
        entries.remove(e)  # re-registration of the same factory (e.g. a module reloaded)
    entries.append(info)


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def _missing_package(exc: ImportError) -> str | None:
    """The top-level name of the third-party package whose absence raised ``exc``; ``None`` when the failing module
    is papergym's own (a bug, not a missing extra) or unnamed."""
    name = getattr(exc, "name", None)
    if not name:
        return None
    top = name.split(".")[0]
    return None if top == "papergym" else top


def extra_of(package: str) -> str | None:
    """The papergym extra that installs the optional ``package`` (``"torch_geometric"`` -> ``"torch"``)."""
    return _EXTRA_OF.get(package.split(".")[0])


def optional_agent_module(
    module: str, names: Iterable[str], envs: Iterable[str], role: Role = "baseline", *, requires: Iterable[str] = ()
) -> types.ModuleType | None:
    """Import ``module``, which the agents ``names`` (for ``envs``) need, and return it. ``requires``: optional
    packages the module imports only when an agent runs; they are checked to be installed, not imported.

    When the import fails because an optional third-party package is missing, the agents are recorded as
    unavailable (``papergym list`` shows them with the reason; :func:`make_agent` raises
    :class:`AgentUnavailableError` naming the extra), a warning names them, the package and its extra, and ``None``
    is returned. Any other error -- a missing papergym module, an exception raised by the module's code -- propagates.
    """
    import importlib.util

    for pkg in requires:
        if importlib.util.find_spec(pkg) is None:
            _mark_unavailable(module, tuple(names), tuple(envs), role, pkg)
            return None
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = _missing_package(exc)
        if missing is None:
            raise
        _mark_unavailable(module, tuple(names), tuple(envs), role, missing)
        return None


def _mark_unavailable(module: str, names: tuple[str, ...], envs: tuple[str, ...], role: str, missing: str) -> None:
    import warnings

    extra = extra_of(missing)
    for name in names:
        entries = _UNAVAILABLE.setdefault(name, [])
        entries[:] = [e for e in entries if not set(e.envs) & set(envs)]
        entries.append(UnavailableAgent(name, envs, role, module, missing, extra))
    how = f"the {extra} extra: pip install 'papergym[{extra}]'" if extra else f"the package {missing!r}"
    warnings.warn(
        f"agent(s) {', '.join(names)} unavailable: importing {module} failed because {missing!r} is not "
        f"installed; they need {how}",
        RuntimeWarning,
        stacklevel=3,
    )


def _packages_for(env_id: str | None) -> list[str]:
    if env_id is None:
        return list(_AGENT_PACKAGES)
    base = env_id.split(":")[-1]
    pkgs = [p for p, envs in _AGENT_PACKAGES.items() if base in envs]
    return pkgs or list(_AGENT_PACKAGES)  # an env not in the table: every package may register for it


def _load_all(env_id: str | None = None) -> None:
    """Import the agent packages (those registering agents for ``env_id`` if given). A package whose import fails
    for want of an optional package is reported by a warning naming the package and its extra (the modules of
    optional agents use :func:`optional_agent_module`, which names the agents); any other error propagates."""
    import warnings

    for pkg in _packages_for(env_id):
        if pkg in _LOADED:
            continue
        try:
            importlib.import_module(pkg)
        except ImportError as exc:
            missing = _missing_package(exc)
            if missing is None:
                raise
            extra = extra_of(missing)
            how = f"the {extra} extra: pip install 'papergym[{extra}]'" if extra else f"the package {missing!r}"
            warnings.warn(
                f"the agents of {pkg} are unavailable: importing it failed because {missing!r} is not "
                f"installed; they need {how}",
                RuntimeWarning,
                stacklevel=3,
            )
        _LOADED.add(pkg)


def list_agents(env_id: str | None = None, role: str | None = None) -> list[AgentInfo]:
    """Registered agents (for ``env_id`` if given; ``role`` filters), papers first, then by name. Agents that
    cannot be built here are not included: see :func:`list_unavailable_agents`."""
    _load_all(env_id)
    out = [a for entries in _REGISTRY.values() for a in entries if (env_id is None or _env_matches(env_id, a.envs))]
    if role is not None:
        out = [a for a in out if a.role == role]
    order = {r: i for i, r in enumerate(ROLES)}
    return sorted(out, key=lambda a: (order[a.role], a.name))


def list_unavailable_agents(env_id: str | None = None) -> list[UnavailableAgent]:
    """Agents (for ``env_id`` if given) that are known but cannot be built here, each with its ``reason`` (the
    missing optional package and the extra that installs it), papers first, then by name."""
    _load_all(env_id)
    out = [
        u
        for entries in _UNAVAILABLE.values()
        for u in entries
        if (env_id is None or _env_matches(env_id, u.envs))
        and not any(_env_matches(e, u.envs) for a in _REGISTRY.get(u.name, []) for e in a.envs)
    ]
    order = {r: i for i, r in enumerate(ROLES)}
    return sorted(out, key=lambda u: (order.get(u.role, len(order)), u.name))


def _env_matches(env_id: str, envs: Sequence[str]) -> bool:
    base = env_id.split(":")[-1]
    return base in envs


def get_agent_info(name: str, env_id: str | None = None) -> AgentInfo:
    """The registry entry of ``name``; :class:`AgentUnavailableError` naming the extra for an agent whose optional
    package is missing; :class:`UnknownAgentError` listing the valid names otherwise."""
    _load_all(env_id)
    entries = _REGISTRY.get(name, [])
    if env_id is not None:
        entries = [e for e in entries if _env_matches(env_id, e.envs)]
    if entries:
        return entries[0]
    where = f" for {env_id}" if env_id else ""
    gone = [u for u in _UNAVAILABLE.get(name, []) if env_id is None or _env_matches(env_id, u.envs)]
    if gone:
        raise AgentUnavailableError(f"agent {name!r}{where} is unavailable: it {gone[0].reason}")
    valid = list(dict.fromkeys(a.name for a in list_agents(env_id)))
    raise UnknownAgentError(f"unknown agent {name!r}{where}; valid agents: {', '.join(valid)}")


def make_agent(name: str, problem: Any, *, seed: Any = None, oracle: Any = None, **hyperparameters: Any) -> Any:
    """Build the per-run agent ``name`` for ``problem`` (a :class:`~papergym.envs.spec.ProblemSpec`)."""
    info = get_agent_info(name, getattr(problem, "env_id", None))
    kwargs = dict(hyperparameters)
    if info.role == "oracle":
        if oracle is None:
            raise ValueError(f"agent {name!r} has role 'oracle' and needs oracle=env.unwrapped.oracle")
        kwargs["oracle"] = oracle
    return info.factory(problem, seed=seed, **kwargs)


def play_episode(agent: Any, env: Any, obs: Any, *, on_step: Callable[[Any, float], None] | None = None) -> int:
    """Play ``agent`` on ``env`` from the observation ``obs`` (returned by ``env.reset``) to the end of the
    episode: ``act``, ``step``, ``update`` each round, then ``on_step(action, reward)`` if given. Returns
    the number of steps played."""
    steps = 0
    done = False
    while not done:
        a = agent.act(obs)
        obs, r, term, trunc, _ = env.step(a)
        agent.update(a, r, obs)
        if on_step is not None:
            on_step(a, r)
        steps += 1
        done = term or trunc
    return steps


def make_batched_agent(
    name: str, problem: Any, *, seeds: Sequence[Any], oracles: Sequence[Any] | None = None, **hyperparameters: Any
) -> Any | None:
    """Build the batched agent ``name`` over ``seeds``, or ``None`` if it has no batched version."""
    info = get_agent_info(name, getattr(problem, "env_id", None))
    if info.batched_factory is None:
        return None
    kwargs = dict(hyperparameters)
    if info.role == "oracle":
        if oracles is None:
            raise ValueError(f"agent {name!r} has role 'oracle' and needs oracles=[...] (one per run)")
        kwargs["oracles"] = list(oracles)
    return info.batched_factory(problem, seeds=list(seeds), **kwargs)


class PerRunFromBatched:
    """A per-run :class:`Agent` made from a batched implementation run with a single seed.

    Subclass and set ``batched_cls``; the per-run agent is then, by construction, bit-identical to
    one row of the batched agent with the same seed. Oracle-role agents take ``oracle=`` and pass it
    on as ``oracles=[oracle]``.
    """

    batched_cls: Any = None

    def __init__(self, problem: Any, *, seed: Any = None, oracle: Any = None, **hyperparameters: Any):
        kwargs = dict(hyperparameters)
        if oracle is not None:
            kwargs["oracles"] = [oracle]
        self.problem = problem
        self._batched = self.batched_cls(problem, seeds=[seed], **kwargs)

    @staticmethod
    def _one_row(observation: Any) -> Any:
        """One run's observation as a batch of one: ``(1, ...)`` arrays (a dict observation, e.g.
        semi-bandit feedback, keeps its keys, each value batched)."""
        if isinstance(observation, Mapping):
            return {k: np.asarray(v)[None, ...] for k, v in observation.items()}
        return np.asarray(observation, dtype=float).reshape(1, -1)

    def act(self, observation: Any) -> np.ndarray:
        return np.array(self._batched.act(self._one_row(observation))[0], copy=True)

    def update(self, action: Any, reward: float, observation: Any) -> None:
        a = np.asarray(action)
        a = a.astype(float) if a.dtype.kind not in "biu" else a
        self._batched.update(a.reshape(1, -1), np.array([float(reward)]), self._one_row(observation))

    def diagnostics(self) -> dict[str, Any]:
        """The batched agent's diagnostics for this single run (scalars / lists)."""
        diag = getattr(self._batched, "diagnostics", None)
        if diag is None:
            return {}
        return {k: (v[0] if not np.isscalar(v) else v) for k, v in diag().items()}


# ============================================================================== solvers (tasks)
@runtime_checkable
class Solver(Protocol):
    """A solver of a benchmark task (see docs/adding-a-paper.md). ``__init__(*, seed=None, **hyperparameters)``.

    ``solve(problem, budget, report)`` returns the solution of the public ``problem``; it may call
    ``report(solution, iteration=i, work=w)`` any number of times to record anytime points (the
    evaluator scores each, its time excluded from the solver's clock). Randomness only from
    ``numpy.random.default_rng(seed)``. A solver that cannot finish within ``budget`` may raise
    :class:`papergym.envs.tasks.base.BudgetExceeded` (recorded as ``timeout``).
    """

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> Any: ...


SOLVER_ROLES: tuple[str, ...] = ("paper", "baseline", "reference")

# packages whose import registers solvers; loaded lazily (a missing optional extra, e.g. torch for
# `pinn`, only hides the solvers that need it)
_SOLVER_PACKAGES = ("papergym.agents.solvers", "papergym.baselines.solvers")


class UnknownSolverError(KeyError):
    """A solver name that is not registered (for the task asked)."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class SolverInfo:
    name: str
    factory: Callable[..., Any]
    tasks: tuple[str, ...]
    role: str
    description: str = ""
    defaults: dict[str, Any] = field(default_factory=dict)
    requires: tuple[str, ...] = ()

    @property
    def code_hash(self) -> str:
        """Hash of the factory's source file (part of every cell key)."""
        return _code_hash(self.factory)

    @property
    def hyperparameters(self) -> tuple[str, ...]:
        """Names the solver takes: the factory's keyword-only parameters (``seed`` aside) and, for a factory
        that forwards ``**hp``, the names of its registered ``defaults``."""
        import inspect

        params = inspect.signature(self.factory).parameters
        names = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY and n != "seed"]
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            names += list(self.defaults)
        return tuple(dict.fromkeys(names))


_SOLVERS: dict[str, list[SolverInfo]] = {}


def register_solver(
    name: str,
    factory: Callable[..., Any],
    tasks: Iterable[str],
    role: str = "baseline",
    *,
    description: str = "",
    defaults: dict[str, Any] | None = None,
    requires: Iterable[str] = (),
) -> None:
    """Register ``factory(*, seed=None, **hp) -> Solver`` under a kebab-case ``name`` for ``tasks``.

    Roles: ``paper`` (the paper's method), ``baseline`` and ``reference`` (a reference line, e.g. a
    classical integrator: reported and drawn, never ranked). ``requires``: optional packages the
    solver needs (e.g. ``("torch",)``), named in the error when they are missing.
    """
    if role not in SOLVER_ROLES:
        raise ValueError(f"solver role must be one of {SOLVER_ROLES}, got {role!r}")
    if not name or name != name.lower() or "_" in name or " " in name:
        raise ValueError(f"solver names are kebab-case, got {name!r}")
    info = SolverInfo(name, factory, tuple(tasks), role, description, dict(defaults or {}), tuple(requires))
    entries = _SOLVERS.setdefault(name, [])
    for e in [e for e in entries if set(e.tasks) & set(info.tasks)]:
        if _qualname(e.factory) != _qualname(factory):
            raise ValueError(
                f"solver {name!r} is already registered for {sorted(set(e.tasks) & set(info.tasks))} "
                f"by {_qualname(e.factory)}"
            )
        entries.remove(e)
    entries.append(info)


def _load_solvers() -> None:
    for pkg in _SOLVER_PACKAGES:
        try:
            importlib.import_module(pkg)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("papergym"):
                raise


def list_solvers(task_id: str | None = None, role: str | None = None) -> list[SolverInfo]:
    """Registered solvers (for ``task_id`` if given; ``role`` filters): papers first, then by name."""
    _load_solvers()
    base = None if task_id is None else task_id.split(":")[-1]
    out = [s for entries in _SOLVERS.values() for s in entries if base is None or base in s.tasks]
    if role is not None:
        out = [s for s in out if s.role == role]
    order = {r: i for i, r in enumerate(SOLVER_ROLES)}
    return sorted(out, key=lambda s: (order[s.role], s.name))


def get_solver_info(name: str, task_id: str | None = None) -> SolverInfo:
    """The registry entry of ``name``; a clear error listing the valid names otherwise."""
    _load_solvers()
    entries = _SOLVERS.get(name, [])
    if task_id is not None:
        base = task_id.split(":")[-1]
        entries = [e for e in entries if base in e.tasks]
    if not entries:
        where = f" for {task_id}" if task_id else ""
        valid = list(dict.fromkeys(s.name for s in list_solvers(task_id)))
        raise UnknownSolverError(f"unknown solver {name!r}{where}; valid solvers: {', '.join(valid) or '(none)'}")
    return entries[0]


_EXTRA_OF = {
    "gudhi": "tda",
    "sklearn": "bilevel",
    "networkx": "bilevel",
    "torch": "torch",
    "torch_geometric": "torch",
    "ortools": "fjsp",
    "pettingzoo": "games",
    "dask": "dask",
    "distributed": "dask",
}
# optional package (top-level import name) -> the extra that installs it


def make_solver(name: str, task_id: str, *, seed: Any = None, **hyperparameters: Any) -> Any:
    """Build the solver ``name`` of ``task_id`` with its hyperparameters."""
    info = get_solver_info(name, task_id)
    for pkg in info.requires:
        try:
            importlib.import_module(pkg)
        except ImportError:
            raise ImportError(
                f"solver {name!r} needs the optional package {pkg!r}: pip install 'papergym[{_EXTRA_OF.get(pkg, pkg)}]'"
            ) from None
    return info.factory(seed=seed, **hyperparameters)


@contextlib.contextmanager
def torch_single_thread():
    """``torch.set_num_threads(1)`` for the duration of a solve, restored afterwards (solvers of small CPU models:
    one intra-op thread is faster than two at these sizes and leaves the other core to a parallel worker).
    Yields ``torch``; :func:`papergym.torch_threads.torch_threads` with ``n=1``."""
    from papergym.torch_threads import torch_threads

    with torch_threads(1) as torch:
        yield torch
