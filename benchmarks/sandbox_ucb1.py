"""A submission file for ``bench_sandbox.py``: UCB1 on a fixed grid of K arms of [0, 1]^d, batched
over seeds with numpy (``make_agent(problem, seeds=[...], K=32)``). Deterministic (argmax ties go to
the lowest arm), so the seeds only matter through the env.

Run as a script, it plays itself in-process on ``NonStatLipschitz-v0``'s vector env and prints the final
regret per seed (a check of the file on its own, without the sandbox):

    python benchmarks/sandbox_ucb1.py --horizon 10000 --seeds 5
    python benchmarks/sandbox_ucb1.py --smoke        # T = 200, 2 seeds
"""

import numpy as np


class UCB1Grid:
    def __init__(self, problem, *, seeds, K=32):
        self.n = len(seeds)
        self.K = int(K)
        d = int(problem.action_space.shape[0])
        self.arms = np.repeat(((np.arange(self.K) + 0.5) / self.K)[:, None], d, axis=1)
        self.counts = np.zeros((self.n, self.K))
        self.sums = np.zeros((self.n, self.K))
        self.t = 0
        self.idx = np.zeros(self.n, dtype=np.int64)
        self.rows = np.arange(self.n)

    def act(self, observations):
        self.t += 1
        if self.t <= self.K:
            self.idx[:] = self.t - 1
        else:
            ucb = self.sums / self.counts + np.sqrt(2.0 * np.log(self.t) / self.counts)
            self.idx = ucb.argmax(axis=1)
        return self.arms[self.idx]

    def update(self, actions, rewards, observations):
        self.counts[self.rows, self.idx] += 1.0
        self.sums[self.rows, self.idx] += rewards


make_agent = UCB1Grid


def _main(argv=None) -> int:
    import argparse

    import gymnasium as gym
    from gymnasium.envs.registration import load_env_creator

    import papergym.envs  # noqa: F401 - registers the envs

    ap = argparse.ArgumentParser(description="UCB1 on a grid of arms, played in-process on NonStatLipschitz-v0")
    ap.add_argument("--horizon", type=int, default=10_000)
    ap.add_argument("--seeds", type=int, default=5, help="seeds 1..N evaluated together")
    ap.add_argument("--smoke", action="store_true", help="tiny run: T = 200, 2 seeds")
    args = ap.parse_args(argv)
    horizon, seeds = (200, [1, 2]) if args.smoke else (args.horizon, list(range(1, args.seeds + 1)))
    venv = load_env_creator(gym.spec("NonStatLipschitz-v0").vector_entry_point)(num_envs=len(seeds), horizon=horizon)
    obs, _ = venv.reset(seed=seeds)
    agent = make_agent(venv.problem, seeds=seeds)
    regret = np.zeros(len(seeds))
    for t in range(1, horizon + 1):
        actions = agent.act(obs)
        regret += venv.oracle.regret(actions, t)
        obs, rewards, *_ = venv.step(actions)
        agent.update(actions, rewards, obs)
    print(f"NonStatLipschitz-v0, UCB1 on {agent.K} grid arms, T = {horizon}")
    print(f"{'seed':>5}  {'final regret':>12}  {'regret / T':>10}")
    for s, r in zip(seeds, regret):
        print(f"{s:>5}  {r:>12.2f}  {r / horizon:>10.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
