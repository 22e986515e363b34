"""MIStar training: n-step PPO on generated instances with parallel environments (spec §11.8–9).

Rollouts
    ``n_envs`` instances drawn from the generator (``family`` SD1/SD2, ``n_jobs × n_machines``; a stream
    seeded by ``seed``, disjoint from the published test sets, which are regenerated from their own seeds)
    are improved side by side for ``horizon`` steps from the env's initial solution (``init``, default
    ``mwkr``, ties seeded by the instance hash exactly as ``FJSPImprove-v0`` does), one move per step
    sampled from the policy (``P = 1`` during training). The transition logic is the env's: the
    ``nopt2-lite`` moves with their exact makespans, the incumbent, the gain reward
    ``max(C*_t − C_{t+1}, 0)``; the agent adds the memory (votes as inputs) and the revisit penalty:
    ``r = (r_gain − r_penalty) · 100 / C_max(s_0)`` (percent of the initial makespan [design scale]).
    Without memory (``memory=False``, the ``mistar-no-memory`` ablation) there are neither votes nor the
    penalty, which is computed from the memory's stored states.
n-step PPO
    Every ``n_step`` steps: n-step returns with ``γ = 1`` bootstrapped by ``V(s_{t+n})`` (0 at the horizon,
    where ``t/T`` is an input so the value can see the end coming), advantages ``G − V`` normalised over the
    batch, ``epochs`` passes of the clipped surrogate (clip ``ε``) + ``value_coef``·Huber − ``entropy_coef``·H
    over the whole rollout as one graph batch, Adam, gradient norm clipped.
One-step teacher [design, not in the paper]
    ``distill_coef · CE(softmax(−β ΔC_max/C_max), π)`` per state: the policy is also pulled towards a
    softmax over its legal moves' exact makespan changes (labels for free from the env's O(1) evaluation,
    ``β = distill_beta = 100``: 1 % of makespan is a factor e). Pure PPO at a CPU budget of one or two hours
    left the pair scores unrelated to move quality: after 400 episodes the policy's 16 favourite moves were
    *worse* than 16 random ones on validation states (mean best makespan 444.4 vs 442.3) and the parallel
    search lost to the untrained network (mean makespan 439.5 vs 376.7 on 10 validation instances, T = 100).
    The teacher only shapes training; the policy's inputs stay the paper's (embeddings, graph summary,
    memory votes, raw pair attributes) and it never sees a move's evaluation. ``distill_coef = 0`` is pure
    n-step PPO. An optional auxiliary regression head (``aux_coef``, default 0) predicts ``10·ΔC_max/C_max``
    from the decoder's per-pair hidden vector instead.
Defaults [design]
    ``n_envs = 20``, ``clip = 0.2``, ``epochs = 4`` (DANIEL ``params.py``); ``lr = 1e-3`` (DANIEL: 3e-4;
    raised for the short CPU budget, not tuned); ``n_step = 10``, ``γ = 1`` (L2S); ``horizon = 100`` in
    training (evaluation uses 400); ``value_coef = 0.5``, ``entropy_coef = 0.01``, ``max_grad_norm = 0.5``,
    ``penalty_weight = 0.1``, ``penalty_sharpness = 200``, ``distill_coef = 1``, ``distill_beta = 100``,
    ``aux_coef = 0``, ``memory_k = 8``, ``hidden = 64``, ``layers = 4``.
Validation
    Every ``validate_every`` instance batches the parallel greedy search (``P = 16``, ``validate_horizon``
    steps, seed 0, ``validate_temperature``, ``validate_tabu``) runs on ``validate_count`` instances of DANIEL's SD2 *validation* split of the same size
    (generated from its seed 100; SD1 sizes use a fixed generator seed) and the state with the lowest
    mean makespan is kept as the result (``best_state``).
Reproducibility
    ``seed`` fixes the instance stream, the initialisation of the network and the sampling
    (``torch.manual_seed`` and a numpy generator); ``torch.set_num_threads(threads)``. Two runs with the
    same seed, threads and library versions produce identical weights.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np
import torch
from torch_geometric.utils import scatter

from papergym.agents.scheduling.mistar.agent import Searcher
from papergym.agents.scheduling.mistar.memory import EpisodeMemory, association, revisit_penalty
from papergym.agents.scheduling.mistar.model import MIStarPolicy, batch_graphs, concat_batches, segment_log_softmax
from papergym.envs.scheduling.fjsp.generators import sd1_instance, sd2_instance, sd2_published
from papergym.envs.scheduling.fjsp.graph import Solution, apply_move, evaluate, job_links, neighbourhood
from papergym.envs.scheduling.fjsp.improve import dispatch_solution
from papergym.envs.scheduling.fjsp.instance import Instance

__all__ = ["TrainConfig", "train", "initial_solution", "validation_instances", "greedy_search"]


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
    distill_coef: float = 1.0
    distill_beta: float = 100.0
    memory: bool = True
    memory_k: int = 8
    hidden: int = 64
    layers: int = 4
    init: str = "mwkr"
    seed: int = 0
    threads: int = 1
    validate_every: int = 10
    validate_count: int = 10
    validate_horizon: int = 100
    validate_temperature: float = 1.0
    validate_tabu: str = "reverse"
    max_seconds: float | None = None
    extra: dict = field(default_factory=dict)

    def check(self) -> None:
        if self.family not in ("sd1", "sd2"):
            raise ValueError(f"family must be 'sd1' or 'sd2', got {self.family!r}")
        for name in ("n_jobs", "n_machines", "episodes", "n_envs", "horizon", "n_step", "epochs", "memory_k",
                     "hidden", "layers", "threads", "validate_every", "validate_horizon"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.validate_count < 0:
            raise ValueError(f"validate_count must be >= 0, got {self.validate_count!r}")
        if self.validate_tabu not in ("reverse", "visited"):
            raise ValueError(f"validate_tabu must be 'reverse' or 'visited', got {self.validate_tabu!r}")
        if self.horizon % self.n_step:
            raise ValueError(f"horizon ({self.horizon}) must be a multiple of n_step ({self.n_step})")
        for name in ("lr", "clip", "validate_temperature"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")


def initial_solution(inst: Instance, init: str = "mwkr") -> Solution:
    """The env's initial solution for ``init`` (the dispatching rule, ties seeded by the instance hash)."""
    rng = np.random.default_rng(int(inst.sha256()[:16], 16))
    return dispatch_solution(inst, init, rng)


def validation_instances(family: str, n_jobs: int, n_machines: int, count: int) -> list[Instance]:
    """Validation instances: DANIEL's SD2 validation split (seed 100) or, for SD1, a fixed generator seed."""
    if count <= 0:
        return []
    if family == "sd2":
        return sd2_published(n_jobs, n_machines, split="validation", count=count)
    rng = np.random.default_rng(10_000_019)
    return [sd1_instance(n_jobs, n_machines, rng, name=f"sd1-val-{i}") for i in range(count)]


def greedy_search(policy: MIStarPolicy, inst: Instance, horizon: int, *, p: int = 16, seed: int = 0,
                  init: str = "mwkr", memory_k: int = 8, **search) -> int:
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


def _sample(logits: torch.Tensor, seg: torch.Tensor, n: int, gen: torch.Generator) -> torch.Tensor:
    """One candidate per graph, sampled from the segment softmax (Gumbel-max): global candidate indices."""
    u = torch.rand(logits.shape[0], generator=gen, dtype=torch.float64).clamp_(1e-12, 1 - 1e-12)
    z = logits.double() - torch.log(-torch.log(u))
    best = torch.full((n,), -math.inf, dtype=torch.float64).scatter_reduce(0, seg, z, reduce="amax")
    hit = (z == best[seg]).nonzero().squeeze(1)
    out = torch.full((n,), -1, dtype=torch.long)
    out[seg[hit].flip(0)] = hit.flip(0)  # first hit per graph wins
    return out


def train(cfg: TrainConfig, *, log: Callable[[str], None] = print,
          instances: list[Instance] | None = None) -> tuple[MIStarPolicy, dict]:
    """Train a policy (module docstring). Returns the best-validated policy and a history dict.
    ``instances`` replaces the generator by a fixed list, cycled through in order (tests, fine-tuning)."""
    cfg.check()
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    policy = MIStarPolicy(cfg.hidden, cfg.layers, memory=cfg.memory)
    opt = torch.optim.Adam(policy.parameters(), lr=cfg.lr)
    make = sd2_instance if cfg.family == "sd2" else sd1_instance
    val = validation_instances(cfg.family, cfg.n_jobs, cfg.n_machines, cfg.validate_count)
    hist: dict = {"config": asdict(cfg), "updates": [], "validation": []}
    best_val, best_state = math.inf, copy.deepcopy(policy.state_dict())
    t_start = time.perf_counter()
    n_batches = math.ceil(cfg.episodes / cfg.n_envs)
    transitions = 0
    rollout_s = update_s = 0.0

    def validate(batch_no: int) -> None:
        nonlocal best_val, best_state
        if not val:
            return
        policy.eval()
        # model selection runs the search with cfg.validate_temperature / validate_tabu (defaults: temperature 1,
        # reverse tabu — what the first shipped weights were selected with)
        c = [greedy_search(policy, inst, cfg.validate_horizon, p=16, seed=0, init=cfg.init, memory_k=cfg.memory_k,
                           temperature=cfg.validate_temperature, tabu=cfg.validate_tabu) for inst in val]
        mean = float(np.mean(c))
        hist["validation"].append({"batch": batch_no, "mean_cmax": mean, "seconds": time.perf_counter() - t_start})
        if mean < best_val:
            best_val, best_state = mean, copy.deepcopy(policy.state_dict())
            hist["best_batch"] = batch_no
        log(f"[validate] batch {batch_no}: mean makespan {mean:.2f} on {len(val)} validation instances "
            f"(best {best_val:.2f})")

    validate(0)
    stopped = False
    for bno in range(1, n_batches + 1):
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
            steps = []  # per step: (batch, chosen global candidate idx, old logp, value, env ids)
            rewards = np.zeros((cfg.n_step, cfg.n_envs))
            valid = np.zeros((cfg.n_step, cfg.n_envs), dtype=bool)
            policy.eval()
            for s in range(cfg.n_step):
                ids = [i for i, r in enumerate(runs) if r.alive]
                if not ids:
                    break
                votes = [runs[i].memory.votes(runs[i].key, runs[i].mv.v, runs[i].mv.x) if cfg.memory else None
                         for i in ids]
                b = batch_graphs([(runs[i].inst, runs[i].sol, runs[i].ev, runs[i].links) for i in ids],
                                 [runs[i].t / cfg.horizon for i in ids], [runs[i].mv for i in ids], votes)
                with torch.no_grad():
                    logits, logp, value = policy(b)
                choice = _sample(logits, b.cand_graph, b.n_graphs, gen)
                offs = np.concatenate([[0], np.cumsum(b.n_cand)])
                steps.append((b, choice, logp[choice], value, ids))
                for g, i in enumerate(ids):
                    r = runs[i]
                    c = int(choice[g]) - offs[g]
                    v, x = int(r.mv.v[c]), int(r.mv.x[c])
                    r.memory.store(r.key, v, x)
                    new = int(r.mv.cmax[c])
                    gain = max(r.best - new, 0)
                    r.best = min(r.best, new)
                    r.sol = apply_move(r.inst, r.sol, v, x)
                    r._observe()
                    pen = revisit_penalty(r.memory, r.key, r.t, cfg.horizon, r.lam,
                                          cfg.penalty_sharpness) if cfg.memory else 0.0
                    r.t += 1
                    rewards[s, i] = (gain - pen) * 100.0 / r.cmax0
                    valid[s, i] = True
                    ep_gain[i] += gain
                    if r.t >= cfg.horizon:
                        r.alive = False
            n_done = len(steps)
            # bootstrap values of the states after the rollout
            boot = np.zeros(cfg.n_envs)
            ids = [i for i, r in enumerate(runs) if r.alive]
            if ids:
                b = batch_graphs([(runs[i].inst, runs[i].sol, runs[i].ev, runs[i].links) for i in ids],
                                 [runs[i].t / cfg.horizon for i in ids], [runs[i].mv for i in ids],
                                 [runs[i].memory.votes(runs[i].key, runs[i].mv.v, runs[i].mv.x) if cfg.memory
                                  else None for i in ids])
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
            offs_all, idx = 0, []
            ret_t, old_logp, old_v = [], [], []
            for (b, choice, lp, value, ids), s in zip(steps, range(n_done)):
                idx.append(choice + offs_all)
                offs_all += int(b.n_cand.sum())
                ret_t.append(torch.as_tensor(ret[s, ids], dtype=torch.float32))
                old_logp.append(lp)
                old_v.append(value)
            idx = torch.cat(idx)
            ret_t, old_logp, old_v = torch.cat(ret_t), torch.cat(old_logp), torch.cat(old_v)
            adv = ret_t - old_v
            adv = (adv - adv.mean()) / (adv.std() + 1e-8) if adv.numel() > 1 else adv
            policy.train()
            for _ in range(cfg.epochs):
                if cfg.aux_coef > 0:
                    _, logp, value, aux = policy(big, aux=True)
                    aloss = ((aux - 10.0 * big.delta) ** 2).mean()
                else:  # the auxiliary head is skipped (and stays untrained)
                    _, logp, value = policy(big)
                    aloss = torch.zeros(())
                ratio = torch.exp(logp[idx] - old_logp)
                pg = -torch.min(ratio * adv, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * adv).mean()
                vloss = torch.nn.functional.smooth_l1_loss(value, ret_t)
                ent = MIStarPolicy.entropy(logp, big).mean()
                # one-step teacher: cross-entropy to softmax(−β ΔC_max/C_max) over each state's legal moves
                teacher = segment_log_softmax(-cfg.distill_beta * big.delta, big.cand_graph, big.n_graphs).exp()
                dloss = scatter(-(teacher * logp), big.cand_graph, dim=0, dim_size=big.n_graphs,
                                reduce="sum").mean()
                loss = (pg + cfg.value_coef * vloss - cfg.entropy_coef * ent + cfg.aux_coef * aloss
                        + cfg.distill_coef * dloss)
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
                opt.step()
            transitions += int(idx.numel())
            update_s += time.perf_counter() - t1
            hist["updates"].append({"loss": loss.item(), "policy_loss": pg.item(), "value_loss": vloss.item(), "aux_loss": aloss.item(), "distill_loss": dloss.item(),
                                    "entropy": ent.item(), "mean_return": ret_t.mean().item(),
                                    "max_abs_return": ret_t.abs().max().item(), "mean_value": old_v.mean().item(), "mean_reward": float(rewards[valid].mean())
                                    if valid.any() else 0.0})
        elapsed = time.perf_counter() - t_start
        mean_gain = float(np.mean([g * 100.0 / r.cmax0 for g, r in zip(ep_gain, runs)]))
        hist.setdefault("episodes", []).append({"batch": bno, "mean_gain_pct": mean_gain, "seconds": elapsed})
        last = hist["updates"][-1]
        log(f"[train] batch {bno}/{n_batches} episodes {bno * cfg.n_envs}: incumbent gain {mean_gain:.2f}% of "
            f"C_max(s_0), loss {last['loss']:.4f} (teacher CE {last['distill_loss']:.3f}), entropy {last['entropy']:.3f}, "
            f"{transitions / max(elapsed, 1e-9):.0f} transitions/s (rollout {rollout_s:.0f} s, update "
            f"{update_s:.0f} s)")
        if bno % cfg.validate_every == 0 or bno == n_batches:
            validate(bno)
        if cfg.max_seconds is not None and time.perf_counter() - t_start > cfg.max_seconds:
            log(f"[train] stopping after {bno} batches: max_seconds={cfg.max_seconds} reached")
            if bno % cfg.validate_every:
                validate(bno)
            stopped = True
            break
    hist.update(transitions=transitions, seconds=time.perf_counter() - t_start, best_validation=best_val,
                stopped_early=stopped, rollout_seconds=rollout_s, update_seconds=update_s,
                torch=str(torch.__version__))
    if val:
        policy.load_state_dict(best_state)
    policy.eval()
    return policy, hist


def train_to_file(cfg: TrainConfig, out, *, log: Callable[[str], None] = print,
                  instances: list[Instance] | None = None) -> tuple[MIStarPolicy, dict]:
    """:func:`train`, then write the weights (with the config and a summary of the run as metadata) to ``out``
    and the full history next to it as ``<out>.history.json``. Nothing is written if training fails."""
    import json
    from pathlib import Path

    from papergym.agents.scheduling.mistar.agent import save_policy

    out = Path(out)
    policy, hist = train(cfg, log=log, instances=instances)
    meta = {"config": asdict(cfg), "transitions": hist["transitions"], "seconds": round(hist["seconds"], 1),
            "best_validation_mean_cmax": hist["best_validation"], "best_batch": hist.get("best_batch"),
            "torch": str(torch.__version__),
            "stopped_early": hist["stopped_early"]}
    save_policy(policy, out, meta)
    tmp = out.with_name(out.name + ".history.json.tmp")
    tmp.write_text(json.dumps(hist, indent=1, default=float))
    tmp.replace(out.with_name(out.name + ".history.json"))
    log(f"[train] wrote {out} ({hist['transitions']} transitions in {hist['seconds']:.0f} s)")
    return policy, hist
