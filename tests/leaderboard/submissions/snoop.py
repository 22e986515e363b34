"""Looks for the evaluator's secrets: files, environment, /proc, the repository, papergym."""

import glob
import os
import sys

import numpy as np


class Agent:
    def __init__(self, problem, *, seeds, paths=(), secret_value=""):
        found = []
        for p in paths:
            try:
                with open(p, "rb") as fh:
                    found.append(f"read {p}: {fh.read(200)!r}")
            except OSError:
                pass
        env = dict(os.environ)
        if "PAPERGYM_TEST_SECRET" in env:
            found.append("env has PAPERGYM_TEST_SECRET")
        for p in glob.glob("/proc/*/environ") + [f"/proc/{os.getppid()}/environ"]:
            try:
                with open(p, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if secret_value and secret_value.encode() in data:
                found.append(f"secret in {p}")
        for p in ("/work", "/root/.config/papergym", os.path.expanduser("~/.config/papergym")):
            if os.path.exists(p) and os.listdir(p):
                found.append(f"can list {p}")
        for root, _dirs, files in os.walk("/"):
            if root.startswith(("/proc", "/sys", "/usr", "/dev", sys.base_prefix, sys.prefix)):
                continue
            for f in files:
                if f.endswith((".db", ".sqlite")) or "secret" in f:
                    found.append(f"file {os.path.join(root, f)}")
        raise RuntimeError("REPORT " + (" | ".join(found) if found else "NOTHING-FOUND"))

    def act(self, obs):
        return np.zeros((len(obs), 1))

    def update(self, actions, rewards, obs):
        pass
