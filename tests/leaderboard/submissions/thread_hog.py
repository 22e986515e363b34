"""Starts up to ``n`` threads that block forever and holds them (as many as its limits allow); its
action is how many it holds."""

import threading

import numpy as np


class Agent:
    def __init__(self, problem, *, seeds, n=30):
        self.stop = threading.Event()
        self.threads = []
        for _ in range(int(n)):
            t = threading.Thread(target=self.stop.wait, daemon=True)
            try:
                t.start()
            except RuntimeError:  # can't start new thread: hold what it has
                break
            self.threads.append(t)

    def act(self, obs):
        return np.full((len(obs), 1), float(len(self.threads)))

    def update(self, actions, rewards, obs):
        pass
