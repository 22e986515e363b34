"""Static, self-contained HTML leaderboard (``papergym leaderboard --html site/``).

:func:`write_site` writes ``index.html`` (every benchmark with its top entries, and the cross-benchmark
table :attr:`Board.overall <papergym.leaderboard.board.Board.overall>`) and one page
``<benchmark_id>.html`` per env / task (:func:`render_benchmark_page`): header (metric and direction,
description, strata, seeds, version), the ranked table and the figures.

Design
------
* **Self-contained, works offline.** CSS is inline, figures are inline SVG made with matplotlib
  (``svg.fonttype = "path"``: text is drawn as glyph outlines, so no font is needed), the only script is a
  tiny inline column sorter. The pages reference nothing outside themselves: no CDN, font, image or
  stylesheet URL. The page is fully readable without JavaScript.
* **Hostile strings stay text.** Every string that comes from a submitter or the store (names, authors,
  messages, descriptions, hashes, dates) goes through :func:`html.escape`; in figure labels, matplotlib's
  mathtext ``$`` is escaped too. On top of that each page carries a Content-Security-Policy that allows no
  network access at all and only *our* script (by its SHA-256), so even an escaping bug could not run code
  or fetch anything.
* **Several SVGs per page.** matplotlib reuses element ids (glyph outlines, clip paths) across figures; each
  inline SVG gets its ids prefixed (``f1-...``) so references never cross figures. Curve lines carry the
  ids ``<prefix>curve-<i>`` (ranked submissions) and ``<prefix>ref-<i>`` (oracle / reference lines).
* **Atomic-ish writes.** :func:`write_site` renders every page in memory first; if anything fails nothing
  is written. Then each file goes to a temporary file in ``out_dir`` and is moved into place with
  :func:`os.replace`, so a reader never sees a half-written page; unrelated files are left alone.

Tables come from :class:`~papergym.leaderboard.board.BenchmarkBoard` (see its module for the columns); the
cell texts are those of the terminal table (:mod:`papergym.leaderboard.board.text`).
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import quote

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from papergym.leaderboard.board.ranking import OVERALL_COLUMNS, BenchmarkBoard, Board
from papergym.leaderboard.board.text import (
    REFERENCE_ROLES,
    ci_label,
    direction_label,
    fmt_number,
    ordered_table,
    rank_interval_label,
    rank_label,
    short_date,
    short_hash,
    status_counts_label,
    unranked_note,
)

__all__ = [
    "DEFAULT_TOP_K",
    "PAGE_CSP",
    "SVG_NAMESPACES",
    "render_benchmark_page",
    "render_index",
    "static_page_url",
    "write_site",
]

#: Number of ranked submissions whose curves / profiles are drawn on a benchmark page: every ranked entry up to
#: this readable maximum; a board with more draws its best ``DEFAULT_TOP_K`` and says so in the figure's title
#: ("top 20 of 57 ranked"). ``write_site(top_k=...)`` / ``render_benchmark_page(top_k=...)`` change it.
DEFAULT_TOP_K = 20
#: Namespace URIs that appear in the inline SVG (identifiers, never fetched).
SVG_NAMESPACES: tuple[str, ...] = ("http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink")

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_INDEX_TOP = 3  # ranked entries listed per benchmark on the index

_CSS = """
:root { --fg:#1d2228; --muted:#5b6570; --line:#d5dae0; --head:#f2f4f7; --bad:#fbeaea; --badfg:#8a1c1c;
        --ref:#eef3fb; --stale:#f6f6f6; --accent:#1f5fa8; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       color: var(--fg); margin: 0 auto; max-width: 1200px; padding: 1rem 1.25rem 3rem; }
a { color: var(--accent); }
nav { font-size: .9rem; margin-bottom: .5rem; }
h1 { font-size: 1.6rem; margin: .2rem 0 .6rem; word-break: break-word; }
h2 { font-size: 1.25rem; margin: 1.8rem 0 .6rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 .3rem; }
p.lead { margin: 0 0 .8rem; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0 0 1rem; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; }
.direction { font-weight: 600; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: .9rem; width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: var(--head); white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { font-weight: 600; word-break: break-word; }
td.date { white-space: nowrap; }
td.msg { color: var(--muted); word-break: break-word; }
code { font-size: .85em; }
tbody.unranked tr td { color: var(--muted); }
tbody.unranked tr.failed td { background: var(--bad); color: var(--badfg); }
tbody.unranked tr.reference td { background: var(--ref); }
tbody.unranked tr.stale td { background: var(--stale); }
tbody.unranked tr:first-child td { border-top: 2px solid var(--fg); }
.badge { display: inline-block; font-size: .75rem; padding: 0 .35rem; border-radius: .6rem;
         border: 1px solid currentColor; white-space: nowrap; }
.tie { color: var(--badfg); font-weight: 700; }
.empty { font-style: italic; color: var(--muted); padding: .6rem 0; }
figure { margin: 1rem 0; }
figure svg { width: 100%; max-width: 820px; height: auto; display: block; }
svg.fig * { stroke-linejoin: round; stroke-linecap: butt; }
figcaption { color: var(--muted); font-size: .85rem; max-width: 820px; }
.notes { color: var(--muted); font-size: .85rem; }
.bench { border: 1px solid var(--line); border-radius: 6px; padding: .2rem .9rem .8rem; margin: .8rem 0; }
th[data-sort] { cursor: pointer; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .8rem; }
"""

# Sorts the first <tbody> of a table.sortable by a clicked header (th[data-sort]); cells may carry their
# sort key in data-v. Unranked rows live in a second <tbody> and stay below.
_SORT_JS = """
document.querySelectorAll("table.sortable").forEach(function (t) {
  var heads = t.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, i) {
    if (!th.dataset.sort) return;
    th.tabIndex = 0;
    function key(td) {
      var v = td.dataset.v !== undefined ? td.dataset.v : td.textContent.trim();
      if (th.dataset.sort !== "num") return v.toLowerCase();
      var x = parseFloat(v); return isNaN(x) ? Infinity : x;
    }
    function sort() {
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var asc = th.getAttribute("aria-sort") !== "ascending";
      rows.sort(function (a, b) {
        var x = key(a.cells[i]), y = key(b.cells[i]);
        return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
      });
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      rows.forEach(function (r) { body.appendChild(r); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter") sort(); });
  });
});
"""
_SORT_JS_HASH = base64.b64encode(hashlib.sha256(_SORT_JS.encode()).digest()).decode()
_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    f"script-src 'sha256-{_SORT_JS_HASH}'; base-uri 'none'; form-action 'none'"
)
#: The Content-Security-Policy every page carries (also sent as a header by the board's HTTP service,
#: :mod:`papergym.leaderboard.board.service`): no network access, only the inline column sorter runs.
PAGE_CSP = _CSP


def _e(s) -> str:
    """Escaped text (``''`` for None / NaN)."""
    if s is None or s is pd.NA or s is pd.NaT or (isinstance(s, float) and np.isnan(s)):
        return ""
    return html.escape(str(s), quote=True)


def _page(title: str, body: str, *, generated: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(_CSP)}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n{body}\n"
        f"<footer>Generated {_e(generated)} by papergym. Self-contained page: no external resources."
        "</footer>\n"
        f"<script>{_SORT_JS}</script>\n</body>\n</html>\n"
    )


def _check_id(benchmark_id: str) -> None:
    if not isinstance(benchmark_id, str) or not _ID_RE.match(benchmark_id) or benchmark_id == "index":
        raise ValueError(
            f"benchmark id {benchmark_id!r} cannot name a page: use letters, digits, '.', '_', '-' "
            "(not starting with a symbol, not 'index')"
        )


def static_page_url(benchmark_id: str) -> str:
    """The relative URL of a benchmark's page in the static site (``<benchmark_id>.html``)."""
    return quote(benchmark_id) + ".html"


def _href(benchmark_id: str, page_url: Callable[[str], str] = static_page_url) -> str:
    return _e(page_url(benchmark_id))


# ------------------------------------------------------------------------------------------ figures
def _mpl_text(s) -> str:
    """A label matplotlib draws literally: ``$`` escaped (no mathtext), no leading ``_`` (hidden)."""
    s = "" if s is None else str(s)
    s = "".join(ch if ch.isprintable() else "?" for ch in s).replace("$", r"\$")
    return " " + s if s.startswith("_") else s


_SVG_ID = re.compile(r'(\bid="|href="#|url\(#)([^")]+)')


def _svg(fig: Figure, prefix: str, label: str) -> str:
    """The figure as an inline ``<svg>`` element: no prolog, doctype, comments, metadata or global style;
    ids prefixed with ``prefix``; scalable (viewBox kept, fixed size dropped); labelled for screen readers."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "papergym"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    s = buf.getvalue()
    s = s[s.index("<svg") :]
    s = re.sub(r"<!--.*?-->", "", s, flags=re.DOTALL)
    s = re.sub(r"<metadata>.*?</metadata>", "", s, flags=re.DOTALL)
    s = re.sub(r"<style[^>]*>.*?</style>", "", s, flags=re.DOTALL)  # its one rule is in the page CSS (svg.fig *)
    ids = set(re.findall(r'\bid="([^"]+)"', s))
    s = _SVG_ID.sub(lambda m: m.group(1) + (prefix + m.group(2) if m.group(2) in ids else m.group(2)), s)
    head_end = s.index(">")
    head = re.sub(r'\s(width|height)="[^"]*"', "", s[:head_end])
    head += f' class="fig" role="img" aria-label="{_e(label)}"'
    s = head + s[head_end:]
    s = re.sub(r">\s+<", "><", s.strip())  # indentation only; path data keeps its own whitespace
    return s


def _new_axes(n_entries: int = 0):
    # room for the legend right of the axes: one line per entry (fontsize 8) plus its title
    fig = Figure(figsize=(9.6, max(4.2, 1.4 + 0.19 * n_entries)))
    ax = fig.subplots()
    ax.grid(alpha=0.3)
    return fig, ax


def _legend_outside(ax, **kw) -> None:
    """The legend right of the axes (top-aligned), so it never covers a curve."""
    ax.legend(
        fontsize=8,
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        borderaxespad=0.0,
        frameon=False,
        title_fontsize=8,
        **kw,
    )


def _top_title(ax, shown: int, ranked: int) -> None:
    """ "top k of n ranked" when the figure leaves ranked entries out; every ranked entry otherwise."""
    ax.set_title(f"top {shown} of {ranked} ranked" if shown < ranked else f"all {ranked} ranked", fontsize=9)


def _ref_style(i: int) -> dict:
    return {"color": ("0.3", "0.5", "0.15")[i % 3], "ls": ("--", "-.", ":")[i % 3], "lw": 1.5}


def _curves_figure(bb: BenchmarkBoard, ranked: pd.DataFrame, top_k: int) -> tuple[Figure, int, int] | None:
    """Top-k ranked regret curves (mean + CI band) and dashed reference lines; None when nothing to draw."""
    curves = bb.curves
    if curves is None or len(curves) == 0:
        return None
    refs = curves[curves["role"].isin(REFERENCE_ROLES)]
    n_refs = refs.groupby(["submission_id", "name", "role"], dropna=False).ngroups if len(refs) else 0
    fig, ax = _new_axes(min(top_k, len(ranked)) + n_refs)
    cmap = matplotlib.colormaps["tab10" if min(top_k, len(ranked)) <= 10 else "tab20"]
    n = 0
    for _, row in ranked.head(top_k).iterrows():
        c = curves[curves["submission_id"] == row["submission_id"]].sort_values("t")
        if c.empty:
            continue
        col = cmap(n % cmap.N)
        (line,) = ax.plot(
            c["t"], c["mean"], color=col, lw=1.7, zorder=3, label=_mpl_text(f"{rank_label(row)}. {row['name']}")
        )
        line.set_gid(f"curve-{n}")
        ax.fill_between(
            c["t"], c["ci_low"], c["ci_high"], color=col, alpha=0.18 if top_k <= 5 else 0.08, lw=0, zorder=2
        )
        n += 1
    m = 0
    for (_, name, role), c in refs.groupby(["submission_id", "name", "role"], dropna=False, sort=False):
        c = c.sort_values("t")
        st = _ref_style(m)
        (line,) = ax.plot(c["t"], c["mean"], zorder=1, label=_mpl_text(f"{name} ({role})"), **st)
        line.set_gid(f"ref-{m}")
        ax.fill_between(c["t"], c["ci_low"], c["ci_high"], color=st["color"], alpha=0.08, lw=0, zorder=0)
        m += 1
    if n + m == 0:
        return None
    ax.set_xlabel("round t")
    ax.set_ylabel(_mpl_text(f"{bb.curve_ylabel} (mean over test runs)"))
    _top_title(ax, n, int(ranked["submission_id"].isin(set(curves["submission_id"])).sum()) if len(ranked) else n)
    _legend_outside(ax, title="mean, 95% bootstrap CI")
    fig.tight_layout()
    return fig, n, m


def _profiles_figure(bb: BenchmarkBoard, ranked: pd.DataFrame, top_k: int) -> tuple[Figure, int, int] | None:
    """Dolan--More performance profiles (step plots, log-x tau) of the top-k ranked names and the
    reference roles; None when nothing to draw."""
    prof = bb.profiles
    if prof is None or len(prof) == 0:
        return None
    prof = prof[np.isfinite(prof["tau"].astype(float)) & (prof["tau"].astype(float) > 0)]
    is_ref = prof["role"].isin(REFERENCE_ROLES)
    present = list(dict.fromkeys(prof.loc[~is_ref, "name"]))
    top = [nm for nm in ranked["name"] if nm in present][:top_k] if len(ranked) else present[:top_k]
    labels = {r["name"]: rank_label(r) for _, r in ranked.iterrows()}
    n_refs = prof[is_ref].groupby(["name", "role"]).ngroups if is_ref.any() else 0
    fig, ax = _new_axes(len(top) + n_refs)
    cmap = matplotlib.colormaps["tab10" if len(top) <= 10 else "tab20"]
    n = 0
    for name in top:
        p = prof[(prof["name"] == name) & ~is_ref].sort_values("tau")
        lab = f"{labels[name]}. {name}" if name in labels else str(name)
        (line,) = ax.step(
            p["tau"], p["fraction"], where="post", color=cmap(n % cmap.N), lw=1.7, zorder=3, label=_mpl_text(lab)
        )
        line.set_gid(f"curve-{n}")
        n += 1
    m = 0
    for (name, role), p in prof[is_ref].groupby(["name", "role"], sort=False):
        p = p.sort_values("tau")
        (line,) = ax.step(
            p["tau"], p["fraction"], where="post", zorder=1, label=_mpl_text(f"{name} ({role})"), **_ref_style(m)
        )
        line.set_gid(f"ref-{m}")
        m += 1
    if n + m == 0:
        return None
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(_mpl_text(bb.profile_xlabel))
    ax.set_ylabel("fraction of instances solved within tau of the best")
    n_ranked = len([nm for nm in ranked["name"] if nm in present]) if len(ranked) else len(present)
    _top_title(ax, n, max(n, n_ranked))
    _legend_outside(ax)
    fig.tight_layout()
    return fig, n, m


def _figures_html(bb: BenchmarkBoard, ranked: pd.DataFrame, top_k: int) -> str:
    out = []
    k = 0
    what = {"curves": "regret curves", "profiles": "performance profiles"}
    for kind, maker in (("curves", _curves_figure), ("profiles", _profiles_figure)):
        made = maker(bb, ranked, top_k)
        if made is None:
            if getattr(bb, kind) is not None:
                out.append(f'<p class="empty">No {what[kind]} to draw yet.</p>')
            continue
        fig, n, m = made
        k += 1
        label = f"{bb.benchmark_id}: {what[kind]}"
        svg = _svg(fig, f"f{k}-", label)
        if kind == "curves":
            cap = (
                f"Cumulative regret of the top {n} ranked submission{'s' * (n != 1)}: mean over every test "
                "run, shaded 95% bootstrap band."
                + (
                    f" Dashed: {m} reference line{'s' * (m != 1)} (oracle / reference roles, never ranked)."
                    if m
                    else ""
                )
            )
        else:
            cap = (
                f"Performance profiles (Dolan and More) of the top {n} ranked submission{'s' * (n != 1)}: "
                "fraction of instances solved within a factor tau of the best, log-scale tau."
                + (" Dashed: reference lines (never ranked)." if m else "")
            )
        out.append(f'<figure class="{kind}">{svg}<figcaption>{_e(cap)}</figcaption></figure>')
    return "\n".join(out)


# -------------------------------------------------------------------------------------------- tables
def _num_td(x, text: str | None = None) -> str:
    v = "" if x is None or pd.isna(x) else repr(float(x))
    return f'<td class="num" data-v="{_e(v)}">{_e(fmt_number(x) if text is None else text)}</td>'


def _rank_td(row) -> str:
    label = rank_label(row)
    v = "" if not row.get("ranked") or pd.isna(row.get("rank")) else repr(float(row["rank"]))
    if label.startswith("="):
        inner = f'<span class="tie" title="tied with another submission">=</span>{_e(label[1:])}'
    else:
        inner = _e(label)
    return f'<td class="num rank" data-v="{_e(v)}">{inner}</td>'


def _row_class(row, ranked: bool) -> str:
    cls = []
    if ranked:
        cls.append("ranked")
        if bool(row.get("tie", False)):
            cls.append("tie-row")
    elif str(row["role"]) in REFERENCE_ROLES:
        cls.append("reference")
    elif str(row["status"]) == "stale":
        cls.append("stale")
    else:
        cls.append("failed")
    cls.append(f"status-{re.sub(r'[^a-z_]', '', str(row['status']).lower())}")
    return " ".join(cls)


def _board_row(row, ranked: bool) -> str:
    sha = "" if pd.isna(row["code_sha256"]) else str(row["code_sha256"])
    date = "" if pd.isna(row["date"]) else str(row["date"])
    note = "" if ranked else unranked_note(row)
    status = str(row["status"])
    status_cell = _e(status_counts_label(row))
    if not ranked and status != "ok":
        status_cell += f' <span class="badge">{_e(status)}</span>'
    cells = [
        _rank_td(row),
        f'<td class="num">{_e(rank_interval_label(row))}</td>',
        f'<td class="name">{_e(row["name"])}</td>',
        f'<td class="author">{_e(row["author"])}</td>',
        f'<td class="role">{_e(row["role"])}</td>',
        _num_td(row["score"]),
        _num_td(row["ci_low"], ci_label(row["ci_low"], row["ci_high"])),
        f'<td class="runs">{status_cell}</td>',
        f'<td class="code"><code title="{_e(sha)}">{_e(short_hash(sha))}</code></td>',
        f'<td class="date"><time datetime="{_e(date)}" title="{_e(date)}">{_e(short_date(date))}</time></td>',
        f'<td class="msg">{_e(note)}</td>',
    ]
    return (
        f'<tr class="{_row_class(row, ranked)}" data-submission="{_e(row["submission_id"])}">'
        + "".join(cells)
        + "</tr>"
    )


_BOARD_HEAD = (
    '<th class="num" data-sort="num" title="point rank; = marks a tie">Rank</th>'
    '<th class="num" title="95% bootstrap rank interval">95% rank</th>'
    '<th data-sort="text">Name</th><th data-sort="text">Author</th><th data-sort="text">Role</th>'
    '<th class="num" data-sort="num">Score</th>'
    '<th class="num" data-sort="num" title="95% stratified bootstrap confidence interval">95% CI</th>'
    '<th>Runs</th><th title="SHA-256 of the submitted code (hover for all of it)">Code</th>'
    '<th data-sort="text">Date (UTC)</th><th>Note</th>'
)


def _board_table(bb: BenchmarkBoard) -> str:
    ranked, unranked = ordered_table(bb.table)
    if len(ranked) + len(unranked) == 0:
        return '<p class="empty">No submissions yet.</p>'
    body = "".join(_board_row(r, True) for _, r in ranked.iterrows())
    extra = "".join(_board_row(r, False) for _, r in unranked.iterrows())
    out = [
        '<div class="table-wrap"><table class="board sortable" id="board">',
        f"<thead><tr>{_BOARD_HEAD}</tr></thead>",
        f'<tbody class="ranked">{body}</tbody>',
    ]
    if extra:
        out.append(f'<tbody class="unranked">{extra}</tbody>')
    out.append("</table></div>")
    if len(ranked) == 0:
        out.append('<p class="empty">No ranked submissions yet.</p>')
    return "".join(out)


_NOTES = (
    '<p class="notes">Rank: point rank of the score (ties share the smallest rank, marked =). '
    "95% rank: interval of the ranks over the bootstrap replicates. 95% CI: stratified bootstrap over "
    "the test seeds within each stratum. Rows below the line have no rank: reference lines (oracle / "
    "reference roles) and failed, incomplete or stale submissions, with the reason.</p>"
)


def render_benchmark_page(
    bb: BenchmarkBoard, *, generated: str, top_k: int = DEFAULT_TOP_K, index_url: str = "index.html"
) -> str:
    """One benchmark's page: header, ranked table (then unranked rows), inline SVG figures.

    Parameters
    ----------
    bb
        The benchmark's board.
    generated
        Time shown as the page's generation time (ISO-8601 UTC).
    top_k
        Number of ranked submissions drawn in the figures, best first (default :data:`DEFAULT_TOP_K`, 20: every
        ranked entry of a board up to that size; the figure title says "top k of n ranked" when entries are left
        out). Oracle / reference lines are always drawn.
    index_url
        Where the page's navigation link leads (the static site's ``index.html``; the HTTP service's
        overview page).
    """
    _check_id(bb.benchmark_id)
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    ranked, unranked = ordered_table(bb.table)
    direction = direction_label(bb.direction)
    strata = "".join(f"<li>{_e(s)}</li>" for s in bb.strata)
    n_strata = len(bb.strata)
    n_failed = int((~unranked["role"].isin(REFERENCE_ROLES)).sum())
    summary = f"{len(ranked)} ranked submission{'s' * (len(ranked) != 1)}" + (
        f", {n_failed} not ranked (failed, incomplete or stale)" if n_failed else ""
    )
    body = [
        f'<nav><a href="{_e(index_url)}">&larr; papergym leaderboard</a></nav>',
        f"<header><h1>{_e(bb.benchmark_id)}</h1>",
        f'<p class="lead">{_e(bb.description)}</p></header>',
        '<dl class="meta">',
        f"<dt>Kind</dt><dd>{_e(bb.kind)}</dd>",
        f"<dt>Version</dt><dd>{_e(bb.version)}</dd>",
        f'<dt>Metric</dt><dd>{_e(bb.metric)} (<span class="direction">{_e(direction)}</span>)</dd>',
        f"<dt>Strata</dt><dd>{n_strata}" + (f"<ul>{strata}</ul>" if strata else "") + "</dd>",
        (
            f"<dt>Seeds</dt><dd>{int(bb.n_seeds)} hidden test seeds per stratum "
            f"({int(bb.n_seeds) * n_strata} runs per submission)</dd>"
        ),
        f"<dt>Submissions</dt><dd>{_e(summary)}</dd>",
        f"<dt>Generated</dt><dd>{_e(generated)}</dd>",
        "</dl>",
        "<main>",
        "<h2>Ranking</h2>",
        _board_table(bb),
        _NOTES,
    ]
    figs = _figures_html(bb, ranked, top_k)
    if figs:
        body += ["<h2>Figures</h2>", figs]
    body.append("</main>")
    return _page(f"{bb.benchmark_id} - papergym leaderboard", "\n".join(body), generated=generated)


# ---------------------------------------------------------------------------------------------- index
def _benchmark_list(value, known: set[str], page_url: Callable[[str], str]) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    items: Iterable = re.split(r"\s*[,;]\s*", value.strip()) if isinstance(value, str) else list(value)
    out = []
    for b in items:
        b = str(b)
        if not b:
            continue
        out.append(f'<a href="{_href(b, page_url)}">{_e(b)}</a>' if b in known else _e(b))
    return ", ".join(out)


def _overall_table(overall: pd.DataFrame, known: set[str], page_url: Callable[[str], str]) -> str:
    missing = [c for c in OVERALL_COLUMNS if c not in overall.columns]
    if missing:
        raise ValueError(f"Board.overall lacks columns {missing}")
    if len(overall) == 0:
        return '<p class="empty">No ranked submissions yet.</p>'
    rows = []
    for i, (_, r) in enumerate(overall.iterrows(), start=1):
        rows.append(
            f'<tr><td class="num">{i}</td><td class="name">{_e(r["name"])}</td>'
            f'<td class="author">{_e(r["author"])}</td><td class="num">{int(r["n_benchmarks"])}</td>'
            f'<td class="benchmarks">{_benchmark_list(r["benchmarks"], known, page_url)}</td>'
            f"{_num_td(r['iqm'])}{_num_td(r['ci_low'], ci_label(r['ci_low'], r['ci_high']))}</tr>"
        )
    return (
        '<div class="table-wrap"><table class="overall sortable" id="overall"><thead><tr>'
        '<th class="num" data-sort="num">#</th><th data-sort="text">Name</th><th data-sort="text">Author</th>'
        '<th class="num" data-sort="num">Benchmarks</th><th>Ranked on</th>'
        '<th class="num" data-sort="num">IQM</th><th class="num" data-sort="num">95% CI</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _index_entry(bb: BenchmarkBoard, page_url: Callable[[str], str]) -> str:
    href = _href(bb.benchmark_id, page_url)
    ranked, unranked = ordered_table(bb.table)
    head = (
        f'<section class="bench" id="b-{_e(bb.benchmark_id)}"><h3><a href="{href}">'
        f"{_e(bb.benchmark_id)}</a> <small>({_e(bb.kind)}, version {_e(bb.version)})</small></h3>"
        f"<p>{_e(bb.description)}</p><p>Metric: {_e(bb.metric)} "
        f'(<span class="direction">{_e(direction_label(bb.direction))}</span>); {len(bb.strata)} '
        f"{'stratum' if len(bb.strata) == 1 else 'strata'} x {int(bb.n_seeds)} test seeds.</p>"
    )
    if len(ranked) + len(unranked) == 0:
        return head + '<p class="empty">No submissions yet.</p></section>'
    if len(ranked) == 0:
        return head + (
            f'<p class="empty">No ranked submissions yet ({len(unranked)} unranked: '
            f'<a href="{href}">see the page</a>).</p></section>'
        )
    rows = "".join(
        f'<tr>{_rank_td(r)}<td class="num">{_e(rank_interval_label(r))}</td><td class="name">{_e(r["name"])}'
        f'</td><td class="author">{_e(r["author"])}</td>{_num_td(r["score"])}'
        f"{_num_td(r['ci_low'], ci_label(r['ci_low'], r['ci_high']))}</tr>"
        for _, r in ranked.head(_INDEX_TOP).iterrows()
    )
    more = len(ranked) - _INDEX_TOP
    tail = (
        f'<p class="notes"><a href="{href}">All {len(ranked)} ranked'
        + (f" and {len(unranked)} unranked" if len(unranked) else "")
        + " entries</a></p>"
        if more > 0 or len(unranked)
        else ""
    )
    return (
        head + '<div class="table-wrap"><table class="top"><thead><tr><th class="num">Rank</th>'
        '<th class="num">95% rank</th><th>Name</th><th>Author</th><th class="num">Score</th>'
        f'<th class="num">95% CI</th></tr></thead><tbody>{rows}</tbody></table></div>{tail}</section>'
    )


def render_index(board: Board, *, page_url: Callable[[str], str] = static_page_url) -> str:
    """The overview page: the cross-benchmark table (``Board.overall``, in the order given) and every
    benchmark with its top entries and a link to its page, ``page_url(benchmark_id)`` (the static
    site's ``<benchmark_id>.html`` by default; the HTTP service links its live pages)."""
    ids = [bb.benchmark_id for bb in board.benchmarks]
    for b in ids:
        _check_id(b)
    known = set(ids)
    body = [
        "<header><h1>papergym leaderboard</h1>",
        (
            f'<p class="lead">{len(ids)} benchmark{"s" * (len(ids) != 1)}; every submission is scored on '
            "hidden test seeds, with 95% bootstrap confidence intervals and rank intervals.</p></header>"
        ),
        "<main>",
        "<h2>Across benchmarks</h2>",
        (
            '<p class="notes">IQM (interquartile mean) of the normalised scores (1 = best reference, 0 = worst '
            "reference; higher is better) of every run on every benchmark a submission is ranked on, with a "
            "stratified bootstrap 95% CI.</p>"
        ),
        _overall_table(board.overall, known, page_url),
        "<h2>Benchmarks</h2>",
    ]
    if not board.benchmarks:
        body.append('<p class="empty">No benchmarks yet.</p>')
    body += [_index_entry(bb, page_url) for bb in board.benchmarks]
    body.append("</main>")
    return _page("papergym leaderboard", "\n".join(body), generated=board.generated)


# ------------------------------------------------------------------------------------------- writing
def write_site(board: Board, out_dir: str | os.PathLike, *, top_k: int = DEFAULT_TOP_K) -> Path:
    """Write ``index.html`` and ``<benchmark_id>.html`` for every benchmark into ``out_dir``.

    Every page is rendered in memory before anything is written (a rendering error writes nothing); each
    file is then written to a temporary file in ``out_dir`` and moved into place with :func:`os.replace`.
    ``out_dir`` is created if missing; other files in it are left untouched. Returns the index path.
    """
    ids = [bb.benchmark_id for bb in board.benchmarks]
    for b in ids:
        _check_id(b)
    dupes = sorted({b for b in ids if ids.count(b) > 1})
    if dupes:
        raise ValueError(f"duplicate benchmark ids on the board: {dupes}")
    pages: dict[str, str] = {"index.html": render_index(board)}
    for bb in board.benchmarks:
        pages[f"{bb.benchmark_id}.html"] = render_benchmark_page(bb, generated=board.generated, top_k=top_k)

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[str, str]] = []
    try:
        for fname, text in pages.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{fname}.", suffix=".tmp", dir=out)
            staged.append((tmp, fname))
            os.chmod(tmp, 0o644)  # mkstemp makes 0600; a site is meant to be read
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        for tmp, fname in staged:
            os.replace(tmp, out / fname)
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return out / "index.html"
