"""``papergym check FILE.py:ATTR --to ID``: the submitter's conformance test (papergym.leaderboard.check).

Boards are made small through the evaluator's configuration file, as a board operator would, so the short
runs stay short."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from papergym.leaderboard.board import configs as B
from papergym.leaderboard.check import CHECKS, run_checks
from papergym.leaderboard.cli import main

SUBS = Path(__file__).parent / "lb_subs"
SMALL_BOARDS = {
    "NonStatLipschitz-v0": {"strata": {"cyclic": {"instance": "two-peak-cyclic"}}, "seeds": 4, "horizon": 300},
    "NystromODE-v0": {"task_kwargs": {"problems": ["L1", "N3"], "sizes": [100]}},
}

AGENT = """
import numpy as np


class Agent:
    def __init__(self, problem, *, seed=None, k=8):
        self.rng = np.random.default_rng(seed)
        self.d = problem.action_space.shape[0]
        self.k = k

    def act(self, observation):
        return np.full(self.d, {action})

    def update(self, action, reward, observation):
        pass


def make_agent(problem, *, seed=None, k=8):
    return Agent(problem, seed=seed, k=k)
"""


@pytest.fixture(autouse=True)
def small_boards(tmp_path, monkeypatch):
    cfg = tmp_path / "evaluator.json"
    cfg.write_text(json.dumps({"boards": SMALL_BOARDS}))
    monkeypatch.setenv(B.CONFIG_ENV, str(cfg))


def _agent_file(tmp_path: Path, action: str, name: str = "agent.py") -> Path:
    path = tmp_path / name
    path.write_text(AGENT.format(action=action))
    return path


def _statuses(out: str) -> dict[str, str]:
    return {
        line.split()[1]: line.split()[0]
        for line in out.splitlines()
        if line[:4] in ("PASS", "FAIL", "SKIP") and len(line.split()) > 1 and line.split()[1] in CHECKS
    }


def test_good_agent_passes_every_check(capsys):
    rc = main(["check", f"{SUBS / 'ucb_grid.py'}:make_agent", "--to", "NonStatLipschitz-v0"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert _statuses(out) == {name: "PASS" for name in CHECKS}
    # the board's configuration: its stratum, its horizon (300 <= the quick cap, so not shortened), its metric
    assert "horizon 300 (the board's)" in out and "validation split" in out
    assert out.count("cyclic  seed validation/") == 3 and "regret = " in out
    assert "5 of 5 checks passed" in out and "in-process" in out
    assert out.rstrip().splitlines()[-1].startswith("note: the board runs the file in its sandbox")


def test_out_of_space_actions_fail_protocol(tmp_path, capsys):
    path = _agent_file(tmp_path, "5.0")  # the action space is [0, 1]
    rc = main(["check", f"{path}:make_agent", "--to", "NonStatLipschitz-v0"])
    out = capsys.readouterr().out
    assert rc == 1
    st = _statuses(out)
    assert st["static"] == st["import"] == "PASS" and st["protocol"] == "FAIL"
    assert st["determinism"] == st["run"] == "SKIP"
    line = next(x for x in out.splitlines() if x.startswith("FAIL protocol"))
    assert "refused" in line and "5" in line


def test_unseeded_global_randomness_fails_determinism(tmp_path):
    path = _agent_file(tmp_path, "np.random.rand()")
    rep = run_checks(f"{path}:make_agent", "NonStatLipschitz-v0", seeds=[3, 4])
    st = {c.name: c.status for c in rep.checks}
    assert st == {"static": "pass", "import": "pass", "protocol": "pass", "determinism": "fail", "run": "pass"}
    det = next(c for c in rep.checks if c.name == "determinism")
    assert "seed 3 twice" in det.detail and "default_rng" in det.detail
    assert not rep.passed
    # --seeds: the short run plays those public seeds
    assert [r["seed"] for r in rep.runs] == ["3", "4"]


def test_seeded_agent_is_deterministic(tmp_path):
    path = _agent_file(tmp_path, "self.rng.random()")
    rep = run_checks(f"{path}:make_agent", "NonStatLipschitz-v0", seeds=[0])
    assert rep.passed, rep.format()


def test_typo_in_attr_fails_static_naming_it(capsys):
    rc = main(["check", f"{SUBS / 'ucb_grid.py'}:make_agnet", "--to", "NonStatLipschitz-v0"])
    out = capsys.readouterr().out
    assert rc == 1
    line = next(x for x in out.splitlines() if x.startswith("FAIL static"))
    assert "'make_agnet'" in line and "make_agent" in line
    assert all(v == "SKIP" for k, v in _statuses(out).items() if k != "static")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check", f"{SUBS / 'ucb_grid.py'}:make_agent", "--to", "NoSuchEnv-v0"], "--to: unknown environment or task"),
        (["check", f"{SUBS / 'ucb_grid.py'}", "--to", "NonStatLipschitz-v0"], "entry: "),
        (["check", f"{SUBS / 'ucb_grid.py'}:make_agent", "--to", "EntropicMeanField-v0"], "has no leaderboard"),
        (["check", f"{SUBS / 'ucb_grid.py'}:make_agent", "--to", "NonStatLipschitz-v0", "--seeds", "a"], "--seeds"),
    ],
)
def test_bad_arguments_exit_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_wrong_kind_fails_import_naming_what_was_found(tmp_path):
    rep = run_checks(f"{SUBS / 'ivp_solver.py'}:IVPSolver", "NonStatLipschitz-v0")
    imp = next(c for c in rep.checks if c.name == "import")
    assert imp.status == "fail" and "class IVPSolver" in imp.detail and "a solver class" in imp.detail
    rep = run_checks(f"{SUBS / 'ucb_grid.py'}:make_agent", "NystromODE-v0")
    imp = next(c for c in rep.checks if c.name == "import")
    assert imp.status == "fail" and "make_agent(problem" in imp.detail and "solver task" in imp.detail
    # a factory returning something that is not an agent fails protocol, naming what it returned
    (tmp_path / "notagent.py").write_text("def make_agent(problem, *, seed=None):\n    return 42\n")
    rep = run_checks(f"{tmp_path / 'notagent.py'}:make_agent", "NonStatLipschitz-v0")
    prot = next(c for c in rep.checks if c.name == "protocol")
    assert prot.status == "fail" and "returned int" in prot.detail and "act(observation)" in prot.detail


def test_static_refuses_syntax_errors_and_papergym_imports(tmp_path):
    (tmp_path / "broken.py").write_text("def make_agent(problem:\n    pass\n")
    rep = run_checks(f"{tmp_path / 'broken.py'}:make_agent", "NonStatLipschitz-v0")
    assert rep.checks[0].status == "fail" and "does not parse: line 1" in rep.checks[0].detail
    (tmp_path / "uses_pg.py").write_text("from papergym.agents.base import make_agent\n")
    rep = run_checks(f"{tmp_path / 'uses_pg.py'}:make_agent", "NonStatLipschitz-v0")
    assert rep.checks[0].status == "fail" and "imports papergym (line 1)" in rep.checks[0].detail
    # an import guarded by try (a local convenience) is not refused; the import error names the file
    (tmp_path / "guarded.py").write_text(
        "try:\n    import papergym\nexcept ImportError:\n    pass\n"
        "raise RuntimeError('boom at import')\ndef make_agent(p, *, seed=None):\n"
        "    pass\n"
    )
    rep = run_checks(f"{tmp_path / 'guarded.py'}:make_agent", "NonStatLipschitz-v0")
    assert rep.checks[0].status == "pass"
    assert rep.checks[1].status == "fail" and "RuntimeError: boom at import" in rep.checks[1].detail


def test_good_solver_passes_on_a_cheap_task(capsys):
    rc = main(["check", f"{SUBS / 'ivp_solver.py'}:IVPSolver", "--to", "NystromODE-v0", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0, rep
    assert rep["passed"] and rep["kind"] == "solver" and rep["in_process"] is True
    assert [c["status"] for c in rep["checks"]] == ["pass"] * len(CHECKS)
    assert rep["metric"] == "par2_seconds" and rep["direction"] == "min"
    assert {r["stratum"] for r in rep["runs"]} == {"L1/n=100", "N3/n=100"}
    assert all(r["status"] == "ok" and r["value"] is not None for r in rep["runs"])
    assert "solved" in rep["checks"][-1]["detail"]


def test_solver_whose_solution_cannot_leave_the_sandbox_fails_protocol(tmp_path):
    (tmp_path / "objsol.py").write_text(
        "class S:\n    def __init__(self, *, seed=None):\n        pass\n"
        "    def solve(self, problem, budget, report):\n        return object()\n"
    )
    rep = run_checks(f"{tmp_path / 'objsol.py'}:S", "NystromODE-v0")
    prot = next(c for c in rep.checks if c.name == "protocol")
    assert prot.status == "fail" and "cannot be sent out of the sandbox" in prot.detail


def test_solver_that_misses_the_gate_is_reported_diverged_not_failed(tmp_path, capsys):
    """A wrong but well-formed answer is the solver's failure on that instance (the board scores it with the
    failure value), not a broken submission: every check passes and the run check says how many diverged."""
    (tmp_path / "zeros.py").write_text(
        "import numpy as np\n\n"
        "class Zeros:\n    def __init__(self, *, seed=None):\n        pass\n"
        "    def solve(self, problem, budget, report):\n"
        "        y = np.zeros((len(problem.t_query), int(problem.dim)))\n"
        "        report(y, iteration=1)\n        return y\n"
    )
    rc = main(["check", f"{tmp_path / 'zeros.py'}:Zeros", "--to", "NystromODE-v0", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0, rep
    assert [c["status"] for c in rep["checks"]] == ["pass"] * len(CHECKS)
    prot = next(c for c in rep["checks"] if c["name"] == "protocol")
    assert "diverged" in prot["detail"] and "failure value" in prot["detail"]
    assert {r["status"] for r in rep["runs"]} == {"diverged"}
    n = len(rep["runs"])
    assert f"{n} of {n} runs diverged" in rep["checks"][-1]["detail"]
