"""Forges frames on the evaluator's channel from inside the sandbox (hyperparameter ``attack``).

A batched agent. In a problem with ``d == 1`` its ``act`` writes raw bytes to the channel's write fd
(the child's argv names it: ``RFD,WFD[,GATE]``) before the child sends the real actions, so the evaluator
reads the forged frame first; with ``d != 1`` it plays 0.5 honestly (the second stratum of the test's
board). The frames follow the wire format of papergym.leaderboard.board.channel, built by hand here.
"""

import json
import os
import struct
import sys

import numpy as np

OP_ERROR, OP_ACTIONS, OP_SOLUTION = 65, 66, 69
F8 = 11  # the channel's dtype code of float64


def frame(op, arrays=(), js=b""):
    """One frame: u32 length, the header, the arrays' headers, the JSON, the arrays' bytes."""
    head = struct.pack("<BBHI", op, len(arrays), 0, len(js))
    data = b""
    for code, shape, raw in arrays:
        head += struct.pack(f"<BBHI{len(shape)}Q", code, len(shape), 0, 0, *shape)
        data += raw + b"\0" * (-len(raw) % 8)
    body = head + js + b"\0" * (-len(js) % 8) + data
    return struct.pack("<I", len(body)) + body


def actions_with_failed(n, d, failed):
    zeros = np.zeros((n, d)).tobytes()
    js = json.dumps({"actions": {"__nd__": 0}, "failed": failed}).encode()
    return frame(OP_ACTIONS, [(F8, (n, d), zeros)], js)


ATTACKS = {
    # a run key that str.isdigit() accepts but int() refuses
    "odd_key": lambda n, d: actions_with_failed(n, d, {"\u00b2": "x"}),
    # a run key int() refuses (more digits than Python converts)
    "huge_key": lambda n, d: actions_with_failed(n, d, {"9" * 5000: "x"}),
    # a zero-size array whose shape numpy cannot represent
    "shape_overflow": lambda n, d: frame(OP_ACTIONS, [(F8, (0, 2**64 - 1), b"")]),
    # an array claiming 2**40 bytes in a frame of a few dozen
    "claims_2_40_bytes": lambda n, d: frame(OP_ACTIONS, [(F8, (2**37,), b"")]),
    # a length prefix beyond the frame limit
    "length_2_32": lambda n, d: struct.pack("<I", 2**32 - 1),
    # a solver's message during an agent's step
    "wrong_op": lambda n, d: frame(OP_SOLUTION, js=b'{"solution": 1}'),
    # JSON nested 10^5 deep
    "deep_json": lambda n, d: frame(OP_ACTIONS, js=b"[" * 10**5 + b"]" * 10**5),
    # an error message whose fields are not strings
    "bad_error": lambda n, d: frame(OP_ERROR, js=b'{"type": ["ValueError"], "message": {"a": 1}}'),
    # actions for one run more than the evaluator sent
    "extra_row": None,
    # the start of a frame, then the process exits
    "truncated": None,
}


class Agent:
    def __init__(self, problem, *, seeds, attack="odd_key"):
        if attack not in ATTACKS:
            raise ValueError(f"unknown attack {attack!r}")
        self.n, self.d, self.attack = len(seeds), int(problem.d), attack

    def act(self, obs):
        if self.d != 1:
            return np.full((self.n, self.d), 0.5)
        wfd = int(sys.argv[1].split(",")[1])
        if self.attack == "extra_row":
            return np.full((self.n + 1, self.d), 0.5)
        if self.attack == "truncated":
            os.write(wfd, struct.pack("<I", 1000) + b"\x42" * 20)
            os._exit(0)
        os.write(wfd, ATTACKS[self.attack](self.n, self.d))
        return np.full((self.n, self.d), 0.5)

    def update(self, actions, rewards, obs):
        pass
