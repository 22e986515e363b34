"""Performance benchmark of the m-set semi-bandit agents and runner (tables of ratios, measured side by side).

    python benchmarks/bench_semibandit.py            # a few minutes on 2 cores
    python benchmarks/bench_semibandit.py --quick    # shorter warm-ups and windows, n = 2000 runner rows
    python benchmarks/bench_semibandit.py --compare  # also time the default compare() of MSetSemiBandit-v0
    python benchmarks/bench_semibandit.py --smoke    # (d, m) = (10, 3) only, tiny windows, n = 200 (seconds)

Sections (``MSetSemiBandit-v0``, docs/papers/mset-semibandit.md):

1. Seconds per round of ``ftpl-frechet`` (O(d^2) geometric resampling) against ``ftrl-hybrid``
   (Newton solve of the KKT conditions + exact-marginal sampling) at ``(d, m)`` in
   ``{(10, 3), (50, 10), (200, 20)}`` on the ``stochastic`` family (``g = 0.2``; Bernoulli losses
   ``1{U < mu}`` simulated here, outside the agents' clock, so only ``act + update`` is timed). Each
   agent first plays ``--warmup`` rounds (FTPL's resampling cost depends on how concentrated its
   selection has become: ``E[K_i] = 1/w_i``), then the time per round is averaged over the next
   ``--window`` rounds. Both the per-run agent (``make_agent``, one run, dict observations) and the
   batched agent over 20 runs (``make_batched_agent``; time per round of all 20 runs and per
   agent-round) are timed; the ratio column is FTPL / FTRL (> 1: FTPL slower). FTPL's geometric
   resampling draws per round over the window are read from its ``diagnostics()`` (the first key
   naming GR draws) where it reports them. A row is skipped with a message when an agent is not
   registered.
2. Runner throughput: ``run_cells("MSetSemiBandit-v0", {"instance": "stochastic", "horizon": n,
   "d": 10, "m": 3}, agent, {}, seeds, mode)`` -- batched (native vector env + batched agent, 100
   seeds) against the per-seed Gymnasium loop (``gym.make`` + ``RegretRecorder`` + per-run agent,
   5 seeds): agent-steps per second and their ratio for every registered agent of the env. Target:
   batched >= 10x the per-seed loop for ``combucb``. Skipped while the env is not registered.
3. ``--compare``: wall time of ``compare("MSetSemiBandit-v0", seeds=range(20), backend="joblib",
   n_jobs=2, cache=False)`` (all agents, default n = 10^4). Target: about a minute on 2 cores.

BLAS threads are pinned to 1 (threadpoolctl). numba kernels are compiled (or loaded from the cache)
before anything is timed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np

ENV = "MSetSemiBandit-v0"
SIZES = ((10, 3), (50, 10), (200, 20))
GAP = 0.2
N_BATCH = 20


def _registered(name: str) -> bool:
    from papergym.agents.base import UnknownAgentError, get_agent_info

    try:
        get_agent_info(name, ENV)
    except UnknownAgentError:
        return False
    return True


def _env_registered() -> bool:
    from papergym.envs import list_envs

    return ENV in list_envs()


def _means(d: int, m: int) -> np.ndarray:
    """The ``stochastic`` family (docs/papers/mset-semibandit.md) with the optimal set first:
    0.5(1 - g) / 0.5(1 + g)."""
    return np.where(np.arange(d) < m, 0.5 * (1 - GAP), 0.5 * (1 + GAP))


def _gr_key(diag: dict) -> str | None:
    """FTPL's diagnostic of geometric-resampling draws (cumulative or mean), if it reports one."""
    keys = [k for k in diag if "gr" in k.lower() and ("draw" in k.lower() or "resampl" in k.lower())]
    keys += [k for k in diag if "resampl" in k.lower() and k not in keys]
    return min(keys, key=lambda k: ("total" not in k and "cum" not in k, k)) if keys else None


def _diag_mean(agent, key):
    v = agent.diagnostics().get(key)
    return None if v is None else float(np.mean(np.asarray(v, dtype=float)))


def time_agent(name: str, d: int, m: int, warmup: int, window: int, n_runs: int | None, seed: int = 0):
    """Play ``name`` on simulated stochastic losses: ``warmup`` rounds, then ``window`` timed rounds.

    ``n_runs=None``: the per-run agent (one run, dict observations of shape ``(d,)``); otherwise the
    batched agent over ``n_runs`` runs. Returns (seconds per round, regret per run over all rounds,
    GR-draw diagnostic key, its value before and after the window (per-run mean), agent)."""
    from papergym.agents.base import make_agent, make_batched_agent
    from papergym.envs.bandits.semibandit import make_problem
    from papergym.envs.spec import agent_seed

    T = warmup + window
    problem = make_problem(d, m, T)
    mu = _means(d, m)
    best = mu[:m].sum()
    rng = np.random.default_rng(seed)
    if n_runs is None:
        ag = make_agent(name, problem, seed=agent_seed(seed))
        obs = {"losses": np.zeros(d), "observed": np.zeros(d, dtype=np.int8)}
        shape = (d,)
    else:
        ag = make_batched_agent(name, problem, seeds=[agent_seed(seed + i) for i in range(n_runs)])
        obs = {"losses": np.zeros((n_runs, d)), "observed": np.zeros((n_runs, d), dtype=np.int8)}
        shape = (n_runs, d)
    regret = 0.0
    key = before = None
    clock = 0.0
    for t in range(1, T + 1):
        u = rng.random(shape)
        if t == warmup + 1:
            diag = ag.diagnostics() if hasattr(ag, "diagnostics") else {}
            key = _gr_key(diag)
            before = _diag_mean(ag, key) if key else None
        t0 = time.perf_counter()
        a = ag.act(obs)
        t1 = time.perf_counter()
        losses = (u < mu) * a
        regret += float(np.sum(a @ mu)) - best * (1 if n_runs is None else n_runs)
        obs = {"losses": losses.astype(float), "observed": np.asarray(a, dtype=np.int8)}
        rew = -losses.sum(axis=-1)
        t2 = time.perf_counter()
        ag.update(a, float(rew) if n_runs is None else rew.astype(float), obs)
        t3 = time.perf_counter()
        if t > warmup:
            clock += (t1 - t0) + (t3 - t2)
    after = _diag_mean(ag, key) if key else None
    return clock / window, regret / (n_runs or 1), key, before, after, ag


def _gr_per_round(key, before, after, warmup, window):
    """GR draws per round over the window, from a cumulative or a running-mean diagnostic."""
    if key is None or after is None:
        return None
    k = key.lower()
    if "per_round" in k or "mean" in k or "avg" in k:  # running mean over rounds so far
        return (after * (warmup + window) - before * warmup) / window
    return (after - before) / window  # a cumulative count


def section_ftpl_vs_ftrl(args):
    warmup, window = (20, 10) if args.smoke else ((300, 100) if args.quick else (args.warmup, args.window))
    sizes = SIZES[:1] if args.smoke else SIZES
    print(
        f"1. seconds per round (act + update), stochastic family g = {GAP}, after {warmup} warm-up rounds, "
        f"averaged over the next {window}"
    )
    names = ("ftpl-frechet", "ftrl-hybrid")
    missing = [n for n in names if not _registered(n)]
    for n in missing:
        print(f"   skipped {n}: not registered for {ENV} yet")
    present = [n for n in names if n not in missing]
    if not present:
        return
    for n in present:  # numba compilation / cache loading is not what we measure
        time_agent(n, 10, 3, 5, 5, None)
        time_agent(n, 10, 3, 5, 5, 2)
    hdr = (
        f"   {'(d, m)':<10}{'agent':<14}{'1 run ms/round':>15}{f'{N_BATCH} runs ms/round':>18}"
        f"{'µs/agent-round':>16}{'GR draws/round':>16}{'regret/run':>12}"
    )
    print(hdr)
    rows = {}
    for d, m in sizes:
        for n in present:
            s1, _reg1, key, b, a, _ = time_agent(n, d, m, warmup, window, None)
            gr = _gr_per_round(key, b, a, warmup, window)
            sb, regb, keyb, bb, ab, _ = time_agent(n, d, m, warmup, window, N_BATCH)
            grb = _gr_per_round(keyb, bb, ab, warmup, window)
            rows[(d, m, n)] = (s1, sb)
            grs = "-" if gr is None else f"{gr:.0f} / {grb:.0f}" if grb is not None else f"{gr:.0f}"
            print(
                f"   {(d, m)!s:<10}{n:<14}{1e3 * s1:>15.3f}{1e3 * sb:>18.3f}{1e6 * sb / N_BATCH:>16.1f}"
                f"{grs:>16}{regb:>12.1f}"
            )
        if len(present) == 2:
            f1, fb = rows[(d, m, names[0])]
            r1, rb = rows[(d, m, names[1])]
            print(f"   {'':<10}{'FTPL / FTRL':<14}{f1 / r1:>14.2f}x{fb / rb:>17.2f}x")
    if len(present) == 2:
        verdict = []
        for d, m in sizes:
            f1, fb = rows[(d, m, names[0])]
            r1, rb = rows[(d, m, names[1])]
            verdict.append(
                f"(d, m) = {(d, m)}: FTPL {'faster' if f1 < r1 else 'slower'} per run "
                f"({r1 / f1 if f1 < r1 else f1 / r1:.1f}x), {'faster' if fb < rb else 'slower'} "
                f"batched ({rb / fb if fb < rb else fb / rb:.1f}x)"
            )
        print("   " + "\n   ".join(verdict))
    print(
        "   (GR draws/round: 1 run / batched mean per run over the window, from FTPL's diagnostics; '-' where "
        "not reported. regret/run: pseudo-regret of the batched runs over warm-up + window)"
    )


def _time_cells(agent, seeds, horizon, mode, d=10, m=3, **hp):
    from papergym.leaderboard.runner.compare import run_cells

    kw = {"instance": "stochastic", "horizon": horizon, "d": d, "m": m}
    t0 = time.perf_counter()
    res = run_cells(ENV, kw, agent, hp, seeds, mode)
    wall = time.perf_counter() - t0
    bad = [r for r in res if r["status"] != "ok"]
    if bad:
        raise RuntimeError(f"{agent}: {bad[0].get('error')}\n{bad[0].get('traceback', '')}")
    return wall, res


def section_runner(args):
    T = 200 if args.smoke else (2000 if args.quick else 10_000)
    n_batch, n_loop = (4, 1) if args.smoke else ((20, 3) if args.quick else (100, 5))
    print(
        f"\n2. runner throughput, d = 10, m = 3, n = {T}: batched over {n_batch} seeds vs per-seed Gymnasium "
        f"loop ({n_loop} seeds)"
    )
    if not _env_registered():
        print(f"   skipped: {ENV} is not registered yet (not in papergym.envs.list_envs())")
        return
    from papergym.agents.base import list_agents

    agents = [a.name for a in list_agents(ENV) if a.role != "oracle"]
    agents = sorted(agents, key=lambda n: (n != "combucb", n))
    for a in agents:  # warm-up: imports and numba compilation
        _time_cells(a, [0, 1], 32, "batched")
        _time_cells(a, [0], 32, "per-run")
    print(
        f"   {'agent':<18}{'batched µs/agent-step':>24}{'per-seed µs/agent-step':>25}{'speed-up':>10}"
        f"{'same regret':>13}"
    )
    for a in agents:
        wb, rb = _time_cells(a, list(range(n_batch)), T, "batched")
        wl, rl = _time_cells(a, list(range(n_loop)), T, "per-run")
        ub = 1e6 * wb / (n_batch * T)
        ul = 1e6 * wl / (n_loop * T)
        same = all(np.array_equal(rb[i]["cum_regret"], rl[i]["cum_regret"]) for i in range(n_loop))
        note = f"  (target >= 10x: {'PASS' if ul / ub >= 10 else 'FAIL'})" if a == "combucb" else ""
        print(f"   {a:<18}{ub:>24.2f}{ul:>25.2f}{ul / ub:>9.1f}x{same!s:>13}{note}")


def section_compare():
    print(f"\n3. default comparison: compare('{ENV}', seeds=range(20), backend='joblib', n_jobs=2, cache=False)")
    if not _env_registered():
        print(f"   skipped: {ENV} is not registered yet (not in papergym.envs.list_envs())")
        return
    from papergym.leaderboard import compare

    t0 = time.perf_counter()
    res = compare(ENV, seeds=range(20), backend="joblib", n_jobs=2, cache=False, progress=False)
    wall = time.perf_counter() - t0
    agents = list(res.summary["agent"]) if "agent" in res.summary.columns else list(res.summary.index)
    print(f"   {len(agents)} agents x 20 seeds: {wall:.1f} s wall  (target: about 60 s on 2 cores)")
    print(res.format_table() if hasattr(res, "format_table") else res.summary.to_string())
    if res.errors:
        print(f"   {len(res.errors)} failed cell(s); first: {str(res.errors[0])[:300]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short warm-ups / windows and n = 2000 runner rows")
    ap.add_argument("--compare", action="store_true", help="also time the default compare() (about a minute)")
    ap.add_argument("--warmup", type=int, default=2000, help="warm-up rounds before the timed window (section 1)")
    ap.add_argument("--window", type=int, default=300, help="timed rounds (section 1)")
    ap.add_argument("--skip-agents", action="store_true", help="skip section 1")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: (d, m) = (10, 3), 20 + 10 rounds, n = 200 runner rows over 4 / 1 seeds",
    )
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    print(f"papergym m-set semi-bandit benchmark  (python {sys.version.split()[0]}, numpy {np.__version__})\n")
    if not args.skip_agents:
        section_ftpl_vs_ftrl(args)
    section_runner(args)
    if args.compare and not args.smoke:
        section_compare()


if __name__ == "__main__":
    main()
