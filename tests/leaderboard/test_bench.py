"""bench(): the solver-benchmark runner on a toy task with a known answer (independent of any paper
task): cells, caching and resume, statuses, anytime curves with the scoring time excluded, sweeps,
hyperparameter checks, and the summary."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from papergym.agents import base as abase
from papergym.envs.tasks import base as tbase
from papergym.envs.tasks.base import Budget, BudgetExceeded, InstanceRef
from papergym.leaderboard.runner.bench import bench

TOY = "ToyQuadratic-v0"


class ToyEvaluator:
    def __init__(self, target, slow=0.0):
        self.target, self.slow = target, slow

    def evaluate(self, solution):
        x = np.asarray(solution, dtype=float)
        if x.shape != self.target.shape:
            raise ValueError(f"solution must have shape {self.target.shape}, got {x.shape}")
        time.sleep(self.slow)  # scoring time: must not count against the solver
        err = float(np.linalg.norm(x - self.target))
        return {"error": err, "solved": float(err < 1e-6)}


class ToyTask:
    """Minimise ||x - a||^2 for a hidden a in R^dim (the problem gives the gradient oracle only)."""

    id = TOY
    metrics = {"error": "min", "solved": "max"}
    primary = "error"
    default_budget = Budget(max_seconds=30, max_iterations=1000)

    def __init__(self, dims=(2, 5), scoring_delay=0.0, lr_grid=False):
        if any(int(d) < 1 for d in dims):
            raise ValueError(f"dims must be positive, got {dims}")
        self.dims, self.scoring_delay, self.lr_grid = [int(d) for d in dims], float(scoring_delay), bool(lr_grid)

    def solver_sweep(self):
        return {"lr": [0.1, 0.5]} if self.lr_grid else {}

    def report(self, runs, curves=None):
        return f"toy report: {len(runs)} runs, {0 if curves is None else len(curves)} curve points"

    def instances(self, split="dev"):
        if split == "test":
            seeds = tbase.hidden_seeds(TOY, "all", 1)
        else:
            seeds = [0]
        return [InstanceRef(TOY, split, f"q{d}/s{s}", s, {"dim": d}) for d in self.dims for s in seeds]

    def make(self, ref):
        a = np.random.default_rng(ref.seed + 1000 * ref.params["dim"]).normal(size=ref.params["dim"])
        return {"dim": ref.params["dim"], "grad": lambda x, a=a: 2 * (x - a)}, ToyEvaluator(a, self.scoring_delay)


class GD:
    def __init__(self, *, seed=None, lr=0.25, report_every=0):
        if not lr > 0:
            raise ValueError(f"lr must be positive, got {lr}")
        self.lr, self.report_every = lr, report_every

    def solve(self, problem, budget, report):
        x = np.zeros(problem["dim"])
        for it in range(1, (budget.max_iterations or 100) + 1):
            x = x - self.lr * problem["grad"](x)
            if self.report_every and it % self.report_every == 0:
                report(x.copy(), iteration=it, work=it)
        return x


class Crash:
    def __init__(self, *, seed=None):
        pass

    def solve(self, problem, budget, report):
        raise RuntimeError("boom")


class TooBig:
    def __init__(self, *, seed=None):
        pass

    def solve(self, problem, budget, report):
        raise BudgetExceeded("a dense system of this size does not fit")


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(tbase._TASKS, TOY, (__name__, ToyTask))
    for name, fac in (("toy-gd", GD), ("toy-crash", Crash), ("toy-too-big", TooBig)):
        abase.register_solver(name, fac, tasks=[TOY], role="baseline")
    yield
    for name in ("toy-gd", "toy-crash", "toy-too-big"):
        abase._SOLVERS.pop(name, None)


def test_bench_scores_caches_and_records_statuses(toy, tmp_path):
    res = bench(TOY, solvers=["toy-gd", "toy-crash", "toy-too-big"], backend="serial", out=tmp_path)
    st = res.runs.set_index(["label", "instance"]).status
    assert st["toy-gd"].eq("ok").all() and st["toy-crash"].eq("error").all() and st["toy-too-big"].eq("timeout").all()
    assert np.all(res.runs.loc[res.runs.label == "toy-gd", "solved"] == 1.0)
    assert any("boom" in e["error"] for e in res.errors)
    # ok cells are cached as one JSON file each; failed ones are recorded, never cached
    files = sorted(p.name for p in (tmp_path / TOY).rglob("*.json"))
    assert sum(f.endswith(".error.json") for f in files) == 4 and len(files) == 6
    rec = json.loads(next((tmp_path / TOY / "toy-gd").glob("*.json")).read_text())
    assert rec["status"] == "ok" and rec["cell"]["solver"] == "toy-gd"
    # rerun: the ok cells come from the cache (no solve), the failed ones are tried again
    calls = []
    orig = GD.solve
    GD.solve = lambda self, *a: calls.append(1) or orig(self, *a)
    try:
        res2 = bench(TOY, solvers=["toy-gd", "toy-crash"], backend="serial", out=tmp_path)
    finally:
        GD.solve = orig
    assert not calls and (res2.runs[res2.runs.label == "toy-gd"].status == "ok").all()
    assert len(res2.errors) == 2
    s = res.summary.set_index("label")
    assert s.loc["toy-gd", "n_ok"] == 2 and s.loc["toy-crash", "n_failed"] == 2


def test_anytime_curve_excludes_scoring_time(toy, tmp_path):
    res = bench(
        TOY,
        solvers=["toy-gd"],
        instances=["q2"],
        backend="serial",
        out=tmp_path,
        cache=False,
        task_kwargs={"scoring_delay": 0.05},
        hyperparameters={"toy-gd": {"report_every": 10}},
        budget=Budget(max_seconds=30, max_iterations=50),
    )
    c = res.curves.sort_values("iteration")
    assert c.iteration.tolist() == [10, 20, 30, 40, 50] and c.work.tolist() == [10, 20, 30, 40, 50]
    assert np.all(np.diff(c["error"].to_numpy()) <= 0)  # gradient descent on a quadratic: monotone
    # five reports x 50 ms of scoring, none of it on the solver's clock
    assert c.seconds.max() < 0.05 and res.runs.seconds.iloc[0] < 0.05


def test_sweep_labels_and_hyperparameter_checks(toy, tmp_path):
    res = bench(
        TOY,
        solvers=["toy-gd"],
        sweep={"toy-gd": {"lr": [0.1, 0.5]}},
        backend="serial",
        out=tmp_path,
        budget={"max_seconds": 10, "max_iterations": 3},
    )
    assert sorted(res.summary.label) == ["toy-gd[lr=0.1]", "toy-gd[lr=0.5]"]
    s = res.summary.set_index("label")
    assert s.loc["toy-gd[lr=0.5]", "geo_mean"] < 1e-12 < s.loc["toy-gd[lr=0.1]", "geo_mean"]  # lr 0.5: exact in 1 step
    with pytest.raises(ValueError, match="unknown hyperparameter.*'step'.*lr"):
        bench(TOY, solvers=["toy-gd"], hyperparameters={"toy-gd": {"step": 1}}, backend="serial", out=tmp_path)
    with pytest.raises(ValueError, match="lr must be positive"):
        bench(TOY, solvers=["toy-gd"], hyperparameters={"toy-gd": {"lr": -1}}, backend="serial", out=tmp_path)
    with pytest.raises(abase.UnknownSolverError, match="toy-gd"):
        bench(TOY, solvers=["toy-gdd"], backend="serial", out=tmp_path)
    with pytest.raises(ValueError, match="dims"):
        bench(TOY, solvers=["toy-gd"], task_kwargs={"dims": [0]}, backend="serial", out=tmp_path)
    with pytest.raises(ValueError, match="unknown instance 'q3'"):
        bench(TOY, solvers=["toy-gd"], instances=["q3"], backend="serial", out=tmp_path)


def test_task_declared_sweep_and_report_with_curves(toy, tmp_path):
    """A task's ``solver_sweep()`` (e.g. a step-size grid) applies to every solver taking the hyperparameter,
    unless the caller fixed it; ``report`` gets the anytime curves when it asks for them."""
    res = bench(
        TOY,
        solvers=["toy-gd", "toy-crash"],
        task_kwargs={"lr_grid": True},
        backend="serial",
        out=tmp_path,
        instances=["q2"],
        hyperparameters={},
        budget={"max_seconds": 10, "max_iterations": 3},
    )
    assert sorted(res.summary.label) == ["toy-crash", "toy-gd[lr=0.1]", "toy-gd[lr=0.5]"]
    res2 = bench(
        TOY,
        solvers=["toy-gd"],
        task_kwargs={"lr_grid": True},
        hyperparameters={"toy-gd": {"lr": 0.25}},
        instances=["q2"],
        backend="serial",
        out=tmp_path,
        budget={"max_seconds": 10, "max_iterations": 3},
    )
    assert list(res2.summary.label) == ["toy-gd"]
    res3 = bench(
        TOY,
        solvers=["toy-gd"],
        hyperparameters={"toy-gd": {"report_every": 1}},
        instances=["q2"],
        backend="serial",
        out=tmp_path,
        budget={"max_seconds": 10, "max_iterations": 3},
    )
    assert res3.extra_report() == "toy report: 1 runs, 3 curve points"


def test_cli_boolean_task_argument_is_a_switch(toy, tmp_path, capsys):
    from papergym.leaderboard.cli import main

    argv = [
        "bench",
        TOY,
        "--solvers",
        "toy-gd",
        "--instances",
        "q2",
        "--backend",
        "serial",
        "--max-iterations",
        "3",
        "--out",
        str(tmp_path / "out"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--quiet",
    ]
    assert main(argv + ["--lr-grid"]) == 0
    out = capsys.readouterr().out
    assert "toy-gd[lr=0.1]" in out and "toy-gd[lr=0.5]" in out and "toy report" in out
    assert main(argv + ["--lr-grid", "false"]) == 0
    assert "toy-gd[lr=" not in capsys.readouterr().out
    assert main(argv + ["--dims"]) == 2  # a non-boolean argument still needs a value
    assert "--dims needs a value" in capsys.readouterr().err


def test_cli_hyperparameter_of_a_factory_forwarding_kwargs(toy, tmp_path, capsys):
    """A solver registered as ``factory(*, seed=None, **hp)`` takes the names of its registered defaults as
    --options (and in a task-declared sweep); other names are still refused."""
    from papergym.leaderboard.cli import main

    abase.register_solver(
        "toy-gd-kw",
        lambda *, seed=None, **hp: GD(seed=seed, **hp),
        tasks=[TOY],
        defaults={"lr": 0.25, "report_every": 0},
    )
    try:
        assert abase.get_solver_info("toy-gd-kw", TOY).hyperparameters == ("lr", "report_every")
        argv = [
            "bench",
            TOY,
            "--solvers",
            "toy-gd-kw",
            "--instances",
            "q2",
            "--backend",
            "serial",
            "--quiet",
            "--max-iterations",
            "3",
            "--out",
            str(tmp_path / "out"),
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
        assert main(argv + ["--lr", "0.1,0.5"]) == 0
        assert "toy-gd-kw[lr=0.1]" in capsys.readouterr().out
        assert main(argv + ["--lr-grid"]) == 0
        assert "toy-gd-kw[lr=0.5]" in capsys.readouterr().out
        assert main(argv + ["--step", "1"]) == 2
        assert "neither an argument" in capsys.readouterr().err
    finally:
        abase._SOLVERS.pop("toy-gd-kw", None)


def test_test_split_needs_the_secret(toy, tmp_path, monkeypatch):
    monkeypatch.delenv(tbase.SECRET_ENV, raising=False)
    with pytest.raises(tbase.MissingSecretError):
        bench(TOY, solvers=["toy-gd"], split="test", backend="serial", out=tmp_path)
    monkeypatch.setenv(tbase.SECRET_ENV, "s3cret")
    res = bench(TOY, solvers=["toy-gd"], split="test", backend="serial", out=tmp_path)
    seeds = set(res.runs.instance_seed)
    assert seeds == set(tbase.hidden_seeds(TOY, "all", 1, "s3cret")) and 0 not in seeds
    monkeypatch.setenv(tbase.SECRET_ENV, "other")
    assert set(bench(TOY, solvers=["toy-gd"], split="test", backend="serial", out=tmp_path).runs.instance_seed) != seeds


def test_hidden_seeds_are_hmac_of_the_secret():
    import hashlib
    import hmac

    s = tbase.hidden_seeds("T-v0", "k", 3, "abc")
    ref = [
        int.from_bytes(hmac.new(b"abc", f"T-v0/k/{i}".encode(), hashlib.sha256).digest()[:4], "big") & 0x7FFFFFFF
        for i in range(3)
    ]
    assert s == ref and len(set(s)) == 3


# ----------------------------------------------------------------------------- peak memory
def _can_reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _can_reset_hwm(), reason="needs Linux /proc/self/clear_refs")
def test_peak_rss_counts_the_solver_not_the_scoring():
    import numpy as np

    from papergym.leaderboard.runner.bench import AnytimeCurve

    class HungryEvaluator:
        def evaluate(self, solution):
            junk = np.ones(40_000_000)  # 320 MB during scoring only
            return {"s": float(junk[0])}

    rep = AnytimeCurve(HungryEvaluator(), memory=True)
    rep.start()
    data = np.ones(25_000_000)  # 200 MB touched by the "solver"
    rep(data[:1])
    del data
    mem = rep.peak_rss()
    assert 180 < mem["solve_rss_mb"] < 300, mem
    assert mem["peak_rss_mb"] >= mem["solve_rss_mb"]
    rep.start()  # a fresh window: nothing allocated
    assert rep.peak_rss()["solve_rss_mb"] < 50
