"""Produce the shipped calibration table of ``mdbe-calibrated`` (``agents/bandits/mdbe_calibration_table.py``).

    python benchmarks/calibrate_mdbe.py                 # d = 1, Bernoulli, T = 2^8 .. 2^18 and 10^5 (~4 min, one core)
    python benchmarks/calibrate_mdbe.py --horizons 256,1024 --out /tmp/table.py   # a subset, elsewhere
    python benchmarks/calibrate_mdbe.py --smoke         # T = 256 only, written to a temporary folder (seconds)

For every horizon it runs :func:`papergym.agents.bandits.mdbe.calibrate_c0` with the defaults of
``mdbe-calibrated`` (grid ``C0_GRID``, false-alarm target 5 %, 60 calibration runs, MDBE's default
hyperparameters) and writes the records as Python literals, one line per horizon. The procedure is
deterministic (fixed calibration seeds), so rerunning the script reproduces the table bit for bit;
``tests/agents/bandits/test_mdbe_calibrated.py`` recomputes a cheap entry and compares.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from papergym.agents.bandits.mdbe import _MDBE_HP, CALIBRATION_DEFAULTS, DEFAULTS, calibrate_c0

DEFAULT_HORIZONS = [2**k for k in range(8, 19)] + [100_000]
TABLE_PATH = Path(__file__).resolve().parents[1] / "agents" / "bandits" / "mdbe_calibration_table.py"

HEADER = (
    '''"""Shipped calibration of ``mdbe-calibrated`` '''
    '''(see :class:`papergym.agents.bandits.mdbe.BatchedMDBECalibrated`).

Written by ``benchmarks/calibrate_mdbe.py``; do not edit by hand. ``ENTRIES``: one
:func:`~papergym.agents.bandits.mdbe.calibrate_c0` record per class and horizon (``sigma`` None for Bernoulli
rewards), all made with ``SETTINGS``; ``tried`` lists every c0 run with the number of runs (of ``runs``) that
restarted and the rounds played (fewer than ``T`` for a c0 stopped once it exceeded the target).
"""

'''
)


def format_entry(entry: dict) -> str:
    """One table entry as a one-line Python literal (keys in a fixed order)."""
    order = ("d", "T", "noise", "sigma", "c0", "false_alarm_rate", "runs", "target", "tried")
    entry = {**entry, "tried": [{k: x[k] for k in ("c0", "alarm_runs", "rounds")} for x in entry["tried"]]}
    return "{" + ", ".join(f"{k!r}: {entry[k]!r}" for k in order) + "}"


def render_table(lines: list[str]) -> str:
    settings = {
        "c0_grid": list(CALIBRATION_DEFAULTS["c0_grid"]),
        "false_alarm_target": CALIBRATION_DEFAULTS["false_alarm_target"],
        "calibration_runs": CALIBRATION_DEFAULTS["calibration_runs"],
        "mdbe": {k: DEFAULTS[k] for k in _MDBE_HP},
    }
    return (
        HEADER
        + f"#: the settings every entry was made with (mdbe-calibrated's defaults)\nSETTINGS: dict = {settings!r}\n\n"
        + "#: one calibrate_c0 record per (d, T, noise, sigma)\nENTRIES: list = [\n"
        + "".join(f"    {x},\n" for x in lines)
        + "]\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--horizons", help="comma list of horizons (default: 2^8 .. 2^18 and 100000)")
    ap.add_argument("--d", type=int, default=1, help="dimension (default 1)")
    ap.add_argument(
        "--out", default=None, help="the module to write (default: the shipped table; --smoke: a temporary folder)"
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: T = 256 only (unless --horizons), never the shipped table unless --out names it",
    )
    args = ap.parse_args(argv)
    if args.out is None:
        if args.smoke:
            import tempfile

            args.out = str(Path(tempfile.mkdtemp(prefix="papergym-calibrate-mdbe-")) / "mdbe_calibration_table.py")
        else:
            args.out = str(TABLE_PATH)
    if args.smoke and not args.horizons:
        args.horizons = "256"
    horizons = [int(x) for x in args.horizons.split(",")] if args.horizons else DEFAULT_HORIZONS
    lines = []
    for T in horizons:
        t0 = time.perf_counter()
        rec = calibrate_c0(args.d, T, "bernoulli", **CALIBRATION_DEFAULTS)
        lines.append(format_entry({"d": args.d, "T": T, "noise": "bernoulli", "sigma": None, **rec}))
        print(
            f"d={args.d} T={T:>7}: c0 = {rec['c0']:<5} false alarms {rec['false_alarm_rate']:.3f}  "
            f"tried {[(x['c0'], x['alarm_runs']) for x in rec['tried']]}  ({time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
    Path(args.out).write_text(render_table(lines))
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
