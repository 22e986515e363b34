"""The heterogeneous disjunctive graph (torch-geometric extra)."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.envs.scheduling.fjsp.graph import evaluate
from papergym.envs.scheduling.fjsp.hetero import MACHINE_FEATURES, OP_FEATURES
from papergym.envs.scheduling.fjsp.improve import dispatch_solution
from papergym.envs.scheduling.fjsp.sets import load_instance


def test_heterodata_structure(needs):
    needs("torch_geometric")
    from papergym.envs.scheduling.fjsp.hetero import to_heterodata

    inst = load_instance("brandimarte/mk01")
    sol = dispatch_solution(inst, "mwkr", np.random.default_rng(0))
    ev = evaluate(inst, sol)
    d = to_heterodata(inst, sol, ev)
    d.validate()
    N, M = inst.n_ops, inst.n_machines
    assert tuple(d["op"].x.shape) == (N, len(OP_FEATURES)) and tuple(d["machine"].x.shape) == (M, len(MACHINE_FEATURES))
    assert d["op", "job_next", "op"].edge_index.shape[1] == N - inst.n_jobs
    used = int((np.bincount(sol.assign, minlength=M) > 0).sum())
    assert d["op", "machine_next", "op"].edge_index.shape[1] == N - used
    assert d["machine", "first", "op"].edge_index.shape[1] == used
    assert d["machine", "serves", "op"].edge_index.shape[1] == N
    assert d["machine", "eligible", "op"].edge_index.shape[1] == int((inst.proc > 0).sum())
    # reverse edge types are the flipped forward ones
    assert (d["op", "job_prev", "op"].edge_index == d["op", "job_next", "op"].edge_index.flip(0)).all()
    x = d["op"].x.numpy()
    assert np.allclose(x[:, OP_FEATURES.index("critical")], ev.critical)
    assert np.allclose(x[:, OP_FEATURES.index("path_through")][ev.critical], 1.0)
    assert (x[:, OP_FEATURES.index("path_through")] <= 1 + 1e-6).all()
    # machine-order arcs follow the solution's sequences
    src, dst = d["op", "machine_next", "op"].edge_index.numpy()
    assert (sol.msucc[src] == dst).all()
    # a different solution gives a different graph
    sol2 = dispatch_solution(inst, "spt", np.random.default_rng(0))
    d2 = to_heterodata(inst, sol2)
    assert not (
        d2["machine", "serves", "op"].edge_index.shape == d["machine", "serves", "op"].edge_index.shape
        and (d2["machine", "serves", "op"].edge_index == d["machine", "serves", "op"].edge_index).all()
        and d2["op", "machine_next", "op"].edge_index.shape == d["op", "machine_next", "op"].edge_index.shape
        and (d2["op", "machine_next", "op"].edge_index == d["op", "machine_next", "op"].edge_index).all()
    )


def test_improve_env_exposes_the_graph(needs):
    needs("torch_geometric")
    import gymnasium as gym

    env = gym.make("FJSPImprove-v0", instance="brandimarte/mk02").unwrapped
    env.reset(seed=0)
    d = env.heterodata()
    assert d.cmax == int(env._obs()["cmax"][0])
    with pytest.raises(ValueError):
        gym.make("FJSPImprove-v0", restore_slots=0)


def test_construct_env_partial_graph(needs):
    needs("torch_geometric")
    import gymnasium as gym

    from papergym.envs.scheduling.fjsp.hetero import PARTIAL_OP_FEATURES

    env = gym.make("FJSP-v0", instance="brandimarte/mk01").unwrapped
    obs, _ = env.reset(seed=0)
    d0 = env.heterodata()
    assert d0["machine", "serves", "op"].edge_index.shape[1] == 0
    x0 = d0["op"].x.numpy()
    # before any decision, start estimate + shortest time + shortest remaining work is a job's bound: <= LB_0
    f = PARTIAL_OP_FEATURES.index
    bound = x0[:, f("start")] + x0[:, f("min_p")] + x0[:, f("tail")]
    assert (
        bound.max()
        == pytest.approx(max(np.add.reduceat(env.instance.min_proc, env.instance.job_start[:-1])) / env._lb, rel=1e-6)
        and bound.max() <= 1 + 1e-6
    )
    for _ in range(20):
        obs, *_ = env.step(env.action_space.sample())
    d = env.heterodata()
    d.validate()
    assert d["machine", "serves", "op"].edge_index.shape[1] == 20
    x = d["op"].x.numpy()
    assert x[:, PARTIAL_OP_FEATURES.index("scheduled")].sum() == 20
    assert d["op", "machine_next", "op"].edge_index.shape[1] == 20 - sum(1 for s in env._sequences if s)
