"""MIStar inference: **parallel greedy search** with the trained policy (MIStar, NeurIPS 2025, "Inference").

Each step, on the current solution ``s_t``:

1. the legal moves (``nopt2-lite``, exactly the env's action mask) are scored by the policy
   (:class:`~.model.MIStarPolicy`, with the memory's votes for ``s_t``, :mod:`.memory`);
2. ``P`` distinct moves are **sampled** from the policy's softmax (Gumbel top-``P``, i.e. sampling without
   replacement, with the agent's seeded RNG);
3. all ``P`` are evaluated **exactly** — the env's neighbourhood already carries every move's exact
   makespan ``max(est, C_max(G⁻))`` (:func:`~papergym.envs.scheduling.fjsp.graph.neighbourhood`), so the
   batch evaluation costs nothing extra;
4. the best is executed even if it is worse than ``s_t`` [design]; a move whose result is tabu is skipped
   unless nothing else was sampled [design] — ``tabu="visited"`` (default): any solution already visited in
   the episode, ``tabu="reverse"``: the previous solution (the exact reverse of the last move); ties go to
   the higher perturbed score;
5. ``(L_t, a_t)`` is stored in the episode memory. The env keeps the incumbent (best solution so far).

``P = 16`` [design; hand-set in the paper]; ``P = 1`` (``mistar-p1``) executes one sampled move. The
sampling temperature (logits / temperature) and the tabu rule are [design] hyperparameters that belong to
the weights: ``papergym fjsp train-mistar`` trains the policy inside this search (``--rollout search``) and
stores the settings it trained with in the weights file (``meta["search"]``), which the agent uses unless
``temperature`` / ``tabu`` are given (files without them: temperature 2, visited tabu, the settings the
first weights were selected with on DANIEL's SD2 10x5 validation split).

Controls, to see what the network adds (``benchmarks/bench_mistar.py``): ``proposal="untrained"`` runs the
same search with the same network untrained (torch's default initialisation under ``init_seed``;
``mistar-untrained``), ``proposal="uniform"`` with uniform proposals (``mistar-uniform``).

Speed: the network is evaluated by :class:`~.infer.NumpyPolicy` (``backend="numpy"``, default), the same
equations in dense numpy for one graph — about 0.4 ms per step on SD2 10x5 against about 3 ms through torch
and PyG (``backend="torch"``), with identical scores up to float32 round-off.
Should no move be legal (no critical operation can move), the agent restores the current solution from the
env's archive. Diagnostics: ``evaluated_moves`` (``T·P`` at most), ``policy_seconds``.

Weights: ``weights="sd2-10x5"`` (default; the model card is ``weights/MODEL_CARD.md``), the name of any
file in ``weights/`` or a path to a file written by ``papergym fjsp train-mistar``. The network's sizes
and whether it was trained with memory come from the file.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from papergym.agents.scheduling.mistar.infer import NumpyPolicy
from papergym.agents.scheduling.mistar.memory import EpisodeMemory, association
from papergym.agents.scheduling.mistar.model import MIStarPolicy, batch_graphs
from papergym.envs.scheduling.fjsp.common import instance_from_observation
from papergym.envs.scheduling.fjsp.graph import Solution, apply_move, evaluate, job_links, neighbourhood
from papergym.envs.scheduling.fjsp.improve import solution_from_observation
from papergym.envs.scheduling.fjsp.instance import Instance

__all__ = [
    "WeightsNotFoundError",
    "MIStarAgent",
    "Searcher",
    "load_policy",
    "untrained_policy",
    "save_policy",
    "WEIGHTS_DIR",
    "shipped_weights",
]

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
FORMAT = "papergym-mistar-v1"


class WeightsNotFoundError(FileNotFoundError, ValueError):
    """No weights file under that name or path (a ``ValueError`` too: a bad hyperparameter value)."""


def shipped_weights() -> list[str]:
    """Names of the weight files shipped with the package."""
    return sorted(p.stem for p in WEIGHTS_DIR.glob("*.pt"))


def _weights_path(weights: str | Path) -> Path:
    p = Path(weights)
    if p.suffix == ".pt" and p.exists():
        return p
    named = WEIGHTS_DIR / f"{weights}.pt"
    if named.exists():
        return named
    raise WeightsNotFoundError(
        f"MIStar weights {str(weights)!r} not found: give a path to a .pt file or one of "
        f"the shipped names {shipped_weights()}"
    )


def save_policy(policy: MIStarPolicy, path: str | Path, meta: dict[str, Any] | None = None) -> Path:
    """Write ``policy`` (config, state dict, metadata) atomically to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(
        {"format": FORMAT, "config": dict(policy.config), "state_dict": policy.state_dict(), "meta": dict(meta or {})},
        tmp,
    )
    tmp.replace(path)
    return path


def untrained_policy(like: str | Path = "sd2-10x5", init_seed: int = 0) -> tuple[MIStarPolicy, dict[str, Any]]:
    """The **untrained twin** of ``like``: the same network (sizes, memory) with torch's default initialisation
    under ``torch.manual_seed(init_seed)`` — the control that shows what training adds."""
    trained, meta = load_policy(like)
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(int(init_seed))
        policy = MIStarPolicy(**trained.config)
    finally:
        torch.random.set_rng_state(state)
    policy.eval()
    return policy, {"untrained": True, "like": str(like), "init_seed": int(init_seed), "search": meta.get("search")}


def load_policy(weights: str | Path = "sd2-10x5") -> tuple[MIStarPolicy, dict[str, Any]]:
    """The policy stored in ``weights`` (shipped name or path) and its metadata; clear errors otherwise."""
    path = _weights_path(weights)
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a bad file
        raise ValueError(f"{path}: not a MIStar weights file ({type(exc).__name__}: {exc})") from None
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise ValueError(f"{path}: not a MIStar weights file (expected format {FORMAT!r})")
    policy = MIStarPolicy(**blob["config"])
    try:
        policy.load_state_dict(blob["state_dict"])
    except RuntimeError as exc:
        raise ValueError(f"{path}: weights do not match the network ({exc})") from None
    policy.eval()
    return policy, dict(blob.get("meta", {}))


class Searcher:
    """The parallel greedy search on one instance (module docstring); usable without the env:
    ``reset(inst)`` then ``choose(sol, progress)`` per step."""

    def __init__(
        self,
        policy: MIStarPolicy,
        *,
        p: int = 16,
        memory_k: int = 8,
        rng: np.random.Generator,
        use_memory: bool | None = None,
        temperature: float = 2.0,
        tabu: str = "visited",
        backend: str = "numpy",
        uniform: bool = False,
    ):
        if backend not in ("numpy", "torch"):
            raise ValueError(f"backend must be 'numpy' or 'torch', got {backend!r}")
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
            raise ValueError(f"p must be an integer >= 1, got {p!r}")
        if not (isinstance(temperature, (int, float)) and temperature > 0 and np.isfinite(temperature)):
            raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
        if tabu not in ("reverse", "visited"):
            raise ValueError(f"tabu must be 'reverse' or 'visited', got {tabu!r}")
        self.temperature, self.tabu = float(temperature), tabu
        self.policy, self.p, self.memory_k, self.rng = policy, int(p), int(memory_k), rng
        self.use_memory = policy.memory if use_memory is None else bool(use_memory)
        self.backend, self.uniform = backend, bool(uniform)
        self._np = NumpyPolicy(policy) if backend == "numpy" and not self.uniform else None
        self.evaluated = 0
        self.policy_seconds = 0.0

    def reset(self, inst: Instance) -> None:
        self.inst, self.links = inst, job_links(inst)
        self.memory = EpisodeMemory(self.memory_k)
        self.prev_key: bytes | None = None
        self.visited: set[bytes] = set()

    def scores(self, sol: Solution, progress: float):
        """``(moves, logits)``: the legal moves of ``sol`` and the policy's scores for them."""
        ev = evaluate(self.inst, sol, links=self.links)
        mv = neighbourhood(self.inst, sol, ev, links=self.links)
        if len(mv) == 0:
            return mv, np.empty(0), None
        key = association(sol, self.inst.n_machines)
        votes = self.memory.votes(key, mv.v, mv.x) if self.use_memory else None
        t0 = time.perf_counter()
        if self.uniform:  # the same search with uniform proposals (ablation: what the policy adds)
            logits = np.zeros(len(mv))
        elif self._np is not None:
            logits = self._np.logits(self.inst, sol, ev, self.links, progress, mv, votes)
        else:
            b = batch_graphs([(self.inst, sol, ev, self.links)], [progress], [mv], [votes])
            with torch.no_grad():
                logits = self.policy(b)[0].double().numpy()
        self.policy_seconds += time.perf_counter() - t0
        return mv, logits, key

    def choose(self, sol: Solution, progress: float) -> tuple[int, int] | None:
        """The move ``(v, x)`` to execute on ``sol`` (``None`` if no move is legal)."""
        mv, logits, key = self.scores(sol, progress)
        if len(mv) == 0:
            return None
        perturbed = logits / self.temperature + self.rng.gumbel(size=logits.shape[0])
        cand = np.argsort(-perturbed, kind="stable")[: self.p]  # P samples without replacement
        self.evaluated += int(cand.size)
        self.visited.add(sol.key())
        if self.prev_key is not None and cand.size > 1:
            keys = [apply_move(self.inst, sol, mv.v[i], mv.x[i]).key() for i in cand]
            keep = np.array(
                [k != self.prev_key for k in keys] if self.tabu == "reverse" else [k not in self.visited for k in keys]
            )
            if keep.any():
                cand = cand[keep]
        best = cand[np.lexsort((-perturbed[cand], mv.cmax[cand]))[0]]
        v, x = int(mv.v[best]), int(mv.x[best])
        self.memory.store(key, v, x)
        self.prev_key = sol.key()
        return v, x


class MIStarAgent:
    """``mistar`` on ``FJSPImprove-v0``: :class:`Searcher` driven by the env's observations."""

    def __init__(
        self,
        problem: Any,
        *,
        seed: Any = None,
        weights: str = "sd2-10x5",
        p: int = 16,
        memory: bool = True,
        memory_k: int = 8,
        temperature: float | None = None,
        tabu: str | None = None,
        threads: int | None = 1,
        backend: str = "numpy",
        proposal: str = "policy",
        init_seed: int = 0,
    ):
        if proposal not in ("policy", "untrained", "uniform"):
            raise ValueError(f"proposal must be 'policy', 'untrained' or 'uniform', got {proposal!r}")
        self.policy, self.meta = (
            untrained_policy(weights, init_seed) if proposal == "untrained" else load_policy(weights)
        )
        # the search the weights were trained for (stored by ``papergym fjsp train-mistar``); older files: 2 / visited
        trained = self.meta.get("search", {}) if isinstance(self.meta.get("search"), dict) else {}
        temperature = float(trained.get("temperature", 2.0)) if temperature is None else temperature
        tabu = str(trained.get("tabu", "visited")) if tabu is None else tabu
        if memory and not self.policy.memory:
            raise ValueError(f"weights {weights!r} were trained without memory; use memory=False")
        if threads is not None:
            torch.set_num_threads(int(threads))
        self.N, self.M = int(problem.params["n_ops"]), int(problem.params["n_machines"])
        self.n_moves = self.N * (self.N + self.M)
        self.searcher = Searcher(
            self.policy,
            p=p,
            memory_k=memory_k,
            rng=np.random.default_rng(seed),
            use_memory=memory,
            temperature=temperature,
            tabu=tabu,
            backend=backend,
            uniform=proposal == "uniform",
        )
        self.inst: Instance | None = None

    def _encode(self, v: int, x: int) -> int:
        n = self.inst.n_ops
        return v * (self.N + self.M) + (x if x < n else self.N + (x - n))

    def act(self, obs: dict) -> int:
        if self.inst is None:
            self.inst = instance_from_observation(obs)
            self.searcher.reset(self.inst)
        sol = solution_from_observation(obs, self.inst)
        move = self.searcher.choose(sol, float(np.asarray(obs["step_fraction"]).reshape(-1)[0]))
        if move is None:
            return self.n_moves + int(obs["current_slot"][0])
        return self._encode(*move)

    def action_probabilities(self, obs: dict) -> np.ndarray:
        """The policy's distribution over the env's whole action space (restores and illegal pairs get 0)."""
        inst = instance_from_observation(obs)
        if self.inst is None:
            self.inst = inst
            self.searcher.reset(inst)
        sol = solution_from_observation(obs, inst)
        mv, logits, _ = self.searcher.scores(sol, float(np.asarray(obs["step_fraction"]).reshape(-1)[0]))
        out = np.zeros(np.asarray(obs["action_mask"]).shape[0])
        if len(mv):
            p = np.exp(logits - logits.max())
            for v, x, q in zip(mv.v, mv.x, p / p.sum()):
                out[self._encode(int(v), int(x))] = q
        return out

    def update(self, action: Any, reward: float, observation: Any) -> None:
        pass

    def diagnostics(self) -> dict[str, Any]:
        return {
            "evaluated_moves": int(self.searcher.evaluated),
            "policy_seconds": round(self.searcher.policy_seconds, 4),
        }
