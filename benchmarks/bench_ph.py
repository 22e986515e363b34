"""Persistent-homology construction at scale (Flood complex, Graf et al., NeurIPS 2025): time and peak memory of
three methods on the same 3-D point clouds, ratios measured side by side in one run.

    python benchmarks/bench_ph.py                       # N = 1e4, 1e5, 1e6 (~11 min on 2 cores, alpha ~8 GB at 1e6)
    python benchmarks/bench_ph.py --points 1e4,1e5      # quick (~40 s)
    python benchmarks/bench_ph.py --cloud cheese --repeats 3 --json ph.json
    python benchmarks/bench_ph.py --smoke               # N = 1000, 50 landmarks, 1 thread: every method and column

Methods (each timed as construction + persistence in dims 0..2 + reading the diagrams, wall seconds):

* ``flood``: :func:`papergym.agents.solvers.flood.flood_persistence` (``n_landmarks=--landmarks``,
  ``points_per_edge=--points-per-edge``, ``workers=--threads``), exact farthest-point landmarks (its default).
* ``flood-bucket``: the same with ``fps="bucket"``, flooder's approximate bucket FPS (``fpsample``): equal
  settings with ``flooder`` down to the landmark selection.
* ``flooder``: the authors' package, ``flooder.flood_complex(points=torch tensor (--flooder-dtype),
  landmarks=L, points_per_edge=P, use_triton=False, return_simplex_tree=True)`` then gudhi persistence,
  ``torch.set_num_threads(--threads)``; "not installed" if it does not import.
* ``alpha``: gudhi ``AlphaComplex(points).create_simplex_tree(output_squared_values=False)`` + persistence,
  skipped above ``--alpha-max-n``.

Every (method, N, repetition) cell runs in a fresh subprocess (BLAS threads pinned to 1): the child generates
the cloud (``--cloud uniform``: unit cube, ``numpy.random.default_rng(--seed)``; ``cheese``:
``swiss_cheese(n, 6, 0.1, 0.2, seed)``), reads VmRSS as its baseline, runs the method, reads VmHWM.
Printed per cell: median seconds over ``--repeats``, ``peak_MB`` (VmHWM, absolute, max over repeats),
``added_MB`` (VmHWM - baseline VmRSS), number of simplices, the bottleneck distances in H1 and H2 to alpha's
diagrams at the same N (finite bars only, ``gudhi.bottleneck_distance`` with additive error ``--bn-error``,
default 1e-8 as in the task; computed in ``--threads`` processes after the cells of each N, ~5 min at 1e6 on 2 cores;
``gudhi.hera`` was not used: superlinear, ~160 s per distance already at 3e4 points;
``inf`` column: whether the counts of infinite bars per dimension match alpha's), and ``vs flood`` =
seconds / flood's seconds (> 1: flood is faster).
Then one PASS/FAIL line per target (docs/benchmarks.md, docs/papers/flood.md): flood >= 2x faster than flooder
(at every N), >= 20x faster than alpha at 1e6, flood peak <= 4096 MB at 1e6.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from importlib import metadata
from multiprocessing import get_context

import numpy as np

METHODS = ("flood", "flood-bucket", "flooder", "alpha")
MAX_DIM = 2


# ----------------------------------------------------------------------------- child (one cell)
def _proc_status(key: str) -> float | None:
    """``key`` (VmRSS / VmHWM) of this process in MB, or None off Linux."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def _cloud(kind: str, n: int, seed: int) -> np.ndarray:
    if kind == "cheese":
        from papergym.envs.tasks.persistent_homology import swiss_cheese

        return swiss_cheese(n, 6, 0.1, 0.2, seed)[0]
    return np.random.default_rng(seed).random((n, 3))


def _intervals(st) -> list:
    return [
        np.asarray(st.persistence_intervals_in_dimension(k), dtype=np.float64).reshape(-1, 2)
        for k in range(MAX_DIM + 1)
    ]


def run_cell(a) -> dict:
    out = {"method": a.method, "n": a.n, "rep": a.rep}
    if a.method == "flooder":
        try:
            import flooder
            import torch
        except Exception as e:  # noqa: BLE001 - ImportError, or triton failing at import
            return {**out, "status": "not installed", "detail": f"{type(e).__name__}: {e}"}
        torch.set_num_threads(a.threads)
    else:
        import gudhi  # imported before the baseline, like torch for flooder

        from papergym.agents.solvers.flood import flood_persistence
    X = _cloud(a.cloud, a.n, a.seed)
    if a.method == "flooder":  # input conversion is not timed (flood and alpha take the numpy array as is)
        X = torch.as_tensor(X, dtype=torch.float32 if a.flooder_dtype == "float32" else torch.float64)
    base = _proc_status("VmRSS")
    t0 = time.perf_counter()
    if a.method in ("flood", "flood-bucket"):
        dgms, filt = flood_persistence(
            X,
            n_landmarks=a.landmarks,
            max_dim=MAX_DIM,
            points_per_edge=a.points_per_edge,
            workers=a.threads,
            return_filtration=True,
            fps="bucket" if a.method == "flood-bucket" else "exact",
        )
        n_simp = int(sum(len(s) for s in filt.simplices))
    elif a.method == "flooder":
        st = flooder.flood_complex(
            points=X,
            landmarks=a.landmarks,
            points_per_edge=a.points_per_edge,
            use_triton=False,
            return_simplex_tree=True,
        )
        st.compute_persistence(persistence_dim_max=True)
        dgms, n_simp = _intervals(st), st.num_simplices()
    else:
        st = gudhi.AlphaComplex(points=X).create_simplex_tree(output_squared_values=False)
        st.compute_persistence(persistence_dim_max=True)
        dgms, n_simp = _intervals(st), st.num_simplices()
    seconds = time.perf_counter() - t0
    peak = _proc_status("VmHWM")
    if peak is None or base is None:  # not Linux: ru_maxrss (KB on Linux/BSD, bytes on macOS)
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024.0 ** (2 if sys.platform == "darwin" else 1))
    if a.dgm_out:
        np.savez(a.dgm_out, **{f"H{k}": d for k, d in enumerate(dgms)})
    return {
        **out,
        "status": "ok",
        "seconds": seconds,
        "peak_mb": peak,
        "added_mb": None if base is None else peak - base,
        "simplices": int(n_simp),
        "bars": [len(d) for d in dgms],
        "inf_bars": [int(np.isinf(d[:, 1]).sum()) for d in dgms],
    }


# ----------------------------------------------------------------------------- parent
def spawn(a, method: str, n: int, rep: int, dgm_out: str) -> dict:
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--cell",
        "--method",
        method,
        "--n",
        str(n),
        "--rep",
        str(rep),
        "--cloud",
        a.cloud,
        "--seed",
        str(a.seed),
        "--landmarks",
        str(a.landmarks),
        "--points-per-edge",
        str(a.points_per_edge),
        "--threads",
        str(a.threads),
        "--flooder-dtype",
        a.flooder_dtype,
        "--dgm-out",
        dgm_out,
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    base = {"method": method, "n": n, "rep": rep}
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
    except subprocess.TimeoutExpired:
        return {**base, "status": "timeout"}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        err = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
        return {**base, "status": "error: " + (err[-1].strip() if err else f"exit code {p.returncode}")}
    return json.loads(lines[-1])


def finite(d: np.ndarray) -> np.ndarray:
    d = d[np.isfinite(d[:, 1])]
    return d[d[:, 1] > d[:, 0]]  # zero-length bars cost nothing


def bottleneck(path: str, ref: str, k: int, e: float | None) -> float:
    """Bottleneck distance in H_k (finite bars) between two saved diagram files."""
    from gudhi import bottleneck_distance  # CGAL; gudhi.hera takes minutes already at 3e4 points

    return float(bottleneck_distance(finite(np.load(path)[f"H{k}"]), finite(np.load(ref)[f"H{k}"]), e))


def fidelity(paths: dict, ref: str, a) -> dict:
    """{method: {bn_H1, bn_H2, inf_match}} against the reference file, the distances in ``--threads`` processes."""
    B = np.load(ref)
    with ProcessPoolExecutor(max_workers=a.threads, mp_context=get_context("spawn")) as ex:
        jobs = {(m, k): ex.submit(bottleneck, p, ref, k, a.bn_error) for m, p in paths.items() for k in (1, 2)}
        out = {m: {f"bn_H{k}": jobs[m, k].result() for k in (1, 2)} for m in paths}
    for m, p in paths.items():
        A = np.load(p)
        out[m]["inf_match"] = all(
            int(np.isinf(A[f"H{k}"][:, 1]).sum()) == int(np.isinf(B[f"H{k}"][:, 1]).sum()) for k in range(MAX_DIM + 1)
        )
    return out


def fmt_n(n: int) -> str:
    e = int(round(np.log10(n)))
    return f"1e{e}" if 10**e == n else str(n)


def versions() -> str:
    def v(pkg):
        try:
            return metadata.version(pkg)
        except metadata.PackageNotFoundError:
            return "not installed"

    return (
        f"machine: {os.cpu_count()} cpus, python {platform.python_version()}, gudhi {v('gudhi')}, "
        f"flooder {v('flooder')}, torch {v('torch')}, numpy {np.__version__}"
    )


def main(a) -> None:
    ns = [int(float(s)) for s in a.points.split(",")]
    methods = [m.strip() for m in a.methods.split(",")]
    bad = set(methods) - set(METHODS)
    if bad:
        raise SystemExit(f"unknown methods {sorted(bad)}; choose from {METHODS}")
    print(versions())
    print(
        f"cloud {a.cloud} (seed {a.seed}), landmarks {a.landmarks}, points_per_edge {a.points_per_edge}, "
        f"threads {a.threads}, flooder dtype {a.flooder_dtype}, repeats {a.repeats}, timeout {a.timeout:g} s"
    )
    t_all = time.perf_counter()
    cells, summary = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in ns:
            for m in methods:
                if m == "alpha" and n > a.alpha_max_n:
                    summary[n, m] = {"status": "skipped"}
                    continue
                runs = []
                for rep in range(a.repeats):
                    r = spawn(a, m, n, rep, os.path.join(tmp, f"{m}_{n}.npz"))
                    cells.append(r)
                    runs.append(r)
                    print(
                        f"  [{fmt_n(n)} {m} rep {rep}] {r['status']}"
                        + (f" {r['seconds']:.2f} s, peak {r['peak_mb']:.0f} MB" if r["status"] == "ok" else ""),
                        file=sys.stderr,
                        flush=True,
                    )
                    if r["status"] != "ok":
                        break
                ok = [r for r in runs if r["status"] == "ok"]
                if len(ok) < len(runs) or not ok:
                    summary[n, m] = runs[-1]
                    continue
                s = {
                    "status": "ok",
                    "seconds": float(np.median([r["seconds"] for r in ok])),
                    "peak_mb": max(r["peak_mb"] for r in ok),
                    "simplices": ok[0]["simplices"],
                    "added_mb": max((r["added_mb"] for r in ok if r["added_mb"] is not None), default=None),
                }
                summary[n, m] = s
            ref = os.path.join(tmp, f"alpha_{n}.npz")
            paths = {
                m: os.path.join(tmp, f"{m}_{n}.npz")
                for m in ("flood", "flood-bucket", "flooder")
                if summary.get((n, m), {}).get("status") == "ok"
            }
            if not a.no_fidelity and paths and summary.get((n, "alpha"), {}).get("status") == "ok":
                t0 = time.perf_counter()
                for m, f in fidelity(paths, ref, a).items():
                    summary[n, m].update(f)
                print(
                    f"  [{fmt_n(n)}] bottleneck distances to alpha: {time.perf_counter() - t0:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )

    head = (
        f"{'N':<8}{'method':<14}{'seconds':>9}{'peak_MB':>9}{'added_MB':>10}{'simplices':>12}"
        f"{'bn_H1':>9}{'bn_H2':>9}{'inf':>5}  vs flood"
    )
    print("\n" + head + "\n" + "-" * (len(head) + 8))
    for n in ns:
        for m in methods:
            s = summary[n, m]
            if s["status"] != "ok":
                print(f"{fmt_n(n):<8}{m:<14}{s['status']}")
                continue
            fl = summary.get((n, "flood"), {})
            vs = f"x{s['seconds'] / fl['seconds']:.1f}" if m != "flood" and fl.get("status") == "ok" else ""
            bn = "".join(f"{s[k]:>9.4f}" if k in s else f"{'-':>9}" for k in ("bn_H1", "bn_H2"))
            inf = ("yes" if s["inf_match"] else "no") if "inf_match" in s else "-"
            add = f"{s['added_mb']:>10.0f}" if s["added_mb"] is not None else f"{'-':>10}"
            print(
                f"{fmt_n(n):<8}{m:<14}{s['seconds']:>9.2f}{s['peak_mb']:>9.0f}{add}{s['simplices']:>12,d}"
                f"{bn}{inf:>5}  {vs}"
            )

    def ratio(n, m, base="flood"):
        f, o = summary.get((n, base), {}), summary.get((n, m), {})
        return o["seconds"] / f["seconds"] if f.get("status") == "ok" and o.get("status") == "ok" else None

    def verdict(ok):
        return "n/a " if ok is None else ("PASS" if ok else "FAIL")

    print()
    for base, what in (("flood", "exact FPS"), ("flood-bucket", "flooder's bucket FPS")):
        got = {n: r for n in ns if (r := ratio(n, "flooder", base)) is not None}
        print(
            f"{verdict(min(got.values()) >= 2 if got else None)}  {base} ({what}) >= 2x faster than flooder (CPU, "
            f"same landmarks count and grid, every N): "
            + (", ".join(f"x{r:.1f} at {fmt_n(n)}" for n, r in got.items()) or "not measured")
        )
    r = ratio(10**6, "alpha")
    print(
        f"{verdict(None if r is None else r >= 20)}  flood >= 20x faster than alpha at 1e6: "
        + (f"x{r:.1f}" if r is not None else "not measured")
    )
    f6 = summary.get((10**6, "flood"), {})
    pk = f6.get("peak_mb") if f6.get("status") == "ok" else None
    print(
        f"{verdict(None if pk is None else pk <= 4096)}  flood peak <= 4096 MB at 1e6: "
        + (f"{pk:.0f} MB" if pk is not None else "not measured")
    )
    print(f"({time.perf_counter() - t_all:.0f} s wall)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(
                {
                    "args": vars(a),
                    "machine": versions(),
                    "cells": cells,
                    "summary": [{"n": n, "method": m, **s} for (n, m), s in summary.items()],
                },
                fh,
                indent=1,
            )


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--points", default="1e4,1e5,1e6", help="comma-separated N (e-notation accepted)")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--cloud", choices=("uniform", "cheese"), default="uniform")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--landmarks", type=int, default=1000)
    p.add_argument("--points-per-edge", type=int, default=8, help="flood and flooder (flooder's default: 30)")
    p.add_argument("--threads", type=int, default=2, help="flood workers / torch threads for flooder")
    p.add_argument("--flooder-dtype", choices=("float32", "float64"), default="float32")
    p.add_argument("--repeats", type=int, default=1, help="median seconds, max peak over repeats")
    p.add_argument("--alpha-max-n", type=float, default=1e6, help="skip alpha above this N")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per cell")
    p.add_argument("--no-fidelity", action="store_true", help="skip the bottleneck distances to alpha")
    p.add_argument(
        "--bn-error",
        type=float,
        default=1e-8,
        help="additive error allowed in gudhi.bottleneck_distance (default 1e-8, as the task; 0: the "
        "exact mode, whose memory grows with the product of the diagram sizes)",
    )
    p.add_argument("--json", default=None, help="also write all raw cell results here")
    p.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: N = 1000, 50 landmarks, 4 points per edge, 1 thread, every method",
    )
    # child mode (one cell, internal)
    p.add_argument("--cell", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--method", choices=METHODS, help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, help=argparse.SUPPRESS)
    p.add_argument("--rep", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--dgm-out", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.smoke and not args.cell:
        args.points, args.landmarks, args.points_per_edge, args.threads, args.timeout = "1000", 50, 4, 1, 300.0
    return args


if __name__ == "__main__":
    args = parse_args()
    if args.cell:
        print(json.dumps(run_cell(args)), flush=True)
    else:
        main(args)
