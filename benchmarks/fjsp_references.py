"""Offline CP-SAT reference values for the synthetic FJSP sets (papergym's own references where no published
optimum or bound exists; docs/papers/fjsp-mistar.md).

    python benchmarks/fjsp_references.py --sets sd2-10x5,sd1-10x5 --time-limit 30 --workers 2
    python benchmarks/fjsp_references.py --smoke    # 1 instance, 1 s, 1 worker, written to a temporary folder

Solves every instance of each set with the CP-SAT model of ``baselines/scheduling/cpsat.py`` and merges
``{lb, ub, optimal, source}`` per instance into ``envs/scheduling/fjsp/data/references.json`` (written
atomically after each set; existing entries of other sets are kept; ``--out`` writes a copy elsewhere).
``lb`` is CP-SAT's proven bound, ``ub`` its best (left-compressed) makespan; the source string records the
OR-Tools version, workers and time limit, on which the values depend.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import tempfile
import time
from pathlib import Path

from papergym.baselines.scheduling.cpsat import solve_cpsat
from papergym.envs.scheduling.fjsp.sets import DATA_DIR, load_set


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="sd2-10x5")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--count", type=int, default=None, help="first COUNT instances of each set")
    ap.add_argument(
        "--out",
        default=None,
        help="the references file to write (default: the shipped one; its entries "
        "are read first either way; --smoke: a temporary folder)",
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: the first instance of each set, 1 s, 1 worker, never the shipped file unless --out",
    )
    args = ap.parse_args()
    if args.smoke:
        args.count, args.time_limit, args.workers = 1, 1.0, 1
    shipped = DATA_DIR / "references.json"
    doc = json.loads(shipped.read_text()) if shipped.is_file() else {"instances": {}}
    if args.out is not None:
        path = Path(args.out)
    elif args.smoke:
        path = Path(tempfile.mkdtemp(prefix="papergym-fjsp-references-")) / "references.json"
    else:
        path = shipped
    for name in args.sets.split(","):
        insts = load_set(name)[: args.count]
        t0 = time.perf_counter()
        n_opt = 0
        for inst in insts:
            r = solve_cpsat(inst, time_limit=args.time_limit, num_workers=args.workers, seed=0)
            opt = r.status == "optimal"  # never a claim an independent check refuted (solve_cpsat)
            n_opt += opt
            check = r.settings.get("optimality_check", "")
            note = (
                (", optimum " + check.split(":", 1)[0])
                if opt
                else (f", {check.split(':', 1)[0]} claim" if check.startswith("contradiction") else ", limit reached")
            )
            src = (
                f"papergym CP-SAT (ortools {r.settings['ortools']}, {args.workers} workers, "
                f"{args.time_limit:g} s{note})"
            )
            doc["instances"][inst.name] = {
                "lb": int(r.lower_bound),
                "ub": int(r.makespan),
                "optimal": bool(opt),
                "source": src,
                "seconds": round(r.wall_time, 2),
            }
            print(f"{inst.name}: {r.status} C={r.makespan} LB={r.lower_bound} {r.wall_time:.1f}s", flush=True)
        doc["version"] = dt.date.today().isoformat()
        doc["generated_by"] = "benchmarks/fjsp_references.py"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)
        mean = sum(doc["instances"][i.name]["ub"] for i in insts) / len(insts)
        print(
            f"== {name}: {len(insts)} instances, {n_opt} proved optimal, mean makespan {mean:.2f}, "
            f"{time.perf_counter() - t0:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
