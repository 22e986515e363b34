"""Dispatching rules for the constructive FJSP process (``docs/papers/fjsp-mistar.md``), shared by the ``FJSP-v0``
baselines and the ``FJSPImprove-v0`` initialisers.

A decision picks an (operation, machine) pair among the startable ones: the next operation of an
unfinished job on one of its eligible machines, started at ``max(job_ready_j, machine_ready_k)``.

``restrict_to_earliest=True`` [design]: candidates are the pairs with the minimal start
``max(job_ready_j, machine_ready_k)``; then the **job rule** picks a job among the candidates and the
**machine rule** a machine among that job's candidate pairs. Remaining ties are broken uniformly by the
agent's seeded RNG.

Job rules [code: DANIEL ``common_utils.py::heuristic_select_action``; Lei-Kun/Dispatching-rules-for-FJSP]:
``fifo`` the job whose next operation became ready first (min ``job_ready``); ``mor`` most remaining
operations (a.k.a. MOPNR); ``mwkr`` most remaining work (Σ mean eligible ``p`` of the remaining operations);
``lwkr`` least remaining work; ``spt`` the pair with the shortest ``p`` (a pair rule: no machine rule);
``random`` a uniform candidate pair.
Machine rules: ``eet`` earliest machine availability (min ``machine_ready``), then shortest ``p``;
``spt`` shortest ``p``, then earliest availability.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import numpy as np

__all__ = ["JOB_RULES", "MACHINE_RULES", "RuleTables", "choose_pair"]

JOB_RULES = ("fifo", "mor", "mwkr", "lwkr", "spt", "random")
MACHINE_RULES = ("eet", "spt")


class RuleTables:
    """Static per-instance tables of the rules, from the (possibly padded) ``proc`` and ``op_job``
    arrays: remaining operations and remaining mean work from each operation to the end of its job."""

    def __init__(self, proc: np.ndarray, op_job: np.ndarray):
        proc = np.asarray(proc)
        op_job = np.asarray(op_job)
        N = proc.shape[0]
        real = op_job >= 0
        elig = proc > 0
        cnt = np.maximum(elig.sum(axis=1), 1)
        mean_p = np.where(real, proc.sum(axis=1) / cnt, 0.0)
        rem_work = np.zeros(N)
        rem_ops = np.zeros(N, dtype=np.int64)
        acc_w, acc_n, last = 0.0, 0, -2
        for o in range(N - 1, -1, -1):
            if not real[o]:
                continue
            if op_job[o] != last:
                acc_w, acc_n, last = 0.0, 0, op_job[o]
            acc_w += mean_p[o]
            acc_n += 1
            rem_work[o] = acc_w
            rem_ops[o] = acc_n
        self.proc = proc
        self.rem_work = rem_work
        self.rem_ops = rem_ops


def _pick(values: np.ndarray, idx: np.ndarray, rng: np.random.Generator, *, largest: bool) -> np.ndarray:
    """The entries of ``idx`` whose ``values`` are extremal."""
    best = values.max() if largest else values.min()
    return idx[values == best]


def choose_pair(
    job_rule: str,
    obs: dict,
    tables: RuleTables,
    rng: np.random.Generator,
    *,
    machine_rule: str = "eet",
    restrict_to_earliest: bool = True,
) -> int:
    """The action ``j * M + k`` the rule picks in observation ``obs`` of ``FJSP-v0``."""
    mask = np.asarray(obs["action_mask"], dtype=bool)
    M = obs["machine_ready"].shape[0]
    legal = np.flatnonzero(mask)
    if legal.size == 0:
        raise ValueError("no legal action: the schedule is complete")
    jobs, machines = np.divmod(legal, M)
    ops = obs["next_op"][jobs]
    jr = obs["job_ready"][jobs]
    mr = obs["machine_ready"][machines]
    if restrict_to_earliest:
        est = np.maximum(jr, mr)
        keep = est == est.min()
        legal, jobs, machines, ops, jr, mr = legal[keep], jobs[keep], machines[keep], ops[keep], jr[keep], mr[keep]
    p = tables.proc[ops, machines]
    if job_rule == "random":
        return int(legal[rng.integers(legal.size)])
    if job_rule == "spt":
        cand = _pick(p, np.arange(legal.size), rng, largest=False)
    else:
        if job_rule == "fifo":
            score, largest = jr, False
        elif job_rule == "mor":
            score, largest = tables.rem_ops[ops], True
        elif job_rule == "mwkr":
            score, largest = tables.rem_work[ops], True
        elif job_rule == "lwkr":
            score, largest = tables.rem_work[ops], False
        else:
            raise ValueError(f"unknown job rule {job_rule!r}; valid: {', '.join(JOB_RULES)}")
        best = score.max() if largest else score.min()
        tied_jobs = np.unique(jobs[score == best])
        j = tied_jobs[rng.integers(tied_jobs.size)] if tied_jobs.size > 1 else tied_jobs[0]
        sel = np.flatnonzero(jobs == j)
        if machine_rule == "eet":
            sel = sel[mr[sel] == mr[sel].min()]
            cand = sel[p[sel] == p[sel].min()]
        elif machine_rule == "spt":
            sel = sel[p[sel] == p[sel].min()]
            cand = sel[mr[sel] == mr[sel].min()]
        else:
            raise ValueError(f"unknown machine rule {machine_rule!r}; valid: {', '.join(MACHINE_RULES)}")
    i = cand[rng.integers(cand.size)] if cand.size > 1 else cand[0]
    return int(legal[i])
