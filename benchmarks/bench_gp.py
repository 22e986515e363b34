"""Performance benchmark of ``gp-ucb``'s incremental posterior (a table of ratios, measured side by side).

    python benchmarks/bench_gp.py             # ~10 s on 2 cores
    python benchmarks/bench_gp.py --quick     # smaller windows, t <= 300
    python benchmarks/bench_gp.py --compare   # also time a default compare() of NoiseFreeGPBandit-v0
    python benchmarks/bench_gp.py --smoke     # t in {5, 10}, 2-step windows: every column in a second or two

Problem (``NoiseFreeGPBandit-v0``, docs/papers/noise-free-gp.md): ``N = 2,500`` candidates (the 50x50 grid
of ``[0, 1]^2``), SE kernel
``l = 0.2`` (``--kernel matern-1.5`` for Matérn-3/2), a random RKHS function ``sum_j a_j k(., z_j)``
(``J = 20``) rescaled to norm ``B = 1``. One GP-UCB *step* at posterior size ``t`` = absorb the
``t``-th observation, posterior mean and standard deviation on all ``N`` candidates, UCB argmax
(``mu + B sigma``). Three implementations do the same steps on the same query sequence:

* ``gp-ucb``: the registered agent itself (:class:`~papergym.agents.bandits.gp_ucb.GPUCB`:
  ``update`` = rank-one Cholesky extension of :class:`~papergym.envs.bandits.gp.NoiseFreeGP`, then
  ``act`` = UCB argmax), ``O(t^2 + N t)`` per step.
* ``refactor``: refactorise every step -- ``K_t`` and ``k(C, X_t)`` from scratch,
  ``scipy.linalg.cho_factor`` of ``K_t + 1e-10 I``, ``cho_solve`` for ``K^{-1} y``, one triangular solve
  ``L^{-1} k(X_t, C)`` for the variances, UCB argmax: ``O(t^3 + N t^2)``.
* ``sklearn``: what a user would otherwise write -- scikit-learn's ``GaussianProcessRegressor``
  (``RBF(l)`` / ``Matern(l, nu=1.5)`` fixed, ``optimizer=None``, ``alpha=1e-10``,
  ``normalize_y=False``) refit on the ``t`` points each step, ``predict(C, return_std=True)``, UCB
  argmax.

Times are seconds per step over a window of ``w`` consecutive steps starting at ``t = 50, 100, 300,
500`` (best of ``--repeat`` windows), BLAS threads pinned to 1 (threadpoolctl). The three posteriors
are compared at the first step of each window (max abs difference of ``mu`` and ``sigma`` over the
candidates; ``NoiseFreeGP`` sets ``sigma = 0`` exactly at queried points where the two dense solves
leave ``O(sqrt(jitter)) = 1e-5``, so ``sigma`` is also compared on the unqueried candidates only) and
so are the UCB argmaxes of every timed step.

The query sequence. Noise-free GP-UCB *converges*: on this problem it finds the maximiser after
about 35 distinct queries and then re-queries it (a repeated point adds nothing to the posterior), so
its own run never reaches ``t = 300`` posterior points. To measure a step at posterior size ``t``,
the sequence is GP-UCB's choice among the *not yet queried* candidates (the next new point GP-UCB
would query), computed once with ``NoiseFreeGP``; all three implementations absorb that sequence
and compute their own UCB argmax. A last row times the agent's own 500-round run for reference.

Target (docs/benchmarks.md): incremental GP-UCB >= 20x faster per step than the scikit-learn refit at
``t = 300``, ``N = 2,500`` (the refit takes about 13 ms per step with one BLAS thread, so gp-ucb
<= 0.65 ms); PASS / FAIL is printed. scikit-learn is a benchmark-only dependency
(``pip install scikit-learn``); without it the sklearn column is skipped.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

from papergym.agents.bandits.gp_ucb import GPUCB
from papergym.envs.bandits.gp import NoiseFreeGP, kernel_matrix
from papergym.envs.spec import ProblemSpec

ENV = "NoiseFreeGPBandit-v0"
JITTER = 1e-10
TARGET_RATIO = 20.0  # gp-ucb >= 20x faster than the sklearn refit at t = 300
TARGET_T = 300


# ------------------------------------------------------------------------------------ problem
def grid_2d(n: int = 50) -> np.ndarray:
    g = np.linspace(0.0, 1.0, n)
    return np.array([(x, y) for x in g for y in g], dtype=np.float64)


def rkhs_function(C, kernel, lengthscale, B=1.0, J=20, seed=0) -> np.ndarray:
    """``f = sum_j a_j k(., z_j)``, ``z ~ U[0, 1]^d``, ``a ~ N(0, I)`` rescaled to ``||f||_k = B``."""
    rng = np.random.default_rng(seed)
    Z = rng.random((J, C.shape[1]))
    a = rng.standard_normal(J)
    a *= B / np.sqrt(a @ kernel_matrix(kernel, Z, Z, lengthscale) @ a)
    return kernel_matrix(kernel, C, Z, lengthscale) @ a


def problem(C, kernel, lengthscale, B, horizon) -> ProblemSpec:
    N, d = C.shape
    return ProblemSpec(
        ENV,
        gym.spaces.Discrete(N),
        gym.spaces.Box(-np.inf, np.inf, (1,), np.float64),
        horizon,
        {"d": d, "kernel": kernel, "lengthscale": lengthscale, "B": B, "candidates": C, "action_mode": "discrete"},
    )


def new_point_sequence(C, f, kernel, lengthscale, B, n) -> np.ndarray:
    """GP-UCB's choice among the not-yet-queried candidates, ``n`` steps (first: the centre)."""
    gp = NoiseFreeGP(C, kernel, lengthscale, jitter=JITTER, capacity=n + 1)
    seq = [int(np.argmin(np.sum((C - 0.5) ** 2, axis=1)))]
    queried = np.zeros(len(C), dtype=bool)
    for _ in range(n - 1):
        i = seq[-1]
        gp.add(i, f[i])
        queried[i] = True
        ucb = gp.mean + B * gp.std
        ucb[queried] = -np.inf
        seq.append(int(np.argmax(ucb)))
    return np.asarray(seq)


# ------------------------------------------------------------------------- the three steps
def refactor_step(C, X, y, kernel, lengthscale, B):
    """Refactorise-every-step posterior on all candidates and the UCB argmax."""
    K = kernel_matrix(kernel, X, X, lengthscale)
    K[np.diag_indices_from(K)] += JITTER
    c = cho_factor(K, lower=True, check_finite=False)
    Kc = kernel_matrix(kernel, C, X, lengthscale)  # (N, t)
    mu = Kc @ cho_solve(c, y, check_finite=False)
    W = solve_triangular(c[0], Kc.T, lower=True, check_finite=False)  # reads the lower triangle only
    sd = np.sqrt(np.maximum(1.0 - np.einsum("ij,ij->j", W, W), 0.0))
    return int(np.argmax(mu + B * sd)), mu, sd


def make_sklearn(kernel, lengthscale):
    try:
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, Matern
    except ImportError:
        return None
    if kernel == "se":
        k = RBF(length_scale=lengthscale)
    elif kernel.startswith("matern-"):
        k = Matern(length_scale=lengthscale, nu=float(kernel.split("-")[1]))
    else:
        raise ValueError(f"kernel must be se or matern-*, got {kernel!r}")

    def step(C, X, y, B):
        gpr = GaussianProcessRegressor(kernel=k, alpha=JITTER, optimizer=None, normalize_y=False)
        gpr.fit(X, y)
        mu, sd = gpr.predict(C, return_std=True)
        return int(np.argmax(mu + B * sd)), mu, sd

    return step


# ---------------------------------------------------------------------------------- timing
def time_gpucb(agent, seq, y, t, w, rep):
    """Best of ``rep`` windows of the agent's steps ``t .. t + w - 1`` (each on a fresh copy of the
    agent at ``t - 1`` points): ``update`` with the ``t``-th point, then ``act``. Returns
    (seconds per step, the argmaxes)."""
    best, out = np.inf, []
    for _ in range(rep):
        a = copy.deepcopy(agent)
        out = []
        t0 = time.perf_counter()
        for s in range(t, t + w):
            a.update(int(seq[s - 1]), float(y[s - 1]), None)
            out.append(a.act(None))
        best = min(best, time.perf_counter() - t0)
    return best / w, out


def time_dense(step, t, w, rep):
    """Best of ``rep`` windows of ``step(s)`` for ``s = t .. t + w - 1`` (seconds per step, argmaxes)."""
    best, out = np.inf, []
    for _ in range(rep):
        t0 = time.perf_counter()
        out = [step(s)[0] for s in range(t, t + w)]
        best = min(best, time.perf_counter() - t0)
    return best / w, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="t <= 300, shorter windows")
    ap.add_argument(
        "--compare",
        action="store_true",
        help="also time compare('NoiseFreeGPBandit-v0', seeds=range(20), d=2, joblib, 2 jobs)",
    )
    ap.add_argument("--kernel", default="se", choices=("se", "matern-1.5", "matern-2.5"))
    ap.add_argument("--lengthscale", type=float, default=0.2)
    ap.add_argument("--window", type=int, default=None, help="steps per timed window (default 20; quick 5)")
    ap.add_argument("--repeat", type=int, default=None, help="windows timed, best kept (default 3)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the test function")
    ap.add_argument("--smoke", action="store_true", help="tiny run: t in {5, 10}, windows of 2 steps, best of 1")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    warnings.filterwarnings("ignore", message="Predicted variances smaller than 0")

    kernel, ell, B = args.kernel, args.lengthscale, 1.0
    ts = (5, 10) if args.smoke else ((50, 100, 300) if args.quick else (50, 100, 300, 500))
    w = args.window or (2 if args.smoke else (5 if args.quick else 20))
    rep = args.repeat or (1 if args.smoke else 3)
    target_t = TARGET_T if TARGET_T in ts else max(ts)  # --smoke: the ratio at its largest t (no verdict)
    C = grid_2d(50)
    N = len(C)
    f = rkhs_function(C, kernel, ell, B, seed=args.seed)
    n_total = max(ts) + w
    seq = new_point_sequence(C, f, kernel, ell, B, n_total)
    X_all, y_all = C[seq], f[seq]
    sk_step = make_sklearn(kernel, ell)

    print(f"papergym GP benchmark  (python {sys.version.split()[0]}, numpy {np.__version__}; BLAS threads 1)")
    print(f"N = {N} candidates (50x50 grid), kernel {kernel}, l = {ell}, B = {B}; window {w} steps, best of {rep}\n")
    if sk_step is None:
        print("   scikit-learn is not installed: the sklearn column is skipped (pip install scikit-learn)\n")

    # warm-up (imports, first calls)
    refactor_step(C, X_all[:10], y_all[:10], kernel, ell, B)
    if sk_step is not None:
        sk_step(C, X_all[:10], y_all[:10], B)

    def ref(s):  # the refactorising step at posterior size s
        return refactor_step(C, X_all[:s], y_all[:s], kernel, ell, B)

    def skl(s):  # the scikit-learn refit step at posterior size s
        return sk_step(C, X_all[:s], y_all[:s], B)

    agent = GPUCB(problem(C, kernel, ell, B, n_total + 1), jitter=JITTER)
    agent.act(None)  # round 1 (the centre = seq[0])
    done = 0  # points absorbed by the agent
    head = (
        f"   {'t':>5}{'gp-ucb ms':>11}{'refactor ms':>13}{'sklearn ms':>12}{'refactor/gp-ucb':>17}"
        f"{'sklearn/gp-ucb':>16}{'max|dmu|':>11}{'max|dsd|':>11}{'|dsd| unq':>11}{'argmax':>8}"
    )
    print("1. seconds per step (absorb the t-th point, posterior on all N, UCB argmax), same query sequence")
    print(head)
    rows = {}
    for t in ts:
        # bring the agent to t - 1 points (untimed), then time steps t .. t + w - 1
        while done < t - 1:
            agent.update(int(seq[done]), float(y_all[done]), None)
            agent.act(None)
            done += 1

        t_ucb, c_ucb = time_gpucb(agent, seq, y_all, t, w, rep)
        t_ref, c_ref = time_dense(ref, t, w, rep)
        choices = [c_ucb, c_ref]
        t_sk = np.nan
        if sk_step is not None:
            t_sk, c_sk = time_dense(skl, t, w, rep)
            choices.append(c_sk)

        # posterior agreement at posterior size t
        g = copy.deepcopy(agent)
        g.update(int(seq[t - 1]), float(y_all[t - 1]), None)
        mu_i, sd_i = g.gp.mean, g.gp.std
        _, mu_r, sd_r = ref(t)
        mus, sds = [mu_r], [sd_r]
        if sk_step is not None:
            _, mu_s, sd_s = skl(t)
            mus.append(mu_s)
            sds.append(sd_s)
        unq = np.ones(N, dtype=bool)
        unq[seq[:t]] = False
        dmu = max(float(np.max(np.abs(m - mu_i))) for m in mus)
        dsd = max(float(np.max(np.abs(s - sd_i))) for s in sds)
        dsd_u = max(float(np.max(np.abs(s - sd_i)[unq])) for s in sds)
        agree = sum(len(set(v)) == 1 for v in zip(*choices))
        rows[t] = (t_ucb, t_ref, t_sk)
        print(
            f"   {t:>5}{1e3 * t_ucb:>11.3f}{1e3 * t_ref:>13.2f}{1e3 * t_sk:>12.2f}{t_ref / t_ucb:>16.1f}x"
            f"{t_sk / t_ucb:>15.1f}x{dmu:>11.1e}{dsd:>11.1e}{dsd_u:>11.1e}{agree:>5}/{w}"
        )
        if g.gp.refactorisations:
            print(
                f"         (NoiseFreeGP raised its jitter to {g.gp.jitter:.0e}: "
                f"{g.gp.refactorisations} refactorisation(s))"
            )

    t_ucb, _, t_sk = rows[target_t]
    if target_t != TARGET_T:
        print(f"\n   at t = {target_t}: sklearn / gp-ucb = {t_sk / t_ucb:.1f}x (the target is set at t = {TARGET_T})")
    elif np.isfinite(t_sk):
        ok = t_sk / t_ucb >= TARGET_RATIO
        print(
            f"\n   target at t = {TARGET_T}, N = {N}: gp-ucb >= {TARGET_RATIO:.0f}x faster than the sklearn refit: "
            f"{t_sk / t_ucb:.1f}x ({1e3 * t_ucb:.3f} ms vs {1e3 * t_sk:.2f} ms)  ->  {'PASS' if ok else 'FAIL'}"
        )
    else:
        print(f"\n   target at t = {TARGET_T} (>= {TARGET_RATIO:.0f}x vs sklearn): n/a without scikit-learn")

    # 2. the agent's own run (it converges: few distinct points, cheap steps)
    T = max(ts)
    own = GPUCB(problem(C, kernel, ell, B, T), jitter=JITTER)
    played = []
    t0 = time.perf_counter()
    for _ in range(T):
        i = own.act(None)
        own.update(i, float(f[i]), None)
        played.append(i)
    wall = time.perf_counter() - t0
    cum = float(np.sum(f.max() - f[played]))
    simple = float(f.max() - f[own.recommendation])
    print(
        f"\n2. gp-ucb's own run, T = {T}: {1e3 * wall / T:.3f} ms/step, {own.gp.n} distinct points "
        f"({own.repeats} re-queries), cumulative regret {cum:.3f}, simple regret {simple:.1e}, "
        f"sum sigma {own.diagnostics()['sum_sigma']:.3f}"
    )

    if args.compare and not args.smoke:
        _compare_section()


def _compare_section():
    from papergym.envs import list_envs

    print(
        "\n3. default comparison: compare('NoiseFreeGPBandit-v0', seeds=range(20), "
        "env_kwargs={'d': 2, 'lengthscale': 0.2}, backend='joblib', n_jobs=2, cache=False)"
    )
    if ENV not in list_envs():
        print(f"   skipped: {ENV} is not registered yet (not in papergym.envs.list_envs())")
        return
    from papergym.leaderboard import compare

    t0 = time.perf_counter()
    res = compare(
        ENV,
        seeds=range(20),
        env_kwargs={"d": 2, "lengthscale": 0.2},
        backend="joblib",
        n_jobs=2,
        cache=False,
        progress=False,
    )
    wall = time.perf_counter() - t0
    agents = sorted(res.summary["agent"]) if "agent" in res.summary.columns else list(res.summary.index)
    print(f"   {len(agents)} agents x 20 seeds: {wall:.1f} s wall  (target: about 60 s on 2 cores)")
    print(f"   agents: {', '.join(map(str, agents))}")
    cols = [c for c in ("agent", "final_regret", "sum_sigma", "sec_per_1k_steps") if c in res.summary.columns]
    if cols:
        print(res.summary[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if res.errors:
        print(f"   {len(res.errors)} failed cell(s); first: {str(res.errors[0])[:300]}")


if __name__ == "__main__":
    main()
