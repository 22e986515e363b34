"""Prints terminal escape sequences (window title, clear screen, 8-bit CSI colour) to stdout and stderr,
then fails with them in its exception's message: the evaluator stores both (they are data), every
terminal rendering must strip them."""

import sys

SEQ = "\x1b]0;pwned\x07\x1b[2J\x9b31m"


class Agent:
    def __init__(self, problem, *, seeds):
        print(f"stdout {SEQ} end")
        sys.stderr.write(f"stderr {SEQ} end\n")

    def act(self, obs):
        raise RuntimeError(f"boom {SEQ} boom")

    def update(self, actions, rewards, obs):
        pass
