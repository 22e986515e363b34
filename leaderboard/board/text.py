"""Terminal table of one benchmark's leaderboard (``papergym leaderboard <id>``).

:func:`format_board_table` turns a :class:`~papergym.leaderboard.board.BenchmarkBoard` into plain text:
a header (benchmark id, kind, version, metric and direction, strata, seeds), then one row per shown
submission -- ranked rows first in rank order, then the unranked ones (oracle / reference lines, failed,
incomplete or stale submissions) with ``-`` as rank -- and, below the table, one note per unranked row
saying why it has no rank.

The cell formatters (:func:`rank_label`, :func:`rank_interval_label`, :func:`status_counts_label`,
:func:`fmt_number`, :func:`ci_label`, :func:`short_hash`, :func:`direction_label`, :func:`unranked_note`,
:func:`ordered_table`) are shared with the HTML board (:mod:`papergym.leaderboard.board.html`), so the
terminal and the web page always say the same thing.

Rank columns: ``rank`` is the point rank (competition ranking: ties share the smallest rank), prefixed with
``=`` when tied (``=2``); ``95% rank`` is the bootstrap rank interval (``1`` or ``1-3``). Every string that
comes from a submitter (name, author, message) is stripped of control characters before it reaches the
terminal, so a hostile name cannot move the cursor or recolour the screen.
"""

from __future__ import annotations

import math
import textwrap
import unicodedata
from datetime import UTC, datetime

import pandas as pd

from papergym.leaderboard.board.ranking import RUN_STATUSES, TABLE_COLUMNS, BenchmarkBoard
from papergym.leaderboard.board.terminal import clean_terminal

__all__ = [
    "REFERENCE_ROLES",
    "ci_label",
    "clean_text",
    "direction_label",
    "fmt_number",
    "format_board_table",
    "ordered_table",
    "rank_interval_label",
    "rank_label",
    "short_date",
    "short_hash",
    "status_counts_label",
    "unranked_note",
]

#: Roles drawn as reference lines and never ranked.
REFERENCE_ROLES: frozenset[str] = frozenset({"oracle", "reference"})

_SHORT_HASH = 12


# ---------------------------------------------------------------------------------------------- cells
def _is_missing(x) -> bool:
    if x is None:
        return True
    try:
        return bool(pd.isna(x))
    except (TypeError, ValueError):
        return False


def _int(x, default: int = 0) -> int:
    return default if _is_missing(x) else int(x)


def clean_text(s, *, max_len: int | None = None) -> str:
    """``s`` as one printable line: terminal escape sequences removed whole
    (:func:`~papergym.leaderboard.board.terminal.clean_terminal`), other control / non-printable
    characters (newlines, zero-width...) become spaces or ``?``; ``None`` / NaN become ``''``; longer
    than ``max_len`` -> cut with an ellipsis."""
    if _is_missing(s):
        return ""
    out = []
    for ch in clean_terminal(s):  # escape sequences go whole (not just their ESC), then one line
        if ch in "\t\n\r\v\f":
            out.append(" ")
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append("?")
    text = " ".join("".join(out).split(" ")).strip()
    if max_len is not None and _width(text) > max_len:
        text = _cut(text, max_len)
    return text


def fmt_number(x) -> str:
    """A score for a table: ``-`` for missing, about four significant digits, fixed-point where sensible."""
    if _is_missing(x):
        return "-"
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 1e7 or a < 1e-3:
        return f"{x:.3e}"
    if a >= 1e4:
        return f"{x:.0f}"
    if a >= 100:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.3f}"
    return f"{x:.4f}"


def ci_label(lo, hi) -> str:
    """``[lo, hi]`` with :func:`fmt_number`; ``-`` when either end is missing."""
    if _is_missing(lo) or _is_missing(hi):
        return "-"
    return f"[{fmt_number(lo)}, {fmt_number(hi)}]"


def rank_label(row) -> str:
    """Point rank, ``=`` in front when tied with another ranked row; ``-`` for unranked rows."""
    if not bool(row.get("ranked", False)) or _is_missing(row.get("rank")):
        return "-"
    r = f"{int(row['rank'])}"
    return f"={r}" if bool(row.get("tie", False)) else r


def rank_interval_label(row) -> str:
    """95 % bootstrap rank interval: ``1`` (degenerate) or ``1-3``; ``-`` for unranked rows."""
    if not bool(row.get("ranked", False)):
        return "-"
    lo, hi = row.get("rank_lo"), row.get("rank_hi")
    if _is_missing(lo) or _is_missing(hi):
        return "-"
    lo, hi = round(float(lo)), round(float(hi))
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def status_counts_label(row) -> str:
    """Run status counts, e.g. ``20 ok`` or ``18 ok, 2 timeout``; runs without a final status are
    counted as ``pending``; ``no runs`` when there are none."""
    parts = []
    total = 0
    for s in RUN_STATUSES:
        n = _int(row.get(f"n_{s}"))
        total += n
        if n:
            parts.append(f"{n} {s}")
    pending = _int(row.get("n_runs")) - total
    if pending > 0:
        parts.append(f"{pending} pending")
    return ", ".join(parts) if parts else "no runs"


def short_hash(sha: str) -> str:
    """First 12 hex digits of a SHA-256 (``-`` when missing)."""
    if _is_missing(sha) or not str(sha):
        return "-"
    return clean_text(sha)[:_SHORT_HASH]


def short_date(iso: str) -> str:
    """``YYYY-MM-DD HH:MM`` (UTC) of an ISO-8601 time; the cleaned input when it does not parse."""
    if _is_missing(iso) or not str(iso):
        return "-"
    try:
        d = datetime.fromisoformat(str(iso))
    except ValueError:
        return clean_text(iso)
    if d.tzinfo is not None:
        d = d.astimezone(UTC)
    return d.strftime("%Y-%m-%d %H:%M")


def direction_label(direction: str) -> str:
    """``"min"`` -> ``lower is better``, ``"max"`` -> ``higher is better``."""
    if direction == "min":
        return "lower is better"
    if direction == "max":
        return "higher is better"
    raise ValueError(f"BenchmarkBoard.direction must be 'min' or 'max', got {direction!r}")


def unranked_note(row) -> str:
    """Why a row has no rank: reference line, failed / incomplete / stale submission (with its message)."""
    role = str(row.get("role", ""))
    status = str(row.get("status", ""))
    msg = clean_text(row.get("message", ""))
    if role in REFERENCE_ROLES:
        note = f"reference line ({role}), never ranked"
    elif status == "stale":
        note = "stale: evaluated on an older benchmark version"
    elif status == "running":
        note = "still running"
    elif status == "partial":
        note = "partial: some runs did not finish ok"
    elif status and status != "ok":
        note = f"{status}"
    else:
        note = "not ranked"
    return f"{note}: {msg}" if msg else note


def ordered_table(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(ranked, unranked)`` rows: ranked by point rank (ties keep the given order), unranked in the
    given order. Raises ``ValueError`` naming the missing columns when ``table`` lacks any of
    :data:`~papergym.leaderboard.board.TABLE_COLUMNS`."""
    missing = [c for c in TABLE_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"BenchmarkBoard.table lacks columns {missing}")
    ranked_mask = table["ranked"].fillna(False).astype(bool) & table["rank"].notna()
    ranked = table[ranked_mask].sort_values("rank", kind="stable")
    return ranked, table[~ranked_mask]


# ----------------------------------------------------------------------------------- text layout
def _char_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _width(s: str) -> int:
    return sum(_char_width(c) for c in s)


def _cut(s: str, n: int) -> str:
    """``s`` cut to display width ``n`` with a trailing ellipsis."""
    if _width(s) <= n:
        return s
    out, w = [], 0
    for ch in s:
        cw = _char_width(ch)
        if w + cw > n - 1:
            break
        out.append(ch)
        w += cw
    return "".join(out) + "…"


def _pad(s: str, n: int, right: bool) -> str:
    fill = " " * max(0, n - _width(s))
    return fill + s if right else s + fill


_HEADERS = ("rank", "95% rank", "name", "author", "role", "score", "95% CI", "runs", "code", "date", "id")
_RIGHT = {"rank", "95% rank", "score", "id"}
_FLOOR = {"name": 10, "author": 8, "runs": 8}  # shrinkable columns (cut with an ellipsis) and their minimum
_DROPPABLE = ("id", "date", "role", "code")  # left out, in this order, when shrinking is not enough
_SEP = "  "


def _row_cells(row) -> list[str]:
    return [
        rank_label(row),
        rank_interval_label(row),
        clean_text(row["name"]),
        clean_text(row["author"]),
        clean_text(row["role"]),
        fmt_number(row["score"]),
        ci_label(row["ci_low"], row["ci_high"]),
        status_counts_label(row),
        short_hash(row["code_sha256"]),
        short_date(row["date"]),
        str(_int(row["submission_id"])),
    ]


_LEGEND = (
    "rank: point rank (=: tied); 95% rank: bootstrap rank interval; 95% CI: stratified bootstrap; "
    "code: sha256 prefix; id: submission id (papergym leaderboard delete ID takes it)"
)


def _fit_columns(rows: list[list[str]], width: int | None, sep: str = _SEP) -> list[tuple[int, int]]:
    """``(column index, display width)`` of the columns shown: natural widths, or -- with ``width`` --
    the widest shrinkable column shaved one character at a time down to its floor, then droppable
    columns left out until the table fits (best effort: below ~75 columns lines may still be longer)."""
    widths = {j: max(_width(h), *(_width(c[j]) for c in rows)) for j, h in enumerate(_HEADERS)}
    if width is None:
        return list(widths.items())

    def excess() -> int:
        return sum(widths.values()) + len(sep) * (len(widths) - 1) - width

    floor = {_HEADERS.index(c): max(f, _width(c)) for c, f in _FLOOR.items()}
    while excess() > 0:
        j = max(floor, key=lambda j: widths[j] - floor[j])
        if widths[j] <= floor[j]:
            break
        widths[j] -= 1
    for c in _DROPPABLE:
        if excess() <= 0:
            break
        del widths[_HEADERS.index(c)]
    return list(widths.items())


def _join(cells: list[str], cols: list[tuple[int, int]], sep: str = _SEP) -> str:
    return sep.join(_pad(_cut(cells[j], w), w, _HEADERS[j] in _RIGHT) for j, w in cols).rstrip()


def format_board_table(bb: BenchmarkBoard, *, width: int | None = None) -> str:
    """The leaderboard of one benchmark as a plain-text table.

    Parameters
    ----------
    bb
        The benchmark's board.
    width
        Maximum line width (e.g. ``shutil.get_terminal_size().columns``): name, author and run-status
        cells are cut with ``…``, then the id, date, role and code columns left out, and notes wrapped, to fit
        (best effort below ~75 columns). ``None``: natural width, nothing cut.

    Returns
    -------
    str
        Header lines, the table (ranked rows, then unranked rows with ``-`` as rank), and one note per
        unranked row; ``no submissions yet`` for an empty board. No trailing newline.
    """
    if width is not None and width < 40:
        raise ValueError(f"width must be at least 40 columns, got {width}")
    ranked, unranked = ordered_table(bb.table)
    direction = direction_label(bb.direction)
    strata = ", ".join(clean_text(s) for s in bb.strata) or "-"
    header = [
        f"{clean_text(bb.benchmark_id)} ({clean_text(bb.kind)}, version {clean_text(bb.version)})",
        f"metric: {clean_text(bb.metric)} ({direction})",
        f"strata ({len(bb.strata)}): {strata}; {bb.n_seeds} test seeds per stratum",
    ]
    if width is not None:
        header = [ln for h in header for ln in textwrap.wrap(h, width, subsequent_indent="  ")]
    if len(ranked) + len(unranked) == 0:
        return "\n".join([*header, "", "no submissions yet"])

    rows = [_row_cells(r) for _, r in ranked.iterrows()]
    notes = []
    for _, r in unranked.iterrows():
        rows.append(_row_cells(r))
        who = clean_text(r["name"]) + (f" ({clean_text(r['author'])})" if clean_text(r["author"]) else "")
        notes.append(f"{who}: {unranked_note(r)}")

    cols = _fit_columns(rows, width)
    lines = [_join(list(_HEADERS), cols), _SEP.join("-" * w for _, w in cols)]
    n_ranked = len(ranked)
    for i, cells in enumerate(rows):
        if i == n_ranked and n_ranked:
            lines.append("")
        lines.append(_join(cells, cols))
    out = [*header, "", *lines]
    if n_ranked == 0:
        out += ["", "no ranked submissions yet"]
    if notes:
        out.append("")
        out.append("unranked:")
        for n in notes:
            out += textwrap.wrap(n, width, initial_indent="  ", subsequent_indent="    ") if width else [f"  {n}"]
    out += ["", _LEGEND]
    if width is not None:
        out[-1:] = textwrap.wrap(out[-1], width)
    return "\n".join(out)
