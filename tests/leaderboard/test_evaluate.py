"""The leaderboard end to end: hidden seeds, evaluation of references and sandboxed submissions, the
store's rows, ranking, the CLI, PostgreSQL.

Boards are made small through the evaluator's configuration file (``$PAPERGYM_EVALUATOR_CONFIG``),
exactly as a board operator would.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from papergym.leaderboard.board import configs as B
from papergym_tests import require

SUBS = Path(__file__).parent / "lb_subs"
SECRET = "0123456789abcdef-test-secret-of-the-evaluator"
SMALL_BOARDS = {
    "NonStatLipschitz-v0": {
        "strata": {"cyclic": {"instance": "two-peak-cyclic"}, "tents": {"instance": "piecewise-tents"}},
        "seeds": 4,
        "horizon": 3000,
    },
    "MSetSemiBandit-v0": {
        "strata": {"switch": {"instance": "oblivious-switching", "d": 5, "m": 2}},
        "seeds": 3,
        "horizon": 300,
    },
    "NoiseFreeGPBandit-v0": {"strata": {"se": {"kernel": "se", "d": 1}}, "seeds": 3, "horizon": 25},
    "NystromODE-v0": {"task_kwargs": {"problems": ["L1", "N3"], "sizes": [100]}},
    "FJSP-v0": {"strata": {"sd2-6x4": {"family": "sd2", "n_jobs": 6, "n_machines": 4}}, "seeds": 3},
    "FJSPImprove-v0": {
        "strata": {"sd2-6x4": {"family": "sd2", "n_jobs": 6, "n_machines": 4, "init": "sampled-dispatch"}},
        "seeds": 3,
        "horizon": 12,
    },
    "PowerLawRandomFeatures-v0": {"task_kwargs": {"alpha": 1.0, "beta": 0.7, "d": [30], "steps": 3000}},
    "EntropicMatrixGame-v0": {"strata": {"random": {"instance": "random", "role": "both"}}, "seeds": 3, "horizon": 60},
    "EntropicMarkovGame-v0": {"strata": {"random": {"instance": "random", "role": "both"}}, "seeds": 2, "horizon": 40},
    "DecentralizedBilevel-v0": {
        "task_kwargs": {
            "family": ["syn", "digits"],
            "graph": "ring",
            "agents": 4,
            "heterogeneity": 1.0,
            "scales": "1:1",
            "rounds": 100,
        }
    },
    "SimpleBilevel-v0": {
        "task_kwargs": {"instance": ["circle", "min-norm-regression"], "circle_dims": 2, "max_work": 5000}
    },
    "PointCloudPH-v0": {"task_kwargs": {"shapes": ["cheese"], "fidelity_n": [3000], "k": 3}},
    "PreferenceHallucination-v0": {"task_kwargs": {"sizes": ["default"], "n_pref": 100, "n_test": 200, "epochs": 1}},
    "RLDataSelection-v0": {
        "task_kwargs": {
            "pool_size": 60,
            "test_size": 40,
            "max_digits": 3,
            "rl_epochs": 1,
            "batch_prompts": 8,
            "group_size": 2,
        }
    },
    "ContinualDomains-v0": {"task_kwargs": {"domains": ["original", "invert"], "images_per_domain": 60, "epochs": 1}},
    "FeatureStaircase-v0": {
        "task_kwargs": {
            "setting": ["diagonal-linear"],
            "d": [5],
            "a": [1.0],
            "alpha": [1e-8],
            "horizon": 40_000,
            "max_seconds": 0.25,
        }
    },
}


@pytest.fixture
def evaluator(tmp_path, monkeypatch):
    """A private evaluator config with a secret and small boards, and a fresh SQLite store."""
    cfg = tmp_path / "evaluator.json"
    cfg.write_text(json.dumps({"secret": SECRET, "boards": SMALL_BOARDS}))
    monkeypatch.setenv(B.CONFIG_ENV, str(cfg))
    monkeypatch.delenv("PAPERGYM_TEST_SECRET", raising=False)
    monkeypatch.setenv("PAPERGYM_DB", f"sqlite:///{tmp_path / 'board.db'}")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from papergym.leaderboard.board.store import Store

    store = Store()
    yield store
    store.close()


def _sandbox_ok():
    from papergym.leaderboard.board.sandbox import bwrap_available

    ok, why = bwrap_available()
    if not ok and os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"bubblewrap must work in CI: {why}")
    return ok


# ------------------------------------------------------------------------------------- hidden seeds
def test_hidden_seeds_are_hmac_of_the_secret_stable_and_secret_dependent():
    got = B.stratum_seeds("NonStatLipschitz-v0", "cyclic", "env", 5, SECRET)
    want = [
        int.from_bytes(
            hmac.new(SECRET.encode(), f"NonStatLipschitz-v0/cyclic/env/{i}".encode(), hashlib.sha256).digest()[:4],
            "big",
        )
        & 0x7FFFFFFF
        for i in range(5)
    ]
    assert got == want
    assert got == B.stratum_seeds("NonStatLipschitz-v0", "cyclic", "env", 5, SECRET)
    assert got != B.stratum_seeds("NonStatLipschitz-v0", "cyclic", "env", 5, SECRET + "x")
    # the agent's seeds are independent of the instance's
    assert set(got).isdisjoint(B.stratum_seeds("NonStatLipschitz-v0", "cyclic", "agent", 5, SECRET))


def test_evaluator_config_secret_is_created_private(tmp_path, monkeypatch):
    path = tmp_path / "sub" / "evaluator.json"
    monkeypatch.setenv(B.CONFIG_ENV, str(path))
    monkeypatch.delenv("PAPERGYM_TEST_SECRET", raising=False)
    assert B.load_evaluator_config().secret is None
    cfg = B.load_evaluator_config(create_secret=True)
    assert len(cfg.secret) == 64 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert B.load_evaluator_config().secret == cfg.secret
    monkeypatch.setenv("PAPERGYM_TEST_SECRET", "another-secret-of-enough-length")
    assert B.load_evaluator_config().secret == "another-secret-of-enough-length"


@pytest.mark.parametrize(
    "content, match",
    [
        ("{not json", "not valid JSON"),
        ('{"secret": "x" }', "at least 16"),
        ('{"secrets": "x"}', "unknown key"),
        ('{"boards": {"NonStatLipschitz-v0": 3}}', "'boards' must map"),
    ],
)
def test_evaluator_config_malformed(tmp_path, monkeypatch, content, match):
    path = tmp_path / "evaluator.json"
    path.write_text(content)
    monkeypatch.setenv(B.CONFIG_ENV, str(path))
    monkeypatch.delenv("PAPERGYM_TEST_SECRET", raising=False)
    with pytest.raises(ValueError, match=match):
        B.load_evaluator_config()


def test_board_overrides_are_checked_and_change_the_version():
    base = B.board_config("NonStatLipschitz-v0", overrides={})
    small = B.board_config("NonStatLipschitz-v0", overrides={"seeds": 3})
    assert small.seeds == 3 and B.board_version(small) != B.board_version(base)
    with pytest.raises(ValueError, match="not fields"):
        B.board_config("NonStatLipschitz-v0", overrides={"sedes": 3})
    with pytest.raises(ValueError, match="seeds"):
        B.board_config("NonStatLipschitz-v0", overrides={"seeds": 0})


# --------------------------------------------------------------------------------------- references
def test_refresh_scores_references_and_ranks_them(evaluator):
    from papergym.leaderboard.board.evaluate import refresh
    from papergym.leaderboard.board.ranking import build_benchmark_board

    done = refresh(
        evaluator, ["NonStatLipschitz-v0"], only=["mdbe", "binning-ucb", "uniform-random", "binning-ucb-oracle"]
    )
    assert {n for _, n, _ in done} == {"mdbe", "binning-ucb", "uniform-random", "binning-ucb-oracle"}
    assert all(st == "ok" for _, _, st in done), done
    runs = evaluator.runs(benchmark_id="NonStatLipschitz-v0")
    assert len(runs) == 4 * 2 * 4 and set(runs.status) == {"ok"}
    assert (runs["regret"] >= 0).all() and (runs["final_regret"] == runs["regret"]).all()
    assert "seed" not in runs.columns  # only seed indices are stored
    bb = build_benchmark_board(evaluator, "NonStatLipschitz-v0", n_boot=300)
    tab = bb.table.set_index("name")
    assert not tab.loc["binning-ucb-oracle", "ranked"]  # oracle: a reference line
    assert np.isfinite(tab.loc["binning-ucb-oracle", "score"])
    ranked = bb.table[bb.table.ranked]
    assert len(ranked) == 3 and list(ranked["rank"]) == sorted(ranked["rank"])
    assert (ranked.rank_lo <= ranked["rank"]).all() and (ranked["rank"] <= ranked.rank_hi).all()
    # uniform random play has linear regret; binning-ucb learns and is first with a sharp rank interval
    assert tab.loc["uniform-random", "score"] > 2 * tab.loc["binning-ucb", "score"]
    assert tab.loc["binning-ucb", ["rank", "rank_lo", "rank_hi"]].tolist() == [1, 1, 1]
    assert set(bb.curves.name) == {"mdbe", "binning-ucb", "uniform-random", "binning-ucb-oracle"}
    # a second refresh is a no-op
    again = refresh(evaluator, ["NonStatLipschitz-v0"], only=["mdbe"])
    assert again[0][2].endswith("(cached)")
    assert len(evaluator.runs(benchmark_id="NonStatLipschitz-v0")) == len(runs)


def test_refresh_static_regret_board(evaluator):
    from papergym.leaderboard.board.evaluate import refresh

    refresh(evaluator, ["MSetSemiBandit-v0"], only=["ftpl-frechet"])
    runs = evaluator.runs(benchmark_id="MSetSemiBandit-v0")
    assert len(runs) == 3 and set(runs.status) == {"ok"}
    # oblivious switching: the ranked regret is the static pseudo-regret, not the dynamic one
    assert np.allclose(runs["regret"], runs["static_regret"])
    assert (runs["static_regret"] <= runs["final_regret"] + 1e-9).all()


# -------------------------------------------------------------------------------------- submissions
@pytest.mark.parametrize("env_id", ["FJSP-v0", "FJSPImprove-v0"])
def test_refresh_scores_the_fjsp_references(evaluator, env_id):
    """FJSP boards: every run's instance differs (fresh SD2 instances from the hidden seeds) and reaches the
    agents through the observations; references start from the board's sampled-dispatch solution
    (improvement) or build schedules."""
    from papergym.leaderboard.board.evaluate import refresh

    only = ["mwkr", "spt", "cpsat"] if env_id == "FJSP-v0" else ["initial-solution", "bi-search", "gd-search"]
    refresh(evaluator, [env_id], only=only)
    subs = evaluator.submissions(env_id)
    assert set(subs.name) == set(only) and (subs.status == "ok").all(), subs[["name", "status", "message"]]
    runs = evaluator.runs(list(subs.submission_id))
    assert (runs.status == "ok").all() and (runs.regret >= 0).all()
    by = runs.merge(subs[["submission_id", "name"]]).groupby("name").regret.mean()
    if env_id == "FJSPImprove-v0":
        assert by["gd-search"] <= by["initial-solution"] and by["bi-search"] <= by["initial-solution"]
    else:
        assert by["cpsat"] <= by["mwkr"]


def test_sandboxed_fjsp_submission(evaluator):
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import submit

    for env_id in ("FJSP-v0", "FJSPImprove-v0"):
        sid = submit(
            evaluator, f"{SUBS / 'fjsp_first_legal.py'}:make_agent", env_id, name="first-legal", author="tester"
        )
        sub = evaluator.submissions(env_id).set_index("submission_id").loc[sid]
        assert sub.status == "ok", sub.message
        runs = evaluator.runs([sid])
        assert len(runs) == 3 and (runs.regret >= 0).all()


@pytest.mark.parametrize("env_id", ["EntropicMatrixGame-v0", "EntropicMarkovGame-v0"])
def test_game_boards_references_and_sandboxed_learner(evaluator, env_id):
    """Game boards (self-play): references are scored on hidden random games; a learner written from the
    public problem alone (player blocks) runs in the sandbox and matches the registered fictitious-play."""
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import refresh, submit

    refresh(evaluator, [env_id], only=["br-flow", "fictitious-play"])
    sid = submit(evaluator, f"{SUBS / 'game_fp.py'}:make_agent", env_id, name="my-fp", author="tester")
    subs = evaluator.submissions(env_id)
    assert (subs.status == "ok").all(), subs[["name", "status", "message"]]
    runs = evaluator.runs(list(subs.submission_id)).merge(subs[["submission_id", "name"]])
    assert (runs.regret >= 0).all()
    assert set(runs.name) == {"br-flow", "fictitious-play", "my-fp"}
    mine = runs[runs.submission_id == sid].sort_values("seed_index").regret.to_numpy()
    ref = runs[runs.name == "fictitious-play"].sort_values("seed_index").regret.to_numpy()
    np.testing.assert_allclose(mine, ref, rtol=1e-9)


def test_invalid_fjsp_action_ends_only_that_run(evaluator):
    """Legality depends on each run's state: a masked-out action ends its own run; the others, checked
    against their own states, finish."""
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import submit

    sid = submit(evaluator, f"{SUBS / 'fjsp_bad_row.py'}:make_batched", "FJSP-v0", author="tester")
    runs = evaluator.runs([sid])
    assert (runs.status == "invalid_action").sum() == 1 and (runs.status == "ok").sum() == 2
    assert runs[runs.status == "invalid_action"].error.str.contains("cannot process|no operation left").all()


def test_sandboxed_submission_equals_in_process_bit_for_bit(evaluator):
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import SubmissionInfo, evaluate_agent, submit
    from papergym.leaderboard.board.sandbox import InProcessAgentSession

    sid = submit(
        evaluator,
        f"{SUBS / 'ucb_grid.py'}:make_agent",
        "NonStatLipschitz-v0",
        name="grid-ucb",
        author="tester",
        hyperparameters={"k": 8},
    )
    sub = evaluator.submissions("NonStatLipschitz-v0").set_index("submission_id").loc[sid]
    assert sub.status == "ok", sub.message
    import importlib.util

    spec = importlib.util.spec_from_file_location("ucb_grid_local", SUBS / "ucb_grid.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    info = SubmissionInfo("grid-ucb-local", "tester", "submission", "agent", "local", "0" * 64, {"k": 8})
    sid2 = evaluate_agent(
        evaluator,
        "NonStatLipschitz-v0",
        info,
        lambda: InProcessAgentSession(mod.make_agent),
        secret=SECRET,
        sandbox="in-process",
    )
    a = evaluator.runs([sid]).sort_values(["stratum", "seed_index"])
    b = evaluator.runs([sid2]).sort_values(["stratum", "seed_index"])
    assert len(a) == 8
    assert a["regret"].to_numpy().tobytes() == b["regret"].to_numpy().tobytes()
    ca = evaluator.read_curve(a.curve_path.iloc[0])
    cb = evaluator.read_curve(b.curve_path.iloc[0])
    pd.testing.assert_frame_equal(ca, cb)


def test_invalid_action_ends_only_that_run(evaluator):
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import submit

    sid = submit(evaluator, f"{SUBS / 'bad_row.py'}:make_batched", "NonStatLipschitz-v0", author="tester")
    sub = evaluator.submissions("NonStatLipschitz-v0").set_index("submission_id").loc[sid]
    runs = evaluator.runs([sid])
    assert sub.status == "partial"
    assert (runs.status == "invalid_action").sum() == 2  # one run per stratum
    assert (runs.status == "ok").sum() == 6
    bad = runs[runs.status == "invalid_action"]
    assert bad.error.str.contains("bounds|range|\\[0, 1\\]|rule", regex=True).all(), list(bad.error)


def test_broken_submission_is_stored_as_error_and_touches_nothing_else(evaluator):
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import refresh, submit

    refresh(evaluator, ["NonStatLipschitz-v0"], only=["mdbe"])
    before = evaluator.runs(benchmark_id="NonStatLipschitz-v0")
    sid = submit(evaluator, f"{SUBS / 'crash_on_import.py'}:make_agent", "NonStatLipschitz-v0", author="x")
    sub = evaluator.submissions("NonStatLipschitz-v0").set_index("submission_id").loc[sid]
    assert sub.status == "error" and "broken on purpose" in (sub.message + sub.stderr_tail)
    after = evaluator.runs(benchmark_id="NonStatLipschitz-v0")
    others = after[after.submission_id != sid].reset_index(drop=True)
    pd.testing.assert_frame_equal(
        before.reset_index(drop=True).drop(columns="error"), others.drop(columns="error"), check_dtype=False
    )
    assert before.error.isna().all() and others.error.isna().all()


def test_solver_submission_and_reference_on_a_task(evaluator):
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import refresh, submit
    from papergym.leaderboard.board.ranking import build_benchmark_board

    done = refresh(evaluator, ["NystromODE-v0"], only=["nystrom-lssvm"])
    assert done[0][2] == "ok", done
    sid = submit(evaluator, f"{SUBS / 'ivp_solver.py'}:IVPSolver", "NystromODE-v0", author="tester")
    sub = evaluator.submissions("NystromODE-v0").set_index("submission_id").loc[sid]
    assert sub.status == "ok", sub.message
    runs = evaluator.runs([sid])
    assert len(runs) == 2 * 5 and set(runs.stratum) == {"L1/n=100", "N3/n=100"}
    assert (runs["rel_rmse"] < 1e-4).all()  # solve_ivp at rtol 1e-8 through the evaluator's rhs
    assert (runs["par2_seconds"] < 60).all()
    bb = build_benchmark_board(evaluator, "NystromODE-v0", n_boot=200)
    assert bb.kind == "task" and set(bb.profiles.name) == {"nystrom-lssvm", "ivp_solver"}
    assert bb.table.ranked.sum() == 2


def test_plrf_solver_submission_calls_the_evaluators_oracle(evaluator):
    """The sandboxed solver only gets the public data and oracle.grad (served by the evaluator, which counts
    the samples): its SGD equals the registered sgd sample for sample (common random numbers)."""
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import refresh, submit

    refresh(evaluator, ["PowerLawRandomFeatures-v0"], only=["sgd", "dana-decaying"])
    sid = submit(evaluator, f"{SUBS / 'plrf_sgd.py'}:PLRFSGD", "PowerLawRandomFeatures-v0", author="tester")
    subs = evaluator.submissions("PowerLawRandomFeatures-v0")
    assert (subs.status == "ok").all(), subs[["name", "status", "message"]]
    runs = evaluator.runs(list(subs.submission_id)).merge(subs[["submission_id", "name"]])
    mine = runs[runs.submission_id == sid].sort_values("seed_index")
    ref = runs[runs.name == "sgd"].sort_values("seed_index")
    assert len(mine) == 5 and (mine.step == 3000).all()
    np.testing.assert_allclose(mine.excess_ratio.to_numpy(), ref.excess_ratio.to_numpy(), rtol=1e-9)


@pytest.mark.parametrize(
    "task_id,entry,reference,oracle_calls",
    [
        ("DecentralizedBilevel-v0", "bilevel_gt.py:GradientTracking", "adasdbo", 5 * 4 * 100),
        ("SimpleBilevel-v0", "simple_bilevel_penalty.py:FixedPenalty", "dbgd", None),
    ],
)
def test_bilevel_boards_reference_and_sandboxed_solver(evaluator, task_id, entry, reference, oracle_calls):
    """The bilevel tasks' oracles (vectorised over agents, with the evaluator's mixing matrix; the counting
    simple-bilevel oracle) are served to a sandboxed submission, which the evaluator scores with its own counters."""
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import refresh, submit
    from papergym.leaderboard.board.ranking import build_benchmark_board

    done = refresh(evaluator, [task_id], only=[reference])
    assert done[0][2] == "ok", done
    sid = submit(evaluator, f"{SUBS / entry}", task_id, author="tester")
    sub = evaluator.submissions(task_id).set_index("submission_id").loc[sid]
    assert sub.status == "ok", sub.message
    runs = evaluator.runs([sid])
    assert len(runs) == 2 * 5 and (runs.status == "ok").all()
    if oracle_calls is not None:
        assert (runs.rounds == 100).all() and (runs.oracle_calls == oracle_calls).all()
        assert np.isfinite(runs.hypergrad_sq).all()
    else:
        assert (runs.work > 0).all() and (runs.work <= 5000).all() and np.isfinite(runs.r_g).all()
    bb = build_benchmark_board(evaluator, task_id, n_boot=200)
    assert set(bb.profiles.name) == {reference, entry.split(":")[0][:-3]} and bb.table.ranked.sum() == 2


def test_data_selection_board_serves_the_policy_and_refuses_the_full_pool(evaluator):
    """RLDataSelection-v0: a sandboxed UFO-RL (policy.logprobs served and counted by the evaluator) selects exactly
    what the registered ufo-rl selects, so every hidden seed scores the same; returning the whole pool is invalid."""
    _sandbox_ok()
    require("torch", "torch")
    from papergym.leaderboard.board.evaluate import refresh, submit

    done = refresh(evaluator, ["RLDataSelection-v0"], only=["ufo-rl"])
    assert done[0][2] == "ok", done
    sid = submit(evaluator, f"{SUBS / 'ufo_single_pass.py'}:UFOSinglePass", "RLDataSelection-v0", author="x")
    subs = evaluator.submissions("RLDataSelection-v0")
    assert (subs.status == "ok").all(), subs[["name", "status", "message"]]
    runs = evaluator.runs(list(subs.submission_id)).merge(subs[["submission_id", "name"]])
    mine = runs[runs.submission_id == sid].sort_values("seed_index")
    ref = runs[runs.name == "ufo-rl"].sort_values("seed_index")
    assert len(mine) == 5 and (mine.status == "ok").all()
    np.testing.assert_array_equal(mine.test_acc.to_numpy(), ref.test_acc.to_numpy())
    np.testing.assert_array_equal(mine.select_forwards.to_numpy(), ref.select_forwards.to_numpy())
    bad = submit(evaluator, f"{SUBS / 'ufo_single_pass.py'}:FullPool", "RLDataSelection-v0", author="x")
    badruns = evaluator.runs([bad])
    assert not (badruns.status == "ok").any()


def test_decentralized_bilevel_board_cannot_be_won_by_a_flat_region(evaluator):
    """x -> +inf (infinite ridge) has a vanishing hypergradient without learning anything: the board ranks by
    the upper-level loss, so that submission ranks below the paper's method although its |grad Phi|^2 is smaller."""
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import refresh, submit
    from papergym.leaderboard.board.ranking import build_benchmark_board

    refresh(evaluator, ["DecentralizedBilevel-v0"], only=["adasdbo"])
    sid = submit(evaluator, f"{SUBS / 'bilevel_huge_ridge.py'}:HugeRidge", "DecentralizedBilevel-v0", author="x")
    runs = evaluator.runs([sid])
    ref = evaluator.runs(
        list(evaluator.submissions("DecentralizedBilevel-v0").query("name == 'adasdbo'").submission_id)
    )
    assert runs.hypergrad_sq.max() < ref.hypergrad_sq.min()  # the paper's metric would be gamed...
    bb = build_benchmark_board(evaluator, "DecentralizedBilevel-v0", n_boot=200)
    assert bb.metric == "val_loss"
    ranked = bb.table.sort_values("rank")
    assert list(ranked.name[:2]) == ["adasdbo", "bilevel_huge_ridge"]  # ...the board is not


def test_point_cloud_board_refuses_skipped_dimensions(evaluator):
    """A sandboxed submission returning the exact Alpha H2 diagram but empty H0 / H1 diagrams recovers the voids,
    yet every run is invalid (bottleneck in every dimension) and it ranks below the paper's flood."""
    _sandbox_ok()
    require("gudhi", "tda")
    from papergym.leaderboard.board.evaluate import refresh, submit
    from papergym.leaderboard.board.ranking import build_benchmark_board

    done = refresh(evaluator, ["PointCloudPH-v0"], only=["flood"])
    assert done[0][2] == "ok", done
    sid = submit(evaluator, f"{SUBS / 'ph_h2_only.py'}:H2Only", "PointCloudPH-v0", author="x")
    runs = evaluator.runs([sid])
    assert len(runs) == 5 and (runs.status == "ok").all()
    assert (runs.void_recovery == 1).all() and (runs.valid == 0).all() and (runs.par2_seconds == 120).all()
    bb = build_benchmark_board(evaluator, "PointCloudPH-v0", n_boot=200)
    assert list(bb.table.sort_values("rank").name) == ["flood", "ph_h2_only"]


def test_staircase_board_scores_a_sandboxed_predictor_like_the_reference(evaluator):
    """The public problem (data, alpha, lr, horizon) crosses the sandbox channel: a numpy-only submission of the
    memoryless greedy rule scores exactly like the registered greedy-memoryless, and below the paper's agf."""
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import refresh, submit
    from papergym.leaderboard.board.ranking import build_benchmark_board

    done = refresh(evaluator, ["FeatureStaircase-v0"], only=["agf", "greedy-memoryless"])
    assert all(d[2] == "ok" for d in done), done
    sid = submit(evaluator, f"{SUBS / 'staircase_greedy.py'}:GreedyStaircase", "FeatureStaircase-v0", author="x")
    subs = evaluator.submissions("FeatureStaircase-v0")
    assert (subs.status == "ok").all(), subs[["name", "status", "message"]]
    runs = evaluator.runs(list(subs.submission_id)).merge(subs[["submission_id", "name"]])
    mine = runs[runs.submission_id == sid].sort_values("seed_index")
    ref = runs[runs.name == "greedy-memoryless"].sort_values("seed_index")
    assert len(mine) == 5 and (mine.status == "ok").all()
    np.testing.assert_allclose(mine.staircase_error.to_numpy(), ref.staircase_error.to_numpy(), rtol=1e-9)
    bb = build_benchmark_board(evaluator, "FeatureStaircase-v0", n_boot=200)
    assert list(bb.table.sort_values("rank").name)[0] == "agf"


def test_preference_board_scores_sandboxed_weights_like_sft(evaluator):
    """PreferenceHallucination-v0: the public problem (reference weights as a nested dict) reaches a sandboxed numpy
    submission; its dict of weights is scored by the evaluator's decoder exactly like the registered sft baseline."""
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import refresh, submit

    done = refresh(evaluator, ["PreferenceHallucination-v0"], only=["sft"])
    assert all(d[2] == "ok" for d in done), done
    sid = submit(
        evaluator, f"{SUBS / 'preference_ref_copy.py'}:CopyReference", "PreferenceHallucination-v0", author="x"
    )
    subs = evaluator.submissions("PreferenceHallucination-v0")
    assert (subs.status == "ok").all(), subs[["name", "status", "message"]]
    runs = evaluator.runs(list(subs.submission_id)).merge(subs[["submission_id", "name"]])
    mine = runs[runs.submission_id == sid].sort_values("seed_index")
    ref = runs[runs.name == "sft"].sort_values("seed_index")
    assert len(mine) == 5 and (mine.status == "ok").all()
    np.testing.assert_allclose(mine.f1.to_numpy(), ref.f1.to_numpy(), rtol=1e-12)
    assert (mine.chair_i > 0).all()


def test_continual_board_streams_to_a_sandboxed_learner(evaluator):
    """ContinualDomains-v0: the evaluator's stream (domains, unlabelled test batches, answers) is served to a sandboxed
    numpy learner as calls back; the evaluator scores its own records of the answers."""
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import refresh, submit
    from papergym.leaderboard.board.ranking import build_benchmark_board

    done = refresh(evaluator, ["ContinualDomains-v0"], only=["experts-only"])
    assert done[0][2] == "ok", done
    sid = submit(evaluator, f"{SUBS / 'continual_ncm.py'}:NearestClassMean", "ContinualDomains-v0", author="x")
    sub = evaluator.submissions("ContinualDomains-v0").set_index("submission_id").loc[sid]
    assert sub.status == "ok", sub.message
    runs = evaluator.runs([sid])
    assert len(runs) == 5 and (runs.status == "ok").all()
    assert (runs.final_acc > 0.15).all() and (runs.final_acc <= 1.0).all()  # above chance (0.1)
    assert runs.selection_acc.isna().all() and runs.experts_used.isna().all()
    assert "param_growth" not in runs  # the declared params_added is not scored
    np.testing.assert_allclose(runs.final_acc_sample, runs.final_acc)  # a per-sample rule: both protocols
    bb = build_benchmark_board(evaluator, "ContinualDomains-v0", n_boot=200)
    assert bb.table.ranked.sum() == 2


@pytest.mark.parametrize("task_id", sorted(k for k, v in B.DEFAULT_BOARDS.items() if isinstance(v, B.TaskBoardConfig)))
def test_every_default_task_board_builds_its_hidden_instances(task_id, monkeypatch):
    """The default board configuration of every task is valid: its task kwargs build the task, the hidden test split
    has 5 seeds per stratum, and the references it names (skip_references) are registered for the task."""
    import papergym.agents.solvers
    import papergym.baselines.solvers  # noqa: F401
    from papergym.agents.base import list_solvers
    from papergym.envs.tasks.base import make_task

    cfg = B.DEFAULT_BOARDS[task_id]
    monkeypatch.setenv("PAPERGYM_TEST_SECRET", SECRET)
    try:
        task = make_task(task_id, **dict(cfg.task_kwargs))
    except ImportError as exc:  # an optional extra (gudhi, torch) missing on this machine
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))
    refs = task.instances("test")
    strata = {r.name.rsplit("/", 1)[0] for r in refs}
    assert refs and len(refs) == 5 * len(strata), (task_id, len(refs), len(strata))
    assert {r.split for r in refs} == {"test"}
    names = {info.name for info in list_solvers(task_id)}
    assert set(cfg.skip_references) <= names, (task_id, cfg.skip_references)
    assert cfg.metric == "" or cfg.metric in task.metrics
    assert cfg.profile_cost in task.metrics and cfg.profile_success in ("", *task.metrics), (task_id, cfg)


def test_mean_field_has_no_board():
    with pytest.raises(ValueError, match="deterministic"):
        B.board_config("EntropicMeanField-v0", overrides={})
    assert "EntropicMeanField-v0" not in B.board_ids()


def test_public_problem_hides_the_family_parameters():
    from papergym.envs.tasks.base import InstanceRef, make_task
    from papergym.leaderboard.board.evaluate import public_problem

    task = make_task("NystromODE-v0")
    problem, _ = task.make(InstanceRef("NystromODE-v0", "dev", "L6/n=100/s3", 3, {"problem": "L6", "n": 100}))
    data, calls = public_problem(problem)
    assert "params" not in data and set(calls) >= {"rhs", "jac", "linear_form.coeffs", "linear_form.forcing"}
    assert data["t_train"].shape == (100,) and data["order"] == 2


# --------------------------------------------------------------------------------------------- CLI
def test_cli_submit_and_leaderboard(evaluator, tmp_path, capsys):
    _sandbox_ok()
    from papergym.leaderboard.board.evaluate import refresh
    from papergym.leaderboard.cli import main

    refresh(evaluator, ["NonStatLipschitz-v0"], only=["mdbe", "uniform-random"])
    rc = main(
        [
            "submit",
            f"{SUBS / 'ucb_grid.py'}:make_agent",
            "--to",
            "NonStatLipschitz-v0",
            "--name",
            "my-ucb",
            "--author",
            "me",
            "--hp",
            "k=8",
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "my-ucb" in out and "rank " in out and "of 3" in out
    assert main(["leaderboard", "NonStatLipschitz-v0"]) == 0
    out = capsys.readouterr().out
    assert "my-ucb" in out and "mdbe" in out
    site = tmp_path / "site"
    assert main(["leaderboard", "--html", str(site)]) == 0
    assert (site / "index.html").exists() and (site / "NonStatLipschitz-v0.html").exists()
    assert "my-ucb" in (site / "NonStatLipschitz-v0.html").read_text()


def test_cli_rank_hint_before_refresh_and_delete(evaluator, capsys):
    _sandbox_ok()
    from papergym.leaderboard.cli import main

    entry = f"{SUBS / 'ucb_grid.py'}:make_agent"
    assert main(["submit", entry, "--to", "NonStatLipschitz-v0", "--name", "early", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "rank 1 of 1" in out and "no reference entries yet" in out and "leaderboard refresh" in out
    sid = evaluator.submissions("NonStatLipschitz-v0").submission_id.iloc[-1]
    assert main(["leaderboard", "NonStatLipschitz-v0"]) == 0
    table = capsys.readouterr().out
    header = next(ln for ln in table.splitlines() if ln.startswith("rank"))
    assert header.split()[-1] == "id"
    rows = [ln for ln in table.splitlines() if "  early  " in ln]
    assert len(rows) == 1 and rows[0].split()[-1] == str(sid), table
    # all-or-nothing: one unknown id and nothing is deleted
    assert main(["leaderboard", "delete", str(sid), str(sid + 100)]) == 2
    assert f"no submission with id {sid + 100}" in capsys.readouterr().err
    assert evaluator.submission(int(sid)) is not None
    assert main(["leaderboard", "delete", "twelve"]) == 2
    assert "integers" in capsys.readouterr().err
    assert main(["leaderboard", "delete"]) == 2
    capsys.readouterr()
    assert main(["leaderboard", "delete", str(sid)]) == 0
    assert f"deleted submission {sid}: early by anonymous on NonStatLipschitz-v0" in capsys.readouterr().out
    assert evaluator.submission(int(sid)) is None
    assert evaluator.runs([int(sid)]).empty


@pytest.mark.parametrize(
    "argv, match",
    [
        (["submit", "nofile.py:make_agent", "--to", "NonStatLipschitz-v0"], "entry"),
        (["submit", f"{SUBS / 'ucb_grid.py'}:make_agent", "--to", "NoSuchEnv-v0"], "--to: unknown"),
        (["submit", f"{SUBS / 'ucb_grid.py'}", "--to", "NonStatLipschitz-v0"], "entry"),
        (["leaderboard", "NoSuchEnv-v0"], "unknown environment or task"),
        (
            ["submit", f"{SUBS / 'ucb_grid.py'}:make_agent", "--to", "NonStatLipschitz-v0", "--author", "papergym"],
            "reserved",
        ),
        (
            ["submit", f"{SUBS / 'ucb_grid.py'}:make_agent", "--to", "NonStatLipschitz-v0", "--name", "a\x1b[31mb"],
            "printable",
        ),
        (
            ["submit", f"{SUBS / 'ucb_grid.py'}:make_agent", "--to", "NonStatLipschitz-v0", "--time-limit", "-1"],
            "--time-limit",
        ),
        (["leaderboard", "--db", "mysql://x/y"], "--db"),
        (["leaderboard", "--force"], "refresh"),
    ],
)
def test_cli_bad_arguments_exit_2(evaluator, capsys, argv, match):
    from papergym.leaderboard.cli import main

    assert main(argv) == 2
    assert match in capsys.readouterr().err


def test_leaderboard_on_postgres(postgres_url, tmp_path, monkeypatch):
    """A shared board on a real PostgreSQL server: references and a submission, then the table."""
    _sandbox_ok()
    cfg = tmp_path / "evaluator.json"
    cfg.write_text(json.dumps({"secret": SECRET, "boards": SMALL_BOARDS}))
    monkeypatch.setenv(B.CONFIG_ENV, str(cfg))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the curves of a PostgreSQL board
    from papergym.leaderboard.cli import main

    assert (
        main(["leaderboard", "refresh", "NonStatLipschitz-v0", "--only", "mdbe", "--db", postgres_url, "--quiet"]) == 0
    )
    assert (
        main(
            [
                "submit",
                f"{SUBS / 'ucb_grid.py'}:make_agent",
                "--to",
                "NonStatLipschitz-v0",
                "--db",
                postgres_url,
                "--name",
                "pg-ucb",
                "--quiet",
            ]
        )
        == 0
    )
    from papergym.leaderboard.board.store import Store

    with Store(postgres_url, curves_dir=tmp_path / "curves") as st:
        subs = st.submissions("NonStatLipschitz-v0")
        assert {"mdbe", "pg-ucb"} <= set(subs.name)
