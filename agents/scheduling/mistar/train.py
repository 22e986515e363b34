"""MIStar training: n-step PPO on generated instances with parallel environments (MIStar, NeurIPS 2025,
"Training"; n-step PPO after L2S, Zhang et al., ICLR 2024).

Rollouts
    ``n_envs`` instances drawn from the generator (``family`` SD1/SD2, ``n_jobs × n_machines``; a stream
    seeded by ``seed``, disjoint from the published test sets, which are regenerated from their own seeds)
    are improved side by side for ``horizon`` steps from the env's initial solution (``init``, default
    ``sampled-dispatch``, the comparison protocol's start, seeded by the instance hash exactly as
    ``FJSPImprove-v0`` does). The transition logic is the env's: the ``nopt2-lite`` moves with their exact
    makespans, the incumbent, the gain reward ``max(C*_t − C_{t+1}, 0)``; the agent adds the memory (votes
    as inputs) and the revisit penalty: ``r = (r_gain − r_penalty) · 100 / C_max(s_0)`` (percent of the
    initial makespan [design scale]). Without memory (``memory=False``, the ``mistar-no-memory`` ablation)
    there are neither votes nor the penalty, which is computed from the memory's stored states.
What a step samples (``rollout``)
    ``"single"`` — the paper's training: one move sampled from ``softmax(logits)`` and executed; the PPO
    action is that move. ``"search"`` (default) [design] — the step the deployed parallel search takes:
    ``P`` moves sampled without replacement from ``softmax(logits / temperature)`` (Gumbel top-``P``), the
    one with the lowest exact makespan among those not tabu executed (:class:`~.agent.Searcher`'s rule);
    the PPO action is the **ordered sample**, whose probability is the Plackett–Luce product
    (:func:`plackett_luce_logp`) — the policy is trained for the job it does at inference, proposing
    candidates for an exact best-of-``P`` choice. Why: with one-move training from the protocol's start
    (≈ 12 % gap), a single sampled move almost never improves the incumbent (0.00–0.03 % incumbent gain per
    100-step episode in the first batches), so the reward carries no signal; and a policy sharpened towards
    the single best move is the wrong proposal for a best-of-16 search (one-step-greedy proposals —
    ``softmax(−100 ΔC_max/C_max)`` — end 5.7 makespan units *worse* than uniform proposals in the same search,
    12 SD2 10x5 instances, T = 400). The model card (``weights/MODEL_CARD.md``) reports both.
n-step PPO
    Every ``n_step`` steps: n-step returns with ``γ = 1`` bootstrapped by ``V(s_{t+n})`` (0 at the horizon,
    where ``t/T`` is an input so the value can see the end coming), advantages ``G − V`` normalised over the
    batch, ``epochs`` passes of the clipped surrogate (clip ``ε``) + ``value_coef``·Huber − ``entropy_coef``·H
    over the whole rollout as one graph batch, Adam, gradient norm clipped.
Optional one-step teacher [design, not in the paper; off by default]
    ``distill_coef · CE(softmax(−β ΔC_max/C_max), π)`` per state pulls the policy towards a softmax over its
    legal moves' exact makespan changes (``β = distill_beta = 100``). The first shipped weights used it
    (``distill_coef = 1``); in the same search they were no better than their untrained twin on fresh
    instances, and one-step-greedy proposals are worse than uniform ones (above), so it is off. An optional
    auxiliary regression head (``aux_coef``, default 0) predicts ``10·ΔC_max/C_max`` instead.
Defaults [design]
    ``rollout = "search"``, ``p = 16``, ``search_temperature = 1``, ``search_tabu = "visited"`` (the deployed
    search's settings, stored in the weights file as ``meta["search"]`` and used by the agent by default);
    ``n_envs = 20``, ``clip = 0.2``, ``epochs = 4`` (DANIEL ``params.py``); ``lr = 1e-3`` (DANIEL: 3e-4;
    raised for the short CPU budget, not tuned); ``n_step = 10``, ``γ = 1`` (L2S); ``horizon = 100`` in
    training (evaluation uses 400); ``value_coef = 0.5``, ``entropy_coef = 0.01``, ``max_grad_norm = 0.5``,
    ``penalty_weight = 0.1``, ``penalty_sharpness = 200``, ``distill_coef = 0``, ``aux_coef = 0``,
    ``memory_k = 8``, ``hidden = 64``, ``layers = 4``.
Validation
    Every ``validate_every`` instance batches the parallel greedy search (``P = 16``, ``validate_horizon``
    steps, seed 0, the trained temperature and tabu rule) runs on ``validate_count`` instances of DANIEL's
    SD2 *validation* split of the same size (generated from its seed 100; SD1 sizes use a fixed generator
    seed) and the state with the lowest mean makespan is kept as the result (``best_state``).
Checkpoints and reproducibility
    ``seed`` fixes the instance stream, the initialisation of the network and the sampling
    (``torch.manual_seed`` and numpy generators); ``torch.set_num_threads(threads)``. Two runs with the
    same seed, threads and library versions produce identical weights. After every validation the whole
    state (network, optimiser, generators, history) goes to a checkpoint; ``resume`` continues from it and
    ends with the weights an uninterrupted run gives (``papergym fjsp train-mistar ... --resume``).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch_geometric.utils import scatter

from papergym.agents.scheduling.mistar.agent import Searcher
from papergym.agents.scheduling.mistar.memory import EpisodeMemory, association, revisit_penalty
from papergym.agents.scheduling.mistar.model import MIStarPolicy, batch_graphs, concat_batches, segment_log_softmax
from papergym.envs.scheduling.fjsp.generators import sd1_instance, sd2_instance, sd2_published
from papergym.envs.scheduling.fjsp.graph import Solution, apply_move, evaluate, job_links, neighbourhood
from papergym.envs.scheduling.fjsp.improve import initial_solution as _env_initial_solution
from papergym.envs.scheduling.fjsp.instance import Instance

__all__ = [
    "TrainConfig",
    "train",
    "train_to_file",
    "initial_solution",
    "validation_instances",
    "greedy_search",
    "plackett_luce_logp",
]


@dataclass
class TrainConfig:
    family: str = "sd2"
    n_jobs: int = 10
    n_machines: int = 5
    episodes: int = 2000
    n_envs: int = 20
    horizon: int = 100
    n_step: int = 10
    epochs: int = 4
    clip: float = 0.2
    lr: float = 1e-3
    gamma: float = 1.0
    value_coef: float = 0.5
    entropy_coef: float = 0.01
    max_grad_norm: float = 0.5
    penalty_weight: float = 0.1
    penalty_sharpness: float = 200.0
    aux_coef: float = 0.0
    distill_coef: float = 0.0
    distill_target: str = "improving"
    distill_beta: float = 5.0
    rollout: str = "search"
    p: int = 16
    search_temperature: float = 1.0
    search_tabu: str = "visited"
    memory: bool = True
    memory_k: int = 8
    hidden: int = 64
    layers: int = 4
    init: str = "sampled-dispatch"
    seed: int = 0
    threads: int = 1
    validate_every: int = 10
    validate_count: int = 10
    validate_horizon: int = 100
    max_seconds: float | None = None
    extra: dict = field(default_factory=dict)

    def check(self) -> None:
        if self.family not in ("sd1", "sd2"):
            raise ValueError(f"family must be 'sd1' or 'sd2', got {self.family!r}")
        for name in (
            "n_jobs",
            "n_machines",
            "episodes",
            "n_envs",
            "horizon",
            "n_step",
            "epochs",
            "memory_k",
            "hidden",
            "layers",
            "threads",
            "validate_every",
            "validate_horizon",
            "p",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.validate_count < 0:
            raise ValueError(f"validate_count must be >= 0, got {self.validate_count!r}")
        if self.distill_target not in ("improving", "delta"):
            raise ValueError(f"distill_target must be 'improving' or 'delta', got {self.distill_target!r}")
        if self.rollout not in ("search", "single"):
            raise ValueError(f"rollout must be 'search' or 'single', got {self.rollout!r}")
        if self.search_tabu not in ("reverse", "visited"):
            raise ValueError(f"search_tabu must be 'reverse' or 'visited', got {self.search_tabu!r}")
        if self.horizon % self.n_step:
            raise ValueError(f"horizon ({self.horizon}) must be a multiple of n_step ({self.n_step})")
        for name in ("lr", "clip", "search_temperature"):
            if not (getattr(self, name) > 0 and math.isfinite(getattr(self, name))):
                raise ValueError(f"{name} must be a finite number > 0, got {getattr(self, name)!r}")
        for name in ("distill_coef", "aux_coef", "entropy_coef", "value_coef", "penalty_weight"):
            if not (getattr(self, name) >= 0 and math.isfinite(getattr(self, name))):
                raise ValueError(f"{name} must be a finite number >= 0, got {getattr(self, name)!r}")
        try:
            from papergym.envs.scheduling.fjsp.improve import INITS
        except ImportError:  # pragma: no cover
            INITS = ()
        if INITS and (self.init not in INITS or self.init == "given"):
            raise ValueError(f"init must be one of {tuple(i for i in INITS if i != 'given')}, got {self.init!r}")

    @property
    def search(self) -> dict:
        """The parallel-search settings the weights are trained for (stored with the weights; the agent's
        defaults when it loads them)."""
        return {
            "p": self.p if self.rollout == "search" else 16,
            "temperature": self.search_temperature,
            "tabu": self.search_tabu,
        }


def initial_solution(inst: Instance, init: str = "sampled-dispatch") -> Solution:
    """The env's initial solution for ``init`` (:func:`papergym.envs.scheduling.fjsp.improve.initial_solution`)."""
    return _env_initial_solution(inst, init)


def validation_instances(family: str, n_jobs: int, n_machines: int, count: int) -> list[Instance]:
    """Validation instances: DANIEL's SD2 validation split (seed 100) or, for SD1, a fixed generator seed."""
    if count <= 0:
        return []
    if family == "sd2":
        return sd2_published(n_jobs, n_machines, split="validation", count=count)
    rng = np.random.default_rng(10_000_019)
    return [sd1_instance(n_jobs, n_machines, rng, name=f"sd1-val-{i}") for i in range(count)]


def greedy_search(
    policy: MIStarPolicy,
    inst: Instance,
    horizon: int,
    *,
    p: int = 16,
    seed: int = 0,
    init: str = "sampled-dispatch",
    memory_k: int = 8,
    **search,
) -> int:
    """Best makespan of the parallel greedy search on ``inst`` (the agent's loop without the env)."""
    s = Searcher(policy, p=p, memory_k=memory_k, rng=np.random.default_rng(seed), **search)
    s.reset(inst)
    sol = initial_solution(inst, init)
    best = evaluate(inst, sol).cmax
    for t in range(horizon):
        mv = s.choose(sol, t / horizon)
        if mv is None:
            break
        sol = apply_move(inst, sol, *mv)
        best = min(best, evaluate(inst, sol, links=s.links).cmax)
    return int(best)


class _Run:
    """One episode: an instance improved for ``horizon`` steps."""

    def __init__(self, inst: Instance, init: str, k: int):
        self.inst, self.links = inst, job_links(inst)
        self.sol = initial_solution(inst, init)
        self.memory = EpisodeMemory(k)
        self.visited: set[bytes] = set()
        self.prev_key: bytes | None = None
        self.t = 0
        self.alive = True
        self._observe()
        self.cmax0 = self.best = self.ev.cmax
        self.lam = None

    def _observe(self) -> None:
        self.ev = evaluate(self.inst, self.sol, links=self.links)
        self.mv = neighbourhood(self.inst, self.sol, self.ev, links=self.links)
        self.key = association(self.sol, self.inst.n_machines)
        if len(self.mv) == 0:
            self.alive = False

    def pick(self, order: np.ndarray, tabu: str | None) -> int:
        """The move of the sampled candidates ``order`` (local indices, sampling order) that the parallel
        search executes: the lowest exact makespan among the non-tabu ones, ties to the earlier sample
        (:class:`~.agent.Searcher`'s rule); ``tabu=None`` executes the first sample (one-move rollouts)."""
        if tabu is None or order.size == 1:
            return int(order[0])
        cand = order
        here = self.sol.key()
        self.visited.add(here)
        if self.prev_key is not None:
            keys = [apply_move(self.inst, self.sol, self.mv.v[i], self.mv.x[i]).key() for i in order]
            keep = np.array(
                [k != self.prev_key for k in keys] if tabu == "reverse" else [k not in self.visited for k in keys]
            )
            if keep.any():
                cand = order[keep]
        self.prev_key = here
        return int(cand[np.argmin(self.mv.cmax[cand])])  # argmin: first of equal makespans


def plackett_luce_logp(logits: torch.Tensor, seg: torch.Tensor, n_graphs: int, sets: torch.Tensor) -> torch.Tensor:
    """Log-probability of each graph's ordered sample ``sets[g] = (c_1, ..., c_P)`` (global candidate indices,
    ``-1`` = padding) drawn **without replacement** from the softmax of ``logits`` within graph ``g``:
    ``Σ_i [ℓ_{c_i} − log Σ_{c ∉ {c_1..c_{i−1}}} exp ℓ_c]`` (the Plackett–Luce probability, which is the law of
    the Gumbel top-``P`` sample the search draws)."""
    taken = torch.zeros(logits.shape[0], dtype=torch.bool)
    out = torch.zeros(n_graphs, dtype=logits.dtype)
    for i in range(sets.shape[1]):
        idx = sets[:, i]
        ok = idx >= 0
        masked = logits.masked_fill(taken, -math.inf)
        top = scatter(masked.detach(), seg, dim=0, dim_size=n_graphs, reduce="max")
        top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
        lse = torch.log(scatter((masked - top[seg]).exp(), seg, dim=0, dim_size=n_graphs, reduce="sum")) + top
        pick = logits[idx.clamp(min=0)]
        out = out + torch.where(ok, pick - lse, torch.zeros_like(pick))
        taken = taken.clone()
        taken[idx[ok]] = True
    return out


def _save_checkpoint(path, state: dict) -> None:
    from pathlib import Path

    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state, tmp)
    tmp.replace(path)


def train(
    cfg: TrainConfig,
    *,
    log: Callable[[str], None] = print,
    instances: list[Instance] | None = None,
    checkpoint=None,
    resume: bool = False,
) -> tuple[MIStarPolicy, dict]:
    """Train a policy (module docstring). Returns the best-validated policy and a history dict.
    ``instances`` replaces the generator by a fixed list, cycled through in order (tests, fine-tuning).
    ``checkpoint``: a file rewritten after every validation with everything needed to continue (network,
    optimiser, random states, history); ``resume=True`` continues from it — the result equals an
    uninterrupted run's."""
    cfg.check()
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)  # the instance stream
    srng = np.random.default_rng([cfg.seed, 1])  # the move sampling
    policy = MIStarPolicy(cfg.hidden, cfg.layers, memory=cfg.memory)
    opt = torch.optim.Adam(policy.parameters(), lr=cfg.lr)
    make = sd2_instance if cfg.family == "sd2" else sd1_instance
    val = validation_instances(cfg.family, cfg.n_jobs, cfg.n_machines, cfg.validate_count)
    hist: dict = {"config": asdict(cfg), "updates": [], "validation": []}
    best_val, best_state = math.inf, copy.deepcopy(policy.state_dict())
    n_batches = math.ceil(cfg.episodes / cfg.n_envs)
    transitions, start_batch, spent = 0, 1, 0.0
    rollout_s = update_s = 0.0
    P = cfg.p if cfg.rollout == "search" else 1
    tabu = cfg.search_tabu if cfg.rollout == "search" else None
    temp = cfg.search_temperature if cfg.rollout == "search" else 1.0
    if resume:
        if checkpoint is None:
            raise ValueError("resume=True needs a checkpoint path")
        ck = torch.load(checkpoint, map_location="cpu", weights_only=False)
        if ck.get("config") != asdict(cfg):
            diff = sorted(k for k in asdict(cfg) if ck.get("config", {}).get(k) != asdict(cfg)[k])
            raise ValueError(f"checkpoint {checkpoint} was written by another configuration (differs in {diff})")
        policy.load_state_dict(ck["policy"])
        opt.load_state_dict(ck["optimizer"])
        rng.bit_generator.state, srng.bit_generator.state = ck["rng"], ck["srng"]
        torch.set_rng_state(ck["torch_rng"])
        hist, best_val, best_state = ck["history"], ck["best_val"], ck["best_state"]
        transitions, start_batch, spent = ck["transitions"], ck["batch"] + 1, ck["seconds"]
        rollout_s, update_s = ck["rollout_seconds"], ck["update_seconds"]
        log(f"[train] resumed from {checkpoint} after batch {ck['batch']}")
    t_start = time.perf_counter() - spent

    def validate(batch_no: int) -> None:
        nonlocal best_val, best_state
        if not val:
            return
        policy.eval()
        # model selection runs the deployed search: P = 16 and the sampling temperature and tabu rule trained for
        c = [
            greedy_search(
                policy,
                inst,
                cfg.validate_horizon,
                p=16,
                seed=0,
                init=cfg.init,
                memory_k=cfg.memory_k,
                temperature=cfg.search_temperature,
                tabu=cfg.search_tabu,
            )
            for inst in val
        ]
        mean = float(np.mean(c))
        hist["validation"].append({"batch": batch_no, "mean_cmax": mean, "seconds": time.perf_counter() - t_start})
        if mean < best_val:
            best_val, best_state = mean, copy.deepcopy(policy.state_dict())
            hist["best_batch"] = batch_no
        log(
            f"[validate] batch {batch_no}: mean makespan {mean:.2f} on {len(val)} validation instances "
            f"(best {best_val:.2f})"
        )

    def save(batch_no: int) -> None:
        if checkpoint is not None:
            _save_checkpoint(
                checkpoint,
                {
                    "config": asdict(cfg),
                    "batch": batch_no,
                    "policy": policy.state_dict(),
                    "optimizer": opt.state_dict(),
                    "rng": rng.bit_generator.state,
                    "srng": srng.bit_generator.state,
                    "torch_rng": torch.get_rng_state(),
                    "history": hist,
                    "best_val": best_val,
                    "best_state": best_state,
                    "transitions": transitions,
                    "seconds": time.perf_counter() - t_start,
                    "rollout_seconds": rollout_s,
                    "update_seconds": update_s,
                },
            )

    if start_batch == 1:
        validate(0)
    stopped = False
    for bno in range(start_batch, n_batches + 1):
        if instances:
            batch = [instances[((bno - 1) * cfg.n_envs + i) % len(instances)] for i in range(cfg.n_envs)]
        else:
            batch = [make(cfg.n_jobs, cfg.n_machines, rng) for _ in range(cfg.n_envs)]
        runs = [_Run(inst, cfg.init, cfg.memory_k) for inst in batch]
        for r in runs:
            r.lam = cfg.penalty_weight * r.cmax0 / r.inst.n_ops
        ep_gain = np.zeros(cfg.n_envs)
        for _ in range(cfg.horizon // cfg.n_step):
            t0 = time.perf_counter()
            steps = []  # per step: (batch, sampled sets (G, P) global indices, old log-prob, value, env ids)
            rewards = np.zeros((cfg.n_step, cfg.n_envs))
            valid = np.zeros((cfg.n_step, cfg.n_envs), dtype=bool)
            policy.eval()
            for s in range(cfg.n_step):
                ids = [i for i, r in enumerate(runs) if r.alive]
                if not ids:
                    break
                votes = [
                    runs[i].memory.votes(runs[i].key, runs[i].mv.v, runs[i].mv.x) if cfg.memory else None for i in ids
                ]
                b = batch_graphs(
                    [(runs[i].inst, runs[i].sol, runs[i].ev, runs[i].links) for i in ids],
                    [runs[i].t / cfg.horizon for i in ids],
                    [runs[i].mv for i in ids],
                    votes,
                )
                with torch.no_grad():
                    logits, _, value = policy(b)
                offs = np.concatenate([[0], np.cumsum(b.n_cand)])
                lg = logits.double().numpy() / temp
                sets = np.full((len(ids), P), -1, dtype=np.int64)
                for g, i in enumerate(ids):
                    r = runs[i]
                    # Gumbel top-P = P moves sampled without replacement from softmax(logits / temperature)
                    pert = lg[offs[g] : offs[g + 1]] + srng.gumbel(size=int(b.n_cand[g]))
                    order = np.argsort(-pert, kind="stable")[:P]
                    sets[g, : order.size] = order + offs[g]
                    c = r.pick(order, tabu)
                    v, x = int(r.mv.v[c]), int(r.mv.x[c])
                    r.memory.store(r.key, v, x)
                    new = int(r.mv.cmax[c])
                    gain = max(r.best - new, 0)
                    r.best = min(r.best, new)
                    r.sol = apply_move(r.inst, r.sol, v, x)
                    r._observe()
                    pen = (
                        revisit_penalty(r.memory, r.key, r.t, cfg.horizon, r.lam, cfg.penalty_sharpness)
                        if cfg.memory
                        else 0.0
                    )
                    r.t += 1
                    rewards[s, i] = (gain - pen) * 100.0 / r.cmax0
                    valid[s, i] = True
                    ep_gain[i] += gain
                    if r.t >= cfg.horizon:
                        r.alive = False
                sets_t = torch.from_numpy(sets)
                old = plackett_luce_logp(logits.double() / temp, b.cand_graph, b.n_graphs, sets_t)
                steps.append((b, sets_t, old, value, ids))
            n_done = len(steps)
            # bootstrap values of the states after the rollout
            boot = np.zeros(cfg.n_envs)
            ids = [i for i, r in enumerate(runs) if r.alive]
            if ids:
                b = batch_graphs(
                    [(runs[i].inst, runs[i].sol, runs[i].ev, runs[i].links) for i in ids],
                    [runs[i].t / cfg.horizon for i in ids],
                    [runs[i].mv for i in ids],
                    [
                        runs[i].memory.votes(runs[i].key, runs[i].mv.v, runs[i].mv.x) if cfg.memory else None
                        for i in ids
                    ],
                )
                with torch.no_grad():
                    boot[ids] = policy(b)[2].double().numpy()
            # n-step returns, gamma = cfg.gamma
            ret = np.zeros((n_done, cfg.n_envs))
            acc = boot.copy()
            for s in range(n_done - 1, -1, -1):
                acc = np.where(valid[s], rewards[s] + cfg.gamma * acc, acc)
                ret[s] = acc
            rollout_s += time.perf_counter() - t0
            t1 = time.perf_counter()
            big = concat_batches([st[0] for st in steps])
            offs_all, all_sets = 0, []
            ret_t, old_logp, old_v = [], [], []
            for (b, sets_t, lp, value, ids), s in zip(steps, range(n_done)):
                all_sets.append(torch.where(sets_t >= 0, sets_t + offs_all, sets_t))
                offs_all += int(b.n_cand.sum())
                ret_t.append(torch.as_tensor(ret[s, ids], dtype=torch.float32))
                old_logp.append(lp)
                old_v.append(value)
            all_sets = torch.cat(all_sets)
            ret_t, old_logp, old_v = torch.cat(ret_t), torch.cat(old_logp), torch.cat(old_v)
            adv = ret_t - old_v
            adv = (adv - adv.mean()) / (adv.std() + 1e-8) if adv.numel() > 1 else adv
            policy.train()
            for _ in range(cfg.epochs):
                if cfg.aux_coef > 0:
                    logits, logp, value, aux = policy(big, aux=True)
                    aloss = ((aux - 10.0 * big.delta) ** 2).mean()
                else:  # the auxiliary head is skipped (and stays untrained)
                    logits, logp, value = policy(big)
                    aloss = torch.zeros(())
                new_lp = plackett_luce_logp(logits.double() / temp, big.cand_graph, big.n_graphs, all_sets)
                ratio = torch.exp(new_lp - old_logp).float()
                pg = -torch.min(ratio * adv, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * adv).mean()
                vloss = torch.nn.functional.smooth_l1_loss(value, ret_t)
                ent = MIStarPolicy.entropy(logp, big).mean()
                loss = pg + cfg.value_coef * vloss - cfg.entropy_coef * ent + cfg.aux_coef * aloss
                if cfg.distill_coef > 0:
                    # optional teacher: cross-entropy to softmax(β·[ΔC_max < 0]) ("improving") or to
                    # softmax(−β ΔC_max/C_max) ("delta") over each state's legal moves
                    target = (
                        cfg.distill_beta * (big.delta < 0).float()
                        if cfg.distill_target == "improving"
                        else -cfg.distill_beta * big.delta
                    )
                    teacher = segment_log_softmax(target, big.cand_graph, big.n_graphs).exp()
                    dloss = scatter(
                        -(teacher * logp), big.cand_graph, dim=0, dim_size=big.n_graphs, reduce="sum"
                    ).mean()
                    loss = loss + cfg.distill_coef * dloss
                else:
                    dloss = torch.zeros(())
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
                opt.step()
            transitions += int(all_sets.shape[0])
            update_s += time.perf_counter() - t1
            hist["updates"].append(
                {
                    "loss": loss.item(),
                    "policy_loss": pg.item(),
                    "value_loss": vloss.item(),
                    "aux_loss": aloss.item(),
                    "distill_loss": dloss.item(),
                    "entropy": ent.item(),
                    "mean_return": ret_t.mean().item(),
                    "max_abs_return": ret_t.abs().max().item(),
                    "mean_value": old_v.mean().item(),
                    "mean_reward": float(rewards[valid].mean()) if valid.any() else 0.0,
                }
            )
        elapsed = time.perf_counter() - t_start
        mean_gain = float(np.mean([g * 100.0 / r.cmax0 for g, r in zip(ep_gain, runs)]))
        hist.setdefault("episodes", []).append({"batch": bno, "mean_gain_pct": mean_gain, "seconds": elapsed})
        last = hist["updates"][-1]
        log(
            f"[train] batch {bno}/{n_batches} episodes {bno * cfg.n_envs}: incumbent gain {mean_gain:.2f}% of "
            f"C_max(s_0), loss {last['loss']:.4f}, entropy {last['entropy']:.3f}, "
            f"{transitions / max(elapsed, 1e-9):.0f} transitions/s (rollout {rollout_s:.0f} s, update "
            f"{update_s:.0f} s)"
        )
        if bno % cfg.validate_every == 0 or bno == n_batches:
            validate(bno)
            save(bno)
        if cfg.max_seconds is not None and time.perf_counter() - t_start > cfg.max_seconds:
            log(f"[train] stopping after {bno} batches: max_seconds={cfg.max_seconds} reached")
            if bno % cfg.validate_every:
                validate(bno)
                save(bno)
            stopped = True
            break
    hist.update(
        transitions=transitions,
        seconds=time.perf_counter() - t_start,
        best_validation=best_val,
        stopped_early=stopped,
        rollout_seconds=rollout_s,
        update_seconds=update_s,
        torch=str(torch.__version__),
    )
    if val:
        policy.load_state_dict(best_state)
    policy.eval()
    return policy, hist


def train_to_file(
    cfg: TrainConfig,
    out,
    *,
    log: Callable[[str], None] = print,
    instances: list[Instance] | None = None,
    resume: bool = False,
) -> tuple[MIStarPolicy, dict]:
    """:func:`train`, then write the weights (with the config and a summary of the run as metadata) to ``out``
    and the full history next to it as ``<out>.history.json``. Nothing is written if training fails. The
    checkpoint is ``<out>.ckpt`` (``resume=True`` continues from it); it is removed once the weights exist."""
    import json
    from pathlib import Path

    from papergym.agents.scheduling.mistar.agent import save_policy

    out = Path(out)
    ckpt = out.with_name(out.name + ".ckpt")
    if resume and not ckpt.exists():
        raise FileNotFoundError(f"no checkpoint to resume from: {ckpt}")
    policy, hist = train(cfg, log=log, instances=instances, checkpoint=ckpt, resume=resume)
    meta = {
        "config": asdict(cfg),
        "search": cfg.search,
        "transitions": hist["transitions"],
        "seconds": round(hist["seconds"], 1),
        "best_validation_mean_cmax": hist["best_validation"],
        "best_batch": hist.get("best_batch"),
        "torch": str(torch.__version__),
        "stopped_early": hist["stopped_early"],
    }
    save_policy(policy, out, meta)
    tmp = out.with_name(out.name + ".history.json.tmp")
    tmp.write_text(json.dumps(hist, indent=1, default=float))
    tmp.replace(out.with_name(out.name + ".history.json"))
    ckpt.unlink(missing_ok=True)
    log(f"[train] wrote {out} ({hist['transitions']} transitions in {hist['seconds']:.0f} s)")
    return policy, hist
