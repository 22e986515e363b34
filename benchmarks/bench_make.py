"""Fresh-process ``gym.make`` + ``reset`` time of every registered papergym env id (one subprocess per id).

    python benchmarks/bench_make.py                      # every env id
    python benchmarks/bench_make.py EntropicMarkovGame-v0 --kwargs '{"instance": "random-cold"}'

Prints, per id, the import time of ``papergym.envs``, the ``make`` + ``reset(seed=0)`` time and the heavy optional
packages (torch, torch_geometric, ortools, sklearn, dask) that were imported by then.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

_CHILD = """
import json, sys, time
t0 = time.perf_counter()
import gymnasium as gym
import papergym.envs
t1 = time.perf_counter()
env = gym.make(sys.argv[1], **json.loads(sys.argv[2]))
env.reset(seed=0)
t2 = time.perf_counter()
heavy = [m for m in ("torch", "torch_geometric", "ortools", "sklearn", "dask") if m in sys.modules]
print(json.dumps({"import_s": t1 - t0, "make_reset_s": t2 - t1, "heavy": heavy}))
"""


def main() -> int:
    import papergym.envs as penvs

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("env_ids", nargs="*", help="env ids (default: every registered one)")
    ap.add_argument("--kwargs", default="{}", help="JSON kwargs for gym.make")
    args = ap.parse_args()
    ids = args.env_ids or list(penvs.list_envs())
    print(f"{'env id':<28} {'import s':>9} {'make+reset s':>13}  heavy imports")
    for env_id in ids:
        out = subprocess.run([sys.executable, "-c", _CHILD, env_id, args.kwargs], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{env_id:<28} failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{env_id:<28} {r['import_s']:>9.3f} {r['make_reset_s']:>13.3f}  {', '.join(r['heavy']) or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
