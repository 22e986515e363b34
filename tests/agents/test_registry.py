import pytest

from papergym.agents.base import (
    ROLES,
    UnknownAgentError,
    get_agent_info,
    list_agents,
    make_agent,
    register_agent,
)

LIPSCHITZ_AGENTS = {
    "mdbe": "paper",
    "mdbe-calibrated": "paper",
    "binning-ucb": "baseline",
    "binning-ucb-oracle": "oracle",
    "restart-oracle": "oracle",
    "zooming": "baseline",
    "blin": "baseline",
    "sw-ucb": "baseline",
    "d-ucb": "baseline",
    "exp3s": "baseline",
    "rexp3": "baseline",
    "uniform-random": "baseline",
}


def test_catalogue_agents_registered_with_their_roles():
    got = {a.name: a.role for a in list_agents("NonStatLipschitz-v0")}
    assert got == LIPSCHITZ_AGENTS
    # papers first, then baselines, then oracles
    roles = [a.role for a in list_agents("NonStatLipschitz-v0")]
    assert roles == sorted(roles, key=ROLES.index)
    assert [a.name for a in list_agents("NonStatLipschitz-v0", role="oracle")] == ["binning-ucb-oracle",
                                                                                   "restart-oracle"]
    for a in list_agents("NonStatLipschitz-v0"):
        assert a.batched_factory is not None, f"{a.name} has no batched implementation"
        assert len(a.code_hash) == 16


def test_unknown_agent_lists_valid_names():
    with pytest.raises(UnknownAgentError) as exc:
        get_agent_info("mdbee", "NonStatLipschitz-v0")
    msg = str(exc.value)
    assert "mdbee" in msg and "binning-ucb" in msg and "mdbe" in msg


def test_register_agent_validates_name_and_role():
    with pytest.raises(ValueError, match="kebab"):
        register_agent("My_Agent", object, envs=["NonStatLipschitz-v0"])
    with pytest.raises(ValueError, match="role"):
        register_agent("x-agent", object, envs=["NonStatLipschitz-v0"], role="hero")


def test_oracle_agents_need_the_oracle():
    import gymnasium as gym

    import papergym.envs  # noqa: F401

    env = gym.make("NonStatLipschitz-v0", horizon=64)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="oracle"):
        make_agent("binning-ucb-oracle", env.unwrapped.problem, seed=0)
    agent = make_agent("binning-ucb-oracle", env.unwrapped.problem, seed=0, oracle=env.unwrapped.oracle)
    assert env.unwrapped.problem.action_space.contains(agent.act(env.unwrapped.observation_space.sample() * 0))
