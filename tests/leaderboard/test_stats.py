"""Leaderboard scoring statistics (leaderboard/stats.py): known answers and invariants.

Stratified paired bootstrap, competition ranks and rank intervals, normalised scores, IQM, Dolan--More
performance profiles and time to target.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from papergym.leaderboard.runner.stats import (
    TABLE_STAT_COLUMNS,
    BootstrapResult,
    bootstrap_ci,
    iqm,
    normalised_scores,
    performance_profile,
    point_ranks,
    rank_intervals,
    rank_table,
    stratified_bootstrap,
    time_to_target,
)


def _data(n_subs=4, strata=("a", "b", "c"), n_seeds=20, seed=0):
    rng = np.random.default_rng(seed)
    return {f"sub{i}": {s: rng.normal(0.1 * i, 1.0, n_seeds) for s in strata} for i in range(n_subs)}


# --------------------------------------------------------------------------------------------- bootstrap


def test_one_stratum_one_sub_equals_bootstrap_ci():
    x = np.random.default_rng(5).exponential(size=40)
    res = stratified_bootstrap({"a": {"s": x}}, n_boot=3000, ci=0.9, seed=11)
    est, lo, hi = bootstrap_ci(x, n_boot=3000, ci=0.9, seed=11)
    assert isinstance(res, BootstrapResult)
    assert res.names == ["a"] and res.replicates.shape == (3000, 1)
    np.testing.assert_allclose([res.estimate[0], res.low[0], res.high[0]], [est, lo, hi], rtol=1e-12)


def test_mean_is_equal_weight_over_strata():
    data = {"x": {"a": np.array([1.0, 3.0]), "b": np.array([10.0, 10.0, 10.0, 10.0, 10.0, 10.0])}}
    res = stratified_bootstrap(data, n_boot=200)
    assert res.estimate[0] == pytest.approx((2.0 + 10.0) / 2)  # not the pooled mean 8.5
    # stratum b is constant: every replicate is (mean of a resample of {1, 3} + 10) / 2
    assert np.all((res.replicates >= 5.5 - 1e-12) & (res.replicates <= 6.5 + 1e-12))


def test_strata_are_never_mixed():
    # stratum "lo" holds only 0s, "hi" only 1s; pooled resampling would move the mean, stratified cannot
    data = {"x": {"lo": np.zeros(5), "hi": np.ones(50)}}
    res = stratified_bootstrap(data, n_boot=500)
    np.testing.assert_allclose(res.replicates, 0.5)
    assert res.low[0] == pytest.approx(0.5) and res.high[0] == pytest.approx(0.5)
    # IQM of pooled values: every replicate keeps exactly 5 zeros and 50 ones -> IQM 1
    res = stratified_bootstrap(data, aggregate="iqm", n_boot=200)
    np.testing.assert_allclose(res.replicates, 1.0)


def test_pairing_gives_sharp_rank_intervals_despite_overlapping_cis():
    rng = np.random.default_rng(3)
    base = {s: rng.normal(0.0, 5.0, 30) for s in ("a", "b")}
    data = {"worse": {s: v + 0.1 for s, v in base.items()}, "better": base}
    res = stratified_bootstrap(data, n_boot=2000)
    # marginal CIs overlap heavily ...
    assert res.low[0] < res.high[1] and res.low[1] < res.high[0]
    assert (res.high[0] - res.low[0]) > 10 * 0.1
    # ... but every paired replicate keeps the order
    np.testing.assert_allclose(res.replicates[:, 0] - res.replicates[:, 1], 0.1)
    lo, hi = rank_intervals(res.replicates, "min")
    assert lo.tolist() == [2, 1] and hi.tolist() == [2, 1]
    table = rank_table(data, "min")
    assert table.index.tolist() == ["better", "worse"]
    assert table[["rank", "rank_lo", "rank_hi"]].to_numpy().tolist() == [[1, 1, 1], [2, 2, 2]]


def test_iqm_aggregate_and_callable():
    data = _data(n_subs=3, n_seeds=9)
    res = stratified_bootstrap(data, aggregate="iqm", n_boot=300, seed=2)
    for i, name in enumerate(res.names):
        pooled = np.concatenate([data[name][s] for s in ("a", "b", "c")])
        assert res.estimate[i] == pytest.approx(iqm(pooled))
    # a callable that computes the equal-weight stratum mean reproduces aggregate="mean" exactly
    res_c = stratified_bootstrap(data, aggregate=lambda d: np.mean([v.mean() for v in d.values()]), n_boot=50, seed=4)
    res_m = stratified_bootstrap(data, aggregate="mean", n_boot=50, seed=4)
    np.testing.assert_allclose(res_c.replicates, res_m.replicates, rtol=1e-12)
    np.testing.assert_allclose(res_c.estimate, res_m.estimate, rtol=1e-12)
    # and the IQM of a replicate equals iqm() of the explicitly resampled pooled values
    f = stratified_bootstrap(data, aggregate=lambda d: iqm(np.concatenate(list(d.values()))), n_boot=40, seed=6)
    g = stratified_bootstrap(data, aggregate="iqm", n_boot=40, seed=6)
    np.testing.assert_allclose(f.replicates, g.replicates, rtol=1e-12)


def test_iqm_known_values():
    assert iqm(np.arange(1.0, 9.0)) == pytest.approx(4.5)  # middle 4 of 1..8: 3, 4, 5, 6
    assert iqm([1.0, 2.0, 3.0, 100.0]) == pytest.approx(2.5)
    assert iqm([7.0]) == 7.0
    x = np.random.default_rng(0).standard_cauchy(101)
    assert iqm(x) == pytest.approx(sps.trim_mean(x, 0.25))


def test_deterministic_under_seed_and_order_of_strata():
    data = _data()
    a = stratified_bootstrap(data, n_boot=500, seed=7)
    b = stratified_bootstrap(data, n_boot=500, seed=7)
    np.testing.assert_array_equal(a.replicates, b.replicates)
    c = stratified_bootstrap(data, n_boot=500, seed=8)
    assert not np.array_equal(a.replicates, c.replicates)
    # strata inserted in another order: same draw
    shuffled = {k: {s: v[s] for s in ("c", "a", "b")} for k, v in data.items()}
    d = stratified_bootstrap(shuffled, n_boot=500, seed=7)
    np.testing.assert_array_equal(a.replicates, d.replicates)
    pd.testing.assert_frame_equal(rank_table(data, seed=3, n_boot=300), rank_table(data, seed=3, n_boot=300))


def test_coverage_of_known_mean():
    # 200 repeats, 2 strata x 40 seeds of N(mu_k, 1): the 95 % interval covers (mu_a + mu_b) / 2 ~95 % of the time
    rng = np.random.default_rng(2024)
    covered = 0
    reps = 200
    for r in range(reps):
        data = {"x": {"a": rng.normal(1.0, 1.0, 40), "b": rng.normal(3.0, 2.0, 40)}}
        res = stratified_bootstrap(data, n_boot=1000, seed=r)
        covered += res.low[0] <= 2.0 <= res.high[0]
    assert 0.89 <= covered / reps <= 0.99


# ----------------------------------------------------------------------------------------------- ranks


def test_point_ranks_competition_and_ties():
    ranks, tie = point_ranks(np.array([1.0, 2.0, 2.0, 4.0]), "min")
    assert ranks.tolist() == [1, 2, 2, 4] and tie.tolist() == [False, True, True, False]
    ranks, tie = point_ranks(np.array([1.0, 2.0, 2.0, 4.0]), "max")
    assert ranks.tolist() == [4, 2, 2, 1] and tie.tolist() == [False, True, True, False]
    # within rtol counts as equal; beyond it does not
    ranks, tie = point_ranks(np.array([1.0, 1.0 + 1e-14, 1.1]), "min")
    assert ranks.tolist() == [1, 1, 3] and tie.tolist() == [True, True, False]
    ranks, _ = point_ranks(np.array([1.0, 1.0 + 1e-6]), "min")
    assert ranks.tolist() == [1, 2]
    ranks, tie = point_ranks(np.array([np.inf, 0.0, np.inf]), "min")
    assert ranks.tolist() == [2, 1, 2] and tie.tolist() == [True, False, True]


def test_identical_subs_share_rank_and_tie_flag():
    data = _data(n_subs=3)
    data["copy_of_sub1"] = {s: v.copy() for s, v in data["sub1"].items()}
    table = rank_table(data, "max", n_boot=400)
    assert table.loc["sub1", "rank"] == table.loc["copy_of_sub1", "rank"]
    assert table.loc["sub1", "tie"] and table.loc["copy_of_sub1", "tie"]
    assert not table.loc["sub0", "tie"]
    assert table.loc["sub1", "rank_lo"] == table.loc["copy_of_sub1", "rank_lo"]
    assert table.loc["sub1", "rank_hi"] == table.loc["copy_of_sub1", "rank_hi"]


def test_rank_intervals_contain_point_rank_and_are_ordered():
    data = _data(n_subs=8, n_seeds=15, seed=9)
    res = stratified_bootstrap(data, n_boot=1000, seed=1)
    for direction in ("min", "max"):
        rank, _ = point_ranks(res.estimate, direction)
        lo, hi = rank_intervals(res.replicates, direction)
        assert lo.dtype.kind == "i" and hi.dtype.kind == "i"
        assert np.all((1 <= lo) & (lo <= rank) & (rank <= hi) & (hi <= len(data)))
    lo80, hi80 = rank_intervals(res.replicates, "min", ci=0.8)
    lo95, hi95 = rank_intervals(res.replicates, "min", ci=0.95)
    assert np.all(lo95 <= lo80) and np.all(hi80 <= hi95)


def test_rank_intervals_quantile_convention():
    # sub 0 is best in 3 of 4 replicates, 2nd in one -> ranks [1, 1, 1, 2]
    reps = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [2.0, 1.0]])
    lo, hi = rank_intervals(reps, "min", ci=0.5)  # quantiles 0.25 and 0.75 of [1, 1, 1, 2]: 1 and 1.25
    assert lo.tolist() == [1, 1] and hi.tolist() == [2, 2]  # ceil(1.25) = 2; sub 1: q of [2,2,2,1] = 1.75, 2
    lo, hi = rank_intervals(reps[:3], "min")
    assert lo.tolist() == [1, 2] and hi.tolist() == [1, 2]


def test_rank_table_columns_and_order():
    data = _data(n_subs=5)
    table = rank_table(data, "min", n_boot=300)
    assert tuple(table.columns) == TABLE_STAT_COLUMNS
    assert table.index.name == "submission" and sorted(table.index) == sorted(data)
    assert table["rank"].is_monotonic_increasing
    assert np.all(table["ci_low"] <= table["score"]) and np.all(table["score"] <= table["ci_high"])
    assert np.all((table["rank_lo"] <= table["rank"]) & (table["rank"] <= table["rank_hi"]))
    assert table["tie"].dtype == bool
    for name in data:
        assert table.loc[name, "score"] == pytest.approx(np.mean([v.mean() for v in data[name].values()]))
    empty = rank_table({})
    assert len(empty) == 0 and tuple(empty.columns) == TABLE_STAT_COLUMNS


# ---------------------------------------------------------------------------------------- normalisation


def test_normalised_scores_endpoints():
    np.testing.assert_allclose(
        normalised_scores([10.0, 100.0, 55.0, 0.0, 190.0], 10.0, 100.0, "min"), [1.0, 0.0, 0.5, 10 / 9, -1.0]
    )
    np.testing.assert_allclose(normalised_scores(np.array([0.9, 0.5, 0.7]), 0.9, 0.5, "max"), [1.0, 0.0, 0.5])
    out = normalised_scores(np.array([np.nan, np.inf]), 0.0, 1.0, "min")
    assert np.isnan(out[0]) and out[1] == -np.inf


def test_normalised_scores_degenerate_references():
    out = normalised_scores(np.array([1.0, 2.0, 3.0, np.nan]), 2.0, 2.0, "min")
    np.testing.assert_array_equal(out[:3], [1.0, 1.0, 0.0])
    assert np.isnan(out[3])
    np.testing.assert_array_equal(normalised_scores(np.array([1.0, 2.0, 3.0]), 2.0, 2.0, "max"), [0.0, 1.0, 1.0])


# ----------------------------------------------------------------------------------- performance profile


def _costs():
    # ratios: A [1, 2, 1, inf], B [2, 1, 1, 1], C [4, inf, 3, 2]
    return pd.DataFrame(
        {
            "solver": list("ABC" * 4),
            "problem": np.repeat(["p1", "p2", "p3", "p4"], 3),
            "cost": [1.0, 2.0, 4.0, 2.0, 1.0, np.inf, 1.0, 1.0, 3.0, np.nan, 5.0, 10.0],
        }
    )


def test_performance_profile_hand_computed():
    prof = performance_profile(_costs(), taus=np.array([1.0, 1.5, 2.0, 3.0, 4.0, 100.0]))
    assert list(prof.columns) == ["solver", "tau", "fraction"]
    got = prof.pivot(index="solver", columns="tau", values="fraction")
    np.testing.assert_allclose(got.loc["A"], [0.50, 0.50, 0.75, 0.75, 0.75, 0.75])
    np.testing.assert_allclose(got.loc["B"], [0.75, 0.75, 1.00, 1.00, 1.00, 1.00])
    np.testing.assert_allclose(got.loc["C"], [0.00, 0.00, 0.25, 0.50, 0.75, 0.75])


def test_performance_profile_invariants_and_default_grid():
    costs = _costs()
    prof = performance_profile(costs)
    assert list(pd.unique(prof["solver"])) == ["A", "B", "C"]
    taus = prof.loc[prof.solver == "A", "tau"].to_numpy()
    assert taus[0] == 1.0 and 4.0 in taus and taus[-1] == pytest.approx(4.2)
    assert np.all(np.diff(taus) > 0)
    wins = {"A": 2 / 4, "B": 3 / 4, "C": 0.0}  # p3 is a tie of A and B: counts for both
    solved = {"A": 3 / 4, "B": 1.0, "C": 3 / 4}
    for s, grp in prof.groupby("solver"):
        f = grp.sort_values("tau")["fraction"].to_numpy()
        assert np.all(np.diff(f) >= 0)
        assert f[0] == pytest.approx(wins[s])
        assert f[-1] == pytest.approx(solved[s])


def test_performance_profile_unsolved_problem_and_missing_pair():
    costs = pd.concat(
        [_costs(), pd.DataFrame({"solver": list("ABC"), "problem": ["p5"] * 3, "cost": [np.inf, np.nan, np.inf]})]
    )
    prof = performance_profile(costs, taus=np.array([1.0, 1e9]))
    got = prof.pivot(index="solver", columns="tau", values="fraction")
    np.testing.assert_allclose(got[1e9], [3 / 5, 5 / 5 - 1 / 5, 3 / 5])  # nobody reaches 1
    # a missing (problem, solver) row is a failure
    prof = performance_profile(_costs().drop(index=4), taus=np.array([1.0, 100.0]))  # B on p2 missing
    got = prof.pivot(index="solver", columns="tau", values="fraction")
    np.testing.assert_allclose(got.loc["B"], [0.5, 0.75])
    np.testing.assert_allclose(got.loc["A"], [0.75, 0.75])  # A now wins p2


def test_performance_profile_custom_columns():
    costs = _costs().rename(columns={"solver": "name", "problem": "instance", "cost": "seconds"})
    a = performance_profile(costs, solver="name", problem="instance", cost="seconds")
    b = performance_profile(_costs())
    np.testing.assert_allclose(a["fraction"], b["fraction"])


# ---------------------------------------------------------------------------------------- time to target


def test_time_to_target():
    curve = pd.DataFrame({"seconds": [0.0, 0.5, 1.0, 2.0, 3.0], "err": [1.0, 0.4, np.nan, 0.1, 0.05]})
    assert time_to_target(curve, metric="err", target=0.1) == 2.0
    assert time_to_target(curve, metric="err", target=0.4) == 0.5
    assert time_to_target(curve, metric="err", target=0.01) == np.inf
    assert time_to_target(curve.iloc[::-1], metric="err", target=0.1) == 2.0  # order of rows irrelevant
    acc = pd.DataFrame({"iters": [1, 2, 3], "acc": [0.5, 0.8, 0.9]})
    assert time_to_target(acc, metric="acc", target=0.8, direction="max", time="iters") == 2.0
    assert time_to_target(acc.iloc[:0], metric="acc", target=0.8, direction="max", time="iters") == np.inf


# ------------------------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({}, "non-empty mapping"),
        ({"a": {"s": [1.0, 2.0]}, "b": {"t": [1.0, 2.0]}}, r"'b'.*missing \['s'\], extra \['t'\]"),
        ({"a": {"s": [1.0, 2.0]}, "b": {"s": [1.0, 2.0, 3.0]}}, "stratum 's'.*'b' has 3 seeds"),
        ({"a": {"s": [1.0, np.nan]}}, r"'a', stratum 's': NaN values at seed indices \[1\]"),
        ({"a": {"s": [1.0, np.inf]}}, "infinite"),
        ({"a": {"s": []}}, "no values"),
        ({"a": {"s": [[1.0, 2.0]]}}, "1-D"),
    ],
)
def test_stratified_bootstrap_bad_data(data, match):
    with pytest.raises(ValueError, match=match):
        stratified_bootstrap(data, n_boot=10)


def test_bad_arguments():
    data = {"a": {"s": [1.0, 2.0]}}
    with pytest.raises(ValueError, match="aggregate"):
        stratified_bootstrap(data, aggregate="median")
    with pytest.raises(ValueError, match="n_boot"):
        stratified_bootstrap(data, n_boot=0)
    with pytest.raises(ValueError, match="ci"):
        stratified_bootstrap(data, ci=95)
    with pytest.raises(ValueError, match="direction"):
        point_ranks(np.array([1.0]), "lower")
    with pytest.raises(ValueError, match="NaN"):
        point_ranks(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="direction"):
        rank_table(data, "best")
    with pytest.raises(ValueError, match="replicates"):
        rank_intervals(np.zeros(5))
    with pytest.raises(ValueError, match="swapped"):
        normalised_scores([1.0], best_ref=10.0, worst_ref=1.0, direction="min")
    with pytest.raises(ValueError, match="finite"):
        normalised_scores([1.0], best_ref=np.nan, worst_ref=1.0)
    with pytest.raises(ValueError, match="no column 'cost'"):
        performance_profile(_costs().rename(columns={"cost": "time"}))
    with pytest.raises(ValueError, match="duplicate"):
        performance_profile(pd.concat([_costs(), _costs().iloc[:1]]))
    with pytest.raises(ValueError, match="positive"):
        performance_profile(_costs().assign(cost=0.0))
    with pytest.raises(ValueError, match="no column 'err'"):
        time_to_target(pd.DataFrame({"seconds": [1.0]}), metric="err", target=0.1)
    with pytest.raises(ValueError, match="target is NaN"):
        time_to_target(pd.DataFrame({"seconds": [1.0], "err": [0.0]}), metric="err", target=np.nan)
