"""Agent and solver sessions over a submission (:mod:`papergym.leaderboard.board.sandbox`, Sessions):
sandboxed (:class:`SandboxedAgentSession`, :class:`SandboxedSolverSession`) and in-process for trusted
reference code (:class:`InProcessAgentSession`, :class:`InProcessSolverSession`), sharing the hosting
code of :mod:`papergym.leaderboard.board._sandbox_child`."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from papergym.leaderboard.board import _sandbox_child as _child
from papergym.leaderboard.board import channel as _ch
from papergym.leaderboard.board.limits import (
    Limits,
    ProtocolError,
    SandboxError,
    SessionReport,
)
from papergym.leaderboard.board.process import SandboxProcess
from papergym.leaderboard.board.protocol import (
    STATUS_BY_TYPE,
    check_actions,
    check_solver_message,
)
from papergym.leaderboard.board.public import roundtrip

__all__ = [
    "AgentSession",
    "InProcessAgentSession",
    "InProcessSolverSession",
    "SandboxedAgentSession",
    "SandboxedSolverSession",
    "SolverSession",
]


# -------------------------------------------------------------------------------------- sessions
class AgentSession(Protocol):
    """One submission's agents over every seed (:mod:`papergym.leaderboard.board.sandbox`, Sessions)."""

    def start(self, problem: dict, seeds: Sequence[Any], hyperparameters: Mapping[str, Any]) -> None: ...

    def step(
        self, observations: Any, rewards: np.ndarray | None, active: np.ndarray
    ) -> tuple[np.ndarray, dict[int, str]]: ...

    def close(self) -> SessionReport: ...


class SandboxedAgentSession:
    """The submitted ``attr`` of ``source`` hosted in a sandboxed child (:mod:`papergym.leaderboard.board.sandbox`,
    Sessions).

    ``start(problem, seeds, hyperparameters)``: ``problem`` is :func:`problem_to_public`'s dict;
    ``seeds`` ints or :class:`numpy.random.SeedSequence` s. ``step(observations, rewards, active)``
    -> ``(actions, failed)`` (see :class:`papergym.leaderboard.board._sandbox_child.AgentHost`).
    ``close()`` -> :class:`SessionReport`. Any failure of the whole session raises
    :class:`SandboxError`; the session is then dead and later calls raise the same error.
    """

    def __init__(self, source: Path | str, attr: str, *, limits: Limits = Limits(), sandbox: str = "auto"):  # noqa: B008 - Limits is a frozen dataclass: one shared default is safe
        self._sb = SandboxProcess(source, attr, limits, sandbox)
        self.limits = limits
        self.sandbox = self._sb.mode
        self._episode_deadline: float | None = None
        self._in_flight: tuple[float, str] | None = None
        self._n = 0
        self._t0 = time.monotonic()
        self._report: SessionReport | None = None

    def __enter__(self) -> SandboxedAgentSession:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, problem: Mapping[str, Any], seeds: Sequence[Any], hyperparameters: Mapping[str, Any] = {}) -> None:
        sb = self._sb
        sb.check()
        if sb.proc is not None:
            raise RuntimeError("start() was already called on this session")
        try:
            frame = _ch.encode(
                _ch.OP_START_AGENT,
                {"problem": dict(problem), "seeds": list(seeds), "hyperparameters": dict(hyperparameters)},
            )
        except TypeError as exc:
            raise TypeError(f"the problem / seeds / hyperparameters cannot be sent to the sandbox: {exc}") from None
        self._n = len(seeds)
        self._t0 = time.monotonic()
        self._episode_deadline = self._t0 + self.limits.episode_seconds
        sb.launch()
        dl = sb.deadline(self.limits.call_seconds, self._episode_deadline)
        sb.send(frame, dl, "start (import and agent construction)")
        sb.recv(dl, "start (import and agent construction)", (_ch.OP_OK,))

    def step(
        self, observations: Any, rewards: np.ndarray | None, active: np.ndarray
    ) -> tuple[np.ndarray, dict[int, str]]:
        self.send_step(observations, rewards, active)
        return self.recv_step()

    def send_step(self, observations: Any, rewards: np.ndarray | None, active: np.ndarray) -> None:
        """The first half of :meth:`step`: send the round's feedback (the evaluator may work while the
        agent computes, then call :meth:`recv_step`)."""
        sb = self._sb
        sb.check()
        if sb.proc is None:
            raise RuntimeError("step() before start()")
        if self._in_flight is not None:
            raise RuntimeError("send_step() twice without recv_step()")
        active = np.asarray(active, dtype=bool)
        if type(observations) is not np.ndarray and isinstance(observations, Mapping):
            frame = _ch.encode(
                _ch.OP_STEP,
                {
                    "active": active,
                    "observations": dict(observations),
                    "rewards": None if rewards is None else np.asarray(rewards),
                },
            )
        else:
            frame = _ch.encode_arrays(
                _ch.OP_STEP, [active, observations] if rewards is None else [active, observations, rewards]
            )
        dl = sb.deadline(self.limits.call_seconds, self._episode_deadline)
        sb.send(frame, dl, "step")
        self._in_flight = dl

    def recv_step(self) -> tuple[np.ndarray, dict[int, str]]:
        """The second half of :meth:`step`: the agent's actions and failed runs."""
        sb = self._sb
        dl, self._in_flight = self._in_flight, None
        if dl is None:
            raise RuntimeError("recv_step() without send_step()")
        _, v = sb.recv(dl, "step", (_ch.OP_ACTIONS,))
        try:
            return check_actions(v, self._n)
        except ProtocolError as err:
            raise sb.fail(err) from None

    def close(self) -> SessionReport:
        if self._report is None:
            self._sb.close()
            self._report = SessionReport(
                self._sb.tail(), time.monotonic() - self._t0, self._sb.total_cpu, self._sb.mode
            )
        return self._report

    def __del__(self) -> None:
        sb = getattr(self, "_sb", None)
        if sb is not None and sb.alive:
            sb.cleanup()


def _in_process_error(e: _child.HostedError) -> SandboxError:
    text = f"{e.type}: {e.message}"
    if e.traceback:
        text += f"\nTraceback (last frames):\n{e.traceback.rstrip()}"
    return SandboxError(STATUS_BY_TYPE.get(e.type, "error"), text, "")


class InProcessAgentSession:
    """Trusted agents (reference agents) hosted in this process with the same
    :class:`~papergym.leaderboard.board._sandbox_child.AgentHost` as the sandbox child, the problem, seeds
    and hyperparameters passed through the same codec: bit-identical actions. No limits enforced."""

    def __init__(self, factory: Callable[..., Any]):
        self.factory = factory
        self.host: _child.AgentHost | None = None
        self._t0 = time.monotonic()
        self._c0 = time.process_time()

    def start(self, problem: Mapping[str, Any], seeds: Sequence[Any], hyperparameters: Mapping[str, Any] = {}) -> None:
        v = roundtrip({"problem": dict(problem), "seeds": list(seeds), "hyperparameters": dict(hyperparameters)})
        self._t0, self._c0 = time.monotonic(), time.process_time()
        try:
            self.host = _child.AgentHost(
                self.factory, _child.problem_from_public(v["problem"]), v["seeds"], v["hyperparameters"]
            )
        except _child.HostedError as e:
            raise _in_process_error(e) from None

    def step(
        self, observations: Any, rewards: np.ndarray | None, active: np.ndarray
    ) -> tuple[np.ndarray, dict[int, str]]:
        if self.host is None:
            raise RuntimeError("step() before start()")
        if isinstance(observations, Mapping):
            obs: Any = {k: np.array(x) for k, x in observations.items()}
        else:
            obs = np.array(observations)
        try:
            actions, failed = self.host.step(obs, None if rewards is None else np.array(rewards, copy=True), active)
        except _child.HostedError as e:
            raise _in_process_error(e) from None
        return actions, failed

    def close(self) -> SessionReport:
        return SessionReport("", time.monotonic() - self._t0, time.process_time() - self._c0, "in-process")


class SolverSession(Protocol):
    """One submission's solver over several solves (:mod:`papergym.leaderboard.board.sandbox`, Sessions)."""

    def solve(
        self,
        problem: dict,
        callables: Mapping[str, Callable],
        budget: Mapping[str, Any],
        hyperparameters: Mapping[str, Any],
        seed: Any,
        *,
        report: Callable[[Any, int | None, float | None], None],
        timeout: float,
    ) -> tuple[Any, float]: ...

    def close(self) -> SessionReport: ...


def _report_ack(report: Callable, solution: Any, iteration: Any, work: Any) -> dict[str, str]:
    try:
        report(solution, iteration, work)
    except Exception as exc:  # noqa: BLE001 - sent back to the solver as its error
        return {"error": _child.short(exc), "type": type(exc).__name__}
    return {}


class SandboxedSolverSession:
    """The submitted solver factory ``attr`` of ``source`` in one sandboxed child for several solves.

    ``solve(problem, callables, budget, hyperparameters, seed, *, report, timeout)`` -> ``(solution,
    solver seconds)``: ``problem`` a nested dict of JSON values / arrays (namespaces in the child),
    ``callables`` dotted name -> the real function (an RPC stub in the child); ``budget`` a mapping
    of ``max_seconds`` / ``max_iterations`` / ``max_work``; ``report(solution, iteration, work)`` is
    called here for each of the solver's reports (its exception goes back to the solver as
    ``ValueError``, or ``BudgetExceeded`` if that is its class name); solver seconds = the solve's wall
    time minus the time spent in ``report``. ``timeout``: wall seconds of this solve (report time
    excluded; also bounded by the episode and submission limits). A failure raises
    :class:`SandboxError`; after a timeout / crash the next solve starts a fresh child.
    """

    def __init__(self, source: Path | str, attr: str, *, limits: Limits = Limits(), sandbox: str = "auto"):  # noqa: B008 - Limits is a frozen dataclass: one shared default is safe
        self._sb = SandboxProcess(source, attr, limits, sandbox)
        self.limits = limits
        self.sandbox = self._sb.mode
        self._t0 = time.monotonic()
        self._cpu = 0.0
        self._tails: list[str] = []
        self._report: SessionReport | None = None

    def __enter__(self) -> SandboxedSolverSession:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ensure(self) -> None:
        sb = self._sb
        if sb.proc is not None and (sb.dead is not None or not sb.alive):
            sb.cleanup()
            self._cpu += sb.total_cpu
            self._tails.append(sb.tail())
            sb.cpu_seconds = sb.sampled_cpu = 0.0
            sb.proc = sb.chan = sb.reader = None
            sb.dead = sb._timed_out = sb._deadline = None
        if sb.proc is None:
            if time.monotonic() >= sb.submission_deadline:
                raise SandboxError(
                    "timeout", f"the per-submission limit of {self.limits.submission_seconds:g} s was reached"
                )
            sb.launch()
            dl = sb.deadline(self.limits.call_seconds, None)
            sb.send(_ch.encode(_ch.OP_LOAD), dl, "import")
            sb.recv(dl, "import", (_ch.OP_OK,))

    def solve(
        self,
        problem: Mapping[str, Any],
        callables: Mapping[str, Callable],
        budget: Mapping[str, Any],
        hyperparameters: Mapping[str, Any],
        seed: Any,
        *,
        report: Callable[[Any, int | None, float | None], None],
        timeout: float,
    ) -> tuple[Any, float]:
        if self._report is not None:
            raise RuntimeError("solve() after close()")
        self._ensure()
        sb = self._sb
        try:
            frame = _ch.encode(
                _ch.OP_SOLVE,
                {
                    "problem": dict(problem),
                    "callables": list(callables),
                    "budget": dict(budget),
                    "hyperparameters": dict(hyperparameters),
                    "seed": seed,
                },
            )
        except TypeError as exc:
            raise TypeError(f"the problem / budget / hyperparameters cannot be sent to the sandbox: {exc}") from None
        t0 = time.monotonic()
        in_report = 0.0
        limit = min(float(timeout), self.limits.episode_seconds)
        what = f"the solve's time limit of {limit:g} s"

        def deadline() -> tuple[float, str]:
            end = t0 + limit + in_report
            if end <= sb.submission_deadline:
                return end, what
            return sb.submission_deadline, f"per-submission limit of {self.limits.submission_seconds:g} s"

        sb.send(frame, deadline(), "solve")
        expect = (_ch.OP_RPC_CALL, _ch.OP_REPORT, _ch.OP_SOLUTION)
        while True:
            op, v = sb.recv(deadline(), "solve", expect)
            try:
                msg = check_solver_message(op, v, callables)
            except ProtocolError as err:
                raise sb.fail(err) from None
            if msg[0] == "solution":
                wall = time.monotonic() - t0
                return msg[1], wall - in_report
            if msg[0] == "call":
                _, name, args, kwargs = msg
                try:
                    res: dict[str, Any] = {"result": callables[name](*args, **kwargs)}
                    out = _ch.encode(_ch.OP_RPC_RETURN, res)
                except Exception as exc:  # noqa: BLE001 - the solver's bad call: ValueError in the child
                    out = _ch.encode(_ch.OP_RPC_RETURN, {"error": f"{name}: {_child.short(exc)}"})
                sb.send(out, deadline(), "solve")
            else:  # report
                _, solution, it, work = msg
                r0 = time.monotonic()
                ack = _report_ack(report, solution, it, work)
                in_report += time.monotonic() - r0
                sb.send(_ch.encode(_ch.OP_REPORT_ACK, ack), deadline(), "solve")

    def close(self) -> SessionReport:
        if self._report is None:
            sb = self._sb
            sb.close()
            tails = [t for t in [*self._tails, sb.tail()] if t]
            tail = "\n".join(tails)[-self.limits.stderr_tail_bytes :]
            self._report = SessionReport(tail, time.monotonic() - self._t0, self._cpu + sb.total_cpu, sb.mode)
        return self._report

    def __del__(self) -> None:
        sb = getattr(self, "_sb", None)
        if sb is not None and sb.alive:
            sb.cleanup()


def _as_value_error(name: str, fn: Callable) -> Callable:
    """``fn`` whose exceptions become ``ValueError("name: Type: message")``, as through the sandbox."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the solver's bad call, as in the sandbox
            raise ValueError(f"{name}: {_child.short(exc)}") from None

    return call


class InProcessSolverSession:
    """A trusted solver factory run in this process with the same problem building as the child
    (nested namespaces, the real callables at their dotted names). ``timeout`` is not enforced
    (trusted code); ``BudgetExceeded`` still maps to status ``timeout``."""

    def __init__(self, factory: Callable[..., Any]):
        self.factory = factory
        self._t0 = time.monotonic()
        self._c0 = time.process_time()

    def solve(
        self,
        problem: Mapping[str, Any],
        callables: Mapping[str, Callable],
        budget: Mapping[str, Any],
        hyperparameters: Mapping[str, Any],
        seed: Any,
        *,
        report: Callable[[Any, int | None, float | None], None],
        timeout: float,
    ) -> tuple[Any, float]:
        v = roundtrip(
            {"problem": dict(problem), "budget": dict(budget), "hyperparameters": dict(hyperparameters), "seed": seed}
        )
        ns = _child.solver_problem(v["problem"], {k: _as_value_error(k, fn) for k, fn in callables.items()})
        in_report = 0.0

        def rep(solution: Any, iteration: int | None = None, work: float | None = None) -> None:
            nonlocal in_report
            r0 = time.monotonic()
            try:
                report(solution, iteration, work)
            finally:
                in_report += time.monotonic() - r0

        t0 = time.monotonic()
        try:
            solver = _child.make_solver(self.factory, v["seed"], v["hyperparameters"])
            solution = solver.solve(ns, _child.budget_namespace(v["budget"]), rep)
        except Exception as exc:
            raise _in_process_error(_child.describe(exc)) from exc
        return solution, time.monotonic() - t0 - in_report

    def close(self) -> SessionReport:
        return SessionReport("", time.monotonic() - self._t0, time.process_time() - self._c0, "in-process")
