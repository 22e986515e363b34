"""FJSP on the leaderboard: references scored by refresh, a sandboxed submission on hidden-seed SD2
instances (each run's instance reaches the agent through its observations only)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from papergym.leaderboard import boards as B

SUBS = Path(__file__).parent / "lb_subs"
SECRET = "fjsp-test-secret-of-the-evaluator-0123456789"
SMALL = {
    "FJSP-v0": {"strata": {"sd2-6x4": {"family": "sd2", "n_jobs": 6, "n_machines": 4}}, "seeds": 3},
    "FJSPImprove-v0": {"strata": {"sd2-6x4": {"family": "sd2", "n_jobs": 6, "n_machines": 4}}, "seeds": 3,
                       "horizon": 12},
}


@pytest.fixture
def evaluator(tmp_path, monkeypatch):
    cfg = tmp_path / "evaluator.json"
    cfg.write_text(json.dumps({"secret": SECRET, "boards": SMALL}))
    monkeypatch.setenv(B.CONFIG_ENV, str(cfg))
    monkeypatch.delenv("PAPERGYM_TEST_SECRET", raising=False)
    monkeypatch.setenv("PAPERGYM_DB", f"sqlite:///{tmp_path / 'board.db'}")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from papergym.leaderboard.store import Store

    store = Store()
    yield store
    store.close()


@pytest.mark.parametrize("env_id", ["FJSP-v0", "FJSPImprove-v0"])
def test_refresh_scores_the_fjsp_references(evaluator, env_id):
    from papergym.leaderboard.evaluate import refresh

    only = ["mwkr", "spt", "cpsat"] if env_id == "FJSP-v0" else ["mwkr", "bi-search", "gd-search"]
    refresh(evaluator, [env_id], only=only)
    subs = evaluator.submissions(env_id)
    assert set(subs.name) >= {"mwkr"} and (subs.status == "ok").all(), subs[["name", "status", "message"]]
    runs = evaluator.runs(list(subs.submission_id))
    assert (runs.status == "ok").all() and (runs.regret >= 0).all()
    by = runs.merge(subs[["submission_id", "name"]]).groupby("name").regret.mean()
    if env_id == "FJSPImprove-v0":
        assert by["gd-search"] <= by["mwkr"] and by["bi-search"] <= by["mwkr"]  # searches start from MWKR
    else:
        assert by["cpsat"] <= by["mwkr"]


def test_sandboxed_fjsp_submission(evaluator):
    from papergym.leaderboard.sandbox import bwrap_available

    ok, why = bwrap_available()
    if not ok and os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"bubblewrap must work in CI: {why}")
    from papergym.leaderboard.evaluate import submit

    for env_id in ("FJSP-v0", "FJSPImprove-v0"):
        sid = submit(evaluator, f"{SUBS / 'fjsp_first_legal.py'}:make_agent", env_id, name="first-legal",
                     author="tester")
        sub = evaluator.submissions(env_id).set_index("submission_id").loc[sid]
        assert sub.status == "ok", sub.message
        runs = evaluator.runs([sid])
        assert len(runs) == 3 and (runs.regret >= 0).all()
