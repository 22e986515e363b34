"""The heterogeneous disjunctive graph of a solution as a ``torch_geometric.data.HeteroData`` (spec §11.3–4).

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
"""

from __future__ import annotations

import numpy as np

from papergym.envs.scheduling.fjsp.graph import Evaluation, Solution, evaluate, job_links
from papergym.envs.scheduling.fjsp.instance import Instance

__all__ = ["to_heterodata", "op_features", "machine_features", "OP_FEATURES", "MACHINE_FEATURES"]

OP_FEATURES = ("p", "mean_p", "min_p", "n_eligible", "head", "tail", "path_through", "critical", "position")
MACHINE_FEATURES = ("load", "n_assigned", "last_completion", "idle_share")


def op_features(inst: Instance, sol: Solution, ev: Evaluation) -> np.ndarray:
    """``(N, 9)`` float32 operation features (module docstring)."""
    c = float(max(ev.cmax, 1))
    elig = inst.proc > 0
    n_i = inst.job_ops[inst.op_job].astype(float)
    f = np.stack([
        ev.p / c,
        inst.mean_proc / c,
        inst.min_proc / c,
        elig.sum(axis=1) / inst.n_machines,
        ev.heads / c,
        ev.tails / c,
        (ev.heads + ev.p + ev.tails) / c,
        ev.critical.astype(float),
        (inst.op_pos + 1) / n_i,
    ], axis=1)
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
        raise ModuleNotFoundError(f"to_heterodata needs torch and torch-geometric ({exc.name} is missing): "
                                  "pip install 'papergym[torch]'", name=exc.name) from None
    if ev is None:
        ev = evaluate(inst, sol)
    N, M = inst.n_ops, inst.n_machines
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
        (inst.proc[eo, ek] / float(max(ev.cmax, 1))).astype(np.float32)).unsqueeze(1)
    data.cmax = int(ev.cmax)
    return data
