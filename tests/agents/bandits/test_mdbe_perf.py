"""The data structures behind MDBE's speed (agents/bandits/mdbe.py, module docstring "Implementation"): the
sliding window prefixes of the dyadic eviction test, the per-batch arena the kernels read, and the update
fast path. Each must give the numbers of the plain computation bit for bit; the end-to-end comparison with
the readable reference implementation is in test_mdbe_reference.py."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.agents.bandits import mdbe as M
from papergym.agents.bandits.mdbe import BatchedMDBE
from papergym.envs.bandits.lipschitz import NonStatLipschitzVectorEnv, make_problem


def _problem(T: int):
    return make_problem(d=1, horizon=T)


def _checkpoint_prefix(ag: BatchedMDBE, run: int, j: int, q: int) -> np.ndarray:
    """Sums of depth ``j``'s estimates per cell over window positions [0, q), from the checkpoints and the
    event log (``_prefix_at``, the computation the sliding prefixes replace)."""
    cfg, st = ag._cfg, ag._state
    nj = int(cfg.n_cells[j])
    out = np.zeros(nj)
    M._prefix_at(
        checkpoints=st.checkpoints[run],
        log_cell=st.log_cell[run],
        log_value=st.log_value[run],
        n_cells=nj,
        checkpoint_start=int(cfg.checkpoint_offset[j]),
        log_start=int(cfg.log_offset[j]),
        checkpoint_every=int(cfg.checkpoint_every[j]),
        qpos=q,
        out=out,
    )
    return out


@pytest.mark.parametrize(
    "instance,kw,hp",
    [
        ("two-peak-cyclic", {}, {}),  # the registered defaults: evictions, replays, restarts
        ("piecewise-tents", {"phases": 3, "noise": "gaussian", "sigma": 0.3}, {"c0": 0.2}),  # signed estimates
        ("two-peak-cyclic", {}, {"code_compat": True}),  # window ends at t - 1
        ("benign-changes", {}, {"replay_schedule": "block-offset"}),  # many replays (window resets)
        ("two-peak-cyclic", {"d": 2}, {}),
    ],
)
def test_sliding_prefixes_equal_the_checkpoint_prefixes(instance, kw, hp):
    """After every round, each kept prefix (window k of an active depth, ``q1 = e - 2^k > 0`` with ``e`` the
    last tested window end) equals the checkpoint + log computation exactly, for every cell."""
    T, seeds = 3000, [0, 1, 2]
    env = NonStatLipschitzVectorEnv(num_envs=len(seeds), instance=instance, horizon=T, **kw)
    obs, _ = env.reset(seed=seeds)
    ag = BatchedMDBE(env.problem, seeds=seeds, **hp)
    cfg, st = ag._cfg, ag._state
    checked = 0
    for t in range(1, T + 1):
        a = ag.act(obs)
        obs, r, _, _, _ = env.step(a)
        ag.update(a, r, obs)
        if t % 7 and t < T - 3:  # every 7th round and the last ones
            continue
        for run in range(len(seeds)):
            for j in ag.active_depths(run):
                e = int(st.prefix_end[run, j])
                nj, p0 = int(cfg.n_cells[j]), int(cfg.prefix_offset[j])
                for k in range(int(cfg.n_windows[j])):
                    q1 = e - (1 << k)
                    if q1 <= 0:
                        break
                    kept = st.window_prefix[run, p0 + k * nj : p0 + (k + 1) * nj]
                    assert np.array_equal(kept, _checkpoint_prefix(ag, run, j, q1)), (t, run, j, k)
                    checked += 1
    assert checked > 1000


def test_arena_layout_and_views():
    """Every State field is a view of the one arena (what the kernels write is what Python reads), its
    slot 8-byte aligned, inside the row and disjoint from the others."""
    ag = BatchedMDBE(_problem(5000), seeds=[3, 4])
    lay = ag._ci[M._CI_LAYOUT : M._CI_LAYOUT + 2 * M._N_SLOTS].reshape(-1, 2)
    row_bytes = ag._arena.shape[1]
    spans = sorted((int(o), int(o + n)) for o, n in lay)
    assert all(o % 8 == 0 for o, _ in spans) and spans[-1][1] <= row_bytes
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))
    for name, arr in zip(M.State._fields, ag._state, strict=True):
        assert np.shares_memory(arr, ag._arena), name
        assert arr.shape[0] == 2 and arr.dtype == M._SLOT_DTYPES[M.State._fields.index(name)], name
    # the kernels' writes show through the views: round 1 drew x, the update moves the round counter
    x = ag.act()
    assert np.all((x >= 0) & (x <= 1)) and ag._state.counters[:, M._I_T].tolist() == [1, 1]
    ag.update(x, np.array([1.0, 0.0]))
    assert ag._state.counters[:, M._I_T].tolist() == [2, 2]
    assert not np.array_equal(ag.act(), x)


def test_update_input_forms_play_the_same_run():
    """The fast path (the float64 arrays ``act`` returned, float64 rewards) and the converting path (lists,
    float32, column rewards) give the same run; a changed action or a non-finite reward is refused."""
    T, seeds = 2000, [5, 6]
    U = np.random.default_rng(0).random((T, 2))
    runs = []
    for form in range(3):
        ag = BatchedMDBE(_problem(T), seeds=seeds)
        xs = []
        for t in range(T):
            x = ag.act()
            xs.append(x.copy())
            y = (U[t] < 0.9 - 0.8 * np.abs(x[:, 0] - 0.3)).astype(float)
            if form == 0:
                ag.update(x, y)
            elif form == 1:
                ag.update(x.tolist(), y.astype(np.float32))
            else:
                ag.update(x.ravel(), y.reshape(-1, 1))
        runs.append((np.array(xs), ag.diagnostics()))
    for xs, diag in runs[1:]:
        assert np.array_equal(xs, runs[0][0]) and diag == runs[0][1]
    assert sum(runs[0][1]["restarts"]) >= 1
    ag = BatchedMDBE(_problem(T), seeds=seeds)
    x = ag.act()
    with pytest.raises(ValueError, match="returned by act"):
        ag.update(x + 1e-3, np.zeros(2))
    with pytest.raises(ValueError, match="finite"):
        ag.update(x, np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="shape"):
        ag.update(x, np.zeros(3))
    ag.update(x, np.zeros(2))  # the refused calls changed nothing
    assert ag.round == 2


def test_copies_and_pickles_keep_their_views_on_their_own_arena():
    """A deep copy or an unpickled agent continues the run exactly and never shares memory with the original
    (its State views are remade over its own arena)."""
    import copy
    import pickle

    T = 3000
    U = np.random.default_rng(0).random((T, 2))

    def step(ag, t):
        x = ag.act()
        ag.update(x, (U[t] < 0.9 - 0.8 * np.abs(x[:, 0] - 0.3)).astype(float))

    ag = BatchedMDBE(_problem(T), seeds=[0, 1])
    for t in range(1000):
        step(ag, t)
    copies = [copy.deepcopy(ag), pickle.loads(pickle.dumps(ag))]
    for c in copies:
        assert not np.shares_memory(c._arena, ag._arena)
        assert all(np.shares_memory(v, c._arena) for v in c._state)
    for t in range(1000, T):
        for a in (ag, *copies):
            step(a, t)
    assert sum(ag.diagnostics()["restarts"]) >= 1
    for c in copies:
        assert c.diagnostics() == ag.diagnostics() and c.round == ag.round == T + 1
        assert np.array_equal(c._state.x, ag._state.x)
