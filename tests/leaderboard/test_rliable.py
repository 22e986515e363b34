"""rliable (Agarwal et al. 2021) on a real ``compare`` result: IQM with a bootstrap interval and a performance
profile of a 2-agent, 3-seed, short-horizon NonStatLipschitz-v0 run. rliable comes with the ``test`` extra; the
test skips without it on a user's machine and fails under ``CI=true`` (the ``needs`` fixture)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from papergym.leaderboard.runner.compare import compare

ENV = "NonStatLipschitz-v0"
AGENTS = ["mdbe", "exp3s"]
SEEDS = [0, 1, 2]


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    res = compare(
        ENV, AGENTS, SEEDS, horizon=200, backend="serial", out=tmp_path_factory.mktemp("rliable"), cache=False
    )
    assert (res.runs.status == "ok").all(), res.errors
    return res


def _scores(result) -> dict[str, np.ndarray]:
    """``{agent: (runs, tasks)}`` as rliable wants it, higher is better: minus the normalized dynamic regret,
    one task (the env), one run per seed."""
    out = {}
    for agent in AGENTS:
        rows = result.runs[result.runs.agent == agent].sort_values("seed")
        assert rows.seed.tolist() == SEEDS
        out[agent] = -rows.normalized_regret.to_numpy(dtype=float).reshape(len(SEEDS), 1)
    return out


def test_iqm_with_stratified_bootstrap_interval(result, needs):
    rly = needs("rliable.library", "test")
    metrics = needs("rliable.metrics", "test")
    scores = _scores(result)
    point, interval = rly.get_interval_estimates(
        scores, lambda x: np.array([metrics.aggregate_iqm(x)]), reps=300, confidence_interval_size=0.95
    )
    for agent, x in scores.items():
        iqm = float(point[agent][0])
        assert np.isfinite(iqm)
        assert iqm == pytest.approx(stats.trim_mean(x.ravel(), 0.25))
        assert x.min() <= iqm <= x.max()
        lo, hi = interval[agent][:, 0]
        assert x.min() - 1e-12 <= lo <= iqm + 1e-12 and iqm - 1e-12 <= hi <= x.max() + 1e-12
    # the two agents are different algorithms: their scores (and so their IQMs) differ
    assert point["mdbe"][0] != point["exp3s"][0]


def test_performance_profile_is_the_fraction_of_runs_above_each_threshold(result, needs):
    rly = needs("rliable.library", "test")
    scores = _scores(result)
    everything = np.concatenate([x.ravel() for x in scores.values()])
    taus = np.linspace(everything.min() - 0.1, everything.max() + 0.1, 21)
    profiles, cis = rly.create_performance_profile(scores, taus, reps=200)
    for agent, x in scores.items():
        prof = np.asarray(profiles[agent])
        assert prof.shape == taus.shape
        np.testing.assert_allclose(prof, [(x > t).mean() for t in taus])
        assert prof[0] == 1.0 and prof[-1] == 0.0
        assert np.all(np.diff(prof) <= 0)  # a survival curve never rises
        lo, hi = np.asarray(cis[agent])
        assert np.all(lo <= prof + 1e-12) and np.all(prof <= hi + 1e-12)
