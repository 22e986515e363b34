"""Making and resetting a game env imports nothing heavy: the agent registry loads only the game agents."""

import json
import subprocess
import sys

GAME_ENVS = ("EntropicMeanField-v0", "EntropicMatrixGame-v0", "EntropicMarkovGame-v0")
HEAVY = ("torch", "torch_geometric", "ortools", "sklearn", "dask")

_SCRIPT = f"""
import json, sys
import gymnasium as gym
import papergym.envs
for env_id in {GAME_ENVS!r}:
    env = gym.make(env_id)
    env.reset(seed=0)
    env.step(env.action_space.sample())
print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
"""


def test_game_envs_do_not_import_heavy_packages():
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_markov_equilibrium_is_solved_only_when_read():
    import gymnasium as gym
    import numpy as np

    import papergym.envs  # noqa: F401

    env = gym.make("EntropicMarkovGame-v0", instance="random-cold", role="both")
    env.reset(seed=4)
    game = env.unwrapped.game
    assert "_solution" not in vars(game)  # nothing solved by make + reset
    problem = env.unwrapped.problem
    bounds = problem.params["br_bounds"]  # the first read solves it
    assert "_solution" in vars(game)
    (mu, nu), V = game._shapley()
    V_star = game.values(mu, nu)
    np.testing.assert_array_equal(game.equilibrium[0], mu)
    np.testing.assert_array_equal(game.equilibrium[1], nu)
    np.testing.assert_array_equal(game.V_star, V_star)
    assert game.value_star == float(game.rho0 @ V_star) == env.unwrapped.oracle.value
    assert bounds == game.jacobian_bounds() and problem.public_dict()["br_bounds"] == bounds
