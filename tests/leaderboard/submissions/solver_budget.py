"""A solver that gives up with its own BudgetExceeded."""


class BudgetExceeded(RuntimeError):
    pass


class Solver:
    def __init__(self, seed=None):
        pass

    def solve(self, problem, budget, report):
        raise BudgetExceeded("a dense 10^6 x 10^6 system does not fit")
