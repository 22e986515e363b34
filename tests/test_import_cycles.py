"""Import layering of the papergym sources, checked statically (``ast``, nothing is imported).

The graph has one node per papergym module (the package directories of ``[tool.setuptools] package-dir`` in
pyproject.toml: ``papergym.envs`` -> ``envs/`` and so on) and one edge per import statement, with relative
imports resolved. ``from pkg import sub`` where ``sub`` is a module is an edge to ``pkg.sub``; ``from mod import
name`` is an edge to ``mod``. Imports under ``if TYPE_CHECKING:`` never run and are skipped.

* ``test_no_module_level_import_cycle``: the module-level imports (those that run when a module is imported,
  including those under a module-level ``if``/``try``) must form no cycle. A cycle makes the result of an import
  depend on which module of it is imported first. Imports inside functions are not edges of this graph: they run
  later, and are the way to load a heavy optional dependency lazily or to reach a higher layer (envs <-
  agents/baselines <- leaderboard) from a lower one. Layering: docs/adding-a-paper.md.
* ``test_no_cross_module_private_import``: no module imports a private name (``from x import _y``, or ``import
  x._y``) of a module in another package: a name shared across packages is public in its home module. Modules of
  one package (e.g. the parts of ``envs/bandits/semibandit/``) may share its private names and private modules:
  the underscore then means private to the package. Tests are not scanned (they may probe internals).
"""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Module-level cycles that are known and accepted, each as the sorted tuple of its modules, with the reason.
KNOWN_CYCLES: dict[tuple[str, ...], str] = {}

# Private names imported across packages that are known and accepted, as (home module, name) -> reason.
KNOWN_PRIVATE: dict[tuple[str, str], str] = {
    ("papergym.leaderboard.board", "_sandbox_child"): (
        "a private module of the board: the file the sandbox copies in and runs as a script where papergym cannot"
        " be imported (its own lint rule in pyproject.toml names it); leaderboard/check.py imports it on purpose,"
        " to host a submission locally with the very code the board runs"
    ),
}


def package_dirs() -> dict[str, Path]:
    """Import prefix -> source directory, from pyproject.toml (``papergym.envs`` -> ``envs/``)."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {pkg: ROOT / d for pkg, d in conf["tool"]["setuptools"]["package-dir"].items()}


def module_files() -> dict[str, Path]:
    """Every papergym module name -> its file."""
    dirs = package_dirs()
    out: dict[str, Path] = {}
    for prefix, d in sorted(dirs.items(), key=lambda kv: len(kv[0])):
        for f in sorted(d.rglob("*.py")):
            rel = f.relative_to(d).with_suffix("")
            parts = list(rel.parts)
            if any(not p.isidentifier() for p in parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            # a sub-directory mapped elsewhere (e.g. papergym.envs under papergym/) is that prefix's business
            name = ".".join([prefix, *parts])
            owner = max((p for p in dirs if name == p or name.startswith(p + ".")), key=len)
            if owner == prefix:
                out[name] = f
    return out


@dataclass
class Imports:
    module_level: dict[str, set[str]] = field(default_factory=dict)  # module -> modules it imports on import
    in_functions: dict[str, set[str]] = field(default_factory=dict)  # module -> modules imported in functions
    private: list[tuple[str, str, str]] = field(default_factory=list)  # (where, home module, name)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _package_of(module: str, files: dict[str, Path]) -> str:
    return module if files[module].name == "__init__.py" else module.rpartition(".")[0]


def _same_package(importer: str, home: str, files: dict[str, Path]) -> bool:
    """The private name's home module (for a private module: the module itself) lies in the importer's package."""
    return _package_of(importer, files) == _package_of(home, files) or (
        files[home].name != "__init__.py"
        and home.rpartition(".")[0] == _package_of(importer, files)
        and home.rpartition(".")[2].startswith("_")
    )


def scan() -> Imports:
    files = module_files()
    res = Imports()
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        here = mod if is_pkg else mod.rpartition(".")[0]
        top: set[str] = set()
        inner: set[str] = set()
        res.module_level[mod], res.in_functions[mod] = top, inner
        rel_path = path.relative_to(ROOT)

        def visit(node: ast.AST, in_func: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child.test):
                    for sub in child.orelse:
                        visit_stmt(sub, in_func)
                    continue
                visit_stmt(child, in_func)

        def visit_stmt(child: ast.AST, in_func: bool) -> None:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, True)
                return
            targets = inner if in_func else top
            if isinstance(child, ast.Import):
                for a in child.names:
                    if a.name in files:
                        targets.add(a.name)
                    home, _, last = a.name.rpartition(".")
                    if a.name in files and _private(last) and not _same_package(mod, a.name, files):
                        res.private.append((f"{rel_path}:{child.lineno}: import {a.name}", home, last))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = here.split(".")
                    base = base[: len(base) - (child.level - 1)] if child.level > 1 else base
                    src = ".".join(base + ([child.module] if child.module else []))
                else:
                    src = child.module or ""
                for a in child.names:
                    sub = f"{src}.{a.name}"
                    if sub in files:
                        targets.add(sub)
                    elif src in files:
                        targets.add(src)
                    if (
                        src in files
                        and src != mod
                        and _private(a.name)
                        and not _same_package(mod, sub if sub in files else src, files)
                    ):
                        res.private.append((f"{rel_path}:{child.lineno}: from {src} import {a.name}", src, a.name))
            visit(child, in_func)

        visit(ast.parse(path.read_text(), filename=str(path)), False)
        top.discard(mod)
        inner.discard(mod)
    return res


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each as one cycle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        # iterative Tarjan
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return [_one_cycle(graph, set(c)) for c in comps]


def _one_cycle(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """A shortest cycle through the first module of ``comp`` (breadth-first), closed: ``[a, b, ..., a]``."""
    start = min(comp)
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & comp):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return sorted(comp)  # pragma: no cover - a component always has a cycle


def test_scanner_sees_the_package():
    files = module_files()
    assert "papergym.envs.tasks.base" in files and "papergym.leaderboard.cli" in files
    assert files["papergym.envs"] == ROOT / "envs" / "__init__.py"
    imports = scan()
    # a known module-level edge and a known function-level one, so an empty graph cannot pass
    assert "papergym.envs.tasks.base" in imports.module_level["papergym.envs.tasks"]
    assert any(imports.in_functions.values())


def test_cycle_finder_names_the_cycle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(g) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_level_import_cycle():
    found = cycles(scan().module_level)
    unknown = [c for c in found if tuple(sorted(set(c))) not in KNOWN_CYCLES]
    assert not unknown, (
        "module-level import cycles (break them by moving the shared piece to the lower layer):\n"
        + "\n".join(" -> ".join(c) for c in unknown)
    )
    stale = sorted(set(KNOWN_CYCLES) - {tuple(sorted(set(c))) for c in found})
    assert not stale, f"KNOWN_CYCLES lists cycles that no longer exist: {stale}"


def test_no_cross_module_private_import():
    found = [where for where, home, name in scan().private if (home, name) not in KNOWN_PRIVATE]
    assert not found, "imports of another package's private name (make it public in its home module):\n" + "\n".join(
        found
    )


def test_private_scan_sees_cross_package_imports():
    """The scanner flags a cross-package private import and lets a sibling module share one."""
    f = {
        "p": Path("p/__init__.py"),
        "p.a": Path("p/a.py"),
        "p.b": Path("p/b.py"),
        "p._m": Path("p/_m.py"),
        "p.q": Path("p/q/__init__.py"),
        "p.q.c": Path("p/q/c.py"),
        "r": Path("r.py"),
    }
    assert _same_package("p.a", "p.b", f)  # from p.b import _y in p/a.py
    assert _same_package("p.a", "p", f)  # from p import _y (defined in p/__init__.py)
    assert _same_package("p.a", "p._m", f)  # from p import _m (a private module of p)
    assert not _same_package("p.q.c", "p.a", f)
    assert not _same_package("r", "p._m", f)
    assert not _same_package("p.q.c", "p._m", f)
    homes = {(home, name) for _, home, name in scan().private}
    assert ("papergym.leaderboard.board", "_sandbox_child") in homes
