"""The process that hosts a submitted agent or solver inside the sandbox (and the hosting logic the
in-process sessions share with it).

Run as a script inside the sandbox::

    python -s -P /sandbox/lib/_pg_sandbox_child.py RFD,WFD SUBMISSION_FILE ATTR SPIN_SECONDS [--drop-uid=UID:GID]

It must never import papergym (papergym is not visible in the sandbox): it uses only the standard
library, numpy, gymnasium (to rebuild the public spaces) and the stand-alone channel module, loaded
from the same folder (``_pg_channel.py``) or, when this file is imported as part of papergym by the
trusted parent (for :class:`AgentHost` and the problem helpers), from ``papergym.leaderboard.board.channel``.

Start-up, in this order: drop root to the job's own uid/gid when asked (``--drop-uid=UID:GID``: the
kernel ignores RLIMIT_NPROC for uid 0, and a uid per job keeps that limit per job), point stdout at
stderr (``dup2(2, 1)``, so prints never touch the channel), install a meta-path blocker for
``papergym`` (defence in depth: the sandbox does not mount it either), then serve the parent's messages on the pipe fds
``RFD`` (in) and ``WFD`` (out) (see :mod:`papergym.leaderboard.board.channel` for the ops). The submission file is
imported lazily at the first start / solve message, so an import that never ends is caught by the parent's per-call time
limit.

Errors raised by the submitted code are sent as ``{"type", "message", "traceback"}`` where the
traceback keeps only the frames of the submission file (no path of the host machine).
"""

from __future__ import annotations

import importlib.abc
import inspect
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

if __package__:
    from . import channel as _ch
else:  # inside the sandbox: the channel module is a sibling file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _pg_channel as _ch  # type: ignore[no-redef]

MAX_MESSAGE = 2000
MAX_TRACEBACK_FRAMES = 8


# ------------------------------------------------------------------------------------------ errors
class HostedError(Exception):
    """The hosted code failed in a way that ends the session (a batched agent, a factory, an import,
    a solver). ``type``: the exception's class name; ``traceback``: the submission's frames."""

    def __init__(self, type_: str, message: str, tb: str = ""):
        super().__init__(f"{type_}: {message}")
        self.type = type_
        self.message = message
        self.traceback = tb


def describe(exc: BaseException, only_file: str | None = None) -> HostedError:
    """A :class:`HostedError` of ``exc``: class name, message (bounded) and the last traceback frames
    (only those of ``only_file`` when given: the submission's, never the host's paths)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if only_file is not None:
        frames = [f for f in frames if f.filename == only_file]
    frames = frames[-MAX_TRACEBACK_FRAMES:]
    tb = "".join(traceback.format_list(frames)) if frames else ""
    msg = str(exc)
    if len(msg) > MAX_MESSAGE:
        msg = msg[:MAX_MESSAGE] + " [...]"
    return HostedError(type(exc).__name__, msg, tb)


def short(exc: BaseException) -> str:
    """``"Type: message"`` (bounded) -- how a per-run failure is reported."""
    msg = str(exc)
    if len(msg) > MAX_MESSAGE:
        msg = msg[:MAX_MESSAGE] + " [...]"
    return f"{type(exc).__name__}: {msg}"


def accepts(fn: Callable, name: str) -> bool:
    """Whether ``fn`` (a function or a class) has a parameter called ``name``."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return name in sig.parameters


# ---------------------------------------------------------------------------------- public problem
def space_from_public(desc: Mapping[str, Any]) -> Any:
    """A gymnasium space from :func:`papergym.leaderboard.board.sandbox.space_to_public`'s description (a
    subclass is rebuilt as its gymnasium base class with the subclass's public scalar attributes)."""
    from gymnasium import spaces

    kind = desc["type"]
    if kind == "Box":
        sp = spaces.Box(low=np.asarray(desc["low"]), high=np.asarray(desc["high"]), dtype=np.dtype(desc["dtype"]))
    elif kind == "Discrete":
        sp = spaces.Discrete(int(desc["n"]), start=int(desc.get("start", 0)))
    elif kind == "MultiBinary":
        n = desc["n"]
        sp = spaces.MultiBinary(list(n) if isinstance(n, (list, tuple)) else int(n))
    elif kind == "MultiDiscrete":
        sp = spaces.MultiDiscrete(
            np.asarray(desc["nvec"]),
            dtype=np.dtype(desc["dtype"]),
            start=np.asarray(desc["start"]) if desc.get("start") is not None else None,
        )
    elif kind == "Dict":
        sp = spaces.Dict({k: space_from_public(v) for k, v in desc["spaces"].items()})
    elif kind == "Tuple":
        sp = spaces.Tuple([space_from_public(v) for v in desc["spaces"]])
    else:
        raise ValueError(f"unknown space type {kind!r}")
    for k, v in (desc.get("attrs") or {}).items():
        try:
            setattr(sp, k, v)
        except (AttributeError, TypeError):
            pass
    return sp


class PublicProblem:
    """What a sandboxed agent gets instead of :class:`papergym.envs.spec.ProblemSpec`: the same
    fields (``env_id``, ``action_space``, ``observation_space``, ``horizon``, ``params``), parameters
    readable as attributes (``problem.d``) and ``public_dict()``."""

    def __init__(self, env_id: str, action_space: Any, observation_space: Any, horizon: int, params: Mapping[str, Any]):
        self.env_id = env_id
        self.action_space = action_space
        self.observation_space = observation_space
        self.horizon = horizon
        self.params = dict(params)

    def __getattr__(self, name: str) -> Any:
        params = self.__dict__.get("params", {})
        if name in params:
            return params[name]
        raise AttributeError(f"ProblemSpec has no field or parameter {name!r}; parameters: {sorted(params)}")

    def public_dict(self) -> dict[str, Any]:
        def plain(v: Any) -> Any:
            return v.tolist() if isinstance(v, np.ndarray) else v

        return {"env_id": self.env_id, "horizon": int(self.horizon), **{k: plain(v) for k, v in self.params.items()}}

    def __repr__(self) -> str:
        return (
            f"ProblemSpec(env_id={self.env_id!r}, action_space={self.action_space}, "
            f"observation_space={self.observation_space}, horizon={self.horizon}, params={self.params})"
        )


def problem_from_public(d: Mapping[str, Any]) -> PublicProblem:
    """The agent's problem object from :func:`papergym.leaderboard.board.sandbox.problem_to_public`'s dict."""
    return PublicProblem(
        str(d["env_id"]),
        space_from_public(d["action_space"]),
        space_from_public(d["observation_space"]),
        int(d["horizon"]),
        d.get("params") or {},
    )


def to_namespace(v: Any) -> Any:
    """Nested dicts -> nested :class:`types.SimpleNamespace` (lists and arrays stay as they are)."""
    if isinstance(v, Mapping):
        return SimpleNamespace(**{str(k): to_namespace(x) for k, x in v.items()})
    return v


def solver_problem(problem: Mapping[str, Any], callables: Mapping[str, Callable]) -> SimpleNamespace:
    """The solver's problem: ``problem`` as nested namespaces, each callable set at its dotted name
    (``"linear_form.coeffs"`` -> ``problem.linear_form.coeffs``)."""
    ns = to_namespace(problem)
    for name, fn in callables.items():
        *path, last = name.split(".")
        obj = ns
        for p in path:
            nxt = getattr(obj, p, None)
            if not isinstance(nxt, SimpleNamespace):
                nxt = SimpleNamespace()
                setattr(obj, p, nxt)
            obj = nxt
        setattr(obj, last, fn)
    return ns


def budget_namespace(budget: Mapping[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(
        max_seconds=budget.get("max_seconds"),
        max_iterations=budget.get("max_iterations"),
        max_work=budget.get("max_work"),
    )


def make_solver(factory: Callable, seed: Any, hyperparameters: Mapping[str, Any]) -> Any:
    """``factory(seed=seed, **hp)``, ``seed`` omitted when the factory does not accept it."""
    if accepts(factory, "seed"):
        return factory(seed=seed, **hyperparameters)
    return factory(**hyperparameters)


# ---------------------------------------------------------------------------------------- agents
def _row(observations: Any, i: int) -> Any:
    if isinstance(observations, Mapping):
        return {k: v[i] for k, v in observations.items()}
    return observations[i]


class AgentHost:
    """Hosts the agent(s) of one session -- the same code in the sandbox child and in
    :class:`papergym.leaderboard.board.sandbox.InProcessAgentSession`, hence bit-identical actions.

    ``factory`` accepting ``seeds`` is a batched-agent factory: ``factory(problem, seeds=[...], **hp)``;
    otherwise one per-run agent per seed: ``factory(problem, seed=s, **hp)``. A factory that raises
    raises :class:`HostedError` (the session fails).

    :meth:`step` -- per-run agents: for each active run, ``update(prev_action, reward, obs_i)`` (from
    the second round on) then ``act(obs_i)``; a run whose agent raises (or returns a non-numeric
    action, or one whose shape differs from the other runs') is failed: it is reported once in the
    returned ``failed`` dict, becomes inactive and its row is zero-filled from then on. Batched agent:
    ``update(prev_actions, rewards, obs)`` then ``act(obs)`` on the whole batch; any exception raises
    :class:`HostedError` (the session fails). Inactive rows are zero-filled in the returned actions.
    """

    def __init__(
        self,
        factory: Callable,
        problem: Any,
        seeds: Sequence[Any],
        hyperparameters: Mapping[str, Any],
        *,
        only_file: str | None = None,
    ):
        self.problem = problem
        self.n = len(seeds)
        self.only_file = only_file
        self.batched = accepts(factory, "seeds")
        hp = dict(hyperparameters)
        try:
            if self.batched:
                self.agent = factory(problem, seeds=list(seeds), **hp)
                self.agents: list[Any] = []
            else:
                self.agents = [factory(problem, seed=s, **hp) for s in seeds]
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the submission's failure is reported, never raised here
            raise describe(exc, only_file) from None
        self.prev: list[Any] = [None] * self.n
        self.prev_batch: Any = None
        self.dead: set[int] = set()
        shape = getattr(getattr(problem, "action_space", None), "shape", None)
        self._shape: tuple[int, ...] = tuple(shape) if shape is not None else ()
        self._dtype = np.dtype(np.float64)

    def step(
        self, observations: Any, rewards: np.ndarray | None, active: np.ndarray
    ) -> tuple[np.ndarray, dict[int, str]]:
        active = np.asarray(active, dtype=bool).reshape(-1)
        if active.shape != (self.n,):
            raise ValueError(f"active must have shape ({self.n},), got {active.shape}")
        if self.batched:
            return self._step_batched(observations, rewards, active), {}
        return self._step_per_run(observations, rewards, active)

    def _step_batched(self, obs: Any, rewards: Any, active: np.ndarray) -> np.ndarray:
        try:
            if rewards is not None and self.prev_batch is not None:
                self.agent.update(self.prev_batch, rewards, obs)
            a = self.agent.act(obs)
            arr = np.asarray(a)
            if arr.dtype.kind not in "biuf":
                raise TypeError(
                    f"the batched agent's actions are not numeric (got {type(a).__name__} of dtype {arr.dtype})"
                )
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the submission's failure is reported, never raised here
            raise describe(exc, self.only_file) from None
        self.prev_batch = a
        if not active.all() and arr.ndim >= 1 and arr.shape[0] == self.n:
            arr = arr.copy()
            arr[~active] = 0
        return arr

    def _step_per_run(self, obs: Any, rewards: Any, active: np.ndarray) -> tuple[np.ndarray, dict[int, str]]:
        acts: dict[int, np.ndarray] = {}
        failed: dict[int, str] = {}
        for i in range(self.n):
            if not active[i] or i in self.dead:
                continue
            oi = _row(obs, i)
            agent = self.agents[i]
            try:
                if rewards is not None and self.prev[i] is not None:
                    agent.update(self.prev[i], float(rewards[i]), oi)
                a = agent.act(oi)
                arr = np.asarray(a)
                if arr.dtype.kind not in "biuf":
                    raise TypeError(f"the action is not numeric (got {type(a).__name__} of dtype {arr.dtype})")
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - the submission's failure is reported, never raised here
                failed[i] = short(exc)
                self.dead.add(i)
                continue
            self.prev[i] = a
            acts[i] = arr
        if acts:
            first = next(iter(acts.values()))
            for i, arr in list(acts.items()):
                if arr.shape != first.shape:
                    failed[i] = f"ValueError: action shape {arr.shape} differs from the other runs' {first.shape}"
                    self.dead.add(i)
                    del acts[i]
            self._shape = first.shape
            self._dtype = np.result_type(*acts.values())
        out = np.zeros((self.n, *self._shape), dtype=self._dtype)
        for i, arr in acts.items():
            out[i] = arr
        return out, failed

    def diagnostics(self) -> Any:
        if self.batched:
            d = getattr(self.agent, "diagnostics", None)
            return d() if d else None
        return [a.diagnostics() if hasattr(a, "diagnostics") else None for a in self.agents]


# ------------------------------------------------------------------------------------ child process
class _PapergymBlocker(importlib.abc.MetaPathFinder):
    """Refuses ``import papergym`` (and submodules) inside the sandbox."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname == "papergym" or fullname.startswith("papergym."):
            raise ModuleNotFoundError(
                f"No module named {fullname!r} (papergym is not available to submissions)", name=fullname
            )


class _Remote:
    """A callable of the parent's problem (``rhs``, ``jac``, ...): arguments go to the parent, which
    calls the real function; its exception comes back as :class:`ValueError`."""

    def __init__(self, chan: Any, name: str):
        self._chan = chan
        self._name = name
        self.__name__ = name.rsplit(".", 1)[-1]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._chan.send(_ch.OP_RPC_CALL, {"name": self._name, "args": list(args), "kwargs": kwargs})
        op, v = self._chan.recv()
        if op != _ch.OP_RPC_RETURN:
            _die(f"unexpected op {op} from the parent during a call")
        if "error" in v:
            raise ValueError(v["error"])
        return v["result"]


class BudgetExceeded(RuntimeError):
    """Raised in the solver when the parent's ``report`` says the budget is spent."""


def _die(msg: str) -> None:
    sys.stderr.write(f"sandbox child: {msg}\n")
    sys.stderr.flush()
    os._exit(3)


class _Child:
    def __init__(self, chan: Any, path: str, attr: str):
        self.chan = chan
        self.path = path
        self.attr = attr
        self.factory: Callable | None = None
        self.host: AgentHost | None = None

    def load(self) -> Callable:
        if self.factory is None:
            import importlib.util

            try:
                spec = importlib.util.spec_from_file_location("submission", self.path)
                mod = importlib.util.module_from_spec(spec)
                sys.modules["submission"] = mod
                spec.loader.exec_module(mod)
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - the submission's failure is reported, never raised here
                raise describe(exc, self.path) from None
            obj: Any = mod
            for part in self.attr.split("."):
                if not hasattr(obj, part):
                    raise HostedError("AttributeError", f"{os.path.basename(self.path)} has no attribute {self.attr!r}")
                obj = getattr(obj, part)
            if not callable(obj):
                raise HostedError("TypeError", f"{self.attr!r} is not callable (got {type(obj).__name__})")
            self.factory = obj
        return self.factory

    def error(self, e: HostedError) -> None:
        self.chan.send(_ch.OP_ERROR, {"type": e.type, "message": e.message, "traceback": e.traceback})

    def serve(self) -> None:
        chan = self.chan
        while True:
            try:
                op, v = chan.recv()
            except _ch.ChannelClosed:
                os._exit(0)
            try:
                if op == _ch.OP_STEP:
                    self.step(v)
                elif op == _ch.OP_START_AGENT:
                    factory = self.load()
                    problem = problem_from_public(v["problem"])
                    self.host = AgentHost(
                        factory, problem, v["seeds"], v.get("hyperparameters") or {}, only_file=self.path
                    )
                    chan.send(_ch.OP_OK)
                elif op == _ch.OP_LOAD:
                    self.load()
                    chan.send(_ch.OP_OK)
                elif op == _ch.OP_SOLVE:
                    self.solve(v)
                elif op == _ch.OP_CLOSE:
                    chan.send(_ch.OP_CLOSED)
                    sys.stderr.flush()
                    os._exit(0)
                else:
                    _die(f"unexpected op {op} from the parent")
            except HostedError as e:
                self.error(e)
            except MemoryError as exc:
                self.error(describe(exc, self.path))

    def step(self, v: Any) -> None:
        if isinstance(v, list):
            active, obs = v[0], v[1]
            rewards = v[2] if len(v) > 2 else None
        else:
            active, obs, rewards = v["active"], v["observations"], v.get("rewards")
        if self.host is None:
            _die("step before start")
        actions, failed = self.host.step(obs, rewards, active)
        try:
            frame = (
                _ch.encode(_ch.OP_ACTIONS, arrays=[actions])
                if not failed
                else _ch.encode(_ch.OP_ACTIONS, {"actions": actions, "failed": {str(i): m for i, m in failed.items()}})
            )
        except TypeError as exc:
            raise HostedError("TypeError", f"the actions cannot be sent: {exc}") from None
        self.chan.send_frame(frame)

    def solve(self, v: Any) -> None:
        factory = self.load()
        chan = self.chan
        callables = {name: _Remote(chan, name) for name in v.get("callables", [])}
        problem = solver_problem(v["problem"], callables)
        budget = budget_namespace(v.get("budget") or {})

        def report(solution: Any, iteration: int | None = None, work: float | None = None) -> None:
            try:
                frame = _ch.encode(_ch.OP_REPORT, {"solution": solution, "iteration": iteration, "work": work})
            except TypeError as exc:
                raise TypeError(f"the reported solution cannot be sent: {exc}") from None
            chan.send_frame(frame)
            op, ack = chan.recv()
            if op != _ch.OP_REPORT_ACK:
                _die(f"unexpected op {op} from the parent during report")
            if "error" in ack:
                if ack.get("type") == "BudgetExceeded":
                    raise BudgetExceeded(ack["error"])
                raise ValueError(ack["error"])

        try:
            solver = make_solver(factory, v.get("seed"), v.get("hyperparameters") or {})
            solution = solver.solve(problem, budget, report)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the submission's failure is reported, never raised here
            raise describe(exc, self.path) from None
        try:
            frame = _ch.encode(_ch.OP_SOLUTION, {"solution": solution})
        except TypeError as exc:
            raise HostedError("TypeError", f"the solution cannot be sent: {exc}") from None
        chan.send_frame(frame)


def main(argv: list[str]) -> None:
    fds = [int(x) for x in argv[1].split(",")]
    rfd, wfd = fds[0], fds[1]
    gate = None
    if len(fds) > 2:  # the spin gate (a one-page memfd the evaluator writes): mapped read-only
        import mmap

        gate = mmap.mmap(fds[2], mmap.PAGESIZE, mmap.MAP_SHARED, mmap.PROT_READ)
        os.close(fds[2])
    path, attr = argv[2], argv[3]
    drop = [a for a in argv[5:] if a.startswith("--drop-uid=")]
    if drop and os.geteuid() == 0:
        try:
            uid, gid = (int(x) for x in drop[-1].split("=", 1)[1].split(":"))
        except ValueError:
            _die(f"bad {drop[-1]!r} (--drop-uid=UID:GID)")
        if uid == 0 or gid == 0:
            _die("refusing to drop to uid/gid 0")
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) or os.getgroups():
            _die("could not drop privileges")
    os.dup2(2, 1)
    sys.meta_path.insert(0, _PapergymBlocker())
    for name in [m for m in sys.modules if m == "papergym" or m.startswith("papergym.")]:
        del sys.modules[name]
    chan = _ch.Channel(rfd, wfd, max_frame_bytes=_ch.MAX_FRAME_BYTES, spin_seconds=float(argv[4]), spin_gate=gate)
    _Child(chan, path, attr).serve()


if __name__ == "__main__":
    main(sys.argv)
