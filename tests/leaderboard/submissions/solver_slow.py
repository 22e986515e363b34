"""A solver that never ends."""


class Solver:
    def __init__(self, seed=None):
        pass

    def solve(self, problem, budget, report):
        while True:
            pass
