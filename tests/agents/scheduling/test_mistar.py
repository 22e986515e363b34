"""MIStar (docs/papers/fjsp-mistar.md): encoder equivariance, masking, memory, search, training and the shipped
weights."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

from papergym_tests import require  # the helper of tests/conftest.py

torch = require("torch", "torch")
require("torch_geometric", "torch")

import papergym.envs  # noqa: F401
from papergym.agents.base import list_agents, make_agent, play_episode
from papergym.agents.scheduling.mistar.agent import (
    WEIGHTS_DIR,
    MIStarAgent,
    Searcher,
    load_policy,
    save_policy,
    untrained_policy,
)
from papergym.agents.scheduling.mistar.infer import max_logit_error
from papergym.agents.scheduling.mistar.memory import EpisodeMemory, association, revisit_penalty
from papergym.agents.scheduling.mistar.model import MIStarPolicy, batch_graphs, concat_batches
from papergym.agents.scheduling.mistar.train import (
    TrainConfig,
    greedy_search,
    initial_solution,
    plackett_luce_logp,
    train,
)
from papergym.envs.scheduling.fjsp.generators import sd2_instance
from papergym.envs.scheduling.fjsp.graph import Solution, apply_move, evaluate, job_links, neighbourhood
from papergym.envs.scheduling.fjsp.instance import Instance
from papergym.envs.scheduling.fjsp.sets import load_set


def _inst(seed=0, n=6, m=4):
    return sd2_instance(n, m, np.random.default_rng(seed))


def _policy(seed=0, memory=True):
    torch.manual_seed(seed)
    return MIStarPolicy(hidden=16, layers=2, memory=memory).eval()


def _graph(inst, sol, progress=0.3, votes=None):
    ev = evaluate(inst, sol)
    mv = neighbourhood(inst, sol, ev)
    return batch_graphs([(inst, sol, ev, job_links(inst))], [progress], [mv], [votes]), mv


@pytest.fixture
def weights(tmp_path):
    return save_policy(_policy(), tmp_path / "tiny.pt", {"note": "untrained, for tests"})


# ------------------------------------------------------------------------------------------- encoder
def _permute_jobs(inst: Instance, sol: Solution, perm):
    """The same instance with jobs reordered (new job i = old job perm[i]) and the same solution."""
    old_ops = [list(inst.ops_of(j)) for j in perm]
    order = np.concatenate(old_ops)
    new_of_old = np.empty(inst.n_ops, dtype=np.int64)
    new_of_old[order] = np.arange(inst.n_ops)
    p_inst = Instance(inst.job_ops[list(perm)], inst.proc[order])
    p_sol = Solution.from_sequences(p_inst, [[int(new_of_old[o]) for o in seq] for seq in sol.sequences()])
    return p_inst, p_sol, new_of_old


def test_encoder_and_scores_are_permutation_equivariant_over_jobs():
    inst = _inst(3, 7, 4)
    sol = initial_solution(inst, "random")
    perm = np.random.default_rng(1).permutation(inst.n_jobs)
    p_inst, p_sol, new_of_old = _permute_jobs(inst, sol, perm)
    pol = _policy(memory=False)
    b, mv = _graph(inst, sol)
    pb, pmv = _graph(p_inst, p_sol)
    with torch.no_grad():
        h, hm, g = pol.encoder(b)
        ph, phm, pg = pol.encoder(pb)
        logits, _, value = pol(b)
        plogits, _, pvalue = pol(pb)
    np.testing.assert_allclose(ph.numpy()[new_of_old], h.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(phm.numpy(), hm.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pg.numpy(), g.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pvalue.numpy(), value.numpy(), rtol=1e-4, atol=1e-5)
    N = inst.n_ops
    pmap = {(int(v), int(x)): float(s) for v, x, s in zip(pmv.v, pmv.x, plogits)}
    assert len(pmap) == len(mv)
    for v, x, s in zip(mv.v, mv.x, logits):
        key = (int(new_of_old[v]), int(new_of_old[x]) if x < N else int(x))
        assert pmap[key] == pytest.approx(float(s), rel=1e-4, abs=1e-5)


def test_batched_graph_is_the_envs_heterodata_graph():
    from papergym.envs.scheduling.fjsp.hetero import to_heterodata

    inst = _inst(8, 6, 4)
    sol = initial_solution(inst)
    b, _ = _graph(inst, sol)
    h = to_heterodata(inst, sol)
    torch.testing.assert_close(b.x_op, h["op"].x)
    torch.testing.assert_close(b.x_m, h["machine"].x)

    def pairs(e):
        return set(map(tuple, e.t().tolist()))

    fwd = pairs(h["op", "job_next", "op"].edge_index) | pairs(h["op", "machine_next", "op"].edge_index)
    back = pairs(h["op", "job_prev", "op"].edge_index) | pairs(h["op", "machine_prev", "op"].edge_index)
    assert pairs(b.op_pred) == fwd and pairs(b.op_both) == fwd | back
    assert pairs(b.serves) == pairs(h["op", "served_by", "machine"].edge_index)


def test_distinct_solutions_give_distinct_graphs_and_embeddings():
    inst = _inst(4)
    sol = initial_solution(inst)
    mv = neighbourhood(inst, sol)
    other = apply_move(inst, sol, mv.v[0], mv.x[0])
    pol = _policy()
    with torch.no_grad():
        a = pol.encoder(_graph(inst, sol)[0])[0]
        b = pol.encoder(_graph(inst, other)[0])[0]
    assert not torch.allclose(a, b)


def test_batched_forward_equals_per_graph_forward():
    pol = _policy()
    items, moves, prog = [], [], []
    for s in range(3):
        inst = _inst(s, 5 + s, 3 + s % 2)
        sol = initial_solution(inst)
        ev = evaluate(inst, sol)
        items.append((inst, sol, ev, job_links(inst)))
        moves.append(neighbourhood(inst, sol, ev))
        prog.append(0.1 * s)
    singles = [batch_graphs([it], [p], [m]) for it, p, m in zip(items, prog, moves)]
    with torch.no_grad():
        big = pol(batch_graphs(items, prog, moves))
        cat = pol(concat_batches(singles))
        one = [pol(b) for b in singles]
    for k in range(3):
        ref = torch.cat([o[k] for o in one])
        torch.testing.assert_close(big[k], ref, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(cat[k], ref, rtol=1e-5, atol=1e-6)
    # log-probabilities are normalised within each graph
    sums = [float(torch.logsumexp(o[1], 0)) for o in one]
    assert sums == pytest.approx([0.0, 0.0, 0.0], abs=1e-5)


# ------------------------------------------------------------------------------------------- masking
def test_masked_pairs_never_get_probability(weights):
    env = gym.make("FJSPImprove-v0", family="sd2", n_jobs=6, n_machines=4, horizon=10).unwrapped
    obs, _ = env.reset(seed=2)
    agent = MIStarAgent(env.problem, seed=0, weights=str(weights))
    for _ in range(4):
        prob = agent.action_probabilities(obs)
        mask = np.asarray(obs["action_mask"]).astype(bool)
        assert prob.shape == mask.shape
        assert np.all(prob[~mask] == 0.0)
        n_moves = agent.n_moves
        assert np.all(prob[n_moves:] == 0.0)  # the policy never restores while a move is legal
        legal_moves = np.flatnonzero(mask[:n_moves])
        assert np.all(prob[legal_moves] > 0.0)
        assert prob.sum() == pytest.approx(1.0)
        a = agent.act(obs)
        assert mask[a]
        obs, *_ = env.step(a)


# ------------------------------------------------------------------------------------------- memory
def test_association_matrix_closed_form():
    inst = Instance(np.array([2, 1]), np.array([[3, 0], [2, 4], [5, 1]]))
    sol = Solution.from_sequences(inst, [[0, 2], [1]])
    L = association(sol, 2).reshape(3, 2)
    expected = np.array([[1 / 2, 0], [0, 1], [2 / 2, 0]])
    np.testing.assert_allclose(L, expected / np.linalg.norm(expected))


def test_soft_votes_are_similarity_weighted_counts():
    mem = EpisodeMemory(k=2)
    e = np.eye(3)
    mem.store(e[0], v=1, x=5)
    mem.store((e[0] + e[1]) / np.sqrt(2), v=2, x=5)
    mem.store(e[2], v=1, x=7)  # orthogonal to the query: not among the 2 nearest
    votes = mem.votes(e[0], np.array([1, 2, 3]), np.array([5, 7, 5]))
    w1, w2 = 1.0, 1 / np.sqrt(2)
    np.testing.assert_allclose(votes[:, 0], [w1 / (w1 + w2), w2 / (w1 + w2), 0.0], rtol=1e-6)
    np.testing.assert_allclose(votes[:, 1], [1.0, 0.0, 1.0], rtol=1e-6)
    assert not EpisodeMemory(3).votes(e[0], np.array([1]), np.array([2])).any()  # empty memory: no votes
    with pytest.raises(ValueError, match="memory_k"):
        EpisodeMemory(0)


def test_revisit_penalty_is_full_on_an_exact_revisit_and_zero_at_t0():
    inst = _inst(5)
    sol = initial_solution(inst)
    mem = EpisodeMemory(8)
    k0 = association(sol, inst.n_machines)
    mem.store(k0, 0, 1)
    mv = neighbourhood(inst, sol)
    k1 = association(apply_move(inst, sol, mv.v[0], mv.x[0]), inst.n_machines)
    mem.store(k1, 0, 1)
    assert revisit_penalty(mem, k0, 0, 10, 2.0) == 0.0
    assert revisit_penalty(mem, k0, 5, 10, 2.0) == pytest.approx(2.0 * 0.5)  # back to s_0
    assert 0.0 <= revisit_penalty(mem, k1, 1, 10, 2.0) < 2.0 * 0.1  # s_1 is not compared with itself


# ------------------------------------------------------------------------------------------- search
def _run(agent_name, seed, hp, n=6, m=4, horizon=12, env_seed=1):
    env = gym.make("FJSPImprove-v0", family="sd2", n_jobs=n, n_machines=m, horizon=horizon).unwrapped
    obs, _ = env.reset(seed=env_seed)
    agent = make_agent(agent_name, env.problem, seed=seed, **hp)
    actions = []
    play_episode(agent, env, obs, on_step=lambda a, r: actions.append(int(a)))
    return actions, env, agent


def test_inference_is_deterministic_under_a_seed(weights):
    hp = {"weights": str(weights)}
    a1, env1, ag1 = _run("mistar", 7, hp)
    a2, env2, _ = _run("mistar", 7, hp)
    a3, _, _ = _run("mistar", 8, hp)
    assert a1 == a2 and env1.makespan == env2.makespan
    assert a1 != a3
    assert ag1.diagnostics()["evaluated_moves"] <= 16 * len(a1)


def test_parallel_search_executes_the_best_sampled_move(weights):
    pol, _ = load_policy(str(weights))
    inst = _inst(6, 8, 4)
    sol = initial_solution(inst)
    s = Searcher(pol, p=10_000, rng=np.random.default_rng(0))  # P >= |moves|: every move is evaluated
    s.reset(inst)
    v, x = s.choose(sol, 0.0)
    mv = neighbourhood(inst, sol)
    assert evaluate(inst, apply_move(inst, sol, v, x)).cmax == mv.cmax.min()
    # P = 1 executes the sampled move whatever its makespan; with P = |moves| the best is always taken
    one = Searcher(pol, p=1, rng=np.random.default_rng(0))
    one.reset(inst)
    assert one.choose(sol, 0.0) is not None and one.evaluated == 1


def test_greedy_search_never_worse_than_the_initial_solution(weights):
    pol, _ = load_policy(str(weights))
    inst = _inst(7, 6, 4)
    c0 = evaluate(inst, initial_solution(inst)).cmax
    assert greedy_search(pol, inst, 15, p=8, seed=0) <= c0


def test_bad_hyperparameters_and_weights_are_refused(tmp_path, weights):
    env = gym.make("FJSPImprove-v0", family="sd2", n_jobs=5, n_machines=3).unwrapped
    with pytest.raises(FileNotFoundError, match="sd2-10x5"):
        MIStarAgent(env.problem, weights=str(tmp_path / "missing.pt"))
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match="not a MIStar weights file"):
        MIStarAgent(env.problem, weights=str(bad))
    torch.save({"format": "something-else"}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not a MIStar weights file"):
        load_policy(str(tmp_path / "other.pt"))
    for hp, match in (({"p": 0}, "p must"), ({"temperature": 0.0}, "temperature"), ({"tabu": "x"}, "tabu")):
        with pytest.raises(ValueError, match=match):
            MIStarAgent(env.problem, weights=str(weights), **hp)
    no_mem = save_policy(_policy(memory=False), tmp_path / "nomem.pt")
    with pytest.raises(ValueError, match="without memory"):
        MIStarAgent(env.problem, weights=str(no_mem), memory=True)


# ------------------------------------------------------------------------------------------- training
def _tiny_cfg(**kw):
    base = dict(
        family="sd2",
        n_jobs=5,
        n_machines=3,
        n_envs=6,
        horizon=10,
        n_step=5,
        epochs=2,
        hidden=16,
        layers=2,
        validate_count=0,
        seed=3,
        lr=3e-3,
        episodes=6,
    )
    base.update(kw)
    return TrainConfig(**base)


def test_training_is_reproducible_from_a_seed():
    p1, h1 = train(_tiny_cfg(), log=lambda s: None)
    p2, h2 = train(_tiny_cfg(), log=lambda s: None)
    p3, _ = train(_tiny_cfg(seed=4), log=lambda s: None)
    for (k, a), b in zip(p1.state_dict().items(), p2.state_dict().values()):
        assert torch.equal(a, b), k
    assert [u["loss"] for u in h1["updates"]] == [u["loss"] for u in h2["updates"]]
    assert any(not torch.equal(a, b) for a, b in zip(p1.state_dict().values(), p3.state_dict().values()))


def test_short_training_decreases_the_loss_on_a_fixed_instance_set():
    insts = [sd2_instance(5, 3, np.random.default_rng(100 + i)) for i in range(6)]
    _, hist = train(
        _tiny_cfg(episodes=6 * 50, distill_coef=1.0, distill_target="delta", distill_beta=100.0, rollout="single"),
        instances=insts,
        log=lambda s: None,
    )
    d = [u["distill_loss"] for u in hist["updates"]]
    assert len(d) == 100
    # the policy moves towards the one-step teacher (cross-entropy 3.60 -> about 3.4 in this run)
    assert np.mean(d[-20:]) < np.mean(d[:10]) - 0.1


def test_plackett_luce_is_the_law_of_sampling_without_replacement():
    from itertools import permutations

    logits = torch.tensor([0.3, -1.0, 2.0, 0.5, 1.1, -0.2], dtype=torch.float64)
    seg = torch.tensor([0, 0, 0, 1, 1, 1])
    # P = 1: the log-softmax of the chosen move within its graph
    one = plackett_luce_logp(logits, seg, 2, torch.tensor([[2], [4]]))
    ls = torch.cat([torch.log_softmax(logits[:3], 0), torch.log_softmax(logits[3:], 0)])
    assert torch.allclose(one, ls[[2, 4]])
    # P = 2: closed form p_a · p_b / (1 − p_a), and the ordered pairs of a graph sum to probability 1
    p = torch.softmax(logits[:3], 0)
    two = plackett_luce_logp(logits, seg, 2, torch.tensor([[0, 2], [3, 5]]))
    assert two[0].exp().item() == pytest.approx((p[0] * p[2] / (1 - p[0])).item(), rel=1e-12)
    total = sum(
        plackett_luce_logp(logits, seg, 2, torch.tensor([[a, b], [3, 4]]))[0].exp().item()
        for a, b in permutations(range(3), 2)
    )
    assert total == pytest.approx(1.0, abs=1e-12)
    # padding (-1) = fewer candidates than P: only the real entries count
    pad = plackett_luce_logp(logits, seg, 2, torch.tensor([[0, 1, 2], [3, -1, -1]]))
    assert pad[0].exp().item() == pytest.approx((p[0] * p[1] / (1 - p[0])).item(), rel=1e-12)  # the last is sure
    assert pad[1].item() == pytest.approx(ls[3].item())
    # Monte-Carlo: the Gumbel top-2 the search draws has these probabilities
    rng = np.random.default_rng(0)
    lg = logits[:3].numpy()
    draws = np.argsort(-(lg[None, :] + rng.gumbel(size=(200_000, 3))), axis=1)[:, :2]
    freq = np.mean((draws[:, 0] == 0) & (draws[:, 1] == 2))
    assert freq == pytest.approx(two[0].exp().item(), abs=0.005)


def test_training_resumes_from_its_checkpoint_to_the_same_weights(tmp_path):
    cfg = _tiny_cfg(episodes=24, validate_count=2, validate_every=2, validate_horizon=5)
    whole, _ = train(cfg, log=lambda s: None)
    ck = tmp_path / "run.ckpt"
    import papergym.agents.scheduling.mistar.train as T

    real = T._save_checkpoint

    def only_first(path, state):  # an interruption right after the first checkpoint
        if state["batch"] == 2:
            real(path, state)

    T._save_checkpoint = only_first
    try:
        train(cfg, log=lambda s: None, checkpoint=ck)
    finally:
        T._save_checkpoint = real
    lines = []
    resumed, _ = train(cfg, log=lines.append, checkpoint=ck, resume=True)
    assert "resumed" in lines[0] and "after batch 2" in lines[0]
    for (k, a), b in zip(whole.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(a, b), k
    with pytest.raises(ValueError, match="another configuration"):
        train(
            _tiny_cfg(episodes=24, validate_count=2, validate_every=2, validate_horizon=5, lr=1e-2),
            log=lambda s: None,
            checkpoint=ck,
            resume=True,
        )


def test_numpy_inference_equals_the_torch_network():
    rng = np.random.default_rng(31)
    for memory, (n, m) in ((True, (10, 5)), (False, (6, 4)), (True, (15, 8))):
        torch.manual_seed(n)
        pol = MIStarPolicy(hidden=32, layers=3, memory=memory).eval()
        inst = sd2_instance(n, m, rng)
        links = job_links(inst)
        sol = initial_solution(inst, "mwkr")
        for step in range(4):
            ev = evaluate(inst, sol)
            mv = neighbourhood(inst, sol, ev)
            votes = rng.random((len(mv), 2)).astype(np.float32)
            assert max_logit_error(pol, inst, sol, ev, links, step / 4, mv, votes) < 1e-4
            i = int(rng.integers(len(mv)))
            sol = apply_move(inst, sol, int(mv.v[i]), int(mv.x[i]))
    # the shipped network too, and the search picks the same moves with either backend
    pol, _ = load_policy("sd2-10x5")
    inst = sd2_instance(10, 5, rng)
    a = Searcher(pol, rng=np.random.default_rng(0), backend="numpy")
    b = Searcher(pol, rng=np.random.default_rng(0), backend="torch")
    a.reset(inst)
    b.reset(inst)
    sol = initial_solution(inst)
    for t in range(20):
        ma, mb = a.choose(sol, t / 20), b.choose(sol, t / 20)
        assert ma == mb
        sol = apply_move(inst, sol, *ma)
    with pytest.raises(ValueError, match="backend"):
        Searcher(pol, rng=np.random.default_rng(0), backend="jax")


def test_training_config_is_validated():
    with pytest.raises(ValueError, match="multiple of n_step"):
        TrainConfig(horizon=15, n_step=10).check()
    with pytest.raises(ValueError, match="family"):
        TrainConfig(family="sd3").check()
    with pytest.raises(ValueError, match="n_envs"):
        TrainConfig(n_envs=0).check()
    with pytest.raises(ValueError, match="rollout"):
        TrainConfig(rollout="beam").check()
    with pytest.raises(ValueError, match="init"):
        TrainConfig(init="given").check()
    with pytest.raises(ValueError, match="distill_coef"):
        TrainConfig(distill_coef=-1.0).check()


# ------------------------------------------------------------------------------------------- shipped weights
def test_mistar_variants_are_registered_with_shipped_weights():
    names = {a.name: a for a in list_agents("FJSPImprove-v0")}
    for name in ("mistar", "mistar-no-memory", "mistar-p1"):
        assert names[name].role == "paper"
        assert (WEIGHTS_DIR / f"{names[name].defaults['weights']}.pt").is_file()
    assert names["mistar-p1"].defaults["p"] == 1
    assert names["mistar-untrained"].defaults["proposal"] == "untrained"
    assert names["mistar-uniform"].defaults["proposal"] == "uniform"
    assert names["mistar-no-memory"].defaults["memory"] is False
    pol, meta = load_policy("sd2-10x5")
    assert pol.memory and meta["config"]["family"] == "sd2"
    assert not load_policy("sd2-10x5-no-memory")[0].memory


def test_shipped_weights_reproduce_the_model_card_check():
    card = json.loads((WEIGHTS_DIR / "sd2-10x5.card.json").read_text())
    chk = card["check"]
    insts = {i.name: i for i in load_set(chk["set"])}
    gaps = []
    for name, expected in zip(chk["instances"], chk["makespans"]):
        idx = list(insts).index(name)
        env = gym.make(
            "FJSPImprove-v0", instances=chk["set"], horizon=chk["horizon"], init=chk.get("init", "mwkr")
        ).unwrapped
        obs, _ = env.reset(seed=0, options={"index": idx})
        agent = make_agent("mistar", env.problem, seed=chk["seed"])
        play_episode(agent, env, obs)
        gaps.append(env.oracle.gap(env.makespan))
        assert abs(env.makespan - expected) <= 0.03 * expected, name
    assert np.mean(gaps) == pytest.approx(chk["mean_gap"], abs=0.01)


# ------------------------------------------------------------------------------------------- CLI
def test_train_mistar_cli_writes_loadable_weights_and_refuses_bad_arguments(tmp_path, capsys):
    from papergym.leaderboard.fjsp_cli import main

    out = tmp_path / "w.pt"
    rc = main(
        [
            "train-mistar",
            "--instances",
            "sd2-5x3",
            "--episodes",
            "4",
            "--envs",
            "2",
            "--horizon",
            "10",
            "--n-step",
            "5",
            "--hidden",
            "16",
            "--layers",
            "2",
            "--validate-count",
            "2",
            "--validate-every",
            "1",
            "--seed",
            "1",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    log = capsys.readouterr().out
    assert "[train] batch 2/2" in log and "[validate] batch 2" in log and "wrote" in log
    pol, meta = load_policy(str(out))
    assert meta["config"]["n_jobs"] == 5 and meta["config"]["seed"] == 1 and meta["transitions"] == 40
    assert json.loads((tmp_path / "w.pt.history.json").read_text())["transitions"] == 40
    env = gym.make("FJSPImprove-v0", family="sd2", n_jobs=5, n_machines=3, horizon=5).unwrapped
    obs, _ = env.reset(seed=0)
    assert env.action_space.contains(MIStarAgent(env.problem, weights=str(out)).act(obs))
    for bad, msg in (
        (["--instances", "sd3-5x3"], "FAMILY-NxM"),
        (["--out", str(tmp_path / "w.txt")], ".pt"),
        (["--horizon", "7"], "multiple of n_step"),
        (["--envs", "0"], "n_envs"),
        (["--max-minutes", "0"], "max-minutes"),
    ):
        args = ["train-mistar", "--out", str(tmp_path / "x.pt"), *bad]
        assert main(args) == 2
        assert msg in capsys.readouterr().err
        assert not (tmp_path / "x.pt").exists()


# ------------------------------------------------------------------------------------------- does learning matter
@pytest.mark.slow
def test_trained_weights_beat_their_untrained_twin_and_uniform_proposals_on_fresh_instances():
    """The shipped policy against the same search (P = 4, its temperature and tabu rule) with untrained
    weights and with uniform proposals, on 20 fresh SD2 10x5 instances (generator seeds no other test or the
    training uses), from the protocol's start, T = 400, paired one-sided Wilcoxon test."""
    from scipy.stats import wilcoxon

    rng = np.random.default_rng(70_707)
    insts = [sd2_instance(10, 5, rng, name=f"fresh-{i}") for i in range(20)]
    trained, _ = load_policy("sd2-10x5")
    untrained, _ = untrained_policy("sd2-10x5")
    search = dict(load_policy("sd2-10x5")[1].get("search", {}))
    temp, tabu = float(search.get("temperature", 2.0)), str(search.get("tabu", "visited"))
    agents = {a.name: a for a in list_agents("FJSPImprove-v0")}
    assert agents["mistar"].defaults["p"] == int(search.get("p", 16))  # the deployed P
    # at P = 4 (``mistar-p4``) the proposals decide which moves are priced at all; at the deployed P = 16 exact
    # pricing of 16 of the ~160 legal moves leaves them little to add (README, MIStar: measured, not asserted)
    p = agents["mistar-p4"].defaults["p"]
    out = {}
    for name, pol, uniform in (
        ("trained", trained, False),
        ("untrained", untrained, False),
        ("uniform", trained, True),
    ):
        out[name] = np.array(
            [
                greedy_search(pol, inst, 400, p=p, seed=i, temperature=temp, tabu=tabu, uniform=uniform)
                for i, inst in enumerate(insts)
            ]
        )
    for other in ("untrained", "uniform"):
        d = out["trained"] - out[other]
        assert d.mean() < 0, (other, out["trained"].mean(), out[other].mean())
        assert wilcoxon(out["trained"], out[other], alternative="less").pvalue < 0.01, other
