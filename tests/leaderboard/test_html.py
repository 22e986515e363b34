"""Static HTML board and terminal table (leaderboard/report/html.py, text.py).

Boards are built by hand (the columns of papergym.leaderboard.board.ranking). Unit tests check the rendered text;
``test_site_in_headless_chromium`` opens the written site in the system Chromium via Playwright and checks
the *rendered* page (DOM table, SVG geometry, no script execution, no network, no console errors).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from papergym.leaderboard.board import html as html_mod
from papergym.leaderboard.board.html import (
    render_benchmark_page,
    render_index,
    write_site,
)
from papergym.leaderboard.board.ranking import TABLE_COLUMNS, BenchmarkBoard, Board
from papergym.leaderboard.board.text import format_board_table

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")  # as tests/conftest.py
HOSTILE = "<script>alert(1)</script>"
GEN = "2025-07-01T12:00:00+00:00"
CHROMIUM = "/usr/bin/chromium"


def _sha(i: int) -> str:
    return f"{i:02x}" * 32


def _row(
    sid,
    name,
    author,
    role="submission",
    *,
    rank=None,
    lo=None,
    hi=None,
    tie=False,
    score=np.nan,
    n_ok=20,
    n_error=0,
    n_timeout=0,
    status="ok",
    message="",
):
    ranked = rank is not None
    nan = np.nan
    return {
        "submission_id": sid,
        "name": name,
        "author": author,
        "role": role,
        "ranked": ranked,
        "rank": float(rank) if ranked else nan,
        "rank_lo": float(lo) if ranked else nan,
        "rank_hi": float(hi) if ranked else nan,
        "tie": tie,
        "score": score,
        "ci_low": score - 0.5 if np.isfinite(score) else nan,
        "ci_high": score + 0.5 if np.isfinite(score) else nan,
        "n_runs": n_ok + n_error + n_timeout,
        "n_ok": n_ok,
        "n_error": n_error,
        "n_timeout": n_timeout,
        "n_oom": 0,
        "n_invalid_action": 0,
        "status": status,
        "message": message,
        "code_sha256": _sha(sid),
        "date": f"2025-06-{sid:02d}T08:30:00+00:00",
    }


# ranked order: alpha (1), HOSTILE (=2), gamma (=2), delta (4), eps (5), zeta (6)
RANKED_NAMES = ["alpha", HOSTILE, "gamma", "delta", "eps", "zeta"]


def env_board() -> BenchmarkBoard:
    rows = [
        _row(4, "delta", "dan", rank=4, lo=3, hi=5, score=20.0),
        _row(1, "alpha", "ann", role="paper", rank=1, lo=1, hi=2, score=10.0),
        _row(7, "oracle-lines", "papergym", role="oracle", score=1.0),
        _row(2, HOSTILE, "mallory & <b>co</b>", rank=2, lo=1, hi=3, tie=True, score=12.0),
        _row(3, "gamma", "gus", role="baseline", rank=2, lo=2, hi=3, tie=True, score=12.0),
        _row(5, "eps", "eve", rank=5, lo=4, hi=6, score=25.0),
        _row(6, "zeta", "zoe", rank=6, lo=5, hi=6, score=30.0),
        _row(8, "crashy", "carl", n_ok=3, n_error=17, status="error", message="ZeroDivisionError: division by zero"),
        _row(9, "slowpoke", "sam", n_ok=18, n_timeout=2, status="partial", message="2 runs hit the time limit"),
    ]
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    t = np.arange(0, 1001, 50, dtype=float)
    curves = []
    for r in rows:
        if r["status"] != "ok":
            continue
        mean = r["score"] * np.log1p(t) / np.log1p(t[-1])
        curves.append(
            pd.DataFrame(
                {
                    "submission_id": r["submission_id"],
                    "name": r["name"],
                    "role": r["role"],
                    "t": t,
                    "mean": mean,
                    "ci_low": mean * 0.9,
                    "ci_high": mean * 1.1,
                }
            )
        )
    return BenchmarkBoard(
        benchmark_id="ToyBandit-v0",
        kind="env",
        version="1.2",
        metric="final cumulative regret R_T",
        direction="min",
        description="A toy bandit with a $5 budget & <hidden> peaks.",
        strata=["smooth", "rough"],
        n_seeds=10,
        table=table,
        curves=pd.concat(curves, ignore_index=True),
    )


def task_board() -> BenchmarkBoard:
    rows = [
        _row(11, "fast-solver", "fay", rank=1, lo=1, hi=1, score=0.5),
        _row(12, "slow $\\foo$ solver", "sol", rank=2, lo=2, hi=2, score=2.0),
        _row(13, "exact", "papergym", role="reference", score=0.1),
    ]
    tau = np.array([1.0, 1.5, 2.0, 4.0, 8.0, 16.0])
    profile = {
        "fast-solver": ("submission", [0.6, 0.8, 0.9, 1, 1, 1]),
        "slow $\\foo$ solver": ("submission", [0.4, 0.5, 0.6, 0.8, 0.9, 1]),
        "exact": ("reference", [1.0] * 6),
    }
    prof = pd.concat(
        [pd.DataFrame({"name": n, "role": role, "tau": tau, "fraction": f}) for n, (role, f) in profile.items()],
        ignore_index=True,
    )
    return BenchmarkBoard(
        benchmark_id="ToySolve-v0",
        kind="task",
        version="0.3",
        metric="time to 1e-6 relative error",
        direction="min",
        description="A toy solver task.",
        strata=["n=1e3"],
        n_seeds=5,
        table=pd.DataFrame(rows, columns=list(TABLE_COLUMNS)),
        curves=None,
        profiles=prof,
    )


def empty_board() -> BenchmarkBoard:
    return BenchmarkBoard(
        benchmark_id="Empty-v0",
        kind="env",
        version="1",
        metric="final regret",
        direction="max",
        description="Nobody has submitted.",
        strata=["a"],
        n_seeds=3,
        table=pd.DataFrame(columns=list(TABLE_COLUMNS)),
        curves=pd.DataFrame(columns=["submission_id", "name", "role", "t", "mean", "ci_low", "ci_high"]),
    )


def full_board() -> Board:
    overall = pd.DataFrame(
        [
            {
                "name": "alpha",
                "author": "ann",
                "n_benchmarks": 2,
                "benchmarks": ["ToyBandit-v0", "ToySolve-v0"],
                "iqm": 0.9,
                "ci_low": 0.8,
                "ci_high": 0.95,
            },
            {
                "name": HOSTILE,
                "author": "mallory & <b>co</b>",
                "n_benchmarks": 1,
                "benchmarks": "ToyBandit-v0",
                "iqm": 0.5,
                "ci_low": 0.3,
                "ci_high": 0.7,
            },
        ]
    )
    return Board(benchmarks=[env_board(), task_board(), empty_board()], overall=overall, generated=GEN)


def _submission_order(page: str) -> list[int]:
    return [int(x) for x in re.findall(r'data-submission="(\d+)"', page)]


def _no_external_refs(page: str) -> None:
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", page))
    assert urls <= set(html_mod.SVG_NAMESPACES), urls - set(html_mod.SVG_NAMESPACES)
    assert "<link" not in page.lower()
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.IGNORECASE)
    assert "@import" not in page and "url(http" not in page and "//" not in re.sub(r"https?://", "", page)


# ---------------------------------------------------------------------------------------- text table
def test_text_table_content_and_order():
    out = format_board_table(env_board())
    lines = out.splitlines()
    assert lines[0] == "ToyBandit-v0 (env, version 1.2)"
    assert "final cumulative regret R_T (lower is better)" in lines[1]
    assert "strata (2): smooth, rough; 10 test seeds per stratum" in lines[2]
    # ranked rows in rank order, then the unranked ones
    order = [n for n in [*RANKED_NAMES, "oracle-lines", "crashy", "slowpoke"]]
    pos = [out.index(n) for n in order]
    assert pos == sorted(pos)
    table = lines[lines.index(next(ln for ln in lines if ln.startswith("----"))) + 1 : lines.index("unranked:")]
    assert lines[4].split()[:3] == ["rank", "95%", "rank"] and all(ln == ln.rstrip() for ln in lines)
    row = {n: next(ln for ln in table if n in ln) for n in order}
    assert row["alpha"].split()[:2] == ["1", "1-2"]
    assert row["gamma"].split()[:2] == ["=2", "2-3"]
    assert row[HOSTILE].split()[:2] == ["=2", "1-3"]
    assert row["delta"].split()[:2] == ["4", "3-5"]
    assert row["oracle-lines"].split()[0] == "-"
    assert row["crashy"].split()[0] == "-"
    assert "20 ok" in row["alpha"] and "3 ok, 17 error" in row["crashy"] and "18 ok, 2 timeout" in row["slowpoke"]
    assert "10.000" in row["alpha"] and "[9.500, 10.500]" in row["alpha"]
    assert _sha(1)[:12] in row["alpha"] and _sha(1) not in out
    assert "2025-06-01 08:30" in row["alpha"]
    # notes for unranked rows, after the table
    notes = out[out.index("unranked:") :]
    assert "oracle-lines (papergym): reference line (oracle), never ranked" in notes
    assert "crashy (carl): error: ZeroDivisionError: division by zero" in notes
    assert "slowpoke (sam): partial" in notes


def test_text_table_width_empty_and_control_characters():
    bb = env_board()
    bb.table.loc[bb.table.name == "delta", "name"] = "del\x1b[2Jta\nx" + "y" * 60
    out = format_board_table(bb, width=100)
    assert all(len(ln) <= 100 for ln in out.splitlines()), max(out.splitlines(), key=len)
    assert "\x1b" not in out and "delta xyy…" in out  # the escape sequence removed whole, the newline a space
    assert "date" not in out.splitlines()[4] and "code" in out.splitlines()[4]  # date column left out
    natural = format_board_table(bb)
    assert "delta x" + "y" * 60 in natural and "\x1b" not in natural  # natural width: nothing cut
    assert all(len(ln) <= 72 for ln in format_board_table(env_board(), width=72).splitlines())
    empty = format_board_table(empty_board())
    assert empty.splitlines()[1] == "metric: final regret (higher is better)"
    assert empty.endswith("no submissions yet")
    with pytest.raises(ValueError, match="direction"):
        format_board_table(BenchmarkBoard(**{**empty_board().__dict__, "direction": "up"}))
    with pytest.raises(ValueError, match="lacks columns"):
        format_board_table(BenchmarkBoard(**{**empty_board().__dict__, "table": pd.DataFrame()}))


# ------------------------------------------------------------------------------------------------ html
def test_benchmark_page_table_escaping_and_figures():
    page = render_benchmark_page(env_board(), generated=GEN)
    _no_external_refs(page)
    assert page.startswith("<!DOCTYPE html>")
    assert _submission_order(page) == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    # ties: both tied rows carry the marker, the others not
    tie_rows = re.findall(r'<tr class="ranked tie-row[^"]*" data-submission="(\d+)"', page)
    assert tie_rows == ["2", "3"]
    assert page.count('<span class="tie"') == 2
    # hostile strings only as text
    assert HOSTILE not in page and "<b>co</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "mallory &amp; &lt;b&gt;co&lt;/b&gt;" in page
    assert page.count("<script") == 1  # ours, the sorter
    # header
    assert "lower is better" in page and "A toy bandit with a $5 budget &amp; &lt;hidden&gt; peaks." in page
    assert "<li>smooth</li><li>rough</li>" in page and "10 hidden test seeds per stratum (20 runs" in page
    # unranked rows visibly distinct, with their message; full hash in the title
    assert re.search(r'<tr class="failed status-error" data-submission="8">.*ZeroDivisionError', page)
    assert '<tr class="reference status-ok" data-submission="7">' in page
    assert f'<code title="{_sha(1)}">{_sha(1)[:12]}</code>' in page
    assert "18 ok, 2 timeout" in page
    # one figure: every ranked curve (6, under the default top 20) and the oracle as a reference line
    assert page.count("<svg") == 1
    assert len(set(re.findall(r'id="f1-curve-(\d+)"', page))) == 6
    assert len(set(re.findall(r'id="f1-ref-(\d+)"', page))) == 1
    assert "<?xml" not in page and "DOCTYPE svg" not in page
    # every internal SVG reference resolves inside the page
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    refs = set(re.findall(r'(?:href="#|url\(#)([^")]+)', page))
    assert refs and refs <= ids
    assert len(render_benchmark_page(env_board(), generated=GEN, top_k=2).split("-curve-")) - 1 == 2


def test_task_page_profiles_and_empty_board():
    page = render_benchmark_page(task_board(), generated=GEN)
    _no_external_refs(page)
    assert page.count("<svg") == 1 and "Performance profiles" in page
    assert len(set(re.findall(r'id="f1-curve-(\d+)"', page))) == 2  # "$\foo$" drawn literally, no mathtext
    assert len(set(re.findall(r'id="f1-ref-(\d+)"', page))) == 1
    empty = render_benchmark_page(empty_board(), generated=GEN)
    _no_external_refs(empty)
    assert "No submissions yet." in empty and "<svg" not in empty and "higher is better" in empty


def test_index_page():
    page = render_index(full_board())
    _no_external_refs(page)
    for bid in ("ToyBandit-v0", "ToySolve-v0", "Empty-v0"):
        assert f'<a href="{bid}.html">{bid}</a>' in page
    assert HOSTILE not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    overall = page[page.index('id="overall"') : page.index("<h2>Benchmarks")]
    assert overall.index("alpha") < overall.index("&lt;script&gt;")
    assert '<td class="num" data-v="0.9">0.9000</td>' in overall
    # top 3 of the env board, in rank order, with the link to the rest
    env = page[page.index('id="b-ToyBandit-v0"') : page.index('id="b-ToySolve-v0"')]
    assert [n for n in ("alpha", "&lt;script&gt;", "gamma", "delta") if n in env] == [
        "alpha",
        "&lt;script&gt;",
        "gamma",
    ]
    assert "All 6 ranked and 3 unranked entries" in env
    empty = page[page.index('id="b-Empty-v0"') :]
    assert "No submissions yet." in empty
    assert "No ranked submissions yet." in render_index(
        Board(
            [], pd.DataFrame(columns=["name", "author", "n_benchmarks", "benchmarks", "iqm", "ci_low", "ci_high"]), GEN
        )
    )


def test_write_site_files_and_atomicity(tmp_path, monkeypatch):
    out = tmp_path / "site"
    out.mkdir()
    (out / "unrelated.txt").write_text("keep me")
    (out / "index.html").write_text("old index")
    board = full_board()

    real = html_mod.render_benchmark_page
    calls = []

    def flaky(bb, **kw):
        calls.append(bb.benchmark_id)
        if len(calls) == 2:
            raise RuntimeError("renderer broke on the second benchmark")
        return real(bb, **kw)

    monkeypatch.setattr(html_mod, "render_benchmark_page", flaky)
    with pytest.raises(RuntimeError, match="second benchmark"):
        write_site(board, out)
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "unrelated.txt"]
    assert (out / "index.html").read_text() == "old index"
    monkeypatch.setattr(html_mod, "render_benchmark_page", real)

    index = write_site(board, out)
    assert index == out / "index.html"
    assert sorted(p.name for p in out.iterdir()) == [
        "Empty-v0.html",
        "ToyBandit-v0.html",
        "ToySolve-v0.html",
        "index.html",
        "unrelated.txt",
    ]
    assert (out / "unrelated.txt").read_text() == "keep me"
    assert index.read_text().startswith("<!DOCTYPE html>")
    assert oct(index.stat().st_mode & 0o777) == "0o644"
    # out_dir created when missing
    assert write_site(board, tmp_path / "a" / "b").is_file()


def test_bad_benchmark_ids_are_refused(tmp_path):
    bad = full_board()
    bad.benchmarks[0].benchmark_id = "../escape"
    with pytest.raises(ValueError, match="cannot name a page"):
        write_site(bad, tmp_path / "s")
    dup = full_board()
    dup.benchmarks[1].benchmark_id = "ToyBandit-v0"
    with pytest.raises(ValueError, match="duplicate benchmark ids"):
        write_site(dup, tmp_path / "s")
    assert not (tmp_path / "s").exists()


# -------------------------------------------------------------------------------------- real browser
def _chromium(needs):
    sync_api = needs("playwright.sync_api")
    if not (os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)) and not shutil.which("chromium"):
        if IN_CI:
            pytest.fail(f"{CHROMIUM} is required in CI (Debian package chromium)")
        pytest.skip(f"{CHROMIUM} not installed")
    return sync_api


def test_site_in_headless_chromium(tmp_path, needs):
    sync_api = _chromium(needs)
    index = write_site(full_board(), tmp_path / "site")
    bench = index.parent / "ToyBandit-v0.html"
    task = index.parent / "ToySolve-v0.html"
    problems: list[str] = []

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            problems.append(f"request to {r.request.url}")
            r.abort()

    def dialog(d):
        problems.append(f"dialog: {d.message}")
        d.dismiss()

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium"),
            timeout=20_000,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        try:
            ctx = browser.new_context(viewport={"width": 1280, "height": 900})
            ctx.set_default_timeout(10_000)
            ctx.route("**/*", route)
            page = ctx.new_page()
            page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("requestfailed", lambda r: problems.append(f"failed request: {r.url}"))
            page.on("dialog", dialog)

            # index: cross-benchmark table and the per-benchmark entries
            page.goto(Path(index).as_uri())
            assert page.title() == "papergym leaderboard"
            assert page.locator("#overall tbody tr td.name").all_inner_texts() == ["alpha", HOSTILE]
            assert page.locator("section.bench h3 a").all_inner_texts() == ["ToyBandit-v0", "ToySolve-v0", "Empty-v0"]
            assert "No submissions yet." in page.locator("#b-Empty-v0").inner_text()
            page.locator("section.bench h3 a", has_text="ToyBandit-v0").click()
            page.wait_for_load_state()
            assert page.url == Path(bench).as_uri()

            # benchmark page: rendered table in rank order, ties, hostile name as text, unranked below
            assert page.locator("h1").inner_text() == "ToyBandit-v0"
            ranked = page.locator("#board tbody.ranked tr")
            assert ranked.locator("td.name").all_inner_texts() == RANKED_NAMES
            assert ranked.locator("td.rank").all_inner_texts() == ["1", "=2", "=2", "4", "5", "6"]
            unranked = page.locator("#board tbody.unranked tr")
            assert unranked.locator("td.name").all_inner_texts() == ["oracle-lines", "crashy", "slowpoke"]
            assert unranked.locator("td.rank").all_inner_texts() == ["-", "-", "-"]
            assert "ZeroDivisionError: division by zero" in unranked.nth(1).inner_text()
            bg = page.evaluate("""() => [...document.querySelectorAll('#board tbody tr')].map(
                r => getComputedStyle(r.cells[0]).backgroundColor)""")
            assert bg[7] != bg[0] and bg[6] != bg[7]  # failed and reference rows stand out
            cells = ranked.nth(1).locator("td").all_inner_texts()
            assert cells[2:5] == [HOSTILE, "mallory & <b>co</b>", "submission"]
            assert page.locator("#board code").first.get_attribute("title") == _sha(1)
            assert page.evaluate("() => window.__pwned === undefined && document.querySelectorAll('b').length === 0")

            # figures: the inline SVG is laid out, its curves are real paths with extent
            def svg_geometry():
                return page.evaluate("""() => [...document.querySelectorAll('svg')].map(s => {
                    const r = s.getBoundingClientRect();
                    const box = sel => [...s.querySelectorAll(sel)].map(p => {
                        const b = p.getBBox(); return [b.width, b.height, p.getTotalLength()]; });
                    return {w: r.width, h: r.height, curves: box('g[id*="-curve-"] path'),
                            refs: box('g[id*="-ref-"] path'),
                            dash: [...s.querySelectorAll('g[id*="-ref-"] path')].map(
                                p => p.getAttribute('style') || '')};
                })""")

            geo = svg_geometry()
            assert len(geo) == 1
            g = geo[0]
            assert g["w"] > 300 and g["h"] > 150
            assert len(g["curves"]) == 6 and len(g["refs"]) == 1  # every ranked entry (default top 20)
            assert all(w > 100 and h > 10 and length > 100 for w, h, length in g["curves"])
            assert all(w > 100 and h > 0 and length > 100 for w, h, length in g["refs"])  # the oracle: flat-ish
            assert "stroke-dasharray" in g["dash"][0]

            # the sorter runs (CSP lets our script through): sort by name, then back by rank
            page.locator("#board th", has_text="Name").click()
            assert ranked.locator("td.name").all_inner_texts() == sorted(RANKED_NAMES, key=str.lower)
            page.locator("#board th", has_text="Rank").first.click()
            assert ranked.locator("td.name").all_inner_texts()[0] == "alpha"

            # task page: performance profiles drawn as step curves
            page.goto(Path(task).as_uri())
            g = svg_geometry()[0]
            assert len(g["curves"]) == 2 and len(g["refs"]) == 1 and g["w"] > 300
            assert all(w > 10 and length > 20 for w, _, length in g["curves"])

            # readable without JavaScript
            nojs = browser.new_context(java_script_enabled=False)
            nojs.route("**/*", route)
            p2 = nojs.new_page()
            p2.goto(Path(bench).as_uri())
            assert p2.locator("#board tbody.ranked td.name").all_inner_texts() == RANKED_NAMES
            assert p2.locator("svg").count() == 1
        finally:
            browser.close()
    assert problems == []


def test_env_boards_label_their_metric_with_the_envs_own_regret():
    from papergym.leaderboard.board.configs import board_config, board_ids
    from papergym.leaderboard.board.ranking import metric_and_direction

    labels = {b: metric_and_direction(board_config(b))[2] for b in board_ids() if board_config(b).kind != "task"}
    assert labels["NonStatLipschitz-v0"] == "final cumulative dynamic regret"
    assert labels["FJSPImprove-v0"] == "final C_max(incumbent) - LB"
    assert "equilibrium gap" in labels["EntropicMatrixGame-v0"]
    assert len(set(labels.values())) >= 5  # no one label for every board
