import gymnasium as gym
import numpy as np
import pytest

from papergym.envs.spec import (
    InvalidActionError,
    NormalStream,
    ProblemSpec,
    UniformStream,
    agent_seed,
    run_seeds,
)


def test_run_seeds_are_the_children_of_seedsequence():
    for s in (0, 7, 2**40):
        kids = np.random.SeedSequence(s).spawn(3)
        got = run_seeds(s)
        for a, b in zip(got, kids):
            assert np.array_equal(a.generate_state(4), b.generate_state(4))
        # independent of how often it was called
        assert np.array_equal(run_seeds(s).agent.generate_state(4), agent_seed(s).generate_state(4))
    streams = [np.random.default_rng(x).random() for x in run_seeds(3)]
    assert len(set(streams)) == 3


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, None])
def test_run_seeds_rejects_bad_seeds(bad):
    with pytest.raises(ValueError, match="seed"):
        run_seeds(bad)


@pytest.mark.parametrize("cls,draw", [(UniformStream, "random"), (NormalStream, "standard_normal")])
def test_streams_match_sequential_draws_whatever_the_chunking(cls, draw):
    seeds = [11, 12, 13]
    expected = np.array([[getattr(np.random.default_rng(s), draw)(50)] for s in seeds])[:, 0]
    for chunk in (1, 3, 7, 64):
        st = cls(seeds, chunk=chunk)
        got = np.concatenate([st.take1()[:, None], st.take(5), st.take(1), st.take(20), st.take(23)], axis=1)
        assert np.array_equal(got, expected)
    # a run's numbers do not depend on the runs batched with it
    solo = cls([12], chunk=5)
    assert np.array_equal(np.concatenate([solo.take(3), solo.take(47)], axis=1)[0], expected[1])


def test_problem_spec_exposes_params_and_names_missing_ones():
    p = ProblemSpec("X-v0", gym.spaces.Discrete(3), gym.spaces.Discrete(2), 10, {"d": 2, "arr": np.arange(2)})
    assert p.d == 2 and p.horizon == 10
    with pytest.raises(AttributeError, match="parameters: \\['arr', 'd'\\]"):
        p.lipschitz
    assert p.public_dict() == {"env_id": "X-v0", "horizon": 10, "d": 2, "arr": [0, 1]}
    with pytest.raises(Exception):  # noqa: B017 - the frozen dataclass error
        p.horizon = 3  # frozen


def test_invalid_action_error_is_a_value_error():
    assert issubclass(InvalidActionError, ValueError)
