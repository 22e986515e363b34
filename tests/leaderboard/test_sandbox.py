"""Sandbox, channel and sessions (papergym.leaderboard.board.sandbox / channel / _sandbox_child).

Hostile submissions live in tests/leaderboard/submissions/; each must end with the right status,
quickly, leaving this process healthy. Isolation tests need bubblewrap: they skip on a machine
without it and fail under CI=true.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import papergym.envs
from papergym.leaderboard.board import channel as ch
from papergym.leaderboard.board.isolation import isolation_status
from papergym.leaderboard.board.sandbox import (
    InProcessAgentSession,
    InProcessSolverSession,
    Limits,
    ProtocolError,
    SandboxedAgentSession,
    SandboxedSolverSession,
    SandboxError,
    bwrap_available,
    load_entry,
    problem_to_public,
    space_to_public,
)

SUB = Path(__file__).parent / "submissions"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
FAST = Limits(call_seconds=5.0, episode_seconds=30.0, submission_seconds=60.0, cpu_seconds=30.0, memory_mb=2048)


@pytest.fixture(scope="module")
def problem() -> dict:
    return problem_to_public(gym.make("NonStatLipschitz-v0").unwrapped.problem)


@pytest.fixture
def bwrap() -> str:
    ok, why = bwrap_available()
    if not ok:
        if IN_CI:
            pytest.fail(f"bubblewrap must work in CI: {why}")
        pytest.skip(f"bubblewrap unavailable: {why}")
    return "bwrap"


@pytest.fixture
def full() -> str:
    """``sandbox="full"`` (bubblewrap, job cgroup, seccomp, per-job uid): skips without it, fails in CI."""
    st = isolation_status()
    if not st.full:
        if IN_CI:
            pytest.fail(f"the full sandbox must work in CI: {'; '.join(st.missing())}")
        pytest.skip(f"full sandbox unavailable: {'; '.join(st.missing())}")
    return "full"


def _mode() -> str:
    """What the tests that do not test isolation run under: ``"auto"`` where bubblewrap works (CI),
    else the explicit ``"unsafe-rlimits"``, so they still run on a machine without bubblewrap."""
    return "auto" if isolation_status().bwrap_ok else "unsafe-rlimits"


SANDBOXED = ("full", "bwrap", "unsafe-rlimits")


def _load(name: str, attr: str):
    spec = importlib.util.spec_from_file_location(f"sub_{name}", SUB / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, attr)


def _session(
    name: str, attr: str = "Agent", limits: Limits = FAST, sandbox: str | None = None
) -> SandboxedAgentSession:
    return SandboxedAgentSession(SUB / f"{name}.py", attr, limits=limits, sandbox=sandbox or _mode())


def _fails(sess, problem, seeds, hp=None, steps=3, n_obs=None):
    """Start and step until SandboxError; return it (and close the session)."""
    n = len(seeds)
    obs = np.zeros((n, 1))
    try:
        sess.start(problem, seeds, hp or {})
        rewards = None
        for _ in range(steps):
            sess.step(obs, rewards, np.ones(n, bool))
            rewards = np.zeros(n)
    except SandboxError as exc:
        return exc
    finally:
        sess.close()
    raise AssertionError("the session did not fail")


# ------------------------------------------------------------------------------------------- codec
def test_codec_roundtrip_values():
    v = {
        "a": [1, 2.5, float("nan"), float("inf"), None, True, "s"],
        "t": (1, (2, 3)),
        "x": np.arange(6).reshape(2, 3),
        "b": np.array([True, False]),
        "f4": np.ones(3, np.float32),
        "u8": np.array([2**64 - 1], np.uint64),
        "empty": np.zeros((0, 4)),
        "scalar": np.float64(3.5),
        "nd": {"__nd__": 5},
        "ss": np.random.SeedSequence(7),
    }
    frame = ch.encode(ch.OP_SOLVE, v)
    (n,) = np.frombuffer(frame[:4], "<u4")
    assert n == len(frame) - 4
    op, out = ch.decode(bytearray(frame[4:]))
    assert op == ch.OP_SOLVE
    assert (
        out["a"][:2] == [1, 2.5]
        and np.isnan(out["a"][2])
        and out["a"][3] == np.inf
        and out["a"][4:] == [None, True, "s"]
    )
    assert out["t"] == (1, (2, 3))
    for k in ("x", "b", "f4", "u8", "empty"):
        assert out[k].dtype == v[k].dtype and np.array_equal(out[k], v[k])
    assert out["x"].flags.writeable
    assert out["scalar"] == 3.5 and out["nd"] == {"__nd__": 5}
    assert out["ss"].generate_state(4).tolist() == v["ss"].generate_state(4).tolist()
    # fast path: a list of arrays, no JSON
    arrays = [np.ones(3, bool), np.arange(4.0).reshape(2, 2)]
    op, out = ch.decode(bytearray(ch.encode(ch.OP_STEP, arrays=arrays)[4:]))
    assert op == ch.OP_STEP and all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(out, arrays))


@pytest.mark.parametrize("bad", [np.array(["s"]), np.array([1 + 2j]), np.array([object()]), object(), {1.5: 2}])
def test_codec_refuses_unsendable(bad):
    with pytest.raises(TypeError):
        ch.encode(1, {"v": bad})


def _payload(op=66, arrays=(), js=b""):
    body = bytes([op, len(arrays), 0, 0]) + len(js).to_bytes(4, "little")
    data = b""
    for code, shape, raw in arrays:
        body += bytes([code, len(shape), 0, 0, 0, 0, 0, 0]) + b"".join(int(s).to_bytes(8, "little") for s in shape)
        data += raw
    return bytearray(body + js + b"\0" * ((-len(js)) % 8) + data)


@pytest.mark.parametrize(
    "payload,match",
    [
        (bytearray(b"\x01\x02"), "shorter than its header"),
        (_payload(arrays=[(99, (1,), b"\0" * 8)]), "dtype code 99"),
        (_payload(arrays=[(11, (10,), b"\0" * 8)]), "truncated frame"),
        (_payload(arrays=[(11, (2**40, 2**40), b"")]), "does not fit"),
        (_payload(js=b"{not json"), "bad JSON"),
        (_payload(js=b"[" * 100 + b"]" * 100), "nested deeper"),
        (_payload(js=b'{"__nd__": 3}'), "bad array reference"),
        (_payload(arrays=[(11, (1,), b"\0" * 8)]) + b"\0" * 16, "does not match"),
    ],
)
def test_codec_rejects_garbage(payload, match):
    with pytest.raises(ch.ChannelProtocolError, match=match):
        ch.decode(payload)


def test_codec_layout_caches_are_exact():
    """The hot-path caches (one header per layout) give the same frames and values as the uncached
    codec, and a frame that only resembles a cached layout still goes through the strict decoder."""
    rng = np.random.default_rng(0)
    for _ in range(3):  # the second and third rounds hit both caches
        arrays = [rng.random(20) < 0.5, rng.random((20, 2)), rng.random(20).astype(np.float32)]
        frame = ch.encode(ch.OP_STEP, arrays=arrays)
        assert frame == ch._frame(ch.OP_STEP, arrays, b"")
        op, out = ch.decode(bytearray(frame[4:]))
        assert op == ch.OP_STEP and all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(out, arrays))
        assert all(o.flags.writeable for o in out)
    # a big-endian array is sent little-endian (not cached under the big-endian layout)
    op, out = ch.decode(bytearray(ch.encode(ch.OP_STEP, arrays=[np.arange(3, dtype=">f8")])[4:]))
    assert out[0].dtype == np.dtype("<f8") and out[0].tolist() == [0.0, 1.0, 2.0]
    # same length and op as a cached layout, another dtype code in the header: refused
    good = bytearray(ch.encode(ch.OP_ACTIONS, arrays=[np.zeros(4)])[4:])
    ch.decode(good)
    bad = bytearray(good)
    bad[8] = 99
    with pytest.raises(ch.ChannelProtocolError, match="dtype code 99"):
        ch.decode(bad)
    bad = bytearray(good)
    bad[16] = 5  # the shape says 5 elements: does not fit the frame
    with pytest.raises(ch.ChannelProtocolError, match="truncated"):
        ch.decode(bad)


def test_channel_frames_and_limits():
    r1, w1 = os.pipe()
    a = ch.Channel(r1, w1, max_frame_bytes=1 << 22)
    big = np.arange(200_000, dtype=np.float64)  # larger than the read buffer
    writer = threading.Thread(target=lambda: (a.send(ch.OP_OK, {"x": big}), a.send(ch.OP_STEP, arrays=[np.ones(2)])))
    writer.start()
    assert np.array_equal(a.recv()[1]["x"], big)
    assert a.recv()[1][0].tolist() == [1.0, 1.0]
    writer.join()
    with pytest.raises(ch.ChannelTimeout):
        a.recv(time.monotonic() + 0.05)
    os.write(w1, (1 << 23).to_bytes(4, "little"))
    with pytest.raises(ch.ChannelProtocolError, match="exceeds the limit"):
        a.recv()
    a.close()


# ------------------------------------------------------------------------------------- entry, problem
def test_load_entry(tmp_path):
    f = tmp_path / "agent.py"
    f.write_text("x = 1\n")
    assert load_entry(f"{f}:make_agent") == (f.resolve(), "make_agent")
    assert load_entry(f"{f}:Cls.build")[1] == "Cls.build"
    with pytest.raises(ValueError, match="file.py:attr"):
        load_entry(str(f))
    with pytest.raises(ValueError, match="valid attribute"):
        load_entry(f"{f}:9bad")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_entry(f"{tmp_path / 'missing.py'}:a")
    (tmp_path / "a.txt").write_text("")
    with pytest.raises(ValueError, match=r"\.py file"):
        load_entry(f"{tmp_path / 'a.txt'}:a")


def test_problem_to_public_rebuilds_spaces():
    from papergym.leaderboard.board import _sandbox_child as child
    from papergym.leaderboard.board.public import roundtrip

    spec = gym.make("MSetSemiBandit-v0").unwrapped.problem
    pub = problem_to_public(spec)
    p = child.problem_from_public(roundtrip(pub))
    assert isinstance(p.action_space, gym.spaces.MultiBinary) and p.action_space.n == spec.action_space.n
    assert p.action_space.m == spec.action_space.m and p.action_space.d == spec.action_space.d
    obs_desc = space_to_public(spec.observation_space)
    assert space_to_public(p.observation_space)["type"] == obs_desc["type"]
    assert p.observation_space.shape == spec.observation_space.shape
    assert p.horizon == spec.horizon and p.env_id == spec.env_id
    for k, v in spec.params.items():
        assert getattr(p, k) == v
    box = child.problem_from_public(roundtrip(problem_to_public(gym.make("NonStatLipschitz-v0").unwrapped.problem)))
    assert box.action_space == gym.spaces.Box(0.0, 1.0, (1,), np.float64)


# ------------------------------------------------------------------------------ well-behaved agents
def _play(sess, problem, seeds, T=60, hp=None):
    """A small deterministic loop (rewards a fixed function of the actions)."""
    n = len(seeds)
    sess.start(problem, seeds, hp or {})
    obs, rewards, out = np.zeros((n, 1)), None, []
    for t in range(T):
        a, failed = sess.step(obs, rewards, np.ones(n, bool))
        assert failed == {}
        out.append(np.array(a, copy=True))
        rewards = 1.0 - np.abs(a[:, 0] - 0.7) + 0.01 * t
        obs = np.full((n, 1), float(t))
    rep = sess.close()
    return np.stack(out), rep


@pytest.mark.parametrize("name,attr", [("good_batched", "Agent"), ("good_perrun", "make_agent")])
def test_sandboxed_equals_in_process_bit_for_bit(problem, name, attr):
    seeds = [3, 11, np.random.SeedSequence(5, spawn_key=(2,))]
    a_in, rep_in = _play(InProcessAgentSession(_load(name, attr)), problem, seeds, hp={"eps": 0.3})
    a_sb, rep_sb = _play(_session(name, attr), problem, seeds, hp={"eps": 0.3})
    assert a_in.dtype == a_sb.dtype and a_in.tobytes() == a_sb.tobytes()
    assert rep_in.sandbox == "in-process" and rep_sb.sandbox in SANDBOXED
    assert rep_sb.wall_seconds > 0 and rep_sb.cpu_seconds > 0


def test_split_step_matches_step_and_refuses_misuse(problem):
    """send_step / recv_step (the evaluator works in between) give what step gives; out of order they
    raise instead of desynchronising the channel."""
    ref, _ = _play(_session("good_batched", "Agent"), problem, [1, 2], T=20)
    sess = _session("good_batched", "Agent")
    with pytest.raises(RuntimeError, match="before start"):
        sess.send_step(np.zeros((2, 1)), None, np.ones(2, bool))
    sess.start(problem, [1, 2], {})
    with pytest.raises(RuntimeError, match="without send_step"):
        sess.recv_step()
    obs, rewards, out = np.zeros((2, 1)), None, []
    for t in range(20):
        sess.send_step(obs, rewards, np.ones(2, bool))
        if t == 3:
            with pytest.raises(RuntimeError, match="twice"):
                sess.send_step(obs, rewards, np.ones(2, bool))
        a, failed = sess.recv_step()
        out.append(np.array(a, copy=True))
        rewards = 1.0 - np.abs(a[:, 0] - 0.7) + 0.01 * t
        obs = np.full((2, 1), float(t))
    sess.close()
    assert np.stack(out).tobytes() == ref.tobytes()


def test_batched_and_per_run_agree(problem):
    a_b, _ = _play(InProcessAgentSession(_load("good_batched", "Agent")), problem, [1, 2, 3])
    a_p, _ = _play(_session("good_perrun", "make_agent"), problem, [1, 2, 3])
    assert np.array_equal(a_b, a_p)


def test_per_run_failure_only_fails_that_run(problem):
    sess = _session("perrun_some_fail", "Agent")
    sess.start(problem, [1, 2, 3], {})
    fails = {}
    for t in range(5):
        active = np.array([True, 2 not in fails and True, True])
        a, failed = sess.step(np.zeros((3, 1)), None if t == 0 else np.zeros(3), active)
        fails.update({k + 1: v for k, v in failed.items()})
        if t >= 2:
            assert a[1, 0] == 0.0 and a[0, 0] == a[2, 0] == 0.5
    sess.close()
    assert fails == {2: "ZeroDivisionError: seed 2 gives up"}


def test_inactive_rows_zero_filled(problem):
    sess = _session("bad_actions", "Agent")
    sess.start(problem, [1, 2], {"mode": "outside"})
    a, _ = sess.step(np.zeros((2, 1)), None, np.array([True, False]))
    assert a.tolist() == [[5.0], [0.0]]
    sess.close()


# ---------------------------------------------------------------------------------- hostile agents
def test_network_is_unreachable(problem, bwrap):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.0)
    port = server.getsockname()[1]
    err = _fails(_session("net", sandbox=bwrap), problem, [1], {"port": port})
    assert err.status == "error" and err.message.startswith("ConnectionError")
    assert "CONNECTED" not in err.message and "127.0.0.1" in err.message
    with pytest.raises(BlockingIOError):
        server.accept()  # no connection ever arrived
    server.close()


@pytest.mark.parametrize("mode", ["bwrap", "full"])
def test_secrets_are_invisible(problem, mode, request, tmp_path, monkeypatch):
    """Neither the parent's files nor an evaluator's /proc/<pid>/environ (a process started with the
    secret in its environment, as the evaluator is) can be read from inside."""
    sandbox = request.getfixturevalue(mode)
    secret = "s3cr3t-" + os.urandom(8).hex()
    monkeypatch.setenv("PAPERGYM_TEST_SECRET", secret)
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(secret)
    db = tmp_path / "leaderboard.db"
    with sqlite3.connect(db) as con:
        con.execute("create table t (x)")
    evaluator = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], env={**os.environ, "PAPERGYM_TEST_SECRET": secret}
    )
    try:
        deadline = time.monotonic() + 10
        while secret.encode() not in Path(f"/proc/{evaluator.pid}/environ").read_bytes():  # once it has exec'd,
            assert time.monotonic() < deadline  # the secret is there for whoever may read it
            time.sleep(0.01)
        paths = [
            str(secret_file),
            str(db),
            str(Path(papergym.envs.__file__)),
            "/etc/shadow",
            "/etc/passwd",
            f"/proc/{evaluator.pid}/environ",
            f"/proc/{os.getpid()}/environ",
        ]
        err = _fails(_session("snoop", sandbox=sandbox), problem, [1], {"paths": paths, "secret_value": secret})
    finally:
        evaluator.kill()
        evaluator.wait()
    assert err.status == "error"
    assert "REPORT NOTHING-FOUND" in err.message, err.message
    assert secret not in err.message and secret not in err.stderr_tail


def test_import_papergym_fails(problem, bwrap):
    err = _fails(_session("import_papergym", "make_agent", sandbox=bwrap), problem, [1])
    assert err.status == "error" and "ModuleNotFoundError" in err.message and "papergym" in err.message
    assert "/sandbox/submission/import_papergym.py" in err.message  # the submission's frame, no host path
    assert str(SUB) not in err.message


def _nobody_processes() -> int:
    """Processes of the users sandboxes run as: 65534 and the per-job uid pool."""
    from papergym.leaderboard.board.isolation import UID_POOL

    uids = {"65534", *map(str, UID_POOL)}
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/status") as fh:
                    if any(line.startswith("Uid:") and line.split()[1] in uids for line in fh):
                        n += 1
            except OSError:
                pass
    return n


@pytest.mark.slow
def test_fork_bomb(problem, bwrap):
    before = _nobody_processes() if os.geteuid() == 0 else None
    t0 = time.monotonic()
    lim = Limits(call_seconds=3.0, episode_seconds=30.0, submission_seconds=60.0, cpu_seconds=30.0, processes=16)
    err = _fails(_session("forkbomb", limits=lim, sandbox=bwrap), problem, [1])
    assert err.status in ("timeout", "error") and time.monotonic() - t0 < 20
    if before is not None:
        deadline = time.monotonic() + 10
        while _nobody_processes() > before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _nobody_processes() <= before


def test_big_allocation_is_oom(problem):
    err = _fails(_session("bigalloc"), problem, [1])
    assert err.status == "oom" and "MemoryError" in err.message


def test_infinite_loop_in_act_times_out(problem):
    lim = Limits(call_seconds=1.5, episode_seconds=30.0, submission_seconds=60.0, cpu_seconds=30.0)
    t0 = time.monotonic()
    err = _fails(_session("loop_act", limits=lim), problem, [1, 2])
    assert err.status == "timeout" and "per-call limit of 1.5 s" in err.message
    assert time.monotonic() - t0 < 8


def test_infinite_loop_in_import_times_out(problem):
    lim = Limits(call_seconds=1.5, episode_seconds=30.0, submission_seconds=60.0, cpu_seconds=30.0)
    err = _fails(_session("loop_import", limits=lim), problem, [1])
    assert err.status == "timeout" and "start" in err.message


def test_episode_limit(problem):
    lim = Limits(call_seconds=10.0, episode_seconds=1.0, submission_seconds=60.0, cpu_seconds=30.0)
    err = _fails(_session("loop_act", limits=lim), problem, [1])
    assert err.status == "timeout" and "per-episode limit" in err.message


@pytest.mark.parametrize("what", ["length", "dtype"])
def test_garbage_on_the_channel(problem, what):
    err = _fails(_session("garbage"), problem, [1], {"what": what})
    assert isinstance(err, ProtocolError) and err.status == "error"
    assert err.message.startswith("protocol violation")


def test_lots_of_output_works_and_tail_is_kept(problem):
    lim = Limits(call_seconds=20.0, stderr_tail_bytes=4096)
    sess = _session("noisy", limits=lim)
    sess.start(problem, [1], {})
    for t in range(2):
        a, _ = sess.step(np.zeros((1, 1)), None if t == 0 else np.zeros(1), np.ones(1, bool))
        assert a.tolist() == [[0.5]]
    rep = sess.close()
    assert "LAST-LINE-2" in rep.stderr_tail and "bytes omitted" in rep.stderr_tail
    assert len(rep.stderr_tail) < 4096 + 200


@pytest.mark.parametrize(
    "mode,check",
    [
        ("nan", lambda a: a.shape == (2, 1) and np.isnan(a).all()),
        ("shape", lambda a: a.shape == (2, 3, 2)),
        ("outside", lambda a: a.tolist() == [[5.0], [5.0]]),
    ],
)
def test_bad_actions_are_returned_faithfully(problem, mode, check):
    sess = _session("bad_actions")
    sess.start(problem, [1, 2], {"mode": mode})
    a, failed = sess.step(np.zeros((2, 1)), None, np.ones(2, bool))
    assert check(a) and failed == {}
    sess.close()


def test_non_numeric_actions_fail(problem):
    err = _fails(_session("bad_actions"), problem, [1, 2], {"mode": "str"})
    assert err.status == "error" and "not numeric" in err.message


def test_exit_mid_episode(problem):
    sess = _session("exit_mid")
    err = _fails(sess, problem, [1], steps=5)
    assert err.status == "error" and "exited (code 7)" in err.message
    with pytest.raises(SandboxError, match="exited"):  # the session stays dead
        sess.step(np.zeros((1, 1)), None, np.ones(1, bool))


def test_missing_attribute(problem):
    err = _fails(_session("good_batched", "Nope"), problem, [1])
    assert err.status == "error" and "has no attribute 'Nope'" in err.message


def test_unsafe_rlimits_never_runs_code_as_root(problem, monkeypatch):
    """As root, the unsafe mode drops to an unprivileged uid; where it cannot (a Python installation
    that other users cannot read), it refuses instead of running the submission as root."""
    from papergym.leaderboard.board import bwrap as bw_mod
    from papergym.leaderboard.board import sandbox as sb_mod

    if os.geteuid() != 0:
        pytest.skip("only root can run a submission as root")
    monkeypatch.setattr(bw_mod, "python_reachable_by_nobody", lambda: (False, "/root is not accessible"))
    err = _fails(_session("good_batched", sandbox="unsafe-rlimits"), problem, [1])
    assert isinstance(err, sb_mod.SandboxUnavailable)
    assert "as root" in err.message and "/root is not accessible" in err.message


def test_unsafe_rlimits_runs_with_a_warning(problem):
    from papergym.leaderboard.board.bwrap import python_reachable_by_nobody
    from papergym.leaderboard.board.sandbox import SandboxWarning

    if os.geteuid() == 0 and not python_reachable_by_nobody()[0]:
        pytest.skip(
            "as root with a Python installation other users cannot read, the unsafe mode refuses to run "
            "(test_unsafe_rlimits_never_runs_code_as_root)"
        )
    with pytest.warns(SandboxWarning, match="no filesystem isolation"):
        a, rep = _play(_session("good_batched", sandbox="unsafe-rlimits"), problem, [1, 2], T=5)
    assert rep.sandbox == "unsafe-rlimits" and a.shape == (5, 2, 1)
    with pytest.raises(ValueError, match="renamed 'unsafe-rlimits'"):
        _session("good_batched", sandbox="rlimits")


# ------------------------------------------------------------------------------------------ solvers
def _ode():
    t = np.linspace(0.0, 1.0, 11)
    problem = {
        "name": "decay",
        "order": 1,
        "dim": 1,
        "t0": 0.0,
        "tf": 1.0,
        "t_query": t,
        "ic": np.ones(1),
        "params": {"k": 1.0},
        "linear_form": {},
    }
    calls = []

    def rhs(t, y, dy=None):
        calls.append("rhs")
        return -np.asarray(y, dtype=float)

    def jac(t, y, dy=None):
        k = np.asarray(t).size
        return -np.ones((k, 1, 1)), None

    def coeffs(t):
        return np.ones((2, np.asarray(t).size, 1, 1))

    return problem, {"rhs": rhs, "jac": jac, "linear_form.coeffs": coeffs}, calls


@pytest.mark.parametrize("kind", ["sandboxed", "in-process"])
def test_solver_session(kind):
    problem, callables, calls = _ode()
    reports = []

    def report(solution, iteration, work):
        time.sleep(0.3)  # the scorer's time: not the solver's
        reports.append((np.array(solution["y"]), iteration, work))

    sess = (
        SandboxedSolverSession(SUB / "solver_good.py", "Solver", limits=FAST, sandbox=_mode())
        if kind == "sandboxed"
        else InProcessSolverSession(_load("solver_good", "Solver"))
    )
    t0 = time.monotonic()
    sol, secs = sess.solve(
        problem, callables, {"max_seconds": 10.0, "max_iterations": 5}, {"steps": 2}, 4, report=report, timeout=10.0
    )
    wall = time.monotonic() - t0
    assert calls.count("rhs") == 2
    assert [r[1:] for r in reports] == [(1, 1.0), (2, 2.0)]
    assert np.array_equal(reports[1][0], sol["y"]) and sol["y"][0, 0] == 0.0
    assert sol["meta"]["fy_shape"] == [11, 1, 1] and sol["meta"]["fdy"] is None
    assert list(sol["meta"]["coeffs"]) == [2, 11, 1, 1]
    assert sol["meta"]["bad"].startswith("rhs: ")
    assert sol["meta"]["budget"] == [10.0, 5]
    assert sol["meta"]["noise"] == np.random.default_rng(4).random()
    assert 0 < secs < wall - 0.55  # the 0.6 s in report excluded
    # a second solve in the same child
    sol2, _ = sess.solve(problem, callables, {}, {"steps": 1}, 4, report=lambda *a: None, timeout=10.0)
    assert sol2["y"].shape == (11, 1)
    assert sess.close().sandbox in (*SANDBOXED, "in-process")


def test_solver_budget_exceeded_is_timeout():
    problem, callables, _ = _ode()
    sess = SandboxedSolverSession(SUB / "solver_budget.py", "Solver", limits=FAST, sandbox=_mode())
    with pytest.raises(SandboxError) as e:
        sess.solve(problem, callables, {}, {}, 0, report=lambda *a: None, timeout=10.0)
    assert e.value.status == "timeout" and "BudgetExceeded" in e.value.message
    sess.close()
    with pytest.raises(SandboxError) as e:
        InProcessSolverSession(_load("solver_budget", "Solver")).solve(
            problem, callables, {}, {}, 0, report=lambda *a: None, timeout=10.0
        )
    assert e.value.status == "timeout"


def test_solver_garbage_solution_is_error():
    problem, callables, _ = _ode()
    sess = SandboxedSolverSession(SUB / "solver_garbage.py", "Solver", limits=FAST, sandbox=_mode())
    with pytest.raises(SandboxError) as e:
        sess.solve(problem, callables, {}, {}, 0, report=lambda *a: None, timeout=10.0)
    assert e.value.status == "error" and "cannot be sent" in e.value.message
    sess.close()


def test_solver_timeout_then_fresh_child():
    problem, callables, _ = _ode()
    slow = SandboxedSolverSession(SUB / "solver_slow.py", "Solver", limits=FAST, sandbox=_mode())
    t0 = time.monotonic()
    with pytest.raises(SandboxError) as e:
        slow.solve(problem, callables, {}, {}, 0, report=lambda *a: None, timeout=1.0)
    assert e.value.status == "timeout" and time.monotonic() - t0 < 6
    with pytest.raises(SandboxError) as e:  # the next solve starts a fresh child (and times out again)
        slow.solve(problem, callables, {}, {}, 0, report=lambda *a: None, timeout=0.5)
    assert e.value.status == "timeout"
    rep = slow.close()  # CPU time of a killed child cannot always be read after the kill (README: known limit)
    assert rep.cpu_seconds >= 0 and rep.sandbox in SANDBOXED
