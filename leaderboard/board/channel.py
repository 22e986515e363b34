"""Length-prefixed message channel between the trusted evaluator and a sandboxed submission.

This module is **stand-alone** (standard library + numpy only, no papergym import): the sandbox child
(:mod:`papergym.leaderboard.board._sandbox_child`) loads it from a read-only copy inside the sandbox, where
papergym is not importable.

Wire format
-----------
Every frame is ``u32 length`` (little endian) followed by ``length`` payload bytes::

    u8 op | u8 n_arrays | u16 0 | u32 json_len                       (8 bytes)
    n_arrays x ( u8 dtype code | u8 ndim | u16 0 | u32 0 | ndim x u64 shape )
    json_len bytes of UTF-8 JSON, zero-padded to a multiple of 8
    the arrays' raw C-order bytes, each zero-padded to a multiple of 8

* ``op`` names the message (the ``OP_*`` constants); the receiver checks it is one it expects.
* ``json_len == 0`` is the **fast path** of the hot messages (a step's observations / rewards /
  active mask, a step's actions): the value is then the plain list of the frame's arrays, decoded
  with one ``struct.unpack`` and ``np.frombuffer`` per array -- no JSON at all.
* Otherwise the JSON is a value tree: ``None``, bool, int, float (``NaN`` / ``Infinity`` allowed),
  str, list, ``dict[str, ...]``; markers ``{"__nd__": i}`` (the ``i``-th array), ``{"__tuple__":
  [...]}``, ``{"__seedseq__": [entropy, [spawn key]]}`` (a :class:`numpy.random.SeedSequence`) and
  ``{"__dict__": {...}}`` (a dict whose own keys would look like a marker).

Decoding is strict because frames from the child are **untrusted** (the parent never unpickles):
allowed dtypes only (bool, int8..int64, uint8..uint64, float32, float64; little endian; no object,
string, void, complex or datetime arrays), ``ndim <= 32``, every size computed with Python ints and
checked against the frame length (the frame must be consumed exactly), a shape numpy can represent
(the non-zero dimensions times the itemsize at most :data:`MAX_ARRAY_EXTENT`, so not ``(0, 2**64 -
1)``), a maximum frame size, a maximum JSON length and nesting depth, dict keys must be str, no lone
surrogates in strings. Any violation raises :class:`ChannelProtocolError` naming what is wrong, and
:func:`decode` raises nothing else; the sandbox turns it into status ``error`` with the message
``protocol violation: ...``. What a well-formed message *means* (the right op, the right fields,
sizes, run indices) is checked by the receiver (:mod:`papergym.leaderboard.board.sandbox`).

Decoded arrays are writable and own independent memory (one fresh buffer per frame).
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

import numpy as np

__all__ = [
    "ALLOWED_DTYPES",
    "MAX_ARRAY_EXTENT",
    "MAX_DEPTH",
    "MAX_FRAME_BYTES",
    "Channel",
    "ChannelClosed",
    "ChannelProtocolError",
    "ChannelTimeout",
    "decode",
    "encode",
]

#: default largest payload accepted (256 MiB)
MAX_FRAME_BYTES = 256 * 2**20
#: largest JSON header (part of a frame)
MAX_JSON_BYTES = 16 * 2**20
#: deepest nesting of lists / dicts in a value
MAX_DEPTH = 32
MAX_NDIM = 32
#: largest product of an array's non-zero dimensions times its itemsize (a zero-size array carries no
#: bytes, but numpy refuses a shape whose extent overflows its index type)
MAX_ARRAY_EXTENT = 2**40

_DTYPE_BY_CODE: dict[int, np.dtype] = {
    1: np.dtype("?"),
    2: np.dtype("<i1"),
    3: np.dtype("<i2"),
    4: np.dtype("<i4"),
    5: np.dtype("<i8"),
    6: np.dtype("<u1"),
    7: np.dtype("<u2"),
    8: np.dtype("<u4"),
    9: np.dtype("<u8"),
    10: np.dtype("<f4"),
    11: np.dtype("<f8"),
}
_CODE_BY_STR: dict[str, int] = {v.str: k for k, v in _DTYPE_BY_CODE.items()}
ALLOWED_DTYPES: tuple[str, ...] = tuple(str(d) for d in _DTYPE_BY_CODE.values())

_HEAD = struct.Struct("<BBHI")  # op, n_arrays, 0, json_len
_AHEAD = struct.Struct("<BBHI")  # dtype code, ndim, 0, 0
_LEN = struct.Struct("<I")
_SHAPES = [struct.Struct(f"<BBHI{k}Q") for k in range(MAX_NDIM + 1)]  # array header + shape, by ndim
_ZEROS = [b"\0" * k for k in range(8)]
_LARGE_START = 16 << 20  # first buffer (at most) of a frame larger than the read buffer
_MARKERS = ("__nd__", "__tuple__", "__seedseq__", "__dict__")


class ChannelProtocolError(Exception):
    """A frame that breaks the wire format (module docstring). The message says what is wrong."""


class ChannelClosed(Exception):
    """The other end closed the channel (the process exited or crashed)."""


class ChannelTimeout(Exception):
    """No complete frame arrived before the deadline."""


def _pad8(n: int) -> int:
    return (-n) & 7


# ------------------------------------------------------------------------------------------ encode
class _Encoder:
    __slots__ = ("arrays",)

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []

    def array(self, a: np.ndarray) -> dict[str, int]:
        if a.dtype.str not in _CODE_BY_STR:
            if a.dtype.kind in "iuf" and a.dtype.byteorder == ">":
                a = a.astype(a.dtype.newbyteorder("<"))
            if a.dtype.str not in _CODE_BY_STR:
                raise TypeError(f"arrays of dtype {a.dtype} cannot be sent (allowed: {', '.join(ALLOWED_DTYPES)})")
        if a.ndim > MAX_NDIM:
            raise TypeError(f"arrays with more than {MAX_NDIM} dimensions cannot be sent")
        if len(self.arrays) >= 255:
            raise TypeError("a message carries at most 255 arrays")
        self.arrays.append(a)
        return {"__nd__": len(self.arrays) - 1}

    def value(self, v: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise TypeError(f"value nested deeper than {MAX_DEPTH} levels")
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return int(v)
        if isinstance(v, float):
            return float(v)
        if isinstance(v, np.ndarray):
            return self.array(v)
        if isinstance(v, np.generic):
            if v.dtype.kind in "biuf":
                return v.item()
            raise TypeError(f"numpy scalars of dtype {v.dtype} cannot be sent")
        if isinstance(v, tuple):
            return {"__tuple__": [self.value(x, depth + 1) for x in v]}
        if isinstance(v, list):
            return [self.value(x, depth + 1) for x in v]
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if isinstance(k, (np.integer, int)) and not isinstance(k, bool):
                    k = str(int(k))
                if not isinstance(k, str):
                    raise TypeError(f"dict keys must be str, got {type(k).__name__}")
                out[k] = self.value(x, depth + 1)
            if len(out) == 1 and next(iter(out)) in _MARKERS:
                return {"__dict__": out}
            return out
        if isinstance(v, np.random.SeedSequence):
            key = [int(k) for k in v.spawn_key]
            ent = v.entropy
            ent = [int(e) for e in ent] if isinstance(ent, (list, tuple, np.ndarray)) else int(ent)
            return {"__seedseq__": [ent, key]}
        raise TypeError(
            f"values of type {type(v).__name__} cannot be sent (allowed: None, bool, int, float, str, "
            "list, tuple, dict with str keys, numeric numpy arrays)"
        )


def _frame(op: int, arrays: list[np.ndarray], js: bytes) -> bytes:
    parts = [b"", _HEAD.pack(op, len(arrays), 0, len(js))]
    datas = []
    for a in arrays:
        nd = a.ndim
        parts.append(_SHAPES[nd].pack(_CODE_BY_STR[a.dtype.str], nd, 0, 0, *a.shape))
        b = a.tobytes()
        datas.append(b)
        p = (-len(b)) & 7
        if p:
            datas.append(_ZEROS[p])
    if js:
        parts.append(js)
        p = (-len(js)) & 7
        if p:
            parts.append(_ZEROS[p])
    parts += datas
    body = b"".join(parts)
    return _LEN.pack(len(body)) + body


def encode(op: int, value: Any = None, *, arrays: list[np.ndarray] | None = None) -> bytes:
    """One frame (length prefix included).

    ``arrays=[...]`` (and ``value`` None) is the fast path: the receiver gets the list of arrays.
    Otherwise ``value`` is encoded as a JSON tree (module docstring); :class:`TypeError` names a
    value that cannot be sent.
    """
    if arrays is not None:
        if value is not None:
            raise ValueError("give either value or arrays")
        return encode_arrays(op, arrays)
    enc = _Encoder()
    tree = enc.value(value)
    js = json.dumps(tree, separators=(",", ":"), allow_nan=True).encode()
    if len(js) > MAX_JSON_BYTES:
        raise TypeError(f"message header of {len(js)} bytes exceeds {MAX_JSON_BYTES}")
    return _frame(op, enc.arrays, js)


# The hot messages (a step's arrays) repeat one layout -- same op, dtypes and shapes -- every round, so
# both directions cache it: the encoder the frame's header bytes (length prefix included) by layout,
# the decoder the layouts it has fully validated before, recognised by their exact header bytes and
# frame length. A cache hit skips only re-deriving what the same bytes already proved.
_ENC_CACHE: dict[tuple, tuple[bytes, tuple[bytes, ...]]] = {}
_DEC_CACHE: dict[tuple[int, int], tuple[bytes, tuple[tuple[np.dtype, int, tuple[int, ...]], ...]]] = {}
_CACHE_SIZE = 64


def encode_arrays(op: int, arrays: list[Any]) -> bytes:
    """The fast-path frame of a list of arrays (what ``encode(op, arrays=...)`` returns)."""
    arrays = [a if type(a) is np.ndarray else np.asarray(a) for a in arrays]
    key = (op, *[(a.dtype.str, a.shape) for a in arrays])
    hit = _ENC_CACHE.get(key)
    if hit is None:
        enc = _Encoder()
        for a in arrays:
            enc.array(a)
        if any(a is not b for a, b in zip(arrays, enc.arrays)):  # byte-swapped on the way: no caching
            return _frame(op, enc.arrays, b"")
        full = _frame(op, arrays, b"")
        head = len(full) - sum(a.nbytes + _pad8(a.nbytes) for a in arrays)
        hit = (full[:head], tuple(_ZEROS[_pad8(a.nbytes)] for a in arrays))
        if len(_ENC_CACHE) >= _CACHE_SIZE:
            _ENC_CACHE.clear()
        _ENC_CACHE[key] = hit
    head, pads = hit
    parts = [head]
    for a, p in zip(arrays, pads):
        parts.append(a.tobytes())
        if p:
            parts.append(p)
    return b"".join(parts)


# ------------------------------------------------------------------------------------------ decode
def _text(s: str) -> str:
    """``s`` if it is valid Unicode text: JSON's ``\\ud800`` escapes can make a lone surrogate, which
    cannot be encoded, printed or stored."""
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            raise ChannelProtocolError(
                f"a string with a lone surrogate: {s[:40].encode('utf-8', 'replace')!r}"
            ) from None
    return s


def _tree(v: Any, arrays: list[np.ndarray], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ChannelProtocolError(f"value nested deeper than {MAX_DEPTH} levels")
    if type(v) is str:
        return _text(v)
    if isinstance(v, list):
        return [_tree(x, arrays, depth + 1) for x in v]
    if isinstance(v, dict):
        for k in v:
            _text(k)
        if len(v) == 1:
            ((k, x),) = v.items()
            if k == "__nd__":
                if type(x) is not int or not 0 <= x < len(arrays):
                    raise ChannelProtocolError(f"bad array reference {x!r}")
                return arrays[x]
            if k == "__tuple__":
                if not isinstance(x, list):
                    raise ChannelProtocolError("bad tuple marker")
                return tuple(_tree(y, arrays, depth + 1) for y in x)
            if k == "__dict__":
                if not isinstance(x, dict):
                    raise ChannelProtocolError("bad dict marker")
                return {_text(kk): _tree(y, arrays, depth + 1) for kk, y in x.items()}
            if k == "__seedseq__":
                ok = (
                    isinstance(x, list)
                    and len(x) == 2
                    and isinstance(x[1], list)
                    and all(type(s) is int and 0 <= s < 2**64 for s in x[1])
                    and (type(x[0]) is int or (isinstance(x[0], list) and all(type(e) is int for e in x[0])))
                )
                if not ok:
                    raise ChannelProtocolError("bad SeedSequence marker")
                try:
                    return np.random.SeedSequence(x[0], spawn_key=tuple(x[1]))
                except (TypeError, ValueError) as exc:
                    raise ChannelProtocolError(f"bad SeedSequence: {exc}") from None
        return {k: _tree(x, arrays, depth + 1) for k, x in v.items()}
    return v


def decode(payload: bytes | bytearray | memoryview) -> tuple[int, Any]:
    """``(op, value)`` of one frame's payload (without the length prefix); strict (module docstring).

    Raises :class:`ChannelProtocolError` and nothing else on a malformed payload (an exception of
    numpy or the standard library on some input the checks did not foresee is turned into one)."""
    try:
        return _decode(payload)
    except ChannelProtocolError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever a hostile frame provokes is a protocol violation
        raise ChannelProtocolError(f"malformed frame ({type(exc).__name__}: {str(exc)[:200]})") from None


def _decode(payload: bytes | bytearray | memoryview) -> tuple[int, Any]:
    n = len(payload)
    if n < _HEAD.size:
        raise ChannelProtocolError(f"frame of {n} bytes is shorter than its header")
    hit = _DEC_CACHE.get((n, payload[0] | payload[1] << 8))
    if hit is not None and payload[: len(hit[0])] == hit[0]:
        return payload[0], [np.ndarray(sh, dt, payload, o) for dt, o, sh in hit[1]]
    op, n_arr, zero, json_len = _HEAD.unpack_from(payload, 0)
    if zero:
        raise ChannelProtocolError("bad frame header (reserved bytes not zero)")
    pos = _HEAD.size
    metas = []
    for _ in range(n_arr):
        if pos + _AHEAD.size > n:
            raise ChannelProtocolError("truncated frame (array header)")
        code, ndim, z1, z2 = _AHEAD.unpack_from(payload, pos)
        dt = _DTYPE_BY_CODE.get(code)
        if dt is None:
            raise ChannelProtocolError(f"array dtype code {code} is not allowed (allowed: {', '.join(ALLOWED_DTYPES)})")
        if z1 or z2 or ndim > MAX_NDIM:
            raise ChannelProtocolError("bad array header")
        st = _SHAPES[ndim]
        if pos + st.size > n:
            raise ChannelProtocolError("truncated frame (array shape)")
        shape = st.unpack_from(payload, pos)[4:]
        pos += st.size
        metas.append((dt, shape))
    if json_len > MAX_JSON_BYTES or pos + json_len > n:
        raise ChannelProtocolError(f"bad JSON length {json_len} in a frame of {n} bytes")
    js = payload[pos : pos + json_len]
    pos += json_len + _pad8(json_len)
    arrays = []
    for dt, shape in metas:
        # sizes in Python ints (no overflow): the element count must fit in the frame, and the shape
        # must be one numpy can represent -- a zero-size array may still not be, e.g. (0, 2**64 - 1)
        count = 1
        extent = dt.itemsize
        for s in shape:
            count *= s
            extent *= s or 1
        if count > n:
            raise ChannelProtocolError(f"array of shape {shape} does not fit in a frame of {n} bytes")
        if extent > MAX_ARRAY_EXTENT:
            raise ChannelProtocolError(
                f"array of shape {shape} and dtype {dt} is too large (its non-zero "
                f"dimensions span more than {MAX_ARRAY_EXTENT} bytes)"
            )
        nbytes = count * dt.itemsize
        if pos + nbytes > n:
            raise ChannelProtocolError(
                f"truncated frame: array of shape {shape} and dtype {dt} needs {nbytes} bytes, {max(n - pos, 0)} left"
            )
        arrays.append(np.frombuffer(payload, dtype=dt, count=count, offset=pos).reshape(shape))
        pos += nbytes + _pad8(nbytes)
    if pos != n and not (pos > n and pos - n < 8):
        raise ChannelProtocolError(f"frame length {n} does not match its content ({pos} bytes)")
    if not json_len:
        if len(_DEC_CACHE) >= _CACHE_SIZE:
            _DEC_CACHE.clear()
        head = _HEAD.size + sum(_SHAPES[len(sh)].size for _, sh in metas)
        layout, off = [], head
        for (dt, sh), a in zip(metas, arrays):
            layout.append((dt, off, sh))
            off += a.nbytes + _pad8(a.nbytes)
        _DEC_CACHE[(n, op | n_arr << 8)] = (bytes(payload[:head]), tuple(layout))
        return op, arrays
    try:
        tree = json.loads(bytes(js).decode("utf-8"))
    except RecursionError:  # json's own guard (the interpreter's recursion limit) against deep nesting
        raise ChannelProtocolError(f"value nested deeper than {MAX_DEPTH} levels") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ChannelProtocolError(f"bad JSON header: {str(exc)[:200]}") from None
    return op, _tree(tree, arrays, 0)


# ----------------------------------------------------------------------------------------- channel
class Channel:
    """Frames over a pair of pipe file descriptors (``rfd`` read, ``wfd`` write; a socket's fd may be
    both). Pipes wake the other side faster than a socket pair (about 6 against 20 us per round trip
    measured here).

    ``send(op, value)`` / ``send(op, arrays=[...])`` write one frame; ``recv(deadline)`` reads one and
    returns ``(op, value)``. ``deadline`` is a :func:`time.monotonic` time (``None``: block -- the
    sandbox enforces its limits with a watchdog that kills the child, which ends the read);
    :class:`ChannelTimeout` when it passes, :class:`ChannelClosed` at end of stream / broken pipe,
    :class:`ChannelProtocolError` for a malformed frame or one larger than ``max_frame_bytes``.
    """

    def __init__(
        self,
        rfd: int,
        wfd: int | None = None,
        max_frame_bytes: int = MAX_FRAME_BYTES,
        spin_seconds: float = 0.0,
        spin_gate: Any = None,
    ):
        self.rfd = rfd
        self.spin_seconds = float(spin_seconds)
        # a buffer whose first byte says whether to busy-wait now (non-zero) or sleep at once (zero):
        # the evaluator closes it while other sandboxes compete for the CPUs (spinning would then slow
        # every one of them); None: always spin (when spin_seconds > 0)
        self.spin_gate = spin_gate
        if self.spin_seconds > 0:
            os.set_blocking(rfd, False)
        self.wfd = rfd if wfd is None else wfd
        self.max_frame_bytes = int(max_frame_bytes)
        self._buf = bytearray(1 << 16)
        self._mv = memoryview(self._buf)
        self._pos = self._end = 0
        self._poll: select.poll | None = None

    def send_frame(self, frame: bytes) -> None:
        mv = memoryview(frame)
        try:
            while mv:
                k = os.write(self.wfd, mv)
                mv = mv[k:]
        except (BrokenPipeError, ConnectionResetError, OSError) as exc:
            raise ChannelClosed(str(exc)) from None

    def send(self, op: int, value: Any = None, *, arrays: list[np.ndarray] | None = None) -> None:
        self.send_frame(encode(op, value, arrays=arrays))

    def _read(self, view: memoryview, deadline: float | None) -> int:
        if self.spin_seconds > 0:
            # busy-wait a little before sleeping: a reply that comes within spin_seconds costs no
            # wake-up (a context switch, or an inter-processor interrupt in a VM: tens of us)
            end = 0.0
            spin = self.spin_gate is None or self.spin_gate[0]
            while True:
                try:
                    return os.readv(self.rfd, [view])
                except BlockingIOError:
                    pass
                except OSError as exc:
                    raise ChannelClosed(str(exc)) from None
                if not spin:
                    break
                now = time.perf_counter()
                if not end:
                    end = now + self.spin_seconds
                elif now > end:
                    break
            if self._poll is None:
                self._poll = select.poll()
                self._poll.register(self.rfd, select.POLLIN | select.POLLHUP | select.POLLERR)
            t = None if deadline is None else max(deadline - time.monotonic(), 0.0) * 1000.0
            if not self._poll.poll(t):
                raise ChannelTimeout("no reply before the deadline")
        elif deadline is not None:
            if self._poll is None:
                self._poll = select.poll()
                self._poll.register(self.rfd, select.POLLIN | select.POLLHUP | select.POLLERR)
            t = deadline - time.monotonic()
            if t <= 0 or not self._poll.poll(t * 1000.0):
                raise ChannelTimeout("no reply before the deadline")
        try:
            return os.readv(self.rfd, [view])
        except (ConnectionResetError, OSError) as exc:
            raise ChannelClosed(str(exc)) from None

    def recv(self, deadline: float | None = None) -> tuple[int, Any]:
        """One frame: ``(op, value)``. Reads into a buffer, usually one ``read`` per frame."""
        buf, mv = self._buf, self._mv
        while True:
            have = self._end - self._pos
            n = -1
            if have >= 4:
                (n,) = _LEN.unpack_from(buf, self._pos)
                if n > self.max_frame_bytes:
                    raise ChannelProtocolError(f"frame of {n} bytes exceeds the limit of {self.max_frame_bytes}")
                if have >= 4 + n:
                    start = self._pos + 4
                    payload = bytearray(mv[start : start + n])
                    self._pos = start + n
                    if self._pos == self._end:
                        self._pos = self._end = 0
                    return decode(payload)
                if 4 + n > len(buf):  # a large frame: read the rest straight into its own buffer
                    # grown (doubling) as the bytes arrive, not allocated at the size the length prefix
                    # claims: a sender that claims 256 MiB and sends little costs little memory
                    got = have - 4
                    payload = bytearray(min(n, max(2 * got, _LARGE_START)))
                    payload[:got] = mv[self._pos + 4 : self._end]
                    self._pos = self._end = 0
                    while got < n:
                        if got == len(payload):
                            payload.extend(bytes(min(n, 2 * got) - got))
                        with memoryview(payload) as pv, pv[got:] as rest:  # released before a resize
                            k = self._read(rest, deadline)
                        if k == 0:
                            raise ChannelProtocolError(f"truncated frame: stream ended after {got} of {n} bytes")
                        got += k
                    return decode(payload)
            room = len(buf) - self._end
            if self._pos and (room < 4096 or (n >= 0 and room < 4 + n - have)):
                mv[:have] = mv[self._pos : self._end]
                self._pos, self._end = 0, have
            k = self._read(mv[self._end :], deadline)
            if k == 0:
                if have:
                    raise ChannelProtocolError(f"truncated frame: stream ended inside a frame ({have} bytes)")
                raise ChannelClosed("end of stream")
            self._end += k

    def close(self) -> None:
        for fd in {self.rfd, self.wfd}:
            try:
                os.close(fd)
            except OSError:
                pass


# --------------------------------------------------------------------------------------------- ops
# parent -> child
OP_START_AGENT = 1  # {"problem", "seeds", "hyperparameters"}
OP_STEP = 2  # fast path [active, observations(, rewards)] or {"active", "observations", "rewards"}
OP_CLOSE = 3  # None
OP_SOLVE = 4  # {"problem", "callables", "budget", "hyperparameters", "seed"}
OP_RPC_RETURN = 5  # {"result"} or {"error", "type"}
OP_REPORT_ACK = 6  # {} or {"error", "type"}
# child -> parent
OP_OK = 64  # None
OP_ERROR = 65  # {"type", "message", "traceback"}
OP_ACTIONS = 66  # fast path [actions] or {"actions", "failed": {str(i): "Type: message"}}
OP_RPC_CALL = 67  # {"name", "args", "kwargs"}
OP_REPORT = 68  # {"solution", "iteration", "work"}
OP_SOLUTION = 69  # {"solution"}
OP_CLOSED = 70  # None
OP_LOAD = 7  # None: import the submission (before the first solve, so import time is not solve time)
