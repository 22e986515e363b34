"""Improvement searches on ``FJSPImprove-v0`` (the baselines of MIStar, NeurIPS 2025; definitions after L2S
``conventional_baselines_with_long-term-mem.py`` [code]): ``gd-search``, ``bi-search``, ``fi-search``,
``random-p-search``.

All use the env's neighbourhood (``nopt2-lite``: critical-operation re-insertion with the acyclicity
test), evaluated exactly by :func:`papergym.envs.scheduling.fjsp.graph.neighbourhood` on the public
instance — the same moves, initial solution and step budget as every agent of the env.

``gd-search``
    greedy descent: evaluate every legal move exactly, take the best even if it is worse than the current
    solution; tabu = the exact reverse of the last move, i.e. any move that returns to the previous
    solution (unless nothing else is legal). The reverse is recognised by the solution it leads to, not by
    the moved operation: an adjacent swap of ``v`` and ``w`` is undone by moving ``w`` as well as ``v``.
    This is L2S's ``Greedy_baselines`` (``tabu_size = 1``: the reversed last move is the only tabu one; no
    restart, no aspiration). ``tabu_tenure`` (default 1, that definition) makes the last ``tabu_tenure``
    visited solutions tabu [design hyperparameter; not the paper's GD].

    **Why it stops improving** (a property of the definition, not of the implementation): the next
    solution is a function of the current and the previous one (up to ties among equal makespans). Once
    GD leaves a local optimum ``s`` for its best neighbour ``s'``, the best non-tabu neighbour of ``s'``
    or of a later solution is very often a solution visited two or more moves earlier, which the
    one-move tabu does not forbid; from then on the walk stays in a small set of
    solutions (periodic, or wandering among equal-makespan ties). Measured on the first 20 SD2 10x5 test
    instances from the ``sampled-dispatch`` start (agent seeds of ``papergym compare``): first revisit
    after a median of 11.5 moves, a median of 23 distinct solutions in 400 moves, and the same mean gap
    after 100 and 400 moves (12.79 % → 9.94 %). MIStar's GD-400 row (10.40 % from DANIEL's 11.96 % on
    SD2 10x5) shows the same small gain. A longer tenure delays the cycles (``tabu_tenure = 30``: first
    revisit after a median of 125 moves, 297 distinct solutions, 8.74 % after 100 and 7.73 % after 400
    moves). ``diagnostics()`` reports ``revisits`` and ``distinct_solutions``.
``bi-search``
    best improvement: take the best move if it improves the current solution; otherwise **restart**:
    restore a random archived solution (other than the current one where possible) and, on the next
    step, move to its best neighbour not visited before (even if worse).
``fi-search``
    first improvement: scan the legal moves in random order, take the first improving one; otherwise
    restart as ``bi-search``.
``random-p-search``
    sample ``P = 16`` legal moves uniformly (without replacement), take the best even if worse — it
    isolates the value of a learned policy over the same parallel evaluation.

Acceptance differs from L2S's code for ``bi-search``/``fi-search``: L2S moves to the best (first) non-tabu
neighbour whenever it is no worse than the **incumbent** (so sideways moves on a plateau at the best
makespan are taken) and restarts otherwise; here a move must improve the **current** solution (the
usual best/first-improvement rule). Measured from the ``sampled-dispatch`` start at ``T = 400`` (first 20 SD2 10x5,
Brandimarte mk01-10, Hurink edata la01-10), L2S's acceptance with a one-move tabu and the same restarts gives 9.50 %,
5.89 %, 5.49 % against 7.25 %, 7.09 %, 4.16 % for this rule (kept: better on two of the three sets).

L2S restarts from a long-term memory of generated (evaluated, not necessarily visited) neighbours; here a
restart takes two env steps — restore an archived visited solution, then move to its best unvisited
neighbour, a generated neighbour of a visited solution [design] — because the env only moves to
neighbours of the current solution or restores archived ones. Without the second step a deterministic
best-improvement search would return to the local optimum it left. The agent keeps the set of
solutions it has visited (a hash of routing and orders per step). Ties are broken by the agent's seeded
RNG. Diagnostics: ``evaluated_moves`` (exact move evaluations), ``restores``, ``revisits`` (steps whose
solution had been visited before; for ``bi-search``/``fi-search`` the restores count too) and
``distinct_solutions`` (solutions seen); the attribute ``first_revisit`` is the step of the first revisit
(``None`` if none).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.envs.scheduling.fjsp.common import instance_from_observation
from papergym.envs.scheduling.fjsp.graph import apply_move, job_links, neighbourhood
from papergym.envs.scheduling.fjsp.improve import solution_from_observation
from papergym.validate import one_of, positive_int

__all__ = ["LocalSearchAgent", "STRATEGIES"]

STRATEGIES = ("gd", "bi", "fi", "random-p")


class LocalSearchAgent:
    def __init__(self, problem: Any, *, seed: Any = None, strategy: str = "bi", p: int = 16, tabu_tenure: int = 1):
        one_of(strategy, "strategy", STRATEGIES)
        positive_int(p, "p")
        positive_int(tabu_tenure, "tabu_tenure")
        self.strategy, self.p = strategy, int(p)
        self._tabu_list: list[bytes] = []  # keys of the last `tenure` solutions (gd-search)
        self.tenure = int(tabu_tenure)
        self.inst = None  # the run's instance, from its first observation
        self.N, self.M = int(problem.params["n_ops"]), int(problem.params["n_machines"])
        self.n_moves = self.N * (self.N + self.M)
        self.rng = np.random.default_rng(seed)
        self.evaluated = 0
        self.restores = 0
        self.revisits = 0
        self.first_revisit: int | None = None  # act call (= step) of the first revisit
        self._t = 0  # act calls so far
        self._visited: set[bytes] = set()
        self._restart = False

    # env action <-> instance move (the env pads to N operations and M machines)
    def _encode(self, v: int, x: int) -> int:
        n = self.inst.n_ops
        return int(v) * (self.N + self.M) + (int(x) if x < n else self.N + (int(x) - n))

    def _restore(self, obs: dict) -> int:
        filled = np.flatnonzero(np.asarray(obs["archive_cmax"]) >= 0)
        cur = int(obs["current_slot"][0])
        others = filled[filled != cur]
        slot = int(self.rng.choice(others)) if others.size else cur
        self.restores += 1
        return self.n_moves + slot

    def _best_unvisited(self, sol, mv, actions: np.ndarray) -> int:
        """The best move (ties at random) whose result has not been visited; the best move if all have."""
        order = np.lexsort((self.rng.random(len(mv)), mv.cmax))
        for i in order[:64]:
            if apply_move(self.inst, sol, mv.v[i], mv.x[i]).key() not in self._visited:
                return int(actions[i])
        return int(actions[order[0]])

    def _pick_min(self, values: np.ndarray) -> int:
        best = np.flatnonzero(values == values.min())
        return int(best[self.rng.integers(best.size)]) if best.size > 1 else int(best[0])

    def act(self, obs: dict) -> int:
        if self.inst is None:
            self.inst = instance_from_observation(obs)
            self._links = job_links(self.inst)
        sol = solution_from_observation(obs, self.inst)
        cmax = int(obs["cmax"][0])
        key = sol.key()
        if key in self._visited:
            self.revisits += 1
            if self.first_revisit is None:
                self.first_revisit = self._t
        self._visited.add(key)
        self._t += 1
        if self.strategy == "random-p":
            mv = neighbourhood(self.inst, sol, links=self._links)
            if len(mv) == 0:
                return self._restore(obs)
            pick = self.rng.choice(len(mv), size=min(self.p, len(mv)), replace=False)
            self.evaluated += pick.size
            i = pick[self._pick_min(mv.cmax[pick])]
            return self._encode(mv.v[i], mv.x[i])
        mv = neighbourhood(self.inst, sol, links=self._links)
        if len(mv) == 0:
            return self._restore(obs)
        actions = np.fromiter((self._encode(v, x) for v, x in zip(mv.v, mv.x)), dtype=np.int64, count=len(mv))
        if self.strategy in ("bi", "fi") and self._restart:  # second step of a restart
            self._restart = False
            self.evaluated += len(mv)
            return self._best_unvisited(sol, mv, actions)
        if self.strategy == "fi":
            order = self.rng.permutation(len(mv))
            better = mv.cmax[order] < cmax
            if better.any():
                first = int(np.argmax(better))
                self.evaluated += first + 1
                return int(actions[order[first]])
            self.evaluated += len(mv)
            return self._stuck(obs, sol, mv, actions)
        self.evaluated += len(mv)
        if self.strategy == "gd":
            # best move whose result is not among the last `tenure` solutions (ties at random)
            order = np.lexsort((self.rng.random(len(mv)), mv.cmax))
            pick = int(order[0])
            if self._tabu_list:
                for i in order:
                    if apply_move(self.inst, sol, mv.v[i], mv.x[i]).key() not in self._tabu_list:
                        pick = int(i)
                        break
            self._tabu_list = (self._tabu_list + [key])[-self.tenure :]
            return int(actions[pick])
        # bi
        i = self._pick_min(mv.cmax)
        if mv.cmax[i] < cmax:
            return int(actions[i])
        return self._stuck(obs, sol, mv, actions)

    def _stuck(self, obs: dict, sol, mv, actions: np.ndarray) -> int:
        """No improving move: restart (restore an archived solution; next step, its best unvisited
        neighbour). With nothing else archived, move to the best unvisited neighbour right away."""
        filled = np.flatnonzero(np.asarray(obs["archive_cmax"]) >= 0)
        if filled.size > 1:
            self._restart = True
            return self._restore(obs)
        return self._best_unvisited(sol, mv, actions)

    def update(self, action: Any, reward: float, observation: Any) -> None:
        pass

    def diagnostics(self) -> dict[str, Any]:
        return {
            "evaluated_moves": int(self.evaluated),
            "restores": int(self.restores),
            "revisits": int(self.revisits),
            "distinct_solutions": len(self._visited),
        }
