"""Writes garbage on the channel's write fd (the child's argv names it), then acts normally."""

import os
import sys

import numpy as np


class Agent:
    def __init__(self, problem, *, seeds, what="length"):
        self.what = what

    def act(self, obs):
        wfd = int(sys.argv[1].split(",")[1])
        if self.what == "length":
            os.write(wfd, b"\xff" * 64)
        else:  # a plausible length, then a frame with a forbidden dtype code
            os.write(wfd, (16).to_bytes(4, "little") + bytes([66, 1, 0, 0, 0, 0, 0, 0, 99, 0, 0, 0, 0, 0, 0, 0]))
        return np.zeros((len(obs), 1))

    def update(self, actions, rewards, obs):
        pass
