"""FTPL-Fréchet -- Follow-the-Perturbed-Leader with Fréchet perturbations and geometric resampling,
the method of *Follow-the-Perturbed-Leader (Nearly) Achieves Best-of-Both-Worlds for the m-Set
Semi-Bandit Problems*.

J. Zhan et al., NeurIPS 2025 (arXiv 2504.07307; earlier title "... Approaches Best-of-Both-Worlds
..."). No official code. This module implements the method as described in ``docs/papers/mset-semibandit.md``
(tags: see docs/conventions.md) and is registered as agent ``ftpl-frechet`` (role ``paper``) for ``MSetSemiBandit-v0``.

Algorithm (step numbers cited inline in the code)
-------------------------------------------------
``d`` arms, ``m`` chosen per round, losses in ``[0, 1]`` observed at the chosen arms only.

1. ``L_hat <- 0 in R^d``.
2. Round ``t``: ``eta_t = eta_scale * c / sqrt(t)``.
3. Draw ``r_{t,i}`` i.i.d. Fréchet(``alpha``): ``r = (-ln U)^(-1/alpha)``, ``U ~ U(0, 1]``.
4. ``A_t`` = the ``m`` indices with the smallest ``L_hat_i - r_{t,i} / eta_t`` (ties: lowest index
   first). Play ``A_t``, observe ``l_{t,i}``, ``i in A_t``.
5. Geometric resampling (GR): for each ``i in A_t``, draw fresh perturbation vectors (same ``L_hat``
   and ``eta_t``) until ``i`` is among the ``m`` indices step 4 would select; ``K_{t,i}`` = number of
   vectors drawn, geometric with success probability ``w_{t,i} = P(i in A_t)``, so
   ``E[K_{t,i}] = 1 / w_{t,i}``.
6. ``l_hat_{t,i} = l_{t,i} K_{t,i}`` for ``i in A_t`` and 0 otherwise; ``L_hat <- L_hat + l_hat_t``.
7. Safety cap: at most ``cap`` vectors per round (the same as per arm: every waiting arm counts the
   same shared vectors); an arm still unselected after ``cap`` vectors gets ``K_{t,i} = cap``
   (truncated GR, Neu & Bartók's ``min(K, M)``) and counts one cap hit.

Hyperparameters (all enter the cell key)
----------------------------------------
===================  ============  ==================================================================
name                 default       provenance
===================  ============  ==================================================================
``c``                1.0           [secondary] learning-rate constant of ``eta_t = c / sqrt(t)``:
                                   the ``1/sqrt(t)`` form is that of the Fréchet-FTPL
                                   best-of-both-worlds line (Honda et al. 2023 for K arms); the
                                   constant and any ``m`` / ``d`` scaling in the paper body could
                                   not be confirmed (only abstracts were reachable).
``alpha``            2.0           [secondary] Fréchet shape; ``alpha = 2`` is the shape of Honda et
                                   al. 2023 (confirmed by the abstracts of Lee et al. 2024 and
                                   Chen & Honda 2025); the paper's own choice is unconfirmed.
``eta_scale``        1.0           [design] multiplies ``eta_t``. Feeding the losses ``2 l`` (the
                                   reference code of the FTRL baselines maps ±1 losses to ``2 l``,
                                   ``diku-dk/CombSemiBandits``) is the same as ``eta_scale = 2``: ranking
                                   ``2 L_hat - r / eta`` equals ranking ``L_hat - r / (2 eta)``.
``cap``              1_000_000     [design] safety cap ``M`` on GR draws per round (step 7 above;
                                   the analyses use untruncated GR [secondary]).
``gr``               "standard"    [paper] geometric resampling. ``"conditional"`` (conditional GR
                                   of the follow-up, see below) is refused with a ValueError.
``gr_only_on_loss``  True          [design] compute ``K_{t,i}`` only where ``l_{t,i} != 0`` (see
                                   below).
===================  ============  ==================================================================

Choices the paper leaves open (all [design])
---------------------------------------------
* **Ties** (step 4): ``A_t`` holds the indices with ``z_i < z_(m)`` (``z_(m)`` the ``m``-th smallest
  perturbed loss) and then, in increasing index order, those with ``z_i = z_(m)`` until ``m`` are
  chosen: exactly the first ``m`` entries of a *stable* argsort. (``np.argpartition`` is not tie-stable,
  so it is not used.) In GR, arm ``i`` is selected by a vector iff fewer than ``m`` arms ``j`` have
  ``z_j < z_i`` or ``z_j = z_i, j < i`` -- the same rule. Ties have probability zero except
  ``r = inf`` (``U = 1``, probability ``2^-53`` per draw).
* **Shared resampling vectors**: one vector serves every arm still waiting for its ``K`` (Neu &
  Bartók's geometric resampling for combinatorial semi-bandits draws one copy of the perturbation
  per step for all components). Each ``K_{t,i}`` is geometric with parameter ``w_{t,i}``, which is all
  the estimator needs; the ``K``'s of different arms are dependent.
* **``gr_only_on_loss``**: ``l_hat_{t,i} = 0`` whenever ``l_{t,i} = 0`` whatever ``K_{t,i}``, so by
  default ``K`` is computed only for the chosen arms with a non-zero loss. This changes how many
  random numbers a round consumes (hence the later draws of the run) but not the distribution of
  ``l_hat`` or of anything the agent does: the ``K``'s of the arms that are computed are the same
  functions of the same i.i.d. vector sequence. ``gr_only_on_loss=False`` resamples for every
  ``i in A_t`` as step 5 above is written (and is then the diagnostics' ``mean_K`` over all chosen
  arms).
* **Randomness**: each run owns a xoshiro256** generator (:mod:`papergym.agents.rng`) seeded from its
  agent seed, stepped inside numba, so a run's numbers depend only on its own seed and the batched
  agent is bit-identical, run by run, to the per-run agent. One uniform ``u`` per perturbation:
  ``U = 1 - u`` in ``(0, 1]``, ``E = -ln U`` (``Exp(1)``), ``r = E^(-1/alpha)`` (``1 / sqrt(E)`` when
  ``alpha = 2``; ``r = inf`` when ``E = 0``); perturbed losses ``z_i = L_hat_i - r_i / eta_t``.
  Stream order: ``act`` draws ``d`` uniforms in arm order. In GR the entries of each fresh vector are
  drawn on first use: for each waiting arm ``i`` in index order, ``z_i`` first, then ``z_j`` for
  ``j = 0, 1, ...`` (``j != i``) until ``m`` arms beat ``i`` (then ``i`` is not selected) or all were
  seen (selected); an entry drawn for one arm is reused by the next (shared vector).
* **Lazy vectors**: entries a membership test never looks at are never drawn. The entries are i.i.d.
  and whether one is looked at depends only on entries already drawn, so this is the same law as
  drawing whole vectors (and the same ``K``'s in law); it only saves work: a rarely selected arm is
  typically rejected after about ``m`` entries instead of ``d`` transforms.
* ``update`` uses the losses at the arms ``act`` chose and refuses other actions (the importance
  weights assume FTPL's own draw was played).

Conditional geometric resampling (``ftpl-frechet-cgr``): not implemented
------------------------------------------------------------------------
Chen, Kim, Lee, Honda (arXiv 2603.11764) and Chen & Honda (arXiv 2506.12490) extend "conditional
geometric resampling" to m-set / size-invariant semi-bandits, cutting the cost from ``O(d^2)`` to
``O(md(log(d/m) + 1))`` per round. Only their abstracts were reachable; the procedure itself could not
be confirmed, so no CGR variant is registered and ``gr="conditional"`` raises a ValueError rather
than run an invented procedure (a documented deviation).

Implementation and speed
------------------------
Two numba kernels loop over the runs (``act``: steps 2-4; ``update``: steps 5-6), one round per call.
Measured on the stochastic family (gap 0.2, optimal arms first), 1000 rounds after 1000 warm-up
rounds, 2 shared cores (noisy): microseconds per round and run, batched over 20 runs (1 run):
``(d, m) = (10, 3)``: 1.4-3 (15, Python-call bound), about 5 GR vectors per round;
``(50, 10)``: 7-12 (21-42), about 21 vectors; ``(200, 20)``: 48-73 (78-116), about 71 vectors.
A numpy alternative (blocks of 32 whole vectors per run, membership by counting) costs 54-90 us
(``d = 50``) and 230-340 us (``d = 200``) per round and run for step 5 alone, and cannot batch runs
without a Python loop (each run must draw only from its own stream), so it was not used.

Diagnostics (per run)
---------------------
``gr_draws_per_round`` -- mean number of GR vectors drawn per round; ``cap_hits`` -- number of
truncated ``K``'s; ``mean_K`` -- mean of the computed ``K_{t,i}`` (NaN before any).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numba import njit

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.agents.rng import rand_uniform as _rand  # per-run xoshiro256**
from papergym.agents.rng import rng_state as _rng_state
from papergym.envs.bandits.semibandit import ENV_ID
from papergym.validate import boolean, one_of, positive_float, positive_int

__all__ = [
    "DEFAULTS",
    "GR_MODES",
    "BatchedFTPLFrechet",
    "FTPLFrechet",
    "frechet_perturbations",
    "geometric_resampling",
    "select_m_smallest",
]

DEFAULTS: dict[str, Any] = {
    "c": 1.0,
    "alpha": 2.0,
    "eta_scale": 1.0,
    "cap": 1_000_000,
    "gr": "standard",
    "gr_only_on_loss": True,
}
GR_MODES = ("standard",)


# ============================================================================ numba kernels
@njit(cache=True)
def _frechet(u, alpha):
    """Step 3: Fréchet(alpha) draw from one ``U[0, 1)`` number ``u``: ``(-ln(1 - u))^(-1/alpha)``."""
    e = -math.log(1.0 - u)
    if e == 0.0:
        return math.inf
    if alpha == 2.0:
        return 1.0 / math.sqrt(e)
    return e ** (-1.0 / alpha)


@njit(cache=True)
def _kth_smallest(buf, k):
    """The ``k``-th smallest entry (0-based) of ``buf`` (reordered in place): Hoare quickselect with a
    median-of-three pivot, no randomness."""
    lo = 0
    hi = buf.shape[0] - 1
    while hi > lo:
        a = buf[lo]
        b = buf[(lo + hi) >> 1]
        c = buf[hi]
        if a < b:
            pivot = b if b < c else (c if a < c else a)
        else:
            pivot = a if a < c else (c if b < c else b)
        i = lo
        j = hi
        while i <= j:
            while buf[i] < pivot:
                i += 1
            while buf[j] > pivot:
                j -= 1
            if i <= j:
                tmp = buf[i]
                buf[i] = buf[j]
                buf[j] = tmp
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:  # j < k < i: buf[k] equals the pivot
            return buf[k]
    return buf[k]


@njit(cache=True)
def _select_into(z, m, scratch, out):
    """Step 4: ``out[i] = 1`` for the ``m`` smallest ``z`` (ties: lowest index first), 0 elsewhere."""
    d = z.shape[0]
    for j in range(d):
        scratch[j] = z[j]
    thr = _kth_smallest(scratch, m - 1)
    cnt = 0
    for j in range(d):
        if z[j] < thr:
            out[j] = 1
            cnt += 1
        else:
            out[j] = 0
    for j in range(d):  # at least one z equals thr; fill up in index order
        if cnt >= m:
            break
        if z[j] == thr:
            out[j] = 1
            cnt += 1


@njit(cache=True)
def _act_kernel(L, states, eta, alpha, m, z, scratch, actions):
    """Steps 3-4 for every run: ``d`` uniforms per run, ``A_t`` into ``actions`` (int8 0/1)."""
    n, d = L.shape
    for k in range(n):
        rs = states[k]
        for i in range(d):
            z[i] = L[k, i] - _frechet(_rand(rs), alpha) / eta
        _select_into(z, m, scratch, actions[k])


@njit(cache=True)
def _gr_run(Lk, rs, eta, alpha, m, pending, p, cap, z, stamp, kout):
    """Step 5 for one run: shared resampled vectors until every arm in ``pending[:p]`` is selected.

    Writes ``K_{t,i}`` into ``kout[i]`` (``cap`` if truncated); returns ``(draws, cap_hits)``.
    ``Lk`` is not modified. Entries of a vector are drawn on first use (``stamp[j] == draws``)."""
    d = Lk.shape[0]
    for j in range(d):
        stamp[j] = 0
    draws = 0
    while p > 0 and draws < cap:
        draws += 1  # a fresh perturbation vector
        q = 0
        for a in range(p):
            i = pending[a]
            if stamp[i] != draws:
                z[i] = Lk[i] - _frechet(_rand(rs), alpha) / eta
                stamp[i] = draws
            zi = z[i]
            beaten = 0
            inside = True
            for j in range(d):  # i is selected iff fewer than m arms rank before it (step 4's rule)
                if j == i:
                    continue
                if stamp[j] != draws:
                    z[j] = Lk[j] - _frechet(_rand(rs), alpha) / eta
                    stamp[j] = draws
                zj = z[j]
                if zj < zi or (zj == zi and j < i):
                    beaten += 1
                    if beaten >= m:
                        inside = False
                        break
            if inside:
                kout[i] = draws
            else:
                pending[q] = i
                q += 1
        p = q
    for a in range(p):  # step 7: truncated at the cap
        kout[pending[a]] = cap
    return draws, p


@njit(cache=True)
def _update_kernel(
    L, states, eta, alpha, m, actions, losses, only_on_loss, cap, z, stamp, pending, kout, draws, cap_hits, k_sum, k_cnt
):
    """Steps 5-6 for every run; ``L`` updated in place after each run's resampling."""
    n, d = L.shape
    for k in range(n):
        Lk = L[k]
        p = 0
        for i in range(d):
            if actions[k, i] != 0 and (not only_on_loss or losses[k, i] != 0.0):
                pending[p] = i
                p += 1
        if p == 0:
            continue
        nd, nc = _gr_run(Lk, states[k], eta, alpha, m, pending, p, cap, z, stamp, kout)
        draws[k] += nd
        cap_hits[k] += nc
        for i in range(d):  # step 6: l_hat = l K on the resampled arms (L_hat unchanged during step 5)
            if actions[k, i] != 0 and (not only_on_loss or losses[k, i] != 0.0):
                Lk[i] += losses[k, i] * kout[i]
                k_sum[k] += kout[i]
                k_cnt[k] += 1


# ============================================================================ public helpers
def select_m_smallest(z: Any, m: int) -> np.ndarray:
    """Step 4's selection: the (sorted) indices of the ``m`` smallest entries of ``z``, ties broken
    by lowest index (= ``np.argsort(z, kind="stable")[:m]``, in ``O(d)``)."""
    z = np.ascontiguousarray(z, dtype=float)
    if z.ndim != 1 or not 1 <= m <= z.shape[0]:
        raise ValueError(f"need a 1-d z and 1 <= m <= len(z), got shape {z.shape} and m={m}")
    out = np.zeros(z.shape[0], dtype=np.int8)
    _select_into(z, int(m), np.empty_like(z), out)
    return np.flatnonzero(out)


def frechet_perturbations(seed: Any, alpha: float, size: int) -> np.ndarray:
    """``size`` Fréchet(``alpha``) draws of the agent's sampler (step 3), from ``rng_state(seed)``."""
    rs = _rng_state(seed)
    return np.array([_frechet(_rand(rs), float(alpha)) for _ in range(int(size))])


def geometric_resampling(
    L_hat: Any, eta: float, alpha: float, m: int, arms: Sequence[int], seed: Any, cap: int = 1_000_000
) -> tuple[np.ndarray, int]:
    """One call of step 5 on a fixed ``L_hat`` and ``eta``: ``K_i`` for each arm in ``arms`` (shared
    vectors, the agent's kernel) and the number of vectors drawn. ``seed``: a seed or a xoshiro state
    (``uint64[4]``, advanced in place)."""
    Lk = np.ascontiguousarray(L_hat, dtype=float)
    d = Lk.shape[0]
    rs = seed if isinstance(seed, np.ndarray) and seed.dtype == np.uint64 else _rng_state(seed)
    pending = np.asarray(list(arms), dtype=np.int64)
    kout = np.zeros(d, dtype=np.int64)
    nd, _ = _gr_run(
        Lk,
        rs,
        float(eta),
        float(alpha),
        int(m),
        pending.copy(),
        pending.shape[0],
        int(cap),
        np.empty(d),
        np.zeros(d, dtype=np.int64),
        kout,
    )
    return kout[pending], int(nd)


# ============================================================================ agent
def _problem_dm(problem: Any) -> tuple[int, int]:
    try:
        d, m = int(problem.d), int(problem.m)
    except (AttributeError, TypeError, ValueError) as exc:
        raise ValueError(
            f"problem must carry the semi-bandit parameters d and m (make_problem), got {problem!r}"
        ) from exc
    if not 1 <= m <= d:
        raise ValueError(f"problem must have 1 <= m <= d, got d={d}, m={m}")
    return d, m


class BatchedFTPLFrechet:
    """``ftpl-frechet`` over ``len(seeds)`` runs (see the module docstring).

    Parameters
    ----------
    problem:
        Public problem of ``MSetSemiBandit-v0`` (``make_problem(d, m, horizon)``).
    seeds:
        One agent seed per run.
    c, alpha, eta_scale, cap, gr, gr_only_on_loss:
        Hyperparameters (module docstring table).
    """

    def __init__(
        self,
        problem: Any,
        *,
        seeds: Sequence[Any],
        c: float = 1.0,
        alpha: float = 2.0,
        eta_scale: float = 1.0,
        cap: int = 1_000_000,
        gr: str = "standard",
        gr_only_on_loss: bool = True,
    ):
        d, m = _problem_dm(problem)
        seeds = list(seeds)
        if not seeds:
            raise ValueError("seeds must hold at least one seed")
        self.c = positive_float(c, "c")
        self.alpha = positive_float(alpha, "alpha")
        self.eta_scale = positive_float(eta_scale, "eta_scale")
        self.cap = positive_int(cap, "cap")
        if gr == "conditional":
            raise ValueError(
                f"gr must be one of {', '.join(map(repr, GR_MODES))}; got 'conditional' (conditional geometric "
                "resampling of arXiv 2603.11764 is not implemented: its procedure could not be confirmed)"
            )
        self.gr = one_of(gr, "gr", GR_MODES)
        self.gr_only_on_loss = boolean(gr_only_on_loss, "gr_only_on_loss")
        self.problem = problem
        self.d, self.m = d, m
        self.n_envs = n = len(seeds)
        self._states = np.stack([_rng_state(s) for s in seeds])
        self._L = np.zeros((n, d))  # step 1
        self._actions = np.zeros((n, d), dtype=np.int8)
        self._eta = math.nan
        self._acted = False
        # scratch buffers of the kernels (one run at a time)
        self._z = np.empty(d)
        self._scratch = np.empty(d)
        self._stamp = np.zeros(d, dtype=np.int64)
        self._pending = np.empty(d, dtype=np.int64)
        self._kout = np.zeros(d, dtype=np.int64)
        # diagnostics
        self._draws = np.zeros(n, dtype=np.int64)
        self._cap_hits = np.zeros(n, dtype=np.int64)
        self._k_sum = np.zeros(n)
        self._k_cnt = np.zeros(n, dtype=np.int64)
        self.t = 0  # rounds completed

    @property
    def L_hat(self) -> np.ndarray:
        """Cumulative loss estimates ``L_hat``, shape ``(n_runs, d)`` (a copy)."""
        return self._L.copy()

    def eta(self, t: int) -> float:
        """Step 2: ``eta_t = eta_scale * c / sqrt(t)``."""
        return self.eta_scale * self.c / math.sqrt(t)

    def act(self, observations: Any = None) -> np.ndarray:
        self._eta = self.eta(self.t + 1)
        _act_kernel(self._L, self._states, self._eta, self.alpha, self.m, self._z, self._scratch, self._actions)
        self._acted = True
        return self._actions.copy()

    def update(self, actions: Any, rewards: Any, observations: Any) -> None:
        if not self._acted:
            raise ValueError("update called before act: FTPL's importance weights need its own draw of A_t")
        if not isinstance(observations, Mapping) or "losses" not in observations:
            raise ValueError("observations must be the semi-bandit dict with key 'losses' (and 'observed')")
        losses = np.ascontiguousarray(observations["losses"], dtype=float)
        n, d = self.n_envs, self.d
        if losses.shape != (n, d):
            raise ValueError(f"observations['losses'] must have shape ({n}, {d}), got {losses.shape}")
        a = np.asarray(actions)
        if a.shape != (n, d) or not np.array_equal(a != 0, self._actions != 0):
            raise ValueError("actions must be the m-sets the last act returned (GR weights assume FTPL's own draw)")
        _update_kernel(
            self._L,
            self._states,
            self._eta,
            self.alpha,
            self.m,
            self._actions,
            losses,
            self.gr_only_on_loss,
            self.cap,
            self._z,
            self._stamp,
            self._pending,
            self._kout,
            self._draws,
            self._cap_hits,
            self._k_sum,
            self._k_cnt,
        )
        self._acted = False
        self.t += 1

    def diagnostics(self) -> dict[str, Any]:
        rounds = max(self.t, 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_k = np.where(self._k_cnt > 0, self._k_sum / np.maximum(self._k_cnt, 1), np.nan)
        return {
            "gr_draws_per_round": (self._draws / rounds).tolist(),
            "cap_hits": self._cap_hits.tolist(),
            "mean_K": mean_k.tolist(),
        }


class FTPLFrechet(PerRunFromBatched):
    """Per-run ``ftpl-frechet`` (one row of :class:`BatchedFTPLFrechet`)."""

    batched_cls = BatchedFTPLFrechet


register_agent(
    "ftpl-frechet",
    FTPLFrechet,
    envs=[ENV_ID],
    role="paper",
    batched_factory=BatchedFTPLFrechet,
    description="FTPL with Fréchet(alpha) perturbations, eta_t = c/sqrt(t), top-m selection and geometric "
    "resampling (Zhan et al. 2025)",
    defaults=dict(DEFAULTS),
)
