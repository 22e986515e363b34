"""Persistent-homology construction at scale (Flood complex, Graf et al., NeurIPS 2025): time and peak memory of
``flood`` against the authors' ``flooder`` (and optionally gudhi's Alpha complex) on the same 3-D point clouds,
ratios measured side by side in one run, at flooder's default grid (30 points per edge) and at 8.

    python benchmarks/bench_ph.py --points 1e6          # flood vs flooder at p = 30 and 8, 3 interleaved repeats
                                                        # (~3 min)
    python benchmarks/bench_ph.py                       # N = 1e4, 1e5, 1e6 (~5 min on 2 cores)
    python benchmarks/bench_ph.py --points 1e4,1e5 --alpha   # also gudhi Alpha and the bottleneck distances to it
    python benchmarks/bench_ph.py --points 1e6 --alpha  # Alpha at 1e6: ~4 min more and ~8 GB
    python benchmarks/bench_ph.py --smoke               # N = 1000, 50 landmarks, 1 thread: every method and column

Methods (each timed as construction + persistence in dims 0..2 + reading the diagrams, wall seconds):

* ``flood``: :func:`papergym.agents.solvers.flood.flood_persistence` (``n_landmarks=--landmarks``,
  ``points_per_edge``, ``workers=--threads``), exact farthest-point landmarks (its default).
* ``flood-bucket``: the same with ``fps="bucket"``, flooder's approximate bucket FPS (``fpsample``): equal
  settings with ``flooder`` down to the landmark selection, so the diagrams must agree (``bn_flooder``).
* ``flooder``: the authors' package, ``flooder.flood_complex(points=torch tensor (--flooder-dtype),
  landmarks=L, points_per_edge=P, use_triton=False, return_simplex_tree=True)`` then gudhi persistence,
  ``torch.set_num_threads(--threads)``; "not installed" if it does not import.
* ``alpha`` (only with ``--alpha``): gudhi ``AlphaComplex(points).create_simplex_tree(output_squared_values=False)``
  + persistence, at every N up to ``--alpha-max-n``, once per N (it has no grid).

Every (method, N, points per edge, repetition) cell runs in a fresh subprocess (BLAS threads pinned to 1); the
repetitions are interleaved (repeat 1 of every method, then repeat 2, ...), so a change in the machine's load
hits every method alike. The child generates the cloud (``--cloud uniform``: unit cube,
``numpy.random.default_rng(--seed)``; ``cheese``: ``swiss_cheese(n, 6, 0.1, 0.2, seed)``), imports the method's
package, runs it once untimed on a 1,000-point cloud (50 landmarks) so that one-time process start-up -- numba's
JIT runtime and cached kernels for flood, torch's thread pools for flooder -- is charged to neither method
(``--cold`` times the first call instead), reads VmRSS as its baseline, runs the method, reads VmHWM. Printed per cell:
median seconds over ``--repeats``, ``peak_MB`` (VmHWM, absolute, max over repeats), ``added_MB`` (VmHWM - baseline
VmRSS), number of simplices, ``bn_flooder`` (largest bottleneck distance over H0..H2 between the method's diagrams and
flooder's at the same setting; finite bars, ``gudhi.bottleneck_distance``), with ``--alpha`` the bottleneck distances in
H1 and H2 to Alpha's diagrams and whether the counts of infinite bars match (``inf``), and ``vs flood`` =
seconds / flood's seconds (> 1: flood is faster).

Then one PASS/FAIL line per target (docs/benchmarks.md, docs/papers/flood.md): flood >= 3x faster than flooder
at 1e6 points at every points per edge; flood-bucket's diagrams within 1e-6 of flooder's (the same
landmarks); flood's peak <= 1024 MB at 1e6; with ``--alpha``, flood >= 20x faster than Alpha at 1e6. Smaller N
and flood-bucket's speed are printed for information (``fpsample`` holds the GIL, so flood cannot build its
tree beside that landmark selection as it does beside its own exact FPS).
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

METHODS = ("flood", "flood-bucket", "flooder")
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

    def construct(X, landmarks):
        """The timed work: construction + persistence in dims 0..MAX_DIM + reading the diagrams."""
        if a.method in ("flood", "flood-bucket"):
            dgms, filt = flood_persistence(
                X,
                n_landmarks=landmarks,
                max_dim=MAX_DIM,
                points_per_edge=a.points_per_edge,
                workers=a.threads,
                return_filtration=True,
                fps="bucket" if a.method == "flood-bucket" else "exact",
            )
            return dgms, int(sum(len(s) for s in filt.simplices))
        if a.method == "flooder":
            st = flooder.flood_complex(
                points=X,
                landmarks=landmarks,
                points_per_edge=a.points_per_edge,
                use_triton=False,
                return_simplex_tree=True,
            )
        else:
            st = gudhi.AlphaComplex(points=X).create_simplex_tree(output_squared_values=False)
        st.compute_persistence(persistence_dim_max=True)
        return _intervals(st), st.num_simplices()

    def prepare(X):  # input conversion is not timed (flood and alpha take the numpy array as is)
        if a.method != "flooder":
            return X
        return torch.as_tensor(X, dtype=torch.float32 if a.flooder_dtype == "float32" else torch.float64)

    if not a.cold:  # one-time process start-up (JIT runtime, kernels, thread pools) on a small cloud, untimed
        construct(prepare(_cloud(a.cloud, 1000, a.seed + 1)), min(a.landmarks, 50))
    X = prepare(_cloud(a.cloud, a.n, a.seed))
    base = _proc_status("VmRSS")
    t0 = time.perf_counter()
    dgms, n_simp = construct(X, a.landmarks)
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
def spawn(a, method: str, n: int, ppe: int, rep: int, dgm_out: str) -> dict:
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
        str(max(ppe, 2)),  # alpha's cells are keyed 0 (no grid)
        "--threads",
        str(a.threads),
        "--flooder-dtype",
        a.flooder_dtype,
        "--dgm-out",
        dgm_out,
    ] + (["--cold"] if a.cold else [])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    base = {"method": method, "n": n, "ppe": ppe, "rep": rep}
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
    except subprocess.TimeoutExpired:
        return {**base, "status": "timeout"}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        err = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
        return {**base, "status": "error: " + (err[-1].strip() if err else f"exit code {p.returncode}")}
    return {**json.loads(lines[-1]), "ppe": ppe}


def finite(d: np.ndarray) -> np.ndarray:
    d = d[np.isfinite(d[:, 1])]
    return d[d[:, 1] > d[:, 0]]  # zero-length bars cost nothing


def bottleneck(path: str, ref: str, k: int, e: float | None) -> float:
    """Bottleneck distance in H_k (finite bars) between two saved diagram files."""
    from gudhi import bottleneck_distance  # CGAL; gudhi.hera takes minutes already at 3e4 points

    return float(bottleneck_distance(finite(np.load(path)[f"H{k}"]), finite(np.load(ref)[f"H{k}"]), e))


def fidelity(paths: dict, ref: str, a, dims=(1, 2)) -> dict:
    """{method: {bn_H<k>..., inf_match}} against the reference file, the distances in ``--threads`` processes."""
    B = np.load(ref)
    with ProcessPoolExecutor(max_workers=a.threads, mp_context=get_context("spawn")) as ex:
        jobs = {(m, k): ex.submit(bottleneck, p, ref, k, a.bn_error) for m, p in paths.items() for k in dims}
        out = {m: {f"bn_H{k}": jobs[m, k].result() for k in dims} for m in paths}
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
        f"machine: {platform.machine()}, {os.cpu_count()} cpus, python {platform.python_version()}, "
        f"gudhi {v('gudhi')}, flooder {v('flooder')}, torch {v('torch')}, scipy {v('scipy')}, numba {v('numba')}, "
        f"numpy {np.__version__}"
    )


def main(a) -> None:
    ns = [int(float(s)) for s in a.points.split(",")]
    ppes = [int(s) for s in str(a.points_per_edge).split(",")]
    methods = [m.strip() for m in a.methods.split(",")]
    bad = set(methods) - set(METHODS)
    if bad:
        raise SystemExit(f"unknown methods {sorted(bad)}; choose from {METHODS}")
    if "alpha" in methods:
        raise SystemExit("alpha is not a --methods entry: add --alpha")
    print(versions())
    print(
        f"{time.strftime('%Y-%m-%d %H:%M')}; cloud {a.cloud} (seed {a.seed}), landmarks {a.landmarks}, points per edge "
        f"{', '.join(map(str, ppes))}, threads {a.threads}, flooder dtype {a.flooder_dtype}, {a.repeats} interleaved "
        f"repeats, timeout {a.timeout:g} s"
        + (", with alpha" if a.alpha else "")
        + ("; cold: first call in each process" if a.cold else "; each child warms its method up on 1,000 points first")
    )
    t_all = time.perf_counter()
    cells, summary = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in ns:
            plan = [(m, ppe) for ppe in ppes for m in methods]
            if a.alpha and n <= a.alpha_max_n:
                plan.append(("alpha", 0))
            runs: dict = {key: [] for key in plan}
            for rep in range(a.repeats):  # interleaved: repeat r of every cell before repeat r + 1 of any
                for m, ppe in plan:
                    if runs[m, ppe] and runs[m, ppe][-1]["status"] != "ok":
                        continue
                    r = spawn(a, m, n, ppe, rep, os.path.join(tmp, f"{m}_{n}_{ppe}.npz"))
                    cells.append(r)
                    runs[m, ppe].append(r)
                    print(
                        f"  [{fmt_n(n)} p={ppe} {m} rep {rep}] {r['status']}"
                        + (f" {r['seconds']:.2f} s, peak {r['peak_mb']:.0f} MB" if r["status"] == "ok" else ""),
                        file=sys.stderr,
                        flush=True,
                    )
            for (m, ppe), rs in runs.items():
                ok = [r for r in rs if r["status"] == "ok"]
                if len(ok) < len(rs) or not ok:
                    summary[n, m, ppe] = rs[-1]
                    continue
                summary[n, m, ppe] = {
                    "status": "ok",
                    "seconds": float(np.median([r["seconds"] for r in ok])),
                    "all_seconds": [r["seconds"] for r in ok],
                    "peak_mb": max(r["peak_mb"] for r in ok),
                    "simplices": ok[0]["simplices"],
                    "added_mb": max((r["added_mb"] for r in ok if r["added_mb"] is not None), default=None),
                }
            t0 = time.perf_counter()
            for ppe in ppes:  # the same landmarks (flood-bucket) must give flooder's diagrams
                ref = os.path.join(tmp, f"flooder_{n}_{ppe}.npz")
                mine = {
                    m: os.path.join(tmp, f"{m}_{n}_{ppe}.npz")
                    for m in ("flood", "flood-bucket")
                    if summary.get((n, m, ppe), {}).get("status") == "ok"
                }
                if mine and summary.get((n, "flooder", ppe), {}).get("status") == "ok":
                    for m, f in fidelity(mine, ref, a, dims=range(MAX_DIM + 1)).items():
                        summary[n, m, ppe]["bn_flooder"] = max(f[f"bn_H{k}"] for k in range(MAX_DIM + 1))
            ref = os.path.join(tmp, f"alpha_{n}_0.npz")
            paths = {
                (m, ppe): os.path.join(tmp, f"{m}_{n}_{ppe}.npz")
                for ppe in ppes
                for m in ("flood", "flood-bucket", "flooder")
                if summary.get((n, m, ppe), {}).get("status") == "ok"
            }
            if not a.no_fidelity and paths and summary.get((n, "alpha", 0), {}).get("status") == "ok":
                for (m, ppe), f in fidelity(paths, ref, a).items():
                    summary[n, m, ppe].update(f)
            print(f"  [{fmt_n(n)}] bottleneck distances: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)

    head = (
        f"{'N':<6}{'p':>4}  {'method':<14}{'seconds':>9}{'peak_MB':>9}{'added_MB':>10}{'simplices':>11}"
        f"{'bn_flooder':>12}{'bn_H1':>9}{'bn_H2':>9}{'inf':>5}  vs flood"
    )
    print("\n" + head + "\n" + "-" * (len(head) + 8))
    for (n, m, ppe), s in summary.items():
        p_txt = str(ppe) if m != "alpha" else "-"
        if s["status"] != "ok":
            print(f"{fmt_n(n):<6}{p_txt:>4}  {m:<14}{s['status']}")
            continue
        fl = summary.get((n, "flood", ppe), {}) if m != "alpha" else {}
        vs = f"x{s['seconds'] / fl['seconds']:.2f}" if m != "flood" and fl.get("status") == "ok" else ""
        if m == "alpha":
            vs = "  ".join(
                f"p={q}: x{s['seconds'] / summary[n, 'flood', q]['seconds']:.0f}"
                for q in ppes
                if summary.get((n, "flood", q), {}).get("status") == "ok"
            )
        bf = f"{s['bn_flooder']:>12.2e}" if "bn_flooder" in s else f"{'-':>12}"
        bn = "".join(f"{s[k]:>9.4f}" if k in s else f"{'-':>9}" for k in ("bn_H1", "bn_H2"))
        inf = ("yes" if s["inf_match"] else "no") if "inf_match" in s else "-"
        add = f"{s['added_mb']:>10.0f}" if s["added_mb"] is not None else f"{'-':>10}"
        print(
            f"{fmt_n(n):<6}{p_txt:>4}  {m:<14}{s['seconds']:>9.2f}{s['peak_mb']:>9.0f}{add}{s['simplices']:>11,d}"
            f"{bf}{bn}{inf:>5}  {vs}"
        )

    def ratio(n, m, ppe, base="flood"):
        f, o = summary.get((n, base, ppe), {}), summary.get((n, m, ppe), {})
        return o["seconds"] / f["seconds"] if f.get("status") == "ok" and o.get("status") == "ok" else None

    def verdict(ok):
        return "n/a " if ok is None else ("PASS" if ok else "FAIL")

    print()
    got = {q: r for q in ppes if (r := ratio(10**6, "flooder", q)) is not None}
    print(
        f"{verdict(min(got.values()) >= 3 if got else None)}  flood (its default, exact FPS) >= 3x faster than "
        f"flooder at 1e6 points (CPU, same landmark count and grid; median of {a.repeats}): "
        + (", ".join(f"x{r:.2f} at p={q}" for q, r in got.items()) or "not measured")
    )
    got = {(n, q): r for n in ns if n != 10**6 for q in ppes if (r := ratio(n, "flooder", q)) is not None}
    if got:  # no target below 1e6: fixed costs (the landmarks' Delaunay, the grid queries) weigh more there
        print(
            "info  flood vs flooder below 1e6: "
            + ", ".join(f"x{r:.2f} at {fmt_n(n)} p={q}" for (n, q), r in got.items())
        )
    got = {(n, q): r for n in ns for q in ppes if (r := ratio(n, "flooder", q, "flood-bucket")) is not None}
    if got:  # no target: fpsample holds the GIL, so the tree cannot be built beside the landmark selection
        print(
            "info  flood-bucket (flooder's own bucket FPS, then the same construction) vs flooder: "
            + ", ".join(f"x{r:.2f} at {fmt_n(n)} p={q}" for (n, q), r in got.items())
        )
    bns = {(n, q): s["bn_flooder"] for (n, m, q), s in summary.items() if m == "flood-bucket" and "bn_flooder" in s}
    print(
        f"{verdict(max(bns.values()) <= 1e-6 if bns else None)}  flood-bucket's diagrams within 1e-6 of flooder's "
        f"(bottleneck, H0-H2, same landmarks): "
        + (", ".join(f"{b:.1e} at {fmt_n(n)} p={q}" for (n, q), b in bns.items()) or "not measured")
        + ("" if a.flooder_dtype == "float64" else f" (flooder fed {a.flooder_dtype})")
    )
    pk = {q: s["peak_mb"] for (n, m, q), s in summary.items() if n == 10**6 and m == "flood" and s["status"] == "ok"}
    print(
        f"{verdict(max(pk.values()) <= 1024 if pk else None)}  flood peak <= 1024 MB at 1e6: "
        + (", ".join(f"{v:.0f} MB at p={q}" for q, v in pk.items()) or "not measured")
    )
    if a.alpha:
        al = summary.get((10**6, "alpha", 0), {})
        rs = [
            al["seconds"] / summary[10**6, "flood", q]["seconds"]
            for q in ppes
            if al.get("status") == "ok" and summary.get((10**6, "flood", q), {}).get("status") == "ok"
        ]
        print(
            f"{verdict(min(rs) >= 20 if rs else None)}  flood >= 20x faster than alpha at 1e6: "
            + (", ".join(f"x{r:.0f}" for r in rs) or "not measured")
        )
    print(f"({time.perf_counter() - t_all:.0f} s wall)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(
                {
                    "args": vars(a),
                    "machine": versions(),
                    "cells": cells,
                    "summary": [{"n": n, "method": m, "points_per_edge": q, **s} for (n, m, q), s in summary.items()],
                },
                fh,
                indent=1,
            )


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--points", default="1e4,1e5,1e6", help="comma-separated N (e-notation accepted)")
    p.add_argument("--methods", default="flood,flood-bucket,flooder", help="of flood, flood-bucket, flooder")
    p.add_argument("--cloud", choices=("uniform", "cheese"), default="uniform")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--landmarks", type=int, default=1000)
    p.add_argument(
        "--points-per-edge", default="30,8", help="comma-separated grids for flood and flooder (flooder's default: 30)"
    )
    p.add_argument("--threads", type=int, default=2, help="flood workers / torch threads for flooder")
    p.add_argument("--flooder-dtype", choices=("float32", "float64"), default="float32")
    p.add_argument("--repeats", type=int, default=3, help="interleaved; median seconds, max peak over repeats")
    p.add_argument("--alpha", action="store_true", help="also time gudhi's Alpha complex (~8 GB and ~4 min at 1e6)")
    p.add_argument("--alpha-max-n", type=float, default=1e6, help="with --alpha: skip alpha above this N")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per cell")
    p.add_argument("--no-fidelity", action="store_true", help="skip the bottleneck distances to alpha")
    p.add_argument(
        "--bn-error",
        type=float,
        default=1e-8,
        help="additive error allowed in gudhi.bottleneck_distance (default 1e-8, as the task; 0: the "
        "exact mode, whose memory grows with the product of the diagram sizes)",
    )
    p.add_argument(
        "--cold",
        action="store_true",
        help="time the first call in a fresh process (default: each child first runs its method once on a "
        "1,000-point cloud, untimed, so that one-time start-up is not charged to either method)",
    )
    p.add_argument("--json", default=None, help="also write all raw cell results here")
    p.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: N = 1000, 50 landmarks, 4 and 6 points per edge, 1 thread, 1 repeat, every method",
    )
    # child mode (one cell, internal)
    p.add_argument("--cell", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--method", choices=(*METHODS, "alpha"), help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, help=argparse.SUPPRESS)
    p.add_argument("--rep", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--dgm-out", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        ppes = [int(v) for v in str(args.points_per_edge).split(",")]
    except ValueError:
        p.error(f"--points-per-edge must be comma-separated integers >= 2, got {args.points_per_edge!r}")
    if not ppes or min(ppes) < 2:
        p.error(f"--points-per-edge must be comma-separated integers >= 2, got {args.points_per_edge!r}")
    if args.cell:
        args.points_per_edge = ppes[0]
    if args.smoke and not args.cell:
        args.points, args.landmarks, args.points_per_edge, args.threads = "1000", 50, "6,4", 1
        args.repeats, args.alpha, args.timeout = 1, True, 300.0
    return args


if __name__ == "__main__":
    args = parse_args()
    if args.cell:
        print(json.dumps(run_cell(args)), flush=True)
    else:
        main(args)
