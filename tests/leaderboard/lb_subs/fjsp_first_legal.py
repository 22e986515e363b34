"""A submitted FJSP agent (no papergym import, as in the sandbox): on FJSP-v0 the legal pair with the
earliest start and the shortest processing time; on FJSPImprove-v0 the first legal action of the mask."""

import numpy as np


class Agent:
    def __init__(self, problem, seed=None):
        self.improve = problem.env_id == "FJSPImprove-v0"
        self.M = int(problem.n_machines)

    def act(self, obs):
        legal = np.flatnonzero(obs["action_mask"])
        if self.improve:
            return int(legal[0])
        j, k = np.divmod(legal, self.M)
        start = np.maximum(obs["job_ready"][j], obs["machine_ready"][k])
        p = obs["proc"][obs["next_op"][j], k]
        return int(legal[np.lexsort((p, start))[0]])

    def update(self, action, reward, obs):
        pass


def make_agent(problem, seed=None):
    return Agent(problem, seed)
