"""Sandboxed vs in-process evaluation time of a T = 10^5 bandit agent, by number of seeds evaluated
together (target: sandboxed <= 2x in-process at 20 seeds).

    python benchmarks/bench_sandbox.py                          # T = 1e5, seeds 1, 5, 20 (~2 min)
    python benchmarks/bench_sandbox.py --horizon 20000 --seeds 1,20
    python benchmarks/bench_sandbox.py --smoke                  # T = 200, seeds 1, 2, one service submission

The agent is ``benchmarks/sandbox_ucb1.py`` (UCB1 on a fixed grid of K = 32 arms of [0, 1], batched
with numpy) on ``NonStatLipschitz-v0``'s native vector env. Both columns drive the same loop: the
evaluator's own :func:`papergym.leaderboard.board.evaluate.play` when it exists (``--loop play``, the
default then), else this file's loop (``--loop own``: reset with the seeds, T rounds of
``session.step`` -> regret from ``venv.oracle.regret`` -> ``venv.step``). In-process: the same file
imported here and hosted by :class:`~papergym.leaderboard.board.sandbox.InProcessAgentSession`;
sandboxed: :class:`~papergym.leaderboard.board.sandbox.SandboxedAgentSession` (``--sandbox auto``: the full
sandbox -- bubblewrap, job cgroup, seccomp filter, per-job uid -- when available, else bubblewrap).
The final regrets of both must be equal (checked). BLAS threads are pinned to 1.

Then two sandboxed evaluations at once (the last number of seeds each, in two processes), against one
alone: a machine that runs several sandboxes stops the busy-wait while they compete for the CPUs (the
spin gate of :class:`papergym.leaderboard.board.process.SandboxProcess`).

Then the shared board's overhead per submission (``--service N`` submissions, 0 skips it): a real
``papergym serve --workers 1`` on a free port of 127.0.0.1 over an SQLite store, with a small board
(one stratum, 2 seeds, T = 200) in a temporary evaluator configuration; each submission is uploaded over
HTTP, queued, claimed by the worker, evaluated in the sandbox and stored, and the client polls its status
every 20 ms. Overhead = end-to-end seconds (upload to final status) minus the seconds the worker spent
evaluating (the store's ``wall_seconds``): HTTP, the queue (the worker polls every 0.5 s), the claim and
the result's transaction. Target: under 1 s.

A short in-process run first warms up the env's compiled kernels. ``--spin 0`` turns off the
sandbox's bounded busy-wait (:data:`papergym.leaderboard.board.process.SPIN_SECONDS`) to show what it buys.

Measured (2-vCPU KVM VM, otherwise idle, sandbox full, T = 10^5, loop = play):

    seeds  in-process s  sandboxed s  ratio  us/step added
        1          2.41         3.48   1.45           10.7
        5          2.36         3.53   1.49           11.7
       20          2.58         3.65   1.42           10.7      (--spin 0: ratio 4-6)
    two at once, 20 seeds each: 8.11 s and 8.25 s against 3.63 s alone (without the spin gate,
    four processes spinning on two CPUs: about 3.4 ms per round, ~100x slower)
    service overhead (HTTP + queue + store): median 0.52 s per submission
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import load_env_creator

import papergym.envs  # noqa: F401 - registers the envs
from papergym.leaderboard.board import process as process_module
from papergym.leaderboard.board.sandbox import (
    SANDBOX_MODES,
    InProcessAgentSession,
    SandboxedAgentSession,
    problem_to_public,
    resolve_sandbox,
)

ENV = "NonStatLipschitz-v0"
AGENT = Path(__file__).resolve().parent / "sandbox_ucb1.py"
ATTR = "make_agent"


def own_loop(session, seeds: list[int], horizon: int) -> np.ndarray:
    """T rounds of every seed together; returns the final cumulative regret of each run."""
    venv = load_env_creator(gym.spec(ENV).vector_entry_point)(num_envs=len(seeds), horizon=horizon)
    obs, _ = venv.reset(seed=list(seeds))
    session.start(problem_to_public(venv.problem), list(seeds), {})
    active = np.ones(len(seeds), dtype=bool)
    regret = np.zeros(len(seeds))
    rewards = None
    for t in range(1, horizon + 1):
        actions, failed = session.step(obs, rewards, active)
        if failed:
            raise RuntimeError(f"runs failed: {failed}")
        regret += venv.oracle.regret(actions, t)
        obs, rewards, *_ = venv.step(actions)
    session.close()
    return regret


def play_loop(session, seeds: list[int], horizon: int) -> np.ndarray:
    from papergym.leaderboard.board.evaluate import play

    runs = play(ENV, {"horizon": horizon}, seeds, session, seeds, {})
    bad = [r for r in runs if r["status"] != "ok"]
    if bad:
        raise RuntimeError(f"runs failed: {bad[0].get('error')}")
    return np.array(
        [
            next(iter(r["metrics"].values())) if "final_regret" not in r["metrics"] else r["metrics"]["final_regret"]
            for r in runs
        ],
        dtype=float,
    )


def _factory():
    spec = importlib.util.spec_from_file_location("sandbox_ucb1", AGENT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, ATTR)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=100_000)
    ap.add_argument("--seeds", default="1,5,20", help="numbers of seeds evaluated together (comma-separated)")
    ap.add_argument("--loop", choices=("auto", "play", "own"), default="auto")
    ap.add_argument(
        "--sandbox",
        choices=SANDBOX_MODES,
        default="auto",
        help="the sandbox mode (papergym.leaderboard.board.sandbox, Isolation); auto: full when available",
    )
    ap.add_argument(
        "--no-concurrent", dest="concurrent", action="store_false", help="skip the two-evaluations-at-once measurement"
    )
    ap.add_argument(
        "--service",
        type=int,
        default=5,
        metavar="N",
        help="submissions through a local service to measure its overhead (0: skip)",
    )
    ap.add_argument(
        "--spin",
        type=float,
        default=None,
        help="seconds each end busy-waits for a reply (default: the sandbox's SPIN_SECONDS)",
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: T = 200, seeds 1 and 2, both columns, two at once, one service submission",
    )
    args = ap.parse_args(argv)
    if args.smoke:
        args.horizon, args.seeds, args.service = 200, "1,2", 1
    if args.spin is not None:
        if args.spin < 0:
            ap.error("--spin must be >= 0")
        process_module.SPIN_SECONDS = args.spin
    loop = args.loop
    if loop == "auto":
        try:
            from papergym.leaderboard.board.evaluate import play  # noqa: F401

            loop = "play"
        except ImportError:
            loop = "own"
    run = play_loop if loop == "play" else own_loop
    mode = resolve_sandbox(args.sandbox)  # SandboxUnavailable (naming what is missing) rather than no sandbox
    print(
        f"# {ENV}, UCB1 on a grid of 32 arms, T = {args.horizon}, loop = {loop}, "
        f"sandbox: {mode}, spin: {process_module.SPIN_SECONDS:g} s"
    )
    print(f"{'seeds':>5}  {'in-process s':>12}  {'sandboxed s':>11}  {'ratio':>5}  {'us/step added':>13}")
    factory = _factory()
    run(InProcessAgentSession(factory), [1, 2], min(args.horizon, 2000))  # warm-up: compiled kernels
    worst = 0.0
    for n in [int(x) for x in args.seeds.split(",")]:
        seeds = list(range(1, n + 1))
        t0 = time.perf_counter()
        r_in = run(InProcessAgentSession(factory), seeds, args.horizon)
        t_in = time.perf_counter() - t0
        t0 = time.perf_counter()
        sess = SandboxedAgentSession(AGENT, ATTR, sandbox=mode)
        r_sb = run(sess, seeds, args.horizon)
        t_sb = time.perf_counter() - t0
        if not np.array_equal(r_in, r_sb):
            print(f"final regrets differ at {n} seeds: {r_in} vs {r_sb}", file=sys.stderr)
            return 1
        ratio = t_sb / t_in
        worst = ratio if n >= 20 else worst
        print(
            f"{n:>5}  {t_in:>12.2f}  {t_sb:>11.2f}  {ratio:>5.2f}  {(t_sb - t_in) / args.horizon * 1e6:>13.1f}",
            flush=True,
        )
    if worst:
        print(f"target (ratio <= 2 at 20 seeds): {'met' if worst <= 2 else 'NOT met'}")
    if args.concurrent:
        n = int(args.seeds.split(",")[-1])
        alone = _sandboxed_seconds((mode, n, args.horizon, loop))
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(2) as pool:
            both = pool.map(_sandboxed_seconds, [(mode, n, args.horizon, loop)] * 2)
        print(
            f"\n# two sandboxed evaluations at once ({n} seeds each, {len(os.sched_getaffinity(0))} CPUs): "
            f"{both[0]:.2f} s and {both[1]:.2f} s, against {alone:.2f} s alone (x{max(both) / alone:.2f}; "
            "spin gate closed while they compete)"
        )
    if args.service > 0:
        return service_overhead(args.service)
    return 0


def _sandboxed_seconds(spec: tuple[str, int, int, str]) -> float:
    """Seconds of one sandboxed evaluation: ``(sandbox mode, seeds, horizon, loop)``."""
    mode, n, horizon, loop = spec
    run = play_loop if loop == "play" else own_loop
    t0 = time.perf_counter()
    run(SandboxedAgentSession(AGENT, ATTR, sandbox=mode), list(range(1, n + 1)), horizon)
    return time.perf_counter() - t0


def service_overhead(n: int) -> int:
    """``n`` submissions through ``papergym serve --workers 1`` (module docstring): prints each one's
    end-to-end and evaluation seconds and the overhead; returns 0, or 1 when a submission fails."""
    import json
    import signal
    import socket
    import subprocess
    import tempfile

    import httpx

    from papergym.leaderboard.board.client import BoardClient
    from papergym.leaderboard.board.configs import CONFIG_ENV
    from papergym.leaderboard.board.store import Store

    tmp = Path(tempfile.mkdtemp(prefix="papergym-bench-service-"))
    (tmp / "evaluator.json").write_text(
        json.dumps(
            {
                "secret": "bench-service-secret-0123456789abcdef",
                "boards": {
                    ENV: {"strata": {"two-peak-cyclic": {"instance": "two-peak-cyclic"}}, "seeds": 2, "horizon": 200}
                },
            }
        )
    )
    env = {
        **os.environ,
        CONFIG_ENV: str(tmp / "evaluator.json"),
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
    }
    env.pop("PAPERGYM_TEST_SECRET", None)
    url = f"sqlite:///{tmp / 'board.db'}"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with Store(url) as st:
        token = st.create_token("bench")
    log = open(tmp / "serve.log", "wb")  # noqa: SIM115 - closed in the finally below
    serve = subprocess.Popen(
        [sys.executable, "-m", "papergym.leaderboard.cli", "serve", "--db", url, "--port", str(port), "--workers", "1"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if serve.poll() is not None or time.monotonic() > deadline:
                print(f"papergym serve did not start: {(tmp / 'serve.log').read_text()[-2000:]}", file=sys.stderr)
                return 1
            time.sleep(0.1)
        print(
            f"\n# the shared board's overhead: {n} submissions through `papergym serve --workers 1` "
            "(SQLite, HTTP on 127.0.0.1)"
        )
        print(f"{'#':>3}  {'end-to-end s':>12}  {'evaluation s':>12}  {'overhead s':>10}")
        overheads = []
        with BoardClient(base, token) as client:
            for i in range(n):
                t0 = time.perf_counter()
                sid = client.submit(AGENT, board=ENV, attr=ATTR, name=f"bench-{i}")["id"]
                answer = client.wait(sid, poll_seconds=0.02, timeout=300)
                total = time.perf_counter() - t0
                if answer["status"] != "ok":
                    print(f"submission {sid} ended {answer['status']}: {answer}", file=sys.stderr)
                    return 1
                with Store(url) as st:
                    evaluation = float(st.submission(sid)["wall_seconds"])
                overheads.append(total - evaluation)
                print(f"{i + 1:>3}  {total:>12.3f}  {evaluation:>12.3f}  {total - evaluation:>10.3f}", flush=True)
        med = float(np.median(overheads))
        print(f"median overhead {med:.3f} s per submission; target (< 1 s): {'met' if med < 1 else 'NOT met'}")
        return 0
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=40)
        except subprocess.TimeoutExpired:
            serve.kill()
        log.close()


if __name__ == "__main__":
    sys.exit(main())
