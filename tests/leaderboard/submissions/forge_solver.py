"""A solver that forges its messages to the evaluator (hyperparameter ``attack``) on problems of the
``circle`` family, and returns ``x0`` on the others.

It writes raw frames (the wire format of papergym.leaderboard.board.channel) to the channel's write
fd, which the child's argv names first (``RFD,WFD[,GATE]``), then waits for the evaluator's answer, which never
comes: the evaluator ends the solve.
"""

import json
import os
import struct
import sys

import numpy as np

OP_RPC_CALL, OP_REPORT = 67, 68


def frame(op, value, arrays=()):
    js = json.dumps(value).encode()
    head = struct.pack("<BBHI", op, len(arrays), 0, len(js))
    data = b""
    for code, shape, raw in arrays:
        head += struct.pack(f"<BBHI{len(shape)}Q", code, len(shape), 0, 0, *shape)
        data += raw + b"\0" * (-len(raw) % 8)
    body = head + js + b"\0" * (-len(js) % 8) + data
    return struct.pack("<I", len(body)) + body


def big_args():
    raw = np.zeros(9 * 2**20).tobytes()  # 72 MiB of float64
    return frame(OP_RPC_CALL, {"name": "oracle.f", "args": [{"__nd__": 0}], "kwargs": {}}, [(11, (9 * 2**20,), raw)])


ATTACKS = {
    # an unhashable callable name
    "name_list": lambda: frame(OP_RPC_CALL, {"name": ["oracle.f"], "args": [], "kwargs": {}}),
    # a name that is not one of the problem's callables
    "unknown_call": lambda: frame(OP_RPC_CALL, {"name": "__import__", "args": ["os"], "kwargs": {}}),
    # arguments beyond the size bound of a call
    "big_args": big_args,
    # a report's iteration that no column of the store can hold
    "huge_iteration": lambda: frame(OP_REPORT, {"solution": 1.0, "iteration": 2**70, "work": None}),
    # a report's work that is not a finite number
    "nan_work": lambda: frame(OP_REPORT, {"solution": 1.0, "iteration": 1, "work": float("nan")}),
}


class Solver:
    def __init__(self, *, seed=None, attack="name_list"):
        if attack not in ATTACKS:
            raise ValueError(f"unknown attack {attack!r}")
        self.attack = attack

    def solve(self, problem, budget, report):
        if problem.family != "circle":
            return np.asarray(problem.x0, dtype=float)
        rfd, wfd = (int(x) for x in sys.argv[1].split(",")[:2])
        os.write(wfd, ATTACKS[self.attack]())
        os.set_blocking(rfd, True)  # the child may have made it non-blocking (its busy-wait)
        os.read(rfd, 1)  # blocks until the evaluator kills the sandbox
        return np.asarray(problem.x0, dtype=float)
