"""Performance benchmark of the bandit runner and agents (a table of ratios, measured side by side).

    python benchmarks/bench_bandits.py            # ~2-3 minutes on 2 cores
    python benchmarks/bench_bandits.py --quick    # smaller sizes, a smoke run
    python benchmarks/bench_bandits.py --compare  # also time the default `papergym compare` (~1 min)
    python benchmarks/bench_bandits.py --smoke    # tiny sizes, every row, a few seconds (the test suite's check)

Rows:
1. Batched runner (native vector env + batched agent, 100 seeds) against a plain per-seed Gymnasium
   loop (``gym.make`` + ``RegretRecorder`` + per-run agent) of the same agent: agent-steps per second
   and their ratio, for ``binning-ucb`` and ``mdbe``. Both paths are the runner's own
   (``run_cells(mode="batched" | "per-run")``) and give identical numbers (tested).
2. SMPyBandits 0.9.7's UCB (K = 32, T = 10^5). It needs scipy < 1.14, so it cannot live next to
   papergym: ``--smpy-python`` names the interpreter of a separate venv that has it, and its UCB is
   timed there in the same run; without it, the anchor measured on this kind of machine (11.5 µs per
   step) is used.
3. MDBE's seconds per 10^4 rounds of one run at T = 10^4 and T = 10^5 on two-peak-cyclic (per-step
   cost must not grow linearly with t), against the official implementation's ~125 s for one
   T = 10^5 run (anchor), and the peak memory of the T = 10^5 run.
BLAS threads are pinned to 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np

from papergym.leaderboard.runner.compare import run_cells

ENV = "NonStatLipschitz-v0"
SMPY_UCB_US_PER_STEP = 11.5  # anchor: SMPyBandits 0.9.7 UCB, K = 32, T = 1e5, this kind of machine
OFFICIAL_MDBE_S_T1E5 = 125.0  # anchor: nguyenicolas/NS_Lipschitz_Bandits MBDE, one run, T = 1e5


def _time_cells(agent, seeds, horizon, mode, instance="two-peak-cyclic", **hp):
    kw = {"instance": instance, "horizon": horizon}
    t0 = time.perf_counter()
    res = run_cells(ENV, kw, agent, hp, seeds, mode)
    wall = time.perf_counter() - t0
    bad = [r for r in res if r["status"] != "ok"]
    if bad:
        raise RuntimeError(bad[0]["traceback"])
    return wall, res


_SMPY_SNIPPET = """
import time, numpy as np
from SMPyBandits.Policies import UCB
T, K = 100000, 32
rng = np.random.default_rng(0)
means = np.linspace(0.1, 0.9, K)
pol = UCB(K)
pol.startGame()
t0 = time.perf_counter()
for _ in range(T):
    a = pol.choice()
    pol.getReward(a, float(rng.random() < means[a]))
print(1e6 * (time.perf_counter() - t0) / T)
"""


def _smpy_ucb_us(python: str | None):
    """SMPyBandits' UCB (K = 32, T = 1e5, Bernoulli arms), µs per step, timed in ``python`` (an
    interpreter whose environment has SMPyBandits 0.9.7 and scipy < 1.14), or None."""
    import subprocess

    if not python:
        return None
    r = subprocess.run(
        [python, "-c", _SMPY_SNIPPET], capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    if r.returncode != 0:
        print(f"   (SMPyBandits run failed: {r.stderr.strip().splitlines()[-1] if r.stderr else r.returncode})")
        return None
    return float(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--smoke", action="store_true", help="tiny sizes (4 seeds, T <= 512): exercises every row in seconds"
    )
    ap.add_argument("--compare", action="store_true", help="also time the default papergym compare")
    ap.add_argument(
        "--smpy-python",
        default=os.environ.get("SMPY_PYTHON"),
        help="python of a venv with SMPyBandits 0.9.7 (scipy<1.14) to time its UCB side by side, e.g. "
        "python -m venv /tmp/smpy && /tmp/smpy/bin/pip install SMPyBandits==0.9.7 'scipy<1.14' "
        "'numpy<2'",
    )
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)

    n_batch = 4 if args.smoke else 100
    T_runner = 2**8 if args.smoke else (2**11 if args.quick else 2**13)
    n_loop = 1 if args.smoke else (3 if args.quick else 5)
    n_ten = 2 if args.smoke else 10
    rows = []
    print(f"papergym bandit benchmark  (python {sys.version.split()[0]}, numpy {np.__version__})\n")

    # warm-up: numba compilation and imports are not what we measure
    for agent in ("binning-ucb", "mdbe"):
        _time_cells(agent, [0, 1], 64, "batched")
        _time_cells(agent, [0], 64, "per-run")

    print(
        f"1. runner throughput, T = {T_runner}: batched over {n_batch} seeds vs per-seed Gymnasium loop "
        f"({n_loop} seeds)"
    )
    print(f"   {'agent':<14}{'batched µs/agent-step':>24}{'per-seed µs/agent-step':>25}{'speed-up':>10}")
    for agent in ("binning-ucb", "mdbe"):
        wb, _ = _time_cells(agent, list(range(n_batch)), T_runner, "batched")
        wl, _ = _time_cells(agent, list(range(n_loop)), T_runner, "per-run")
        ub = 1e6 * wb / (n_batch * T_runner)
        ul = 1e6 * wl / (n_loop * T_runner)
        print(f"   {agent:<14}{ub:>24.3f}{ul:>25.2f}{ul / ub:>9.1f}x")
        rows.append((agent, ub, ul))

    smpy = _smpy_ucb_us(args.smpy_python)
    ub = rows[0][1]
    src = "measured now, same machine" if smpy is not None else "anchor; pass --smpy-python to measure"
    smpy = SMPY_UCB_US_PER_STEP if smpy is None else smpy
    print(
        f"\n2. binning-ucb batched (env step + regret + agent) vs SMPyBandits UCB alone "
        f"(K = 32; {src}: {smpy:.2f} µs/step)"
    )
    print(f"   papergym {ub:.3f} µs/agent-step  ->  {smpy / ub:.1f}x faster  (target >= 50x, <= 0.25 µs)")

    print("\n3. MDBE on two-peak-cyclic: seconds per run (whole run: env, regret, agent)")
    print(
        f"   {'T':>8}{'gym loop':>10}{'batched n=1':>13}{'batched n=' + str(n_ten):>14}{'s/1e4 (n=1)':>13}"
        f"{'restarts':>10}{'final regret':>14}"
    )
    horizons = (512,) if args.smoke else ((10_000, 30_000) if args.quick else (10_000, 100_000))
    for T in horizons:
        w_loop, _ = _time_cells("mdbe", [0], T, "per-run")
        w_one, res = _time_cells("mdbe", [0], T, "batched")
        w_ten, _ = _time_cells("mdbe", list(range(n_ten)), T, "batched")
        r = res[0]
        print(
            f"   {T:>8}{w_loop:>10.2f}{w_one:>13.2f}{w_ten / n_ten:>14.2f}{1e4 * w_one / T:>13.3f}"
            f"{r['diagnostics'].get('restarts', '-'):>10}{r['cum_regret'][-1]:>14.1f}"
        )
    if horizons[-1] == 100_000:
        print(
            f"   vs the official implementation at T = 1e5 (anchor {OFFICIAL_MDBE_S_T1E5:.0f} s per run): "
            f"{OFFICIAL_MDBE_S_T1E5 / w_loop:.0f}x (gym loop), {OFFICIAL_MDBE_S_T1E5 / w_one:.0f}x (batched n=1), "
            f"{OFFICIAL_MDBE_S_T1E5 / (w_ten / 10):.0f}x (batched n=10)  (target >= 100x)"
        )
    tracemalloc.start()
    _time_cells("mdbe", [0], horizons[-1], "batched")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"   peak traced memory of one T = {horizons[-1]} run (env, agent, regret record): {peak / 2**20:.1f} MiB")

    if args.compare and not args.smoke:
        import subprocess

        t0 = time.perf_counter()
        subprocess.run(
            ["papergym", "compare", ENV, "--no-cache", "--quiet", "--out", "/tmp/papergym-bench-compare"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(
            f"\n4. `papergym compare {ENV}` with defaults (all agents, 100 seeds, T = 1e5, "
            f"joblib, no cache): {time.perf_counter() - t0:.1f} s wall"
        )


if __name__ == "__main__":
    main()
