"""The shared board as outsiders use it: ``papergym serve`` (uvicorn in a subprocess, on a free port of
127.0.0.1), real ``papergym worker`` subprocesses, a real store (SQLite, and PostgreSQL from the
``postgres_schema_url`` fixture), requests with httpx, the CLI's ``login`` / ``submit --server`` /
``leaderboard --format``, and the live board page in headless Chromium.

The board is made small through the evaluator configuration's board overrides, as an operator would:
NonStatLipschitz-v0, one stratum of 3 seeds, T = 500. Ranked evaluation needs the full sandbox
(:func:`papergym.leaderboard.board.isolation.isolation_status`); without it the service tests skip on a
user's machine and fail under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from papergym.leaderboard.board import configs as B
from papergym_tests import require

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")  # as tests/conftest.py
HERE = Path(__file__).parent
HONEST = HERE / "lb_subs" / "ucb_grid.py"  # per-run UCB on a grid: make_agent(problem, *, seed, k, c)
BATCHED = HERE / "submissions" / "good_batched.py"  # batched epsilon-greedy: Agent(problem, *, seeds)
SECRET = "0123456789abcdef-service-test-secret"
BOARD = "NonStatLipschitz-v0"
SMALL = {BOARD: {"strata": {"cyclic": {"instance": "two-peak-cyclic"}}, "seeds": 3, "horizon": 500}}
CHROMIUM = "/usr/bin/chromium"

# Fails on purpose after writing a marker to stderr: what a test-split author must never see.
FAILING = """
import sys
import numpy as np


class Agent:
    def __init__(self, problem, *, seeds):
        self.n, self.t = len(seeds), 0

    def act(self, obs):
        self.t += 1
        if self.t == 5:
            sys.stderr.write("MARKER-stderr-of-the-submission\\n")
            sys.stderr.flush()
            raise RuntimeError("MARKER-failure-text")
        return np.full((self.n, 1), 0.5)

    def update(self, actions, rewards, obs):
        pass
"""

# The honest UCB agent, slowed down once (a sleep does not change a single action): a worker can be
# killed while it evaluates.
SLOW_SUFFIX = """

import time as _time

_make = make_agent


def make_slow(problem, *, seed=None, k=16, c=1.0):
    _time.sleep(1.5)
    return _make(problem, seed=seed, k=k, c=c)
"""


# ----------------------------------------------------------------------------------------- helpers
def _full_sandbox() -> None:
    from papergym.leaderboard.board.isolation import isolation_status

    status = isolation_status()
    if not status.full:
        if IN_CI:
            pytest.fail("the full sandbox must work in CI: " + "; ".join(status.missing()))
        pytest.skip("the full sandbox is not available here: " + "; ".join(status.missing()))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def operator(tmp_path, monkeypatch):
    """The operator's evaluator config (secret + small board) and the environment of the subprocesses."""
    cfg = tmp_path / "evaluator.json"
    cfg.write_text(json.dumps({"secret": SECRET, "boards": SMALL}))
    for name, value in (
        (B.CONFIG_ENV, str(cfg)),
        ("XDG_DATA_HOME", str(tmp_path / "data")),
        ("XDG_CONFIG_HOME", str(tmp_path / "config")),
    ):
        monkeypatch.setenv(name, value)
    for name in ("PAPERGYM_TEST_SECRET", "PAPERGYM_TOKEN", "PAPERGYM_DB"):
        monkeypatch.delenv(name, raising=False)
    return dict(os.environ)


class Service:
    """``papergym serve`` and ``papergym worker`` subprocesses on one store; logs in ``tmp``."""

    def __init__(
        self, url: str, env: dict, tmp: Path, *, workers_in_serve: int = 0, quota: int = 3, max_upload_kb: int = 64
    ):
        self.url, self.env, self.tmp = url, env, tmp
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.logs: list[Path] = []
        self.workers: list[subprocess.Popen] = []
        self.serve = self._spawn(
            "serve",
            "--db",
            url,
            "--port",
            str(self.port),
            "--workers",
            str(workers_in_serve),
            "--test-quota",
            str(quota),
            "--max-upload-kb",
            str(max_upload_kb),
        )
        import httpx

        deadline = time.monotonic() + 90
        while True:
            if self.serve.poll() is not None:
                pytest.fail(f"papergym serve exited with {self.serve.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"papergym serve did not answer /healthz:\n{self.log_tail()}")
            time.sleep(0.2)

    def _spawn(self, *argv: str) -> subprocess.Popen:
        log = self.tmp / f"{argv[0]}-{len(self.logs)}.log"
        self.logs.append(log)
        with open(log, "wb") as fh:
            return subprocess.Popen(
                [sys.executable, "-m", "papergym.leaderboard.cli", *argv],
                env=self.env,
                stdout=fh,
                stderr=subprocess.STDOUT,
            )

    def add_worker(self, lease: float = 30.0) -> subprocess.Popen:
        proc = self._spawn("worker", "--db", self.url, "--lease", str(lease))
        self.workers.append(proc)
        return proc

    def log_tail(self, n: int = 4000) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-n:]}" for p in self.logs if p.exists())

    def stop(self) -> None:
        procs = [self.serve, *self.workers]
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=40)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _client(svc: Service, token: str | None = None):
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=svc.base, headers=headers, timeout=60)


def _post(c, file: Path | tuple[str, bytes], **fields):
    name, data = (file.name, file.read_bytes()) if isinstance(file, Path) else file
    return c.post("/api/v1/submissions", data={"board": BOARD, **fields}, files={"file": (name, data)})


def _wait(c, sid: int, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        r = c.get(f"/api/v1/submissions/{sid}")
        assert r.status_code == 200, r.text
        if r.json()["done"]:
            return r.json()
        assert time.monotonic() < deadline, f"submission {sid} still {r.json()['status']}"
        time.sleep(0.25)


def _tokens(url: str, *authors: str) -> dict[str, str]:
    from papergym.leaderboard.board.store import Store

    with Store(url) as st:
        return {a: st.create_token(a) for a in authors}


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'board.db'}"
    return request.getfixturevalue("postgres_schema_url")


# ------------------------------------------------------------------------------------- end to end
def test_service_end_to_end(store_url, operator, tmp_path, capsys, monkeypatch, needs):
    """One machine (SQLite: ``serve --workers 2``) or several (PostgreSQL: two ``papergym worker``
    processes next to the service): honest, failing and refused submissions, feedback per split, the
    exports, the CLI and the live page."""
    _full_sandbox()
    needs("httpx")
    sqlite = store_url.startswith("sqlite")
    from papergym.leaderboard.cli import main

    assert main(["admin", "token", "create", "alice", "--db", store_url]) == 0
    alice = capsys.readouterr().out.strip()
    bob = _tokens(store_url, "bob")["bob"]
    svc = Service(store_url, operator, tmp_path, workers_in_serve=2 if sqlite else 0)
    try:
        if not sqlite:
            svc.add_worker()
            svc.add_worker()
        anon, ca, cb = _client(svc), _client(svc, alice), _client(svc, bob)

        # refused before anything is queued
        r = _post(anon, HONEST, name="ucb", attr="make_agent")
        assert r.status_code == 401 and r.json()["detail"].startswith("missing token")
        assert r.headers["www-authenticate"].startswith("Bearer")
        assert _post(_client(svc, "pgt_" + "x" * 43), HONEST).status_code == 401
        r = _post(ca, ("big.py", b"# " + b"x" * 70_000 + b"\n"))  # the limit is 64 KiB
        assert r.status_code == 413 and "limit" in r.json()["detail"]
        r = _post(ca, ("broken.py", b"def make_agent(:\n    pass\n"))
        assert r.status_code == 422 and "not valid Python" in r.json()["detail"] and "line 1" in r.json()["detail"]
        assert _post(ca, ("a.py", "x = 'caf\xe9'".encode("latin-1"))).status_code == 422  # not UTF-8
        assert _post(ca, HONEST, split="local").status_code == 422
        assert _post(ca, HONEST, hyperparameters='{"k": NaN}').status_code == 422
        assert (
            ca.post(
                "/api/v1/submissions", data={"board": "NoSuchBoard-v0"}, files={"file": ("a.py", b"x = 1\n")}
            ).status_code
            == 404
        )
        assert _post(ca, HONEST, name="a\x1b[2Jb").status_code == 422  # names are printable text
        assert anon.get("/boards/%1B%5D0;pwned%07x").status_code == 404  # an escape in a logged path

        # an honest test submission and a validation one of the same file
        r = _post(ca, HONEST, name="ucb", attr="make_agent", split="test", hyperparameters='{"k": 8}')
        assert r.status_code == 201, r.text
        assert r.json()["status"] == "queued" and r.headers["location"] == r.json()["url"]
        test_id = r.json()["id"]
        # the name is alice's on this board now
        r = _post(cb, HONEST, name="ucb", attr="make_agent")
        assert r.status_code == 409 and "alice" in r.json()["detail"]
        r = _post(ca, HONEST, name="ucb-val", attr="make_agent", hyperparameters='{"k": 8}')
        val_id = r.json()["id"]
        fail_test = _post(ca, ("failing.py", FAILING.encode()), name="fails", attr="Agent", split="test").json()["id"]
        fail_val = _post(ca, ("failing.py", FAILING.encode()), name="fails-val", attr="Agent").json()["id"]

        # the owner sees the feedback, nobody else even learns that the id exists
        missing = cb.get("/api/v1/submissions/999999")
        assert cb.get(f"/api/v1/submissions/{test_id}").status_code == missing.status_code == 404
        assert ca.get("/api/v1/submissions/%C2%B2").status_code == 404  # a digit int() refuses
        assert anon.get(f"/api/v1/submissions/{test_id}").status_code == 401

        done = _wait(ca, test_id)
        fb = done["feedback"]
        assert done["status"] == "ok", svc.log_tail()
        assert fb["runs_by_status"] == {"cyclic": {"ok": 3}} and fb["split"] == "test"
        assert fb["ci_low"] <= fb["score"] <= fb["ci_high"] and fb["score"] > 0
        assert not {"runs", "stderr_tail", "message"} & set(fb)  # aggregate only on the test split

        v = _wait(ca, val_id)["feedback"]
        assert v["status"] == "ok" and len(v["runs"]) == 3
        assert all(run["status"] == "ok" and run["metrics"]["regret"] > 0 for run in v["runs"])
        assert v["score"] != fb["score"]  # public seeds, not the hidden ones

        ft = _wait(ca, fail_test)
        text = json.dumps(ft)
        assert ft["status"] == "error" and ft["feedback"]["runs_by_status"] == {"cyclic": {"error": 3}}
        assert "MARKER" not in text and "seed" not in text and "runs" not in ft["feedback"]
        fv = _wait(ca, fail_val)["feedback"]
        assert "MARKER-stderr-of-the-submission" in fv["stderr_tail"]
        assert all(run["status"] == "error" and "MARKER-failure-text" in run["error"] for run in fv["runs"])

        # the board: only the ranked test entry of alice's names; JSON, CSV and the page agree
        board = anon.get(f"/api/v1/boards/{BOARD}")
        assert board.status_code == 200 and board.headers["cache-control"] == "no-store"
        assert board.headers["x-content-type-options"] == "nosniff"
        assert board.headers["content-security-policy"].startswith("default-src 'none'")
        entries = {e["name"]: e for e in board.json()["entries"]}
        assert "ucb-val" not in entries and "fails-val" not in entries  # validation runs are never on the board
        ucb = entries["ucb"]
        assert ucb["ranked"] and ucb["rank"] == "1" and ucb["author"] == "alice"
        assert ucb["score"] == pytest.approx(fb["score"], rel=1e-12)
        assert not entries["fails"]["ranked"] and entries["fails"]["status"] == "error"
        import csv
        import io

        rows = list(csv.DictReader(io.StringIO(anon.get(f"/api/v1/boards/{BOARD}.csv").text)))
        assert [r["name"] for r in rows] == [e["name"] for e in board.json()["entries"]]
        assert float(rows[0]["score"]) == ucb["score"] and rows[0]["rank"] == "1"
        assert {b["board"] for b in anon.get("/api/v1/boards").json()["boards"]} == set(B.board_ids())
        assert anon.get("/healthz").json()["status"] == "ok"

        # the CLI: login (token on stdin), submit --server (validation), export from the store
        monkeypatch.setattr(sys, "stdin", io.StringIO(alice + "\n"))
        assert main(["login", "--server", svc.base]) == 0
        from papergym.leaderboard.board.client import credentials_path

        assert credentials_path().stat().st_mode & 0o777 == 0o600
        capsys.readouterr()
        rc = main(["submit", f"{BATCHED}:Agent", "--to", BOARD, "--server", svc.base, "--name", "eps-greedy"])
        out, err = capsys.readouterr()
        assert rc == 0, out + err
        assert "validation split: ok" in out and "per run:" in out and "waiting for a worker" in err
        assert main(["leaderboard", BOARD, "--format", "json", "--db", store_url]) == 0
        exported = json.loads(capsys.readouterr().out)
        assert [(e["name"], e["score"]) for e in exported["entries"]] == [
            (e["name"], e["score"]) for e in board.json()["entries"]
        ]

        if sqlite:
            _check_page_in_chromium(svc, anon.get(f"/api/v1/boards/{BOARD}").json(), needs)
    finally:
        svc.stop()
    assert svc.serve.returncode == 0, svc.log_tail()
    assert all(b"\x1b" not in log.read_bytes() for log in svc.logs)  # logs are terminal-safe


def _check_page_in_chromium(svc: Service, board: dict, needs) -> None:
    """The live page in headless Chromium: the same names and scores as the JSON export, nothing loaded
    from anywhere but the service, no script error (the CSP lets the page's own sorter run)."""
    from papergym.leaderboard.board.text import fmt_number

    sync_api = needs("playwright.sync_api")
    exe = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if exe is None:
        if IN_CI:
            pytest.fail(f"{CHROMIUM} is required in CI (Debian package chromium)")
        pytest.skip(f"{CHROMIUM} not installed")
    problems: list[str] = []

    def route(r):
        if r.request.url.startswith(svc.base + "/"):
            r.continue_()
        else:
            problems.append(f"request to {r.request.url}")
            r.abort()

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=exe,
            timeout=20_000,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
            ],
        )
        try:
            ctx = browser.new_context()
            ctx.set_default_timeout(15_000)
            ctx.route("**/*", route)
            page = ctx.new_page()
            page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.goto(svc.base + "/")
            assert page.title() == "papergym leaderboard"
            page.locator("section.bench h3 a", has_text=BOARD).click()
            page.wait_for_load_state()
            assert page.url == f"{svc.base}/boards/{BOARD}"
            rows = page.locator("#board tbody tr")
            shown = [(r.locator("td.name").inner_text(), r.locator("td.num").nth(2).inner_text()) for r in rows.all()]
            assert shown == [(e["name"], fmt_number(e["score"])) for e in board["entries"]]
            page.locator("#board th", has_text="Name").click()  # the sorter runs under the service's CSP
            assert page.locator("#board th[aria-sort]").count() == 1
            page.locator("nav a").click()
            page.wait_for_load_state()
            assert page.url == svc.base + "/"
        finally:
            browser.close()
    assert problems == []


# ------------------------------------------------------------------------------- workers under stress
@pytest.mark.slow
def test_killed_worker_job_is_requeued_and_equals_a_fresh_evaluation(postgres_schema_url, operator, tmp_path, needs):
    """SIGKILL the worker evaluating a test job: once its (3 s) lease expires the other worker takes the
    job again, and the stored result is exactly what evaluating the same job afresh gives."""
    _full_sandbox()
    needs("httpx")
    from papergym.leaderboard.board.evaluate import evaluate_job
    from papergym.leaderboard.board.jobs import Job
    from papergym.leaderboard.board.store import Store

    url = postgres_schema_url
    token = _tokens(url, "carol")["carol"]
    code = (HONEST.read_text() + SLOW_SUFFIX).encode()
    svc = Service(url, operator, tmp_path)
    try:
        first = svc.add_worker(lease=3.0)
        c = _client(svc, token)
        sid = _post(
            c, ("slow_ucb.py", code), name="slow", attr="make_slow", split="test", hyperparameters='{"k": 12}'
        ).json()["id"]
        with Store(url) as st:
            deadline = time.monotonic() + 60
            while st.submission(sid)["status"] != "running":
                assert time.monotonic() < deadline, svc.log_tail()
                time.sleep(0.05)
            time.sleep(1.0)  # inside the evaluation (the agent sleeps 1.5 s per seed)
            first.send_signal(signal.SIGKILL)
            first.wait()
            svc.add_worker(lease=3.0)
            done = _wait(c, sid)
            sub = st.submission(sid)
            stored = st.runs(submission_ids=[sid])
        assert done["status"] == "ok" and sub["attempts"] == 2, svc.log_tail()
        job = Job(
            submission_id=sid,
            benchmark_id=BOARD,
            version=sub["version"],
            name="slow",
            author="carol",
            kind="agent",
            split="test",
            code=code,
            code_name="slow_ucb.py",
            attr="make_slow",
            hyperparameters={"k": 12},
        )
        fresh = evaluate_job(job, secret=SECRET, sandbox="full")
        assert fresh.status == "ok"
        want = sorted((r["stratum"], r["seed_index"], r["metrics"]["regret"]) for r in fresh.rows)
        got = sorted(zip(stored.stratum, stored.seed_index, stored.regret))
        assert got == want  # bit for bit: the retry used the same hidden seeds and run order
    finally:
        svc.stop()


@pytest.mark.slow
def test_twenty_concurrent_submissions_from_four_authors(postgres_schema_url, operator, tmp_path, needs):
    """20 submissions at once from 4 authors to a PostgreSQL board (the several-machines store, whose
    workers claim with SKIP LOCKED) with two workers: 20 rows, each evaluated exactly once, none lost."""
    _full_sandbox()
    needs("httpx")
    from papergym.leaderboard.board.store import Store

    store_url = postgres_schema_url
    authors = ("ann", "ben", "cat", "dan")
    tokens = _tokens(store_url, *authors)
    svc = Service(store_url, operator, tmp_path, workers_in_serve=2, quota=5)
    try:
        code = BATCHED.read_bytes()
        answers: list = [None] * 20
        barrier = threading.Barrier(20)

        def send(i: int) -> None:
            with _client(svc, tokens[authors[i % 4]]) as c:
                barrier.wait()
                answers[i] = _post(
                    c,
                    ("eps.py", code),
                    name=f"eps-{i}",
                    attr="Agent",
                    split="test",
                    hyperparameters=json.dumps({"eps": 0.05 + 0.01 * i}),
                )

        threads = [threading.Thread(target=send, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [a.status_code for a in answers] == [201] * 20, [a.text for a in answers if a.status_code != 201]
        ids = sorted(a.json()["id"] for a in answers)
        assert len(set(ids)) == 20
        with Store(store_url) as st:
            deadline = time.monotonic() + 240
            while True:
                subs = st.submissions(BOARD)
                if len(subs) == 20 and not subs.status.isin(("queued", "running")).any():
                    break
                assert time.monotonic() < deadline, svc.log_tail()
                time.sleep(0.5)
            assert sorted(subs.submission_id) == ids
            assert (subs.status == "ok").all(), subs[["name", "status", "message"]]
            assert [st.submission(i)["attempts"] for i in ids] == [1] * 20
            runs = st.runs(submission_ids=ids)
            assert len(runs) == 60 and not runs.duplicated(["submission_id", "stratum", "seed_index"]).any()
        board = _client(svc).get(f"/api/v1/boards/{BOARD}").json()
        assert sorted(e["name"] for e in board["entries"] if e["ranked"]) == sorted(f"eps-{i}" for i in range(20))
    finally:
        svc.stop()


# ------------------------------------------------------------------------------------ no service
def test_credentials_file_is_private_and_per_server(operator, monkeypatch):
    from papergym.leaderboard.board.client import (
        credentials_path,
        load_token,
        normalize_server,
        save_token,
    )

    assert normalize_server("HTTPS://Board.Example.org:8443/lb/") == "https://board.example.org:8443/lb"
    for bad, match in (
        ("ftp://x", "https"),
        ("https://", "no host"),
        ("https://u:p@x", "password"),
        ("https://x/?a=1", "query"),
    ):
        with pytest.raises(ValueError, match=match):
            normalize_server(bad)
    path = save_token("http://127.0.0.1:8000/", "pgt_one")
    save_token("https://board.example.org", "pgt_two")
    assert path == credentials_path() and path.stat().st_mode & 0o777 == 0o600
    assert load_token("http://127.0.0.1:8000") == "pgt_one" and load_token("https://BOARD.example.org/") == "pgt_two"
    assert load_token("https://other.example.org") is None
    monkeypatch.setenv("PAPERGYM_TOKEN", "pgt_env")
    assert load_token("https://other.example.org") == "pgt_env"  # the environment wins


def test_feedback_text_and_csv_cells_cannot_carry_escapes_or_formulas():
    from papergym.leaderboard.board.client import format_feedback
    from papergym.leaderboard.board.service import _csv_cell

    text = format_feedback(
        {
            "id": 3,
            "status": "error",
            "feedback": {
                "name": "x\x1b]0;pwned\x07y",
                "board": BOARD,
                "split": "validation",
                "status": "error",
                "runs_by_status": {"cyclic": {"error": 2}},
                "message": "boom\x1b[2J",
                "stderr_tail": "a\rb\x1b[31mred",
                "runs": [{"stratum": "cyclic", "index": 0, "status": "error", "error": "E\x9b1m", "metrics": {}}],
            },
        }
    )
    assert "\x1b" not in text and "\x9b" not in text and "\r" not in text and "\x07" not in text
    assert "xy" in text and "red" in text and "cyclic: 2 error" in text
    assert _csv_cell("name", "=HYPERLINK(1)") == "'=HYPERLINK(1)" and _csv_cell("name", "ok") == "ok"
    assert _csv_cell("score", -1.5) == "-1.5"  # numbers stay numbers


@pytest.mark.parametrize(
    "argv, match",
    [
        (
            ["submit", f"{HONEST}:make_agent", "--to", BOARD, "--server", "http://127.0.0.1:9", "--author", "me"],
            "--author",
        ),
        (["submit", f"{HONEST}:make_agent", "--to", BOARD, "--split", "test"], "--split goes with --server"),
        (["submit", f"{HONEST}:make_agent", "--to", BOARD, "--server", "ftp://x"], "--server"),
        (["submit", f"{HONEST}:make_agent", "--to", BOARD, "--server", "http://127.0.0.1:9"], "no token"),
        (["submit", f"{HONEST}:make_agent", "--to", BOARD, "--unsafe-no-sandbox", "--sandbox", "bwrap"], "exclude"),
        (["serve", "--port", "0"], "--port"),
        (["serve", "--max-upload-kb", "0"], "--max-upload-kb"),
        (["worker", "--lease", "0"], "--lease"),
        (["leaderboard", BOARD, "NoiseFreeGPBandit-v0", "--format", "csv"], "one board"),
        (["admin", "token", "create", "papergym"], "reserved"),
        (["admin", "token", "revoke", "nobody"], "no author"),
        (["login", "--server", "http://127.0.0.1:9", "--token", "pgt_x"], "cannot reach"),
    ],
)
def test_service_commands_bad_arguments_exit_2(operator, tmp_path, capsys, argv, match):
    from papergym.leaderboard.cli import main

    if argv[0] in ("admin", "leaderboard"):
        argv = [*argv, "--db", f"sqlite:///{tmp_path / 'b.db'}"]
    assert main(argv) == 2
    assert match in capsys.readouterr().err


def test_service_refuses_a_bad_evaluator_config(operator, tmp_path):
    require("fastapi", "board")
    from papergym.leaderboard.board.service import create_app

    Path(os.environ[B.CONFIG_ENV]).write_text(json.dumps({"secret": SECRET, "boards": {BOARD: {"seeds": 0}}}))
    with pytest.raises(ValueError, match="'seeds' must be a positive integer"):
        create_app(f"sqlite:///{tmp_path / 'b.db'}")
