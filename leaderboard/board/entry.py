"""Entries of submitted files (``"path/to/file.py:attr"``): parsed and checked by the trusted parent, which
never imports submitted code (:mod:`papergym.leaderboard.board.sandbox`)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["check_entry_statically", "load_entry", "top_level_names"]


def load_entry(spec: str) -> tuple[Path, str]:
    """``"path/to/file.py:attr"`` -> ``(resolved file, attr)``.

    Checks the file exists and is a ``.py`` file, and the attribute is a (dotted) Python identifier;
    whether it exists is checked inside the child only (the parent never imports submitted code).
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"an entry is 'path/to/file.py:attr' (e.g. my_agent.py:make_agent), got {spec!r}")
    path_s, attr = spec.rsplit(":", 1)
    if not path_s:
        raise ValueError(f"the entry {spec!r} names no file")
    if not attr or not all(p.isidentifier() for p in attr.split(".")):
        raise ValueError(
            f"the entry {spec!r} names no valid attribute after ':' (a Python identifier, e.g. make_agent or MySolver)"
        )
    path = Path(path_s).expanduser()
    if path.suffix != ".py":
        raise ValueError(f"the submitted file must be a .py file, got {path_s!r}")
    if not path.is_file():
        raise FileNotFoundError(f"the submitted file {path_s!r} does not exist")
    return path.resolve(), attr


def check_entry_statically(path: Path, attr: str) -> None:
    """Refuse an entry whose attribute the file visibly does not define (:func:`top_level_names`; the file is
    parsed, never run) — a typo caught before anything is evaluated or stored. Where the names cannot be
    known statically, the sandboxed child decides."""
    defined = top_level_names(Path(path).read_bytes())
    if defined is not None and attr.split(".")[0] not in defined:
        raise ValueError(
            f"{path} defines no top-level name {attr.split('.')[0]!r} (it defines: "
            f"{', '.join(sorted(defined)) or 'nothing'}); nothing was evaluated"
        )


def top_level_names(source: bytes) -> set[str] | None:
    """The names a module's top level binds, read with :mod:`ast` (the code is parsed, never run): functions,
    classes, assignment targets, imports. ``None`` where that cannot be known statically (a syntax error —
    reported by the child with its line —, ``from m import *`` or a write to ``globals()``)."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("globals", "setattr", "exec"):
            return None
    for node in tree.body:
        stack = [node]
        while stack:  # top-level statements, including those inside if/try/with blocks
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(n.name)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                for a in n.names:
                    if a.name == "*":
                        return None
                    names.add((a.asname or a.name).split(".")[0])
            elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    names.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))
            elif isinstance(n, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                for field in ("body", "orelse", "finalbody", "handlers"):
                    stack.extend(getattr(n, field, []) or [])
            elif isinstance(n, ast.ExceptHandler):
                stack.extend(n.body)
            elif isinstance(n, ast.NamedExpr):
                names.add(n.target.id)
    return names
