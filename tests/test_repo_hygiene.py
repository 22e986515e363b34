"""Repository hygiene: the code and docs cite only what the repository ships.

Every text file of the repository (``git ls-files``: tracked files plus new, not ignored ones) is scanned for
pointers to documents a user never gets -- the internal per-paper specification files and their section numbers,
the old design notes, issue numbers, the development setup's shared folder and its roles -- and every
``docs/....md`` path that a file mentions must exist. Citations go to the paper itself (authors, title, venue,
arXiv/OpenReview id) or to a page of the docs site (``docs/papers/<slug>.md``, ``docs/conventions.md``, ...).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Which files are scanned: these suffixes, plus every file under ``.ci/``.
SUFFIXES = frozenset({".py", ".md", ".toml", ".yml", ".yaml", ".cfg"})
#: Folders left out of the scan (none: benchmarks/ is scanned like the rest).
EXCLUDED_DIRS: tuple[str, ...] = ()

# The internal specification files were named after topics; a bare ``<topic>.md`` (or ``papers/<topic>.md``)
# is one of them unless it resolves to a shipped file (docs/papers/ is the shipped place for paper pages).
_TOPICS = r"(?:bandits|bilevel|games|learning-dynamics|learning-systems|ode|optimizers|scheduling|topology)"
#: (name, regex) of the forbidden pointers.
FORBIDDEN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("papers/<file>.md outside docs/", re.compile(r"(?<![\w./-])papers/[\w.-]+\.md")),
    ("topic spec file", re.compile(r"(?<![\w./-])" + _TOPICS + r"\.md\b")),
    ("spec section sign", re.compile(r"\bspec\s*§", re.I)),
    ("spec section", re.compile(r"\bspec\s+sections?\b", re.I)),
    ("spec <n.m>", re.compile(r"\bspec\s+\d+\.\d+", re.I)),
    ("design notes", re.compile(r"\bDESIGN\.md\b")),
    ("design card", re.compile(r"\bdesign\s+card\b", re.I)),
    ("issue number", re.compile(r"\bissues?\s+#?\d+", re.I)),
    ("shared folder", re.compile(r"\.\./shared\b")),
    ("lead's header", re.compile(r"\blead's\s+header\b", re.I)),
    ("task helper", re.compile(r"\btask\s+helper", re.I)),
)
#: A repository path of a docs page, e.g. ``docs/papers/agf.md`` (templates such as ``docs/papers/<slug>.md``
#: and globs such as ``docs/api/*.md`` do not match).
DOCS_PATH = re.compile(r"(?<![\w./-])docs/[\w./-]*[\w-]\.md\b")


def repo_files() -> list[str]:
    """Tracked files and new files git does not ignore, as paths relative to the repository root."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted({f for f in out.splitlines() if f})


def scanned_files() -> list[str]:
    return [
        f
        for f in repo_files()
        if (Path(f).suffix in SUFFIXES or f.startswith(".ci/"))
        and not f.startswith(EXCLUDED_DIRS)
        and (ROOT / f).is_file()
    ]


#: This file names the forbidden pointers and holds examples of them, so the scans leave it out.
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()


def _resolves(rel: str, mention: str) -> bool:
    """Whether ``mention`` (a relative path found in file ``rel``) names a shipped file: relative to the file's
    folder (Markdown links) or, for ``mkdocs.yml``, to ``docs/``."""
    base = ROOT / rel
    if (base.parent / mention).is_file():
        return True
    return Path(rel).name == "mkdocs.yml" and (ROOT / "docs" / mention).is_file()


def forbidden_hits(rel: str, text: str) -> list[str]:
    """``"file:line: name: 'match'"`` for every forbidden pointer in ``text`` (the content of file ``rel``)."""
    hits = []
    for i, line in enumerate(text.splitlines(), 1):
        for name, pat in FORBIDDEN:
            for m in pat.finditer(line):
                if name in ("papers/<file>.md outside docs/", "topic spec file") and _resolves(rel, m.group(0)):
                    continue
                hits.append(f"{rel}:{i}: {name}: {m.group(0)!r}")
    return hits


def missing_docs_paths(rel: str, text: str) -> list[str]:
    """``"file:line: 'docs/...md'"`` for every docs page path in ``text`` that the repository does not hold."""
    return [
        f"{rel}:{i}: {m.group(0)!r}"
        for i, line in enumerate(text.splitlines(), 1)
        for m in DOCS_PATH.finditer(line)
        if not (ROOT / m.group(0)).is_file()
    ]


def _read(rel: str) -> str:
    return (ROOT / rel).read_text(encoding="utf-8", errors="replace")


def test_the_scan_covers_the_repository():
    files = scanned_files()
    for f in (
        "pyproject.toml",
        "README.md",
        "tests/test_repo_hygiene.py",
        "envs/bandits/lipschitz/env.py",
        "leaderboard/cli.py",
    ):
        assert f in files
    assert sum(f.endswith(".py") for f in files) > 100


def test_no_pointers_to_files_the_repository_does_not_ship():
    hits = [h for f in scanned_files() if f != THIS for h in forbidden_hits(f, _read(f))]
    assert not hits, (
        "pointers to documents the repository does not ship (cite the paper or a docs page "
        "instead):\n" + "\n".join(hits)
    )


def test_every_docs_path_mentioned_exists():
    missing = [h for f in scanned_files() if f != THIS for h in missing_docs_paths(f, _read(f))]
    assert not missing, "docs pages mentioned but not in the repository:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    "line",
    [
        "Spec: ``papers/bandits.md`` section 1.7.",
        "Each step (spec ``games.md`` §7.1):",
        "Metrics (spec section 6), over the query grid",
        "bins per axis (spec 1.7)",
        "Solver-benchmark tasks (DESIGN.md section 3)",
        "see the design card",
        "the command of issue 3.",
        "Leaderboard scoring (issue #6)",
        "read ../shared/papers first",
        "below the lead's header",
        "the task helper's part of the module",
    ],
)
def test_the_patterns_catch_the_old_pointers(line):
    assert forbidden_hits("envs/example.py", line)


@pytest.mark.parametrize(
    "line",
    [
        "see ``docs/papers/nonstat-lipschitz.md`` (tags: see docs/conventions.md)",
        "Nguyen, Gaucher & Vernade, *Non-Stationary Lipschitz Bandits*, NeurIPS 2025, arXiv:2505.18871",
        "The public :class:`~papergym.envs.spec.ProblemSpec` of the env (``gym.spec(env_id)``)",
        "the AGF paper §5, notebook ``modular arithmetic``",
        "a changed spec needs a new version string",
    ],
)
def test_the_patterns_leave_legitimate_text_alone(line):
    assert not forbidden_hits("envs/example.py", line)


def test_relative_paper_links_resolve_only_where_the_page_exists():
    assert not forbidden_hits("docs/benchmarks.md", "[NonStatLipschitz-v0](papers/nonstat-lipschitz.md)")
    assert forbidden_hits("docs/benchmarks.md", "[old spec](papers/bandits.md)")
    assert forbidden_hits("envs/example.py", "papers/nonstat-lipschitz.md")
    assert missing_docs_paths("envs/example.py", "see docs/papers/no-such-paper.md")
    assert not missing_docs_paths("envs/example.py", "see docs/papers/<slug>.md or docs/api/*.md")
