"""The heterogeneous disjunctive graph of a solution as a ``torch_geometric.data.HeteroData``
(MIStar's input graph; ``docs/papers/fjsp-mistar.md``).

Node types
    ``op`` (one per operation), ``machine`` (one per machine). No source/sink nodes: heads and tails
    (longest paths from the source / to the sink) are operation features instead [design].
Edge types (all directed, so distinct solutions give distinct graphs [secondary])
    ``(op, job_next, op)``       conjunctive arcs ``O_ij → O_i,j+1``
    ``(op, machine_next, op)``   consecutive operations of a machine's processing order
    ``(machine, first, op)``     ``M_k →`` the first operation of its order (with ``machine_next`` this is
                                 the directed hyper-arc ``(M_k, O_k1, O_k2, …)``)
    ``(machine, serves, op)``    ``M_k →`` every operation assigned to it
    ``(machine, eligible, op)``  ``M_k →`` every operation it can process, ``edge_attr = p_ok / C_max``
    plus the reverses ``job_prev``, ``machine_prev``, ``served_by`` (``op → machine``).
Operation features (9) [design; MIStar's list is unknown]
    ``p`` on the assigned machine, mean and min eligible ``p``, number of eligible machines ``/ M``, head
    ``r``, tail ``q``, ``(r + p + q) / C_max``, critical flag, position ``j / n_i``; times divided by the
    current ``C_max``.
Machine features (4) [design]
    load ``Σ p / C_max``, assigned operations ``/ N``, last completion ``/ C_max``, idle share
    ``1 − load / last completion`` (0 for an idle machine).

``torch`` and ``torch_geometric`` are the ``torch`` extra (``pip install 'papergym[torch]'``).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import numpy as np

from papergym.envs.scheduling.fjsp.graph import Evaluation, Solution, evaluate, job_links
from papergym.envs.scheduling.fjsp.instance import Instance

__all__ = [
    "to_heterodata",
    "partial_heterodata",
    "op_features",
    "machine_features",
    "OP_FEATURES",
    "MACHINE_FEATURES",
    "PARTIAL_OP_FEATURES",
]

PARTIAL_OP_FEATURES = ("p", "mean_p", "min_p", "n_eligible", "start", "tail", "path_through", "scheduled", "position")
OP_FEATURES = ("p", "mean_p", "min_p", "n_eligible", "head", "tail", "path_through", "critical", "position")
MACHINE_FEATURES = ("load", "n_assigned", "last_completion", "idle_share")


def op_features(inst: Instance, sol: Solution, ev: Evaluation) -> np.ndarray:
    """``(N, 9)`` float32 operation features (module docstring)."""
    c = float(max(ev.cmax, 1))
    elig = inst.proc > 0
    n_i = inst.job_ops[inst.op_job].astype(float)
    f = np.stack(
        [
            ev.p / c,
            inst.mean_proc / c,
            inst.min_proc / c,
            elig.sum(axis=1) / inst.n_machines,
            ev.heads / c,
            ev.tails / c,
            (ev.heads + ev.p + ev.tails) / c,
            ev.critical.astype(float),
            (inst.op_pos + 1) / n_i,
        ],
        axis=1,
    )
    return f.astype(np.float32)


def machine_features(inst: Instance, sol: Solution, ev: Evaluation) -> np.ndarray:
    """``(M, 4)`` float32 machine features (module docstring)."""
    M = inst.n_machines
    c = float(max(ev.cmax, 1))
    load = np.bincount(sol.assign, weights=ev.p, minlength=M)
    count = np.bincount(sol.assign, minlength=M)
    last = np.zeros(M)
    np.maximum.at(last, sol.assign, (ev.heads + ev.p).astype(float))
    idle = np.where(last > 0, 1.0 - load / np.where(last > 0, last, 1.0), 0.0)
    return np.stack([load / c, count / inst.n_ops, last / c, idle], axis=1).astype(np.float32)


def to_heterodata(inst: Instance, sol: Solution, ev: Evaluation | None = None):
    """The ``HeteroData`` of ``sol`` (module docstring); ``ev`` defaults to :func:`evaluate`."""
    try:
        import torch
        from torch_geometric.data import HeteroData
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the install
        raise ModuleNotFoundError(
            f"to_heterodata needs torch and torch-geometric ({exc.name} is missing): pip install 'papergym[torch]'",
            name=exc.name,
        ) from None
    if ev is None:
        ev = evaluate(inst, sol)
    N = inst.n_ops
    jp, js = job_links(inst)

    def edges(src, dst):
        return torch.as_tensor(np.stack([np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)]))

    data = HeteroData()
    data["op"].x = torch.as_tensor(op_features(inst, sol, ev))
    data["machine"].x = torch.as_tensor(machine_features(inst, sol, ev))
    o = np.arange(N)
    has_js = js >= 0
    has_ms = sol.msucc >= 0
    job = edges(o[has_js], js[has_js])
    mach = edges(o[has_ms], sol.msucc[has_ms])
    data["op", "job_next", "op"].edge_index = job
    data["op", "job_prev", "op"].edge_index = job.flip(0)
    data["op", "machine_next", "op"].edge_index = mach
    data["op", "machine_prev", "op"].edge_index = mach.flip(0)
    firsts = sol.mfirst >= 0
    data["machine", "first", "op"].edge_index = edges(np.flatnonzero(firsts), sol.mfirst[firsts])
    serves = edges(sol.assign, o)
    data["machine", "serves", "op"].edge_index = serves
    data["op", "served_by", "machine"].edge_index = serves.flip(0)
    eo, ek = np.nonzero(inst.proc > 0)
    data["machine", "eligible", "op"].edge_index = edges(ek, eo)
    data["machine", "eligible", "op"].edge_attr = torch.as_tensor(
        (inst.proc[eo, ek] / float(max(ev.cmax, 1))).astype(np.float32)
    ).unsqueeze(1)
    data.cmax = int(ev.cmax)
    return data


def partial_heterodata(inst: Instance, machine: np.ndarray, start: np.ndarray, sequences, lower_bound: float):
    """The graph of a **partial** schedule (``FJSP-v0``): the node and edge types of :func:`to_heterodata`,
    with ``machine_next``/``first``/``serves`` arcs for the scheduled operations only and ``eligible`` arcs
    for all. Operation features (:data:`PARTIAL_OP_FEATURES`, times divided by the current lower bound
    ``LB_t``): ``p`` on the assigned machine (mean eligible ``p`` if unscheduled), mean and min eligible ``p``,
    eligible machines ``/ M``, the start time (scheduled) or earliest possible start (job ready time plus
    the shortest times of the job's unscheduled predecessors), the shortest remaining work after the
    operation in its job, ``(start + p + tail) / LB_t``, a scheduled flag, position ``j / n_i``. Machine
    features as :func:`machine_features` over the scheduled operations."""
    try:
        import torch
        from torch_geometric.data import HeteroData
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the install
        raise ModuleNotFoundError(
            f"partial_heterodata needs torch and torch-geometric ({exc.name} is missing): "
            "pip install 'papergym[torch]'",
            name=exc.name,
        ) from None
    N, M = inst.n_ops, inst.n_machines
    machine = np.asarray(machine, dtype=np.int64)
    start = np.asarray(start, dtype=np.int64)
    done = machine >= 0
    c = float(max(lower_bound, 1))
    mp = inst.min_proc.astype(float)
    p = np.where(done, inst.proc[np.arange(N), np.maximum(machine, 0)], inst.mean_proc)
    est = np.where(done, start, 0).astype(float)
    tail = np.zeros(N)
    for j in range(inst.n_jobs):
        ops = list(inst.ops_of(j))
        t = 0.0
        for o in ops:
            if done[o]:
                t = start[o] + p[o]
            else:
                est[o] = t
                t += mp[o]
        acc = 0.0
        for o in reversed(ops):
            tail[o] = acc
            acc += mp[o]
    x = np.stack(
        [
            p / c,
            inst.mean_proc / c,
            mp / c,
            (inst.proc > 0).sum(axis=1) / M,
            est / c,
            tail / c,
            (est + p + tail) / c,
            done.astype(float),
            (inst.op_pos + 1) / inst.job_ops[inst.op_job],
        ],
        axis=1,
    )
    load = np.bincount(machine[done], weights=p[done], minlength=M)
    count = np.bincount(machine[done], minlength=M)
    last = np.zeros(M)
    np.maximum.at(last, machine[done], (start + p)[done])
    idle = np.where(last > 0, 1.0 - load / np.where(last > 0, last, 1.0), 0.0)
    xm = np.stack([load / c, count / N, last / c, idle], axis=1)

    def edges(src, dst):
        return torch.as_tensor(
            np.stack([np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)]).reshape(2, -1)
        )

    data = HeteroData()
    data["op"].x = torch.as_tensor(x.astype(np.float32))
    data["machine"].x = torch.as_tensor(xm.astype(np.float32))
    _, js = job_links(inst)
    o = np.arange(N)
    job = edges(o[js >= 0], js[js >= 0])
    src, dst = [], []
    firsts_k, firsts_o = [], []
    for k, seq in enumerate(sequences):
        if seq:
            firsts_k.append(k)
            firsts_o.append(seq[0])
        src += list(seq[:-1])
        dst += list(seq[1:])
    mach = edges(src, dst)
    data["op", "job_next", "op"].edge_index = job
    data["op", "job_prev", "op"].edge_index = job.flip(0)
    data["op", "machine_next", "op"].edge_index = mach
    data["op", "machine_prev", "op"].edge_index = mach.flip(0)
    data["machine", "first", "op"].edge_index = edges(firsts_k, firsts_o)
    serves = edges(machine[done], o[done])
    data["machine", "serves", "op"].edge_index = serves
    data["op", "served_by", "machine"].edge_index = serves.flip(0)
    eo, ek = np.nonzero(inst.proc > 0)
    data["machine", "eligible", "op"].edge_index = edges(ek, eo)
    data["machine", "eligible", "op"].edge_attr = torch.as_tensor((inst.proc[eo, ek] / c).astype(np.float32)).unsqueeze(
        1
    )
    data.lower_bound = float(lower_bound)
    return data
