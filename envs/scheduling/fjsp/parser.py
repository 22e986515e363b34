"""Reading and writing flexible job-shop instances.

``.fjs`` (Brandimarte / Hurink / "FJSPLIB") grammar::

    line 1      : n_jobs n_machines [avg_machines_per_op]      # third token optional, ignored
    line 1 + i  : n_ops_i  { k  { machine_id  p } x k } x n_ops_i

Tokens are separated by any whitespace; blank lines (also trailing ones) are skipped. Machine ids are
1-based in the original files (``one_based=True``, the default); SchedulingLab's ``.txt`` files are
0-based with a two-token header (``one_based=False``), and its ``.json`` twin lists
``{"machine", "processing"}`` records (:func:`parse_json`).

Every error is a :class:`FJSFormatError` naming the line (1-based), the token and the field.
``parse_fjs(write_fjs(inst)) == inst`` for every :class:`~papergym.envs.scheduling.fjsp.instance.Instance`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from papergym.envs.scheduling.fjsp.instance import Instance, InstanceError

__all__ = ["FJSFormatError", "parse_fjs", "read_fjs", "write_fjs", "parse_json", "read_instance"]


class FJSFormatError(InstanceError):
    """A malformed instance file; ``line`` (1-based) and ``field`` say where."""

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None, source: str = ""):
        where = []
        if source:
            where.append(source)
        if line is not None:
            where.append(f"line {line}")
        prefix = (", ".join(where) + ": ") if where else ""
        super().__init__(prefix + message)
        self.line = line
        self.field = field


def _int_token(tok: str, *, line: int, field: str, source: str) -> int:
    try:
        v = int(tok)
    except ValueError:
        try:
            f = float(tok)
        except ValueError:
            raise FJSFormatError(
                f"{field}: expected an integer, got {tok!r}", line=line, field=field, source=source
            ) from None
        if not np.isfinite(f) or f != int(f):
            raise FJSFormatError(
                f"{field}: expected an integer, got {tok!r}", line=line, field=field, source=source
            ) from None
        v = int(f)
    return v


def parse_fjs(text: str, *, one_based: bool = True, name: str = "", source: str = "") -> Instance:
    """Parse the text of an ``.fjs`` file (see the module docstring). ``source`` names the file in errors."""
    if not isinstance(text, str):
        raise TypeError(f"parse_fjs expects the file's text (str), got {type(text).__name__}; use read_fjs(path)")
    lines = [(i + 1, ln.split()) for i, ln in enumerate(text.splitlines())]
    lines = [(i, toks) for i, toks in lines if toks]
    if not lines:
        raise FJSFormatError(
            "empty file: expected a header 'n_jobs n_machines [avg]'", line=1, field="header", source=source
        )
    hline, head = lines[0]
    if len(head) not in (2, 3):
        raise FJSFormatError(
            f"header: expected 'n_jobs n_machines [avg]' (2 or 3 tokens), got {len(head)} tokens",
            line=hline,
            field="header",
            source=source,
        )
    n_jobs = _int_token(head[0], line=hline, field="n_jobs", source=source)
    n_mach = _int_token(head[1], line=hline, field="n_machines", source=source)
    if len(head) == 3:
        try:
            float(head[2])
        except ValueError:
            raise FJSFormatError(
                f"avg_machines_per_op: expected a number, got {head[2]!r}",
                line=hline,
                field="avg_machines_per_op",
                source=source,
            ) from None
    if n_jobs < 1:
        raise FJSFormatError(f"n_jobs must be >= 1, got {n_jobs}", line=hline, field="n_jobs", source=source)
    if n_mach < 1:
        raise FJSFormatError(f"n_machines must be >= 1, got {n_mach}", line=hline, field="n_machines", source=source)
    body = lines[1:]
    if len(body) != n_jobs:
        ln = body[-1][0] + 1 if len(body) < n_jobs and body else (body[n_jobs][0] if len(body) > n_jobs else hline + 1)
        raise FJSFormatError(
            f"the header announces {n_jobs} jobs but the file has {len(body)} job lines",
            line=ln,
            field="n_jobs",
            source=source,
        )
    off = 1 if one_based else 0
    lo, hi = off, n_mach - 1 + off
    job_ops: list[int] = []
    rows: list[np.ndarray] = []
    for j, (ln, toks) in enumerate(body):
        pos = 0

        def take(field: str) -> int:
            nonlocal pos
            if pos >= len(toks):
                raise FJSFormatError(
                    f"job {j + 1}: line ends early, expected {field} at token {pos + 1}",
                    line=ln,
                    field=field,
                    source=source,
                )
            v = _int_token(toks[pos], line=ln, field=f"job {j + 1} token {pos + 1} ({field})", source=source)
            pos += 1
            return v

        n_ops = take("n_ops")
        if n_ops < 1:
            raise FJSFormatError(f"job {j + 1}: n_ops must be >= 1, got {n_ops}", line=ln, field="n_ops", source=source)
        for q in range(n_ops):
            k = take(f"operation {q + 1} machine count")
            if not 1 <= k <= n_mach:
                raise FJSFormatError(
                    f"job {j + 1} operation {q + 1}: machine count {k} outside 1..{n_mach} (token {pos})",
                    line=ln,
                    field="machine count",
                    source=source,
                )
            row = np.zeros(n_mach, dtype=np.int64)
            for _ in range(k):
                m = take(f"operation {q + 1} machine id")
                if not lo <= m <= hi:
                    base = "1-based" if one_based else "0-based"
                    raise FJSFormatError(
                        f"job {j + 1} operation {q + 1}: machine id {m} outside {lo}..{hi} ({base} ids; token {pos})",
                        line=ln,
                        field="machine id",
                        source=source,
                    )
                p = take(f"operation {q + 1} processing time")
                if p <= 0:
                    raise FJSFormatError(
                        f"job {j + 1} operation {q + 1}: processing time {p} on machine {m} must be > 0 (token {pos})",
                        line=ln,
                        field="processing time",
                        source=source,
                    )
                if row[m - off] != 0:
                    raise FJSFormatError(
                        f"job {j + 1} operation {q + 1}: machine {m} listed twice (token {pos - 1})",
                        line=ln,
                        field="machine id",
                        source=source,
                    )
                row[m - off] = p
            rows.append(row)
        if pos != len(toks):
            raise FJSFormatError(
                f"job {j + 1}: {len(toks) - pos} unexpected trailing token(s) from token {pos + 1} ({toks[pos]!r})",
                line=ln,
                field="trailing tokens",
                source=source,
            )
        job_ops.append(n_ops)
    return Instance(np.asarray(job_ops, dtype=np.int64), np.vstack(rows), name=name)


def read_fjs(path: str | os.PathLike, *, one_based: bool = True, name: str | None = None) -> Instance:
    """Read an ``.fjs`` file (``name`` defaults to the file stem)."""
    p = Path(path)
    try:
        text = p.read_text()
    except UnicodeDecodeError as exc:
        raise FJSFormatError(f"not a text file ({exc.reason})", source=str(p)) from None
    return parse_fjs(text, one_based=one_based, name=p.stem if name is None else name, source=str(p))


def _fmt_avg(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.4g}"


def write_fjs(inst: Instance, path: str | os.PathLike | None = None) -> str:
    """The 1-based ``.fjs`` text of ``inst`` (header's third token: the mean eligible count). With ``path``,
    also write it (atomically: a temporary file renamed into place)."""
    out = [f"{inst.n_jobs} {inst.n_machines} {_fmt_avg(inst.flexibility)}"]
    for j in range(inst.n_jobs):
        toks = [str(int(inst.job_ops[j]))]
        for o in inst.ops_of(j):
            ks = np.flatnonzero(inst.proc[o] > 0)
            toks.append(str(len(ks)))
            for k in ks:
                toks += [str(int(k) + 1), str(int(inst.proc[o, k]))]
        out.append(" ".join(toks))
    text = "\n".join(out) + "\n"
    if path is not None:
        p = Path(path)
        tmp = p.with_name(f".{p.name}.tmp{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, p)
    return text


def parse_json(text_or_obj: str | dict, *, name: str = "", source: str = "") -> Instance:
    """Parse SchedulingLab's ``.json`` form: ``{"machines": M, "jobs": [[[{"machine": k, "processing": p},
    ...], ...], ...]}`` with 0-based machines."""
    try:
        obj = json.loads(text_or_obj) if isinstance(text_or_obj, str) else text_or_obj
    except json.JSONDecodeError as exc:
        raise FJSFormatError(f"invalid JSON: {exc.msg}", line=exc.lineno, field="json", source=source) from None
    if not isinstance(obj, dict) or "machines" not in obj or "jobs" not in obj:
        raise FJSFormatError("expected an object with the fields 'machines' and 'jobs'", field="json", source=source)
    m = obj["machines"]
    if not isinstance(m, int) or m < 1:
        raise FJSFormatError(f"'machines' must be a positive integer, got {m!r}", field="machines", source=source)
    job_ops, rows = [], []
    if not isinstance(obj["jobs"], list) or not obj["jobs"]:
        raise FJSFormatError("'jobs' must be a non-empty list", field="jobs", source=source)
    for j, job in enumerate(obj["jobs"]):
        if not isinstance(job, list) or not job:
            raise FJSFormatError(f"jobs[{j}] must be a non-empty list of operations", field="jobs", source=source)
        for q, op in enumerate(job):
            if not isinstance(op, list) or not op:
                raise FJSFormatError(
                    f"jobs[{j}][{q}] must be a non-empty list of alternatives", field="jobs", source=source
                )
            row = np.zeros(m, dtype=np.int64)
            for rec in op:
                try:
                    k, p = rec["machine"], rec["processing"]
                except (TypeError, KeyError):
                    raise FJSFormatError(
                        f"jobs[{j}][{q}]: each alternative needs 'machine' and 'processing'",
                        field="jobs",
                        source=source,
                    ) from None
                if not isinstance(k, int) or not 0 <= k < m:
                    raise FJSFormatError(
                        f"jobs[{j}][{q}]: machine {k!r} outside 0..{m - 1}", field="machine", source=source
                    )
                if not isinstance(p, int) or p <= 0:
                    raise FJSFormatError(
                        f"jobs[{j}][{q}]: processing time {p!r} must be a positive integer",
                        field="processing",
                        source=source,
                    )
                if row[k]:
                    raise FJSFormatError(f"jobs[{j}][{q}]: machine {k} listed twice", field="machine", source=source)
                row[k] = p
            rows.append(row)
        job_ops.append(len(job))
    return Instance(np.asarray(job_ops, dtype=np.int64), np.vstack(rows), name=name)


def read_instance(path: str | os.PathLike, *, one_based: bool | None = None) -> Instance:
    """Read ``.fjs`` / ``.txt`` / ``.json`` by suffix (``.txt`` defaults to 0-based, SchedulingLab's form)."""
    p = Path(path)
    if p.suffix == ".json":
        return parse_json(p.read_text(), name=p.stem, source=str(p))
    if one_based is None:
        one_based = p.suffix != ".txt"
    return read_fjs(p, one_based=one_based)
