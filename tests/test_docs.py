"""The documentation site: it builds in strict mode, every relative link resolves, every paper has its page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from papergym_tests import require

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

PAPER_SLUGS = (
    "nonstat-lipschitz",
    "noise-free-gp",
    "mset-semibandit",
    "fjsp-mistar",
    "best-response-games",
    "nystrom-ode",
    "dana",
    "local-sgd",
    "bcd",
    "radagrad",
    "adasdbo",
    "dbgd",
    "flood",
    "agf",
    "lipschitz-resnets",
    "diffusion-disentanglement",
    "lear",
    "symmpo",
    "ufo-rl",
)
PAGES = (
    "index.md",
    "getting-started.md",
    "conventions.md",
    "adding-a-paper.md",
    "benchmarks.md",
    "leaderboard/submitting.md",
    "leaderboard/operating.md",
    "leaderboard/threat-model.md",
)

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def _relative_links(md: Path) -> list[str]:
    text = _CODE.sub("", _FENCE.sub("", md.read_text()))
    return [t for t in _LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]


def test_every_page_and_paper_page_exists():
    missing = [p for p in PAGES if not (DOCS / p).is_file()]
    missing += [f"papers/{s}.md" for s in PAPER_SLUGS if not (DOCS / "papers" / f"{s}.md").is_file()]
    assert not missing, missing
    extra = sorted(p.stem for p in (DOCS / "papers").glob("*.md") if p.stem not in PAPER_SLUGS)
    assert not extra, f"paper pages without a slug in this test: {extra}"
    assert list((DOCS / "api").glob("*.md")), "no API reference page"


def test_every_paper_page_is_linked_from_the_readme_and_the_index():
    readme, index = (ROOT / "README.md").read_text(), (DOCS / "index.md").read_text()
    for slug in PAPER_SLUGS:
        assert f"(docs/papers/{slug}.md)" in readme, slug
        assert f"(papers/{slug}.md)" in index, slug


def test_every_relative_link_points_to_an_existing_file():
    broken = []
    for md in _markdown_files():
        for target in _relative_links(md):
            path = target.split("#", 1)[0]
            if path and not (md.parent / path).exists():
                broken.append(f"{md.relative_to(ROOT)}: {target}")
    assert not broken, broken
    assert sum(len(_relative_links(md)) for md in _markdown_files()) > 50  # the check saw the links


def test_the_link_check_catches_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[ok](page.md) [gone](nowhere.md#x) `[code](skipped.md)` [web](https://example.org)\n")
    assert _relative_links(page) == ["page.md", "nowhere.md#x"]


def test_mkdocs_build_strict(tmp_path):
    require("mkdocs", "docs")
    require("mkdocstrings", "docs")
    require("mkdocstrings_handlers.python", "docs")
    require("material", "docs")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    site = tmp_path / "site"
    for slug in PAPER_SLUGS:
        assert (site / "papers" / f"{slug}.html").is_file(), slug
    api = (site / "api" / "agents.html").read_text()
    assert 'id="papergym.agents.base.register_agent"' in api  # mkdocstrings rendered the registry's docstrings
