"""A hostile channel: every frame a sandboxed submission can send is validated before the evaluator uses it.

* fuzzing: a seeded byte mutator over valid frames of every op the child sends, and hypothesis-built
  messages and array headers, through the parent's own checks (``channel.decode``, then
  ``protocol.check_reply`` / ``check_actions`` / ``check_solver_message`` / ``hosted_error``, and
  ``evaluate._checked_actions`` with a real vector env): each frame yields a valid message or raises
  ``ChannelProtocolError`` / ``ProtocolError``, never anything else;
* end to end: sandboxed submissions (tests/leaderboard/submissions/forge_*.py) forge frames from inside
  the sandbox; the session's runs end as ``error`` with a message and the evaluator goes on to the next
  stratum / instance;
* terminal output: ``clean_terminal`` and the ``papergym leaderboard`` table strip escape sequences that
  come from a submission (its name, author, messages, stderr).

The sandboxed tests need bubblewrap: they skip on a machine without it and fail under CI=true.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import struct
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from papergym.leaderboard.board import channel as ch
from papergym.leaderboard.board.protocol import (
    MAX_CALL_BYTES,
    MAX_MESSAGE_CHARS,
    check_actions,
    check_reply,
    check_solver_message,
    hosted_error,
)
from papergym.leaderboard.board.sandbox import (
    Limits,
    ProtocolError,
    SandboxedAgentSession,
    SandboxedSolverSession,
    SandboxError,
    bwrap_available,
)
from papergym.leaderboard.board.terminal import clean_terminal

SUB = Path(__file__).parent / "submissions"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
FAST = Limits(call_seconds=10.0, episode_seconds=60.0, submission_seconds=120.0, cpu_seconds=60.0, memory_mb=2048)
SECRET = "0123456789abcdef-test-secret-of-the-channel-tests"
N = 3  # runs of the fuzzed step
D = 2  # action dimension of the fuzzed step's env
CALLABLES = {"rhs": lambda *a, **k: 0.0, "linear_form.coeffs": lambda *a, **k: 0.0}
SOLVER_OPS = (ch.OP_RPC_CALL, ch.OP_REPORT, ch.OP_SOLUTION)
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x9b31m"


@pytest.fixture
def bwrap() -> str:
    ok, why = bwrap_available()
    if not ok:
        if IN_CI:
            pytest.fail(f"bubblewrap must work in CI: {why}")
        pytest.skip(f"bubblewrap unavailable: {why}")
    return "bwrap"


# ------------------------------------------------------------------------------ the parent's checks
class _Step:
    """A real vector env (NonStatLipschitz, N runs, d = D) at its first round: what the evaluator checks
    a step's actions against."""

    def __init__(self) -> None:
        from papergym.leaderboard.board.evaluate import _placeholder_action, _vector_env

        self.venv, self.single = _vector_env("NonStatLipschitz-v0", N, {"instance": "two-peak-cyclic", "d": D})
        self.venv.reset(seed=[1, 2, 3])
        self.single.reset(seed=1)
        self.placeholder = _placeholder_action(self.single)


@pytest.fixture(scope="module")
def step_env() -> _Step:
    return _Step()


def parent_side(payload: bytearray, env: _Step) -> str:
    """What the evaluator does with one frame from the child; returns the kind of the valid message, or
    raises what the evaluator would (ChannelProtocolError from the codec, a SandboxError from the
    checks). Invariants of every accepted message are asserted here."""
    from papergym.leaderboard.board.evaluate import _checked_actions

    op, v = ch.decode(payload)
    if op in SOLVER_OPS:
        check_reply(op, v, "solve", SOLVER_OPS)
        msg = check_solver_message(op, v, CALLABLES)
        if msg[0] == "call":
            assert msg[1] in CALLABLES and isinstance(msg[2], list) and isinstance(msg[3], dict)
        elif msg[0] == "report":
            it, work = msg[2], msg[3]
            assert it is None or (type(it) is int and abs(it) < 2**63)
            assert work is None or (type(work) in (int, float) and math.isfinite(work))
        return msg[0]
    check_reply(op, v, "step", (ch.OP_ACTIONS,))  # an error message raises its SandboxError here
    actions, failed = check_actions(v, N)
    assert isinstance(actions, np.ndarray) and actions.dtype.kind in "biuf" and actions.shape[0] == N
    assert all(
        type(k) is int and 0 <= k < N and isinstance(m, str) and len(m) <= MAX_MESSAGE_CHARS for k, m in failed.items()
    )
    status, errors, active = ["ok"] * N, [None] * N, np.ones(N, bool)
    out = _checked_actions(actions, env.venv, env.single, active, env.placeholder, status, errors)
    assert out.shape == (N, D) and np.isfinite(out).all() and ((out >= 0) & (out <= 1)).all()
    assert all(s in ("ok", "invalid_action") for s in status) and (active == [s == "ok" for s in status]).all()
    return "actions"


def classify(payload: bytearray, env: _Step) -> str:
    """``parent_side``'s verdict: a message kind, ``rejected`` (ChannelProtocolError / ProtocolError) or
    ``hosted error`` (a well-formed error message); anything else propagates and fails the test."""
    try:
        return parent_side(payload, env)
    except ch.ChannelProtocolError:
        return "rejected"
    except ProtocolError as exc:
        assert exc.status == "error" and exc.message.startswith("protocol violation")
        return "rejected"
    except SandboxError as exc:  # only a well-formed error message from the child may give one
        assert ch.decode(payload)[0] == ch.OP_ERROR and exc.status in ("error", "oom", "timeout")
        return "hosted error"


def _seed_frames() -> list[bytes]:
    """Valid payloads (no length prefix) of every op the child sends, as the child encodes them."""
    enc = []
    for arr in (
        np.full((N, D), 0.5),
        np.zeros((N, D), np.float32),
        np.ones((N, D), np.int64),
        np.ones((N, D), bool),
        np.zeros((N, D), np.uint8),
        np.zeros((N, 1)),
    ):
        enc.append(ch.encode(ch.OP_ACTIONS, arrays=[arr]))
    enc += [
        ch.encode(ch.OP_ACTIONS, {"actions": np.full((N, D), 0.25), "failed": {"1": "ZeroDivisionError: x"}}),
        ch.encode(ch.OP_ACTIONS, {"actions": np.full((N, D), 0.5), "failed": {"0": "a", "2": "b" * 50}}),
        ch.encode(ch.OP_ERROR, {"type": "ValueError", "message": "bad", "traceback": '  File "s.py", line 3\n'}),
        ch.encode(ch.OP_ERROR, {"type": "MemoryError", "message": "", "traceback": ""}),
        ch.encode(ch.OP_RPC_CALL, {"name": "rhs", "args": [0.5, np.ones(4)], "kwargs": {"scale": 2}}),
        ch.encode(ch.OP_RPC_CALL, {"name": "linear_form.coeffs", "args": [[1, 2, 3]], "kwargs": {}}),
        ch.encode(ch.OP_REPORT, {"solution": np.ones(3), "iteration": 10, "work": 2.5}),
        ch.encode(ch.OP_REPORT, {"solution": {"w": np.arange(4.0)}, "iteration": None, "work": None}),
        ch.encode(
            ch.OP_SOLUTION, {"solution": {"x": np.arange(3.0), "meta": [1, (2, 3)], "ss": np.random.SeedSequence(5)}}
        ),
        ch.encode(ch.OP_SOLUTION, {"solution": [0.5, "text", None, True]}),
        ch.encode(ch.OP_OK),
    ]
    return [f[4:] for f in enc]


_INTERESTING_U64 = [0, 1, 2, 3, 7, 8, 255, 2**31, 2**32 - 1, 2**32, 2**37, 2**40, 2**62, 2**63, 2**64 - 1]
_JSON_TOKENS = [
    '"\\u00b2"',
    '"\\ud800"',
    '"01"',
    '"-1"',
    '"9999999999999999999999"',
    "1e999",
    "NaN",
    "-Infinity",
    "99999999999999999999999999",
    "-1",
    '{"__nd__": 7}',
    '{"__nd__": true}',
    '{"__tuple__": 1}',
    '{"__seedseq__": [-1, []]}',
    '{"__dict__": []}',
    "[" * 40,
    "]",
    '{"a": ',
    "null",
    "true",
    '"actions"',
    '"failed"',
    '{"0": 1}',
    '{"1": "x"}',
    "[[[]]]",
    '"name"',
    '"rhs"',
    '""',
    "0.5",
]


def _json_span(b: bytearray) -> tuple[int, int] | None:
    """Where the JSON of a payload lies (from its own header), or None when the header does not say."""
    if len(b) < 8:
        return None
    n_arr, json_len = b[1], int.from_bytes(b[4:8], "little")
    pos = 8
    for _ in range(n_arr):
        if pos + 8 > len(b):
            return None
        pos += 8 + 8 * b[pos + 1]
    return (pos, pos + json_len) if pos + json_len <= len(b) else None


def _mutate(rng: random.Random, base: bytes) -> bytearray:
    b = bytearray(base)
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        m = rng.randrange(12)
        if m == 0 and b:  # a random byte
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif m == 1 and b:  # a flipped bit
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif m == 2:  # random bytes inserted
            i = rng.randrange(len(b) + 1)
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif m == 3 and b:  # a span deleted
            i = rng.randrange(len(b))
            del b[i : i + rng.randint(1, 16)]
        elif m == 4 and len(b) >= 16:  # an interesting u64 on an 8-byte boundary (the shapes)
            i = 8 * rng.randrange(1, len(b) // 8)
            b[i : i + 8] = rng.choice(_INTERESTING_U64).to_bytes(8, "little")
        elif m == 5 and len(b) >= 8:  # the JSON length
            b[4:8] = rng.choice([0, 1, 7, 8, 2**24, 2**32 - 1, len(b), rng.randrange(len(b) + 1)]).to_bytes(4, "little")
        elif m == 6 and len(b) >= 2:  # the op or the number of arrays
            b[rng.randrange(2)] = rng.choice([0, 1, 2, 64, 65, 66, 67, 68, 69, 70, 255, rng.randrange(256)])
        elif m == 7 and len(b) >= 16:  # an array's dtype code or ndim
            b[8 + rng.randrange(2)] = rng.choice([0, 1, 5, 11, 12, 13, 99, 255, rng.randrange(40)])
        elif m == 8:  # truncated
            del b[rng.randrange(len(b) + 1) :]
        elif m == 9 and b:  # a byte of the tail (array data, mostly): often still a valid frame
            b[rng.randrange(len(b) // 2, len(b))] = rng.randrange(256)
        else:  # a JSON token replaced, the header's JSON length and padding kept consistent
            span = _json_span(b)
            if span is None or span[0] == span[1]:
                continue
            s, e = span
            text = bytes(b[s:e]).rstrip(b"\0")
            i = rng.randrange(len(text) + 1)
            j = min(len(text), i + rng.randint(0, 12))
            text = text[:i] + rng.choice(_JSON_TOKENS).encode() + text[j:]
            pad = (-(e - s)) % 8
            b[s : e + pad] = text + b"\0" * ((-len(text)) % 8)
            b[4:8] = len(text).to_bytes(4, "little")
    return b


def test_fuzz_mutated_frames_are_valid_or_protocol_errors(step_env):
    """30,000 seeded mutations of valid frames of every child op: each is a valid message or rejected
    as a protocol violation -- never another exception (classify lets anything else through)."""
    rng = random.Random(20240611)
    seeds = _seed_frames()
    verdicts: dict[str, int] = {}
    t0 = time.perf_counter()
    for k in range(30_000):
        v = classify(_mutate(rng, seeds[k % len(seeds)]), step_env)
        verdicts[v] = verdicts.get(v, 0) + 1
    assert sum(verdicts.values()) == 30_000
    # not vacuous: the mutator both keeps frames valid and breaks them, in every category
    # not vacuous: the mutator both keeps frames valid (of every kind) and breaks them
    assert verdicts["rejected"] > 10_000 and verdicts["actions"] > 1000, verdicts
    assert min(verdicts.get(k, 0) for k in ("call", "report", "solution", "hosted error")) > 50, verdicts
    assert time.perf_counter() - t0 < 60


# ------------------------------------------------------------------------------------- hypothesis
_ALLOWED = [np.dtype(d) for d in ch.ALLOWED_DTYPES]
_arrays = hnp.arrays(st.sampled_from(_ALLOWED), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
_keys = st.one_of(st.text(max_size=6), st.sampled_from(["__nd__", "__tuple__", "__dict__", "__seedseq__"]))
_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=8),
        _arrays,
    ),
    lambda c: st.one_of(st.lists(c, max_size=4), st.tuples(c, c), st.dictionaries(_keys, c, max_size=3)),
    max_leaves=10,
)
_run_keys = st.one_of(
    st.sampled_from(["0", "1", "2", "3", "01", "00", "\u00b2", "\u0661", "-1", " 1", "1.0", "9" * 30, "+1", ""]),
    st.text(max_size=4),
)
_action_arrays = st.one_of(
    hnp.arrays(
        st.sampled_from(_ALLOWED),
        st.sampled_from([(N, D), (N, 1), (N,), (N, D, 1), (N + 1, D), (0, D), ()]),
        elements=None,
    ),
    _arrays,
)


def _expected_actions_ok(v) -> bool:
    """The protocol's rule for an actions message, written independently of protocol.check_actions."""
    if isinstance(v, list):
        a, failed = (v[0], {}) if len(v) == 1 else (None, None)
    elif isinstance(v, dict) and sorted(v) == ["actions", "failed"] and isinstance(v["failed"], dict):
        a, failed = v["actions"], v["failed"]
    else:
        return False
    if not isinstance(a, np.ndarray) or a.dtype.kind not in "biuf" or a.ndim == 0 or a.shape[0] != N:
        return False
    return all(re.fullmatch(r"0|[1-9][0-9]*", k) and int(k) < N and isinstance(m, str) for k, m in failed.items())


def test_hypothesis_messages_of_every_op(step_env):
    """Structured messages of every child op, with hostile fields (run keys int() refuses, marker
    keys, huge ints, NaN, arrays of any allowed dtype and shape): accepted exactly when the protocol
    says so, rejected as protocol violations otherwise."""
    seen: dict[str, int] = {}

    @settings(
        max_examples=1500,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def check(data):
        _one_message(data, step_env, seen)

    check()
    # not vacuous: valid and invalid messages of each kind were generated
    assert seen.get("actions", 0) > 50 and seen.get("rejected", 0) > 300, seen
    assert min(seen.get(k, 0) for k in ("call", "report", "solution", "hosted error")) > 20, seen


_good_actions = hnp.arrays(st.sampled_from(_ALLOWED), st.sampled_from([(N, D), (N, 1), (N,)]))
_good_failed = st.dictionaries(st.sampled_from([str(i) for i in range(N)]), st.text(max_size=5), max_size=N)
_finite = st.floats(allow_nan=False, allow_infinity=False)


def _one_message(data, step_env: _Step, seen: dict[str, int]) -> None:
    op = data.draw(
        st.sampled_from(
            [ch.OP_ACTIONS, ch.OP_ERROR, ch.OP_RPC_CALL, ch.OP_REPORT, ch.OP_SOLUTION, ch.OP_OK, ch.OP_CLOSED, 0, 200]
        )
    )
    good = data.draw(st.booleans())  # a well-formed message (hostile contents) or a hostile structure
    fast = False
    if op == ch.OP_ACTIONS:
        fast = data.draw(st.booleans())
        if fast:
            value = data.draw(st.lists(_good_actions if good else _action_arrays, min_size=not good, max_size=2))
        elif good:
            value = {"actions": data.draw(_good_actions), "failed": data.draw(_good_failed)}
        else:
            value = {
                "actions": data.draw(st.one_of(_action_arrays, _values)),
                "failed": data.draw(
                    st.one_of(st.dictionaries(_run_keys, st.one_of(st.text(max_size=5), _values), max_size=4), _values)
                ),
            }
    elif op == ch.OP_ERROR:
        field = st.text() if good else st.one_of(st.text(), _values)
        value = data.draw(
            st.fixed_dictionaries({"type": field, "message": field, "traceback": field})
            if good
            else st.one_of(st.fixed_dictionaries({"type": field, "message": field}), _values)
        )
    elif op == ch.OP_RPC_CALL:
        value = data.draw(
            st.fixed_dictionaries(
                {
                    "name": st.sampled_from(sorted(CALLABLES)),
                    "args": st.lists(_values, max_size=3),
                    "kwargs": st.dictionaries(st.text(max_size=5), _values, max_size=2),
                }
            )
            if good
            else st.one_of(
                st.fixed_dictionaries(
                    {
                        "name": st.one_of(st.sampled_from(["rhs", "open", "__import__"]), _values),
                        "args": st.one_of(st.lists(_values, max_size=3), _values),
                        "kwargs": st.one_of(st.dictionaries(st.text(max_size=5), _values, max_size=2), _values),
                    }
                ),
                _values,
            )
        )
    elif op == ch.OP_REPORT:
        value = data.draw(
            st.fixed_dictionaries(
                {
                    "solution": _values,
                    "iteration": st.none() | st.integers(-(2**62), 2**62),
                    "work": st.none() | _finite | st.integers(0, 2**62),
                }
            )
            if good
            else st.one_of(
                st.fixed_dictionaries(
                    {
                        "solution": _values,
                        "iteration": st.one_of(st.none(), st.integers(), _values),
                        "work": st.one_of(
                            st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(), _values
                        ),
                    }
                ),
                _values,
            )
        )
    elif op == ch.OP_SOLUTION:
        value = data.draw(st.fixed_dictionaries({"solution": _values}) if good else _values)
    else:
        value = data.draw(_values)
    try:
        frame = ch.encode(op, arrays=value) if fast else ch.encode(op, value)
    except TypeError:  # the child's encoder refuses it: cannot be sent by a well-behaved child
        assume(False)
    payload = bytearray(frame[4:])
    verdict = classify(payload, step_env)
    seen[verdict] = seen.get(verdict, 0) + 1
    if op == ch.OP_ACTIONS:
        decoded = ch.decode(bytearray(frame[4:]))[1]
        assert (verdict == "actions") == _expected_actions_ok(decoded), (verdict, decoded)
    elif op in (ch.OP_OK, ch.OP_CLOSED, 0, 200):
        assert verdict == "rejected"  # not an op the evaluator expects during a step


@settings(max_examples=1500, deadline=None, derandomize=True, database=None)
@given(
    arrays=st.lists(
        st.tuples(
            st.integers(0, 20),
            st.lists(st.sampled_from(_INTERESTING_U64) | st.integers(0, 9), max_size=4),
            st.integers(-9, 9),
        ),
        max_size=3,
    )
)
def test_hypothesis_array_headers(arrays):
    """Array headers of any dtype code and shape (dimensions up to 2**64 - 1), with exactly the bytes the
    shape needs or a few more / fewer: decoded exactly when the dtype is allowed, the bytes match and
    numpy can represent the shape; ChannelProtocolError otherwise."""
    head = struct.pack("<BBHI", ch.OP_ACTIONS, len(arrays), 0, 0)
    data = b""
    strict_ok, need = True, 0  # need: the data bytes the headers call for (None: not representable)
    for code, shape, extra in arrays:
        head += struct.pack(f"<BBHI{len(shape)}Q", code, len(shape), 0, 0, *shape)
        dt = ch._DTYPE_BY_CODE.get(code)
        item = dt.itemsize if dt is not None else 1
        size, extent = math.prod(shape) * item, math.prod(s or 1 for s in shape) * item
        if dt is None or size > 2**16 or extent > ch.MAX_ARRAY_EXTENT:
            strict_ok, need = False, None
            raw = b"\0" * max(0, 8 + extra)
        else:
            raw = b"\1" * max(0, size + extra)
            strict_ok = strict_ok and _ceil8(len(raw)) == _ceil8(size)  # extra bytes within the padding are fine
            need = None if need is None else need + _ceil8(size)
        data += raw + b"\0" * (-len(raw) % 8)
    try:
        op, out = ch.decode(bytearray(head + data))
    except ch.ChannelProtocolError:
        assert not strict_ok
        return
    assert need == len(data) and op == ch.OP_ACTIONS and len(out) == len(arrays)
    for a, (code, shape, _) in zip(out, arrays):
        assert a.dtype == ch._DTYPE_BY_CODE[code] and a.shape == tuple(shape)


def _ceil8(k: int) -> int:
    return k + (-k) % 8


# ---------------------------------------------------------------------------- checks, known answers
@pytest.mark.parametrize(
    "payload, match",
    [
        (
            bytes([66, 1, 0, 0, 0, 0, 0, 0, 11, 2, 0, 0, 0, 0, 0, 0])
            + (0).to_bytes(8, "little")
            + (2**64 - 1).to_bytes(8, "little"),
            "too large",
        ),
        (bytes([66, 1, 0, 0, 0, 0, 0, 0, 11, 1, 0, 0, 0, 0, 0, 0]) + (2**37).to_bytes(8, "little"), "does not fit"),
        (b'"\\ud800"', "lone surrogate"),
        (b'{"\\udfff": 1}', "lone surrogate"),
        (b'{"__dict__": {"\\ud800": 1}}', "lone surrogate"),
        (b'{"__nd__": 0}', "bad array reference"),
        (b'{"__seedseq__": [-1, []]}', "SeedSequence"),
        (b"[1, 2", "bad JSON"),
        (b"1" * 5000, "bad JSON"),
    ],
)
def test_decode_rejects(payload, match):
    if not payload.startswith(bytes([66])):  # a JSON header: the frame around it
        payload = struct.pack("<BBHI", 66, 0, 0, len(payload)) + payload + b"\0" * (-len(payload) % 8)
    with pytest.raises(ch.ChannelProtocolError, match=match):
        ch.decode(bytearray(payload))


def test_decode_deep_json_is_rejected_quickly():
    js = b"[" * 10**5 + b"]" * 10**5
    t0 = time.perf_counter()
    with pytest.raises(ch.ChannelProtocolError, match="nested deeper"):
        ch.decode(bytearray(struct.pack("<BBHI", 66, 0, 0, len(js)) + js))
    assert time.perf_counter() - t0 < 1.0


def test_channel_large_frames_grow_with_the_data():
    """A frame larger than the first buffer arrives whole (the buffer doubles as bytes come); a length
    prefix that claims 200 MiB and is followed by 100 bytes is a truncated frame, not a 200 MiB buffer."""
    import threading

    r, w = os.pipe()
    chan = ch.Channel(r, w)
    big = np.arange(5 * 2**20, dtype=np.float64)  # 40 MiB: past the 16 MiB first buffer
    writer = threading.Thread(target=chan.send, args=(ch.OP_OK, {"x": big}))
    writer.start()
    got = chan.recv()[1]["x"]
    writer.join()
    assert np.array_equal(got, big) and got.flags.writeable
    chan.close()
    r, w = os.pipe()
    chan = ch.Channel(r, w)
    os.write(w, (200 * 2**20).to_bytes(4, "little") + b"x" * 100)
    os.close(w)
    with pytest.raises(ch.ChannelProtocolError, match="stream ended after 100 of 209715200 bytes"):
        chan.recv()
    os.close(r)


@pytest.mark.parametrize(
    "v, match",
    [
        ({"actions": np.zeros((N, 1)), "failed": {"\u00b2": "x"}}, "failed-run entry"),
        ({"actions": np.zeros((N, 1)), "failed": {"9" * 5000: "x"}}, "failed-run entry"),
        ({"actions": np.zeros((N, 1)), "failed": {"3": "x"}}, "failed-run entry"),
        ({"actions": np.zeros((N, 1)), "failed": {"01": "x"}}, "failed-run entry"),
        ({"actions": np.zeros((N, 1)), "failed": {"1": 5}}, "failed-run entry"),
        ({"actions": np.zeros((N, 1)), "failed": []}, "malformed actions message"),
        ({"actions": np.zeros((N, 1)), "failed": {}, "extra": 1}, "malformed actions message"),
        ({"actions": [0.5] * N, "failed": {}}, "numeric array"),
        ([np.zeros((N + 1, 1))], "for 3 runs"),
        ([np.zeros(())], "for 3 runs"),
        ([np.zeros((N, 1)), np.zeros((N, 1))], "2 arrays"),
        ("actions", "malformed actions message"),
    ],
)
def test_check_actions_refuses(v, match):
    with pytest.raises(ProtocolError, match=match):
        check_actions(v, N)


def test_check_actions_accepts_and_caps():
    a = np.zeros((N, 2), np.int8)
    out, failed = check_actions({"actions": a, "failed": {"0": "x" * 10_000, "2": "ValueError: y"}}, N)
    assert out is a and failed == {0: "x" * MAX_MESSAGE_CHARS, 2: "ValueError: y"}
    assert check_actions([a], N) == (a, {})


@pytest.mark.parametrize(
    "op, v, match",
    [
        (ch.OP_RPC_CALL, {"name": ["rhs"], "args": [], "kwargs": {}}, "malformed call"),
        (ch.OP_RPC_CALL, {"name": "open", "args": [], "kwargs": {}}, "malformed call of 'open'"),
        (ch.OP_RPC_CALL, {"name": "rhs", "args": {}, "kwargs": {}}, "malformed call"),
        (ch.OP_RPC_CALL, {"name": "rhs", "args": [np.zeros(MAX_CALL_BYTES // 8 + 1)], "kwargs": {}}, "exceed"),
        (ch.OP_RPC_CALL, {"name": "rhs", "args": ["x" * 4096] * (MAX_CALL_BYTES // 4096 + 1), "kwargs": {}}, "exceed"),
        (ch.OP_REPORT, {"solution": 1, "iteration": 2**70, "work": None}, "malformed report"),
        (ch.OP_REPORT, {"solution": 1, "iteration": True, "work": None}, "malformed report"),
        (ch.OP_REPORT, {"solution": 1, "iteration": None, "work": float("nan")}, "malformed report"),
        (ch.OP_REPORT, {"solution": 1, "iteration": None}, "malformed report"),
        (ch.OP_SOLUTION, {}, "malformed solution"),
        (ch.OP_SOLUTION, [1], "not a dict"),
    ],
)
def test_check_solver_message_refuses(op, v, match):
    with pytest.raises(ProtocolError, match=match):
        check_solver_message(op, v, CALLABLES)


def test_check_solver_message_accepts():
    assert check_solver_message(ch.OP_RPC_CALL, {"name": "rhs", "args": [1.0], "kwargs": {"k": 2}}, CALLABLES) == (
        "call",
        "rhs",
        [1.0],
        {"k": 2},
    )
    assert check_solver_message(ch.OP_REPORT, {"solution": [1], "iteration": 3, "work": 1e6}, CALLABLES) == (
        "report",
        [1],
        3,
        1e6,
    )
    assert check_solver_message(ch.OP_SOLUTION, {"solution": None}, CALLABLES) == ("solution", None)


def test_hosted_error_and_reply_ops():
    err = hosted_error({"type": "MemoryError", "message": "m" * 9000, "traceback": "tb\n"}, "tail")
    assert type(err) is SandboxError and err.status == "oom" and err.stderr_tail == "tail"
    assert err.message.startswith("MemoryError: " + "m" * MAX_MESSAGE_CHARS + "\nTraceback")
    for bad in (
        {"type": ["x"], "message": "m"},
        {"message": "m"},
        {"type": "E", "message": {}},
        "E",
        None,
        {"type": "E", "message": "m", "other": 1},
    ):
        assert isinstance(hosted_error(bad, ""), ProtocolError)
    with pytest.raises(ProtocolError, match="unexpected message op 69 during step"):
        check_reply(ch.OP_SOLUTION, {"solution": 1}, "step", (ch.OP_ACTIONS,))
    with pytest.raises(SandboxError, match="ValueError: v") as info:
        check_reply(ch.OP_ERROR, {"type": "ValueError", "message": "v", "traceback": ""}, "step", (ch.OP_ACTIONS,))
    assert not isinstance(info.value, ProtocolError)


def test_game_board_invalid_row_ends_only_that_run():
    """The games' validate_action returns None: the placeholder of an ended run must still be an action
    (the evaluator used to crash stacking None with the other rows)."""
    from papergym.leaderboard.board.evaluate import play
    from papergym.leaderboard.board.sandbox import InProcessAgentSession

    def make(problem, *, seeds):
        class Batched:
            t = 0

            def act(self, obs):
                self.t += 1
                k = problem.action_space.shape[-1]
                a = np.full((len(seeds), *problem.action_space.shape), 1.0 / k)
                if self.t == 2:
                    a[0] = np.nan
                return a

            def update(self, *args):
                pass

        return Batched()

    runs = play(
        "EntropicMatrixGame-v0",
        {"instance": "random", "role": "both", "horizon": 12},
        [1, 2, 3],
        InProcessAgentSession(make),
        [4, 5, 6],
    )
    assert [r["status"] for r in runs] == ["invalid_action", "ok", "ok"]
    assert "NaN" in runs[0]["error"] and all(math.isfinite(r["metrics"]["regret"]) for r in runs[1:])


# ------------------------------------------------------------------------------------ end to end
AGENT_ATTACKS = {
    "odd_key": "failed-run entry",
    "huge_key": "failed-run entry",
    "shape_overflow": "too large",
    "claims_2_40_bytes": "does not fit",
    "length_2_32": "exceeds the limit",
    "wrong_op": "unexpected message op 69",
    "deep_json": "nested deeper",
    "bad_error": "malformed error message",
    "extra_row": "for 2 runs",
    "truncated": "truncated frame",
}


@pytest.mark.parametrize("attack", sorted(AGENT_ATTACKS))
def test_forged_agent_frames_end_the_session_and_the_board_goes_on(attack, bwrap):
    """A sandboxed agent forges a frame in the first stratum (d = 1): that stratum's runs end as error
    with a protocol-violation message; the evaluator plays the second stratum (d = 2) normally."""
    from papergym.leaderboard.board.configs import EnvBoardConfig
    from papergym.leaderboard.board.evaluate import agent_rows

    cfg = EnvBoardConfig(
        "NonStatLipschitz-v0",
        strata={"hostile": {"instance": "two-peak-cyclic", "d": 1}, "honest": {"instance": "two-peak-cyclic", "d": 2}},
        seeds=2,
        horizon=20,
    )
    rows, _ = agent_rows(
        "NonStatLipschitz-v0",
        cfg,
        lambda: SandboxedAgentSession(SUB / "forge_frames.py", "Agent", limits=FAST, sandbox=bwrap),
        {"attack": attack},
        secret=SECRET,
    )
    hostile = [r for r in rows if r["stratum"] == "hostile"]
    honest = [r for r in rows if r["stratum"] == "honest"]
    assert len(hostile) == len(honest) == 2
    for r in hostile:
        assert r["status"] == "error" and "protocol violation" in r["error"] and AGENT_ATTACKS[attack] in r["error"], r
    for r in honest:
        assert r["status"] == "ok" and math.isfinite(r["metrics"]["regret"]), r


SOLVER_ATTACKS = {
    "name_list": "malformed call",
    "unknown_call": "malformed call of '__import__'",
    "big_args": "exceed",
    "huge_iteration": "malformed report",
    "nan_work": "malformed report",
}


@pytest.mark.parametrize("attack", sorted(SOLVER_ATTACKS))
def test_forged_solver_messages_end_the_run_and_the_task_goes_on(attack, bwrap):
    """A sandboxed solver forges a message on a circle instance: that run ends as error with a
    protocol-violation message; evaluate_solver solves the next instance in a fresh sandbox."""
    from papergym.envs.tasks.base import make_task
    from papergym.leaderboard.board.evaluate import evaluate_solver, task_plan

    task = make_task("SimpleBilevel-v0", instance=["circle", "min-norm-regression"], circle_dims=2, max_work=5000)
    plan = task_plan(task, "SimpleBilevel-v0", SECRET)
    picked = [next(p for p in plan if p[1].startswith("circle")), next(p for p in plan if p[1].startswith("min-norm"))]
    runs = evaluate_solver(
        task,
        [p[0] for p in picked],
        lambda: SandboxedSolverSession(SUB / "forge_solver.py", "Solver", limits=FAST, sandbox=bwrap),
        {"attack": attack},
        [p[3] for p in picked],
    )
    assert runs[0]["status"] == "error" and "protocol violation" in runs[0]["error"], runs[0]
    assert SOLVER_ATTACKS[attack] in runs[0]["error"], runs[0]
    assert runs[1]["status"] == "ok" and runs[1]["metrics"], runs[1]


# ---------------------------------------------------------------------------------------- terminal
@pytest.mark.parametrize(
    "raw, clean",
    [
        (HOSTILE, ""),
        ("a\x1b[31mred\x1b[0m b", "ared b"),
        ("title\x1b]2;x\x1b\\ end", "title end"),
        ("\x1b]8;;http://e.x\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("dcs\x1bPq#0;2~~\x1b\\ end", "dcs end"),
        ("a\x1b%Gb\x1b(Bc\x1b7d\x1bce", "abcde"),
        ("c1\x9b2J csi\x9d0;t\x9c end", "c1 csi end"),
        ("over\rwrite\r\n", "over\nwrite\n"),
        ("bidi \u202eevil\u202c \u2066x\u2069 \u200f", "bidi evil x "),
        ("nul\x00 bel\x07 del\x7f", "nul bel del"),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
        ("tab\tok \u00e9\u4e2d", "tab\tok \u00e9\u4e2d"),
    ],
)
def test_clean_terminal(raw, clean):
    assert clean_terminal(raw) == clean
    clean_terminal(raw).encode("utf-8")  # printable on a UTF-8 terminal


def _no_terminal_controls(text: str) -> None:
    bad = [c for c in text if c in "\x1b\x07" or 0x80 <= ord(c) <= 0x9F]
    assert not bad, repr(text)


@pytest.fixture
def board_env(tmp_path, monkeypatch):
    """A private evaluator config (secret, a small board) and a fresh SQLite store."""
    from papergym.leaderboard.board import configs as B
    from papergym.leaderboard.board.store import Store

    cfg = tmp_path / "evaluator.json"
    cfg.write_text(
        json.dumps(
            {
                "secret": SECRET,
                "boards": {
                    "NonStatLipschitz-v0": {"strata": {"a": {"instance": "two-peak-cyclic"}}, "seeds": 2, "horizon": 30}
                },
            }
        )
    )
    monkeypatch.setenv(B.CONFIG_ENV, str(cfg))
    monkeypatch.setenv("PAPERGYM_DB", f"sqlite:///{tmp_path / 'board.db'}")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    store = Store()
    yield store
    store.close()


def test_leaderboard_table_strips_escapes_of_names_authors_messages(board_env, capsys):
    """Rows stored with a hostile name, author and message (the store keeps text as it is) are printed
    by `papergym leaderboard` without ESC, BEL or any C1 control."""
    from papergym.leaderboard.board.configs import board_config
    from papergym.leaderboard.board.evaluate import SubmissionInfo, evaluate_agent
    from papergym.leaderboard.board.ranking import build_benchmark_board
    from papergym.leaderboard.cli import main
    from papergym.leaderboard.commands.submit import rank_line

    cfg = board_config("NonStatLipschitz-v0")
    rows = [
        {
            "split": "test",
            "stratum": "a",
            "seed_index": i,
            "status": "error",
            "metrics": {},
            "curve": None,
            "wall_seconds": 0.1,
            "cpu_seconds": 0.1,
            "error": f"RuntimeError: {HOSTILE} failed",
        }
        for i in range(2)
    ]
    info = SubmissionInfo(
        name=f"evil{HOSTILE}name",
        author=f"mal{HOSTILE}lory",
        role="submission",
        kind="agent",
        entry="evil.py:Agent",
        code_sha256="0" * 64,
    )
    sid = evaluate_agent(
        board_env,
        "NonStatLipschitz-v0",
        info,
        lambda: None,
        secret=SECRET,
        config=cfg,
        sandbox="bwrap",
        precomputed=(rows, [f"stderr {HOSTILE}"]),
    )
    sub = board_env.submissions("NonStatLipschitz-v0").set_index("submission_id").loc[sid]
    assert HOSTILE in sub["name"] and HOSTILE in sub["message"]  # stored as data
    assert main(["leaderboard", "NonStatLipschitz-v0"]) == 0
    out = capsys.readouterr().out
    assert "evilname" in out and "mallory" in out and "failed" in out, out
    _no_terminal_controls(out)
    line = rank_line(build_benchmark_board(board_env, "NonStatLipschitz-v0"), sid)
    assert line.startswith("not ranked (error)") and "failed" in line
    _no_terminal_controls(line)


def test_sandboxed_submission_printing_escapes(board_env, bwrap, capsys):
    """A sandboxed agent prints escape sequences and fails with them in its message: the stored
    stderr tail and message keep them (data), the terminal renderings strip them."""
    from papergym.leaderboard.board.evaluate import submit
    from papergym.leaderboard.board.ranking import build_benchmark_board
    from papergym.leaderboard.cli import main
    from papergym.leaderboard.commands.submit import rank_line

    sid = submit(
        board_env,
        f"{SUB / 'escapes.py'}:Agent",
        "NonStatLipschitz-v0",
        author="tester",
        sandbox=bwrap,
        limits=FAST,
        secret=SECRET,
    )
    sub = board_env.submissions("NonStatLipschitz-v0").set_index("submission_id").loc[sid]
    assert sub.status == "error" and "boom" in sub.message
    assert "\x1b]0;pwned\x07" in sub.message and "\x1b]0;pwned\x07" in sub.stderr_tail
    line = rank_line(build_benchmark_board(board_env, "NonStatLipschitz-v0"), sid)
    assert "boom" in line
    _no_terminal_controls(line)
    assert main(["leaderboard", "NonStatLipschitz-v0"]) == 0
    out = capsys.readouterr().out
    assert "escapes" in out and "boom" in out
    _no_terminal_controls(out)
    _no_terminal_controls(clean_terminal(sub.stderr_tail))
    assert "stderr  end" in clean_terminal(sub.stderr_tail)
