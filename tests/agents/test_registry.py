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
    assert [a.name for a in list_agents("NonStatLipschitz-v0", role="oracle")] == [
        "binning-ucb-oracle",
        "restart-oracle",
    ]
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


# ------------------------------------------------------------------ optional agents and failing agent modules
FAKE_ENV = "FakeRegistryEnv-v0"


@pytest.fixture
def fake_registry(tmp_path, monkeypatch):
    """A private registry state and a place for fake agent packages (``write(pkg, files)``) registered for
    ``FAKE_ENV``; the real registry is restored afterwards."""
    import sys

    from papergym.agents import base

    monkeypatch.setattr(base, "_REGISTRY", {})
    monkeypatch.setattr(base, "_UNAVAILABLE", {})
    monkeypatch.setattr(base, "_LOADED", set())
    monkeypatch.setattr(base, "_AGENT_PACKAGES", {})
    monkeypatch.setitem(base._EXTRA_OF, "nonexistent_dep_xyz", "fakeextra")
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(pkg: str, files: dict[str, str]) -> None:
        (tmp_path / pkg).mkdir()
        for name, text in files.items():
            (tmp_path / pkg / name).write_text(text)
        base._AGENT_PACKAGES[pkg] = (FAKE_ENV,)
        monkeypatch.delitem(sys.modules, pkg, raising=False)

    yield write
    for name in [m for m in sys.modules if m.startswith("fakeagents_")]:
        del sys.modules[name]


_OK_INIT = """
from papergym.agents.base import optional_agent_module, register_agent

def _ok(problem, *, seed=None):
    return ("ok", seed)

register_agent("fake-ok", _ok, envs=["FakeRegistryEnv-v0"])
_mod = optional_agent_module("{pkg}.needs_missing", names=("fake-a", "fake-b"), envs=["FakeRegistryEnv-v0"],
                             role="paper")
if _mod is not None:
    register_agent("fake-a", _mod.make, envs=["FakeRegistryEnv-v0"], role="paper")
"""


def test_missing_optional_package_is_reported_with_its_extra(fake_registry):
    from papergym.agents.base import AgentUnavailableError, list_unavailable_agents

    fake_registry(
        "fakeagents_opt",
        {
            "__init__.py": _OK_INIT.format(pkg="fakeagents_opt"),
            "needs_missing.py": "import nonexistent_dep_xyz\n\ndef make(p, *, seed=None):\n    return None\n",
        },
    )
    with pytest.warns(RuntimeWarning, match=r"fake-a, fake-b.*nonexistent_dep_xyz.*fakeextra"):
        names = [a.name for a in list_agents(FAKE_ENV)]
    assert names == ["fake-ok"]  # the package's other agents stay available
    gone = list_unavailable_agents(FAKE_ENV)
    assert [(u.name, u.role, u.missing, u.extra) for u in gone] == [
        ("fake-a", "paper", "nonexistent_dep_xyz", "fakeextra"),
        ("fake-b", "paper", "nonexistent_dep_xyz", "fakeextra"),
    ]
    assert "papergym[fakeextra]" in gone[0].reason
    with pytest.raises(AgentUnavailableError, match=r"'fake-b'.*fakeextra extra"):
        get_agent_info("fake-b", FAKE_ENV)

    class Problem:
        env_id = FAKE_ENV

    with pytest.raises(AgentUnavailableError, match=r"pip install 'papergym\[fakeextra\]'"):
        make_agent("fake-a", Problem(), seed=0)
    assert make_agent("fake-ok", Problem(), seed=3) == ("ok", 3)
    with pytest.raises(UnknownAgentError, match="unknown agent 'fake-c'.*fake-ok"):  # not an unavailable one
        get_agent_info("fake-c", FAKE_ENV)


def test_package_failing_on_a_missing_package_is_reported(fake_registry):
    fake_registry("fakeagents_pkg", {"__init__.py": "import nonexistent_dep_xyz\n"})
    with pytest.warns(RuntimeWarning, match=r"fakeagents_pkg.*nonexistent_dep_xyz.*fakeextra"):
        assert list_agents(FAKE_ENV) == []


def test_bug_in_agent_module_propagates(fake_registry):
    fake_registry(
        "fakeagents_bug",
        {
            "__init__.py": _OK_INIT.format(pkg="fakeagents_bug"),
            "needs_missing.py": "raise RuntimeError('a genuine bug in the agent')\n",
        },
    )
    with pytest.raises(RuntimeError, match="a genuine bug in the agent"):
        list_agents(FAKE_ENV)
    with pytest.raises(RuntimeError, match="a genuine bug in the agent"):  # not remembered as loaded
        get_agent_info("fake-ok", FAKE_ENV)


def test_missing_papergym_module_propagates(fake_registry):
    fake_registry(
        "fakeagents_typo",
        {
            "__init__.py": _OK_INIT.format(pkg="fakeagents_typo"),
            "needs_missing.py": "import papergym.agents.no_such_module_xyz\n",
        },
    )
    with pytest.raises(ModuleNotFoundError, match="papergym.agents.no_such_module_xyz"):
        list_agents(FAKE_ENV)


def test_agent_package_table_covers_every_registration():
    """Each agent package registers agents only for the env ids the lazy loader imports it for."""
    import functools

    from papergym.agents import base

    for a in list_agents():
        f = a.factory
        while isinstance(f, functools.partial):
            f = f.func
        pkg = max((p for p in base._AGENT_PACKAGES if f.__module__.startswith(p)), key=len, default=None)
        if pkg is None:  # registered by a test
            continue
        assert set(a.envs) <= set(base._AGENT_PACKAGES[pkg]), (a.name, pkg, a.envs)
