"""Fresh-process ``gym.make`` + ``reset`` time of every registered papergym env id (one subprocess per id).

    python benchmarks/bench_make.py                      # every env id
    python benchmarks/bench_make.py EntropicMarkovGame-v0 --kwargs '{"instance": "random-cold"}'
    python benchmarks/bench_make.py EntropicMarkovGame-v0 --families --repeat 3   # every instance family
    python benchmarks/bench_make.py --smoke              # the first env id and its first family only (seconds)

``--families`` runs one row per instance family of each id (the ``INSTANCES`` tuple of the env's module, passed
as ``instance=`` on top of ``--kwargs``); ``--repeat N`` starts N fresh processes per row and reports the median
and the slowest (timings on a shared machine are noisy). Prints, per id, the import time of ``papergym.envs``, the
``make`` + ``reset(seed=0)`` time and the heavy optional packages (torch, torch_geometric, ortools, sklearn, dask) that
were imported by then.
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


def families(env_id: str) -> tuple[str, ...]:
    """The instance families of an env id: ``INSTANCES`` of its module (empty if it has none)."""
    import importlib

    import gymnasium as gym

    import papergym.envs  # noqa: F401  (registers the ids)

    return tuple(getattr(importlib.import_module(gym.spec(env_id).entry_point.split(":")[0]), "INSTANCES", ()))


def _time(env_id: str, kwargs: dict, repeat: int) -> dict | str:
    """Median import / make+reset time over ``repeat`` fresh processes (and the slowest make+reset), or the
    child's error line."""
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", _CHILD, env_id, json.dumps(kwargs)], capture_output=True, text=True)
        if out.returncode != 0:
            return out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit status {out.returncode}"
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    med = sorted(runs, key=lambda r: r["make_reset_s"])[len(runs) // 2]
    return {**med, "max_s": max(r["make_reset_s"] for r in runs)}


def main() -> int:
    import papergym.envs as penvs

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("env_ids", nargs="*", help="env ids (default: every registered one)")
    ap.add_argument("--kwargs", default="{}", help="JSON kwargs for gym.make")
    ap.add_argument(
        "--families",
        action="store_true",
        help="one row per instance family of each id (its module's INSTANCES, as instance=)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="fresh processes per row; the median is printed")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: the first env id (default: the first registered) and its first family only",
    )
    args = ap.parse_args()
    try:
        kwargs = json.loads(args.kwargs)
    except json.JSONDecodeError as exc:
        ap.error(f"--kwargs must be a JSON object: {exc}")
    if not isinstance(kwargs, dict):
        ap.error(f"--kwargs must be a JSON object, got {args.kwargs!r}")
    if args.repeat < 1:
        ap.error(f"--repeat must be >= 1, got {args.repeat}")
    ids = args.env_ids or list(penvs.list_envs())
    if args.smoke:
        ids = ids[:1]
    for env_id in ids:
        penvs.check_env_id(env_id)
    rows = []
    for env_id in ids:
        fams = families(env_id) if args.families else ()
        if args.smoke:
            fams = families(env_id)[:1]
        rows += [(env_id, f, {**kwargs, "instance": f}) for f in fams] if fams else [(env_id, "", kwargs)]
    print(f"{'env id':<28} {'family':<22} {'import s':>9} {'make+reset s':>13} {'max s':>7}  heavy imports")
    for env_id, fam, kw in rows:
        r = _time(env_id, kw, args.repeat)
        if isinstance(r, str):
            print(f"{env_id:<28} {fam or '-':<22} failed: {r}")
            continue
        print(
            f"{env_id:<28} {fam or '-':<22} {r['import_s']:>9.3f} {r['make_reset_s']:>13.3f} {r['max_s']:>7.3f}  "
            f"{', '.join(r['heavy']) or '-'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
