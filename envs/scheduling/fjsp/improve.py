"""``FJSPImprove-v0``: improve a complete flexible job-shop solution one operation move at a time.

Description
    The state is a complete solution ``s_t`` (routing + machine orders) and the incumbent
    ``s*_t`` (best visited). An action moves one **critical** operation ``v`` to a new position on any of
    its eligible machines (the ``nopt2-lite`` neighbourhood with the acyclicity test,
    :func:`~papergym.envs.scheduling.fjsp.graph.neighbourhood`), or restores an archived solution.
Action Space
    ``LegalDiscrete(N·(N+M) + R)`` with padded sizes ``N`` (operations), ``M`` (machines) and
    ``R = restore_slots``. ``a < N(N+M)``: ``(v, x) = divmod(a, N+M)``; ``x < N`` moves ``v`` immediately
    before operation ``x`` on ``x``'s machine, ``x ≥ N`` appends ``v`` at the end of machine ``x − N``.
    ``a ≥ N(N+M)``: restore archived solution ``a − N(N+M)`` (a ring buffer of the last ``R`` distinct
    visited solutions; the current solution is always in it, see ``current_slot``). ``env.action_masks()``
    returns the feasible actions as a bool array (the method sb3-contrib's ``MaskablePPO`` reads); the same
    mask is the observation's ``action_mask``; ``action_space.sample()`` draws from it.
Illegal actions
    An action outside the space (not an integer, out of range) or a step before ``reset`` always raises
    :class:`~papergym.envs.InvalidActionError`. An action inside the space but outside the feasible set (an
    infeasible move, an empty restore slot) depends on ``illegal_action``: ``"penalty"`` (default) makes
    the step a no-op of the solution that still uses one step of the horizon (``t`` and ``step_fraction``
    advance, ``truncated`` at the horizon as usual), with reward ``-illegal_penalty`` (default 1.0) and
    ``info == {"illegal_action": True, "reason": <message>}``, so unmasked learners (plain SB3 ``PPO``) and
    ``gymnasium.utils.env_checker.check_env`` (which samples an action before ``reset``) run; ``"raise"``
    raises :class:`~papergym.envs.InvalidActionError` and leaves the state unchanged. ``validate_action``
    raises in both modes (the leaderboard's ``RegretRecorder`` and the vector env validate first, so an
    illegal action in an evaluation run is an error either way).
Observation Space
    ``Dict``: the static padded instance arrays ``proc (N×M)``, ``op_job``, ``op_pos``; the solution
    ``assigned_machine``, ``machine_pred``, ``machine_succ`` (``-1`` = none); ``head``, ``tail`` (longest
    paths), ``critical`` (int8), ``cmax``, ``incumbent_cmax``, ``archive_cmax (R)`` (``-1`` = empty slot),
    ``current_slot`` (archive slot of the current solution), ``step_fraction`` (``t/T``), ``action_mask``.
Rewards
    ``max(C_max(s*_t) − C_max(s_{t+1}), 0)``: the improvement of the incumbent [secondary: MIStar's gain
    term]; the return is ``C_max(s_0) − C_max(s*_T)``. MIStar's revisit penalty is agent-side shaping.
Starting State
    A complete solution from ``init`` ∈ {``mwkr`` (default), ``spt``, ``fifo``, ``mor``, ``random``,
    ``sampled-dispatch``, ``given``}: a dispatching rule of :mod:`~papergym.envs.scheduling.fjsp.rules` run on
    the constructive process of ``FJSP-v0``; ``sampled-dispatch`` = the best of 100 sampled dispatching
    rollouts (earliest-finish machine with gap insertion, softmax job choice on remaining work minus start;
    no local search), a start of the quality of MIStar's DANIEL-sampled one (≈ 12 % above the references on
    SD2 10x5; :mod:`~papergym.envs.scheduling.fjsp.sampled`) and the ``init`` of ``papergym compare`` and
    the leaderboard. Random choices come from an RNG seeded with the instance's content hash, so ``s_0`` is
    a function of the instance and every agent starts from the same solution
    (:func:`initial_solution`). ``given`` reads ``options["solution"]`` (a
    :class:`~papergym.envs.scheduling.fjsp.graph.Solution` or one operation list per machine).
Episode End
    ``truncated`` after ``horizon`` steps; ``terminated`` only if no legal action exists (never while a
    restore slot is filled, which is always).
Arguments
    As ``FJSP-v0`` (``instances``, ``family``, ``n_jobs``, ``n_machines``, ``instance``, ``path``,
    ``one_based``) plus ``init``, ``horizon`` (default 100; the paper uses 400, 200 on large instances),
    ``neighbourhood`` (``"nopt2-lite"``), ``restore_slots`` (16), ``illegal_action`` ∈ {``penalty``
    (default), ``raise``}, ``illegal_penalty`` (1.0).
Oracle and regret
    As ``FJSP-v0`` (:class:`~papergym.envs.scheduling.fjsp.common.FJSPOracle`); the regret is 0 until the
    last step and ``C_max(s*_T) − lower_bound`` there.
Paper
    J. Wang et al., *Learning Memory-Enhanced Improvement Heuristics for Flexible Job Shop Scheduling*
    (MIStar), NeurIPS 2025; the improvement MDP after L2S (Zhang et al., ICLR 2024).
Version History
    v0: initial version; ``init="sampled-dispatch"`` added (the default of ``papergym compare`` and the
    leaderboard; the env's own default stays ``mwkr``).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from papergym.envs.scheduling.fjsp.common import (  # noqa: F401  (compare_seeds: CLI hook)
    FJSPOracle,
    InstanceSource,
    LegalDiscrete,
    action_index,
    check_illegal_action,
    compare_seeds,
    int_box,
    pad_static,
)
from papergym.envs.scheduling.fjsp.construct import FJSPEnv
from papergym.envs.scheduling.fjsp.graph import (
    CycleError,
    ScheduleError,
    Solution,
    apply_move,
    evaluate,
    job_links,
    neighbourhood,
)
from papergym.envs.scheduling.fjsp.instance import Instance
from papergym.envs.scheduling.fjsp.rules import RuleTables, choose_pair
from papergym.envs.scheduling.fjsp.sampled import sampled_dispatch
from papergym.envs.spec import InvalidActionError, ProblemSpec
from papergym.validate import one_of, positive_int

__all__ = [
    "FJSPImproveEnv",
    "ENV_ID",
    "INITS",
    "COMPARE_DEFAULTS",
    "dispatch_solution",
    "initial_solution",
    "solution_from_observation",
]

ENV_ID = "FJSPImprove-v0"
INITS = ("mwkr", "spt", "fifo", "mor", "random", "sampled-dispatch", "given")
NEIGHBOURHOODS = ("nopt2-lite",)
#: ``papergym compare FJSPImprove-v0`` defaults: the 20 first SD2 10x5 test instances, T = 100, and the
#: ``sampled-dispatch`` start (MIStar's searches start from sampled constructive solutions of ≈ 12 % gap on
#: SD2 10x5, not from MWKR's ≈ 68 %) on any instance set unless ``--init`` is given.
COMPARE_DEFAULTS: dict[str, Any] = {
    "seeds": 20,
    "horizon": 100,
    "env_kwargs": {"instances": "sd2-10x5"},
    "env_kwargs_always": {"init": "sampled-dispatch"},
}
REGRET_NAME = "C_max(incumbent) - LB"
#: ``papergym compare`` draws the incumbent's makespan (``env.makespan``) after every step, as the gap to the reference
#: in % (the makespan where an instance has no reference), not the cumulative regret (0 until the last step)
PLOT_KIND = "makespan"
#: what the makespan curve measures after each step (the figure's y label)
MAKESPAN_OF = "the incumbent"


def dispatch_solution(inst: Instance, rule: str, rng: np.random.Generator, *, machine_rule: str = "eet") -> Solution:
    """The solution a dispatching rule (:mod:`~papergym.envs.scheduling.fjsp.rules`) builds on the constructive process
    of ``FJSP-v0``; ``rule="sampled-dispatch"``: the best of the sampled rollouts of
    :func:`~papergym.envs.scheduling.fjsp.sampled.sampled_dispatch` (its own machine rule)."""
    if rule == "sampled-dispatch":
        return sampled_dispatch(inst, rng)
    env = FJSPEnv.on_instance(inst)
    obs = env._obs()
    tables = RuleTables(obs["proc"], obs["op_job"])
    while env.remaining:
        obs, *_ = env.step(choose_pair(rule, obs, tables, rng, machine_rule=machine_rule))
    return env.solution()


def initial_solution(inst: Instance, init: str = "mwkr") -> Solution:
    """The env's ``s_0`` for ``init`` (any of :data:`INITS` but ``given``): the rule run with an RNG seeded by
    the instance's content hash, so the start is a function of the instance."""
    one_of(init, "init", (i for i in INITS if i != "given"))
    return dispatch_solution(inst, init, np.random.default_rng(int(inst.sha256()[:16], 16)))


def solution_from_observation(obs: dict, inst: Instance) -> Solution:
    """Rebuild the current :class:`Solution` from an ``FJSPImprove-v0`` observation."""
    n, M = inst.n_ops, inst.n_machines
    assign = np.asarray(obs["assigned_machine"][:n], dtype=np.int64).copy()
    mp = np.asarray(obs["machine_pred"][:n], dtype=np.int64).copy()
    ms = np.asarray(obs["machine_succ"][:n], dtype=np.int64).copy()
    mfirst = np.full(M, -1, dtype=np.int64)
    firsts = np.flatnonzero(mp < 0)
    mfirst[assign[firsts]] = firsts
    return Solution(assign, mp, ms, mfirst)


def improve_observation_space(N: int, M: int, J: int, R: int) -> spaces.Dict:
    return spaces.Dict(
        {
            "proc": int_box(0, (N, M)),
            "op_job": int_box(-1, (N,), max(J - 1, 0)),
            "op_pos": int_box(-1, (N,), max(N - 1, 0)),
            "assigned_machine": int_box(-1, (N,), M - 1),
            "machine_pred": int_box(-1, (N,), N - 1),
            "machine_succ": int_box(-1, (N,), N - 1),
            "head": int_box(-1, (N,)),
            "tail": int_box(-1, (N,)),
            "critical": spaces.MultiBinary(N),
            "cmax": int_box(0, (1,)),
            "incumbent_cmax": int_box(0, (1,)),
            "archive_cmax": int_box(-1, (R,)),
            "current_slot": int_box(-1, (1,), R - 1),
            "step_fraction": spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float64),
            "action_mask": spaces.MultiBinary(N * (N + M) + R),
        }
    )


class FJSPImproveEnv(gym.Env):
    __doc__ = __doc__
    # legal actions depend on the state (see "Illegal actions"): samplers should use the mask
    metadata = {"render_modes": ["ansi"], "render_fps": 4, "state_dependent_actions": True}

    def __init__(
        self,
        instances: str | None = None,
        family: str = "sd2",
        n_jobs: int = 10,
        n_machines: int = 5,
        instance: str | None = None,
        path: str | None = None,
        one_based: bool | None = None,
        init: str = "mwkr",
        horizon: int = 100,
        neighbourhood: str = "nopt2-lite",
        restore_slots: int = 16,
        render_mode: str | None = None,
        illegal_action: str = "penalty",
        illegal_penalty: float = 1.0,
    ):
        self.illegal_penalty = check_illegal_action(illegal_action, illegal_penalty)
        self.illegal_action = illegal_action
        one_of(init, "init", INITS)
        horizon = positive_int(horizon, "horizon")
        one_of(neighbourhood, "neighbourhood", NEIGHBOURHOODS)
        restore_slots = positive_int(restore_slots, "restore_slots")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.source = InstanceSource(
            instances=instances,
            family=family,
            n_jobs=n_jobs,
            n_machines=n_machines,
            instance=instance,
            path=path,
            one_based=one_based,
        )
        self.init, self.horizon, self.neighbourhood_name = init, int(horizon), neighbourhood
        self.R = int(restore_slots)
        self.render_mode = render_mode
        self.N, self.M, self.J = self.source.max_ops, self.source.max_machines, self.source.max_jobs
        self.n_moves = self.N * (self.N + self.M)
        self.action_space = LegalDiscrete(self.n_moves + self.R)
        self.observation_space = improve_observation_space(self.N, self.M, self.J, self.R)
        self.oracle = FJSPOracle(self)
        self.instance: Instance | None = None
        self.t = 0
        self.problem = self._problem(None)

    # ---------------------------------------------------------------- state
    def _mask(self) -> np.ndarray:
        if self.instance is None:
            return np.zeros(self.n_moves + self.R, dtype=np.int8)
        return self._action_mask

    def action_masks(self) -> np.ndarray:
        """The feasible actions of the current state as a bool ``(N·(N+M)+R,)`` array (a copy; all ``False``
        before ``reset``). The method sb3-contrib's ``MaskablePPO`` calls."""
        return self._mask().astype(bool)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        sol_opt = options.pop("solution", None)
        inst = self.source.draw(seed, options, self.np_random)
        links = job_links(inst)
        if self.init == "given":
            if sol_opt is None:
                raise ValueError("init='given' needs options={'solution': Solution or one operation list per machine}")
            sol = sol_opt.copy() if isinstance(sol_opt, Solution) else Solution.from_sequences(inst, sol_opt)
            if sol.assign.shape != (inst.n_ops,):
                raise ScheduleError(
                    f"the given solution has {sol.assign.shape[0]} operations, the instance {inst.n_ops}"
                )
            Solution.from_sequences(inst, sol.sequences())  # eligibility and completeness
        else:
            if sol_opt is not None:
                raise ValueError(f"options['solution'] is only read with init='given' (init is {self.init!r})")
            # the initial solution is a function of the instance: every agent starts from the same s_0
            sol = initial_solution(inst, self.init)
        evaluate(inst, sol, links=links)  # a cyclic given solution raises CycleError before any state changes
        self.instance, self._links = inst, links
        self._static = pad_static(inst, self.N, self.M)
        self._archive: list[tuple[bytes, Solution, int]] = []
        self._slot_next = 0
        self.t = 0
        self._set_state(sol)
        self._incumbent, self._incumbent_cmax = sol.copy(), self._ev.cmax
        self.initial_cmax = self._ev.cmax
        self.problem = self._problem(inst)
        return self._obs(), {}

    def _problem(self, inst: Instance | None) -> ProblemSpec:
        """The public problem: spaces, horizon, padded sizes, ``init`` and the neighbourhood (the same for every
        run of a family; each run's instance is in its observations: ``instance_from_observation``)."""
        return ProblemSpec(
            ENV_ID,
            spaces.Discrete(self.n_moves + self.R),
            self.observation_space,
            self.horizon,
            {
                "n_ops": self.N,
                "n_machines": self.M,
                "n_jobs": self.J,
                "restore_slots": self.R,
                "init": self.init,
                "neighbourhood": self.neighbourhood_name,
            },
        )

    def _set_state(self, sol: Solution) -> None:
        inst = self.instance
        ev = evaluate(inst, sol, links=self._links)
        self._sol, self._ev = sol, ev
        self._moves = neighbourhood(inst, sol, ev, links=self._links)
        key = sol.key()
        slot = next((i for i, (k, _, _) in enumerate(self._archive) if k == key), -1)
        if slot < 0:
            entry = (key, sol.copy(), ev.cmax)
            if len(self._archive) < self.R:
                self._archive.append(entry)
                slot = len(self._archive) - 1
            else:
                slot = self._slot_next
                self._archive[slot] = entry
            self._slot_next = (slot + 1) % self.R
        self._current_slot = slot
        n, N = inst.n_ops, self.N
        x = self._moves.x
        x_env = np.where(x < n, x, N + (x - n))
        idx = self._moves.v * (N + self.M) + x_env
        self._move_cmax = np.full(self.n_moves, -1, dtype=np.int64)
        self._move_cmax[idx] = self._moves.cmax
        mask = np.zeros(self.n_moves + self.R, dtype=np.int8)
        mask[idx] = 1
        mask[self.n_moves : self.n_moves + len(self._archive)] = 1
        self._action_mask = mask
        self.action_space.legal_mask = mask  # the sampler follows the state

    def _obs(self) -> dict[str, np.ndarray]:
        N, n = self.N, self.instance.n_ops
        ev, sol = self._ev, self._sol

        def pad(a, fill=-1):
            out = np.full(N, fill, dtype=np.int64)
            out[:n] = a
            return out

        arch = np.full(self.R, -1, dtype=np.int64)
        arch[: len(self._archive)] = [c for _, _, c in self._archive]
        crit = np.zeros(N, dtype=np.int8)
        crit[:n] = ev.critical
        return {
            "proc": self._static["proc"].copy(),
            "op_job": self._static["op_job"].copy(),
            "op_pos": self._static["op_pos"].copy(),
            "assigned_machine": pad(sol.assign),
            "machine_pred": pad(sol.mpred),
            "machine_succ": pad(sol.msucc),
            "head": pad(ev.heads),
            "tail": pad(ev.tails),
            "critical": crit,
            "cmax": np.array([ev.cmax], dtype=np.int64),
            "incumbent_cmax": np.array([self._incumbent_cmax], dtype=np.int64),
            "archive_cmax": arch,
            "current_slot": np.array([self._current_slot], dtype=np.int64),
            "step_fraction": np.array([min(1.0, self.t / self.horizon)], dtype=np.float64),
            "action_mask": self._action_mask.copy(),
        }

    def _checked_index(self, action: Any) -> int:
        """The action as an int in the space of a reset env; :class:`InvalidActionError` for a step before
        ``reset`` or an action outside the space (raised in every mode)."""
        if self.instance is None:
            raise InvalidActionError("call reset() before step()")
        return action_index(action, self.n_moves + self.R)

    def _illegal_reason(self, a: int) -> str | None:
        """Why the in-space action ``a`` is infeasible in the current state, ``None`` if it is feasible."""
        if a >= self.n_moves:
            slot = a - self.n_moves
            if slot >= len(self._archive):
                return f"action {a}: restore slot {slot} is empty ({len(self._archive)} filled)"
            return None
        if self._move_cmax[a] < 0:
            v, x = divmod(a, self.N + self.M)
            what = f"before operation {x}" if x < self.N else f"at the end of machine {x - self.N}"
            crit = bool(v < self.instance.n_ops and self._ev.critical[v])
            why = (
                "operation is not critical"
                if not crit
                else "not eligible, identity, or fails the acyclicity test of the nopt2-lite neighbourhood"
            )
            return f"action {a} (move operation {v} {what}) is not a feasible move: {why}"
        return None

    def decode(self, action: Any) -> tuple[str, int, int]:
        """``("move", v, x_graph)`` or ``("restore", slot, -1)`` of a legal action (x in the instance's
        own indexing: ``x ≥ n_ops`` = append to machine ``x − n_ops``); :class:`InvalidActionError` otherwise
        (whatever ``illegal_action`` is)."""
        a = self._checked_index(action)
        why = self._illegal_reason(a)
        if why is not None:
            raise InvalidActionError(why)
        if a >= self.n_moves:
            return "restore", a - self.n_moves, -1
        v, x = divmod(a, self.N + self.M)
        n = self.instance.n_ops
        return "move", v, (x if x < self.N else n + (x - self.N))

    def validate_action(self, action: Any) -> None:
        self.decode(action)

    def _result_cmax(self, action: Any) -> int:
        kind, a, x = self.decode(action)
        if kind == "restore":
            return int(self._archive[a][2])
        return int(self._move_cmax[int(action)])

    def peek_reward(self, action: Any) -> float:
        return float(max(self._incumbent_cmax - self._result_cmax(action), 0))

    def peek_final_makespan(self, action: Any, t: int) -> int | None:
        c = self._result_cmax(action)
        if t < self.horizon:
            return None
        return min(self._incumbent_cmax, c)

    def final_makespan_after(self, t: int) -> int | None:
        """The incumbent's makespan if round ``t`` (just played) was the last, else ``None``."""
        return int(self._incumbent_cmax) if self.t == t and t >= self.horizon else None

    def step(self, action: Any):
        why = self._illegal_reason(self._checked_index(action))
        if why is not None:
            if self.illegal_action == "raise":
                raise InvalidActionError(why)
            # a no-op of the solution that uses one step of the horizon; the reward is the penalty
            self.t += 1
            return (
                self._obs(),
                -self.illegal_penalty,
                False,
                self.t >= self.horizon,
                {"illegal_action": True, "reason": why},
            )
        kind, a, x = self.decode(action)
        if kind == "restore":
            new = self._archive[a][1].copy()
        else:
            predicted = int(self._move_cmax[int(action)])
            new = apply_move(self.instance, self._sol, a, x)
        try:
            self._set_state(new)
        except CycleError as exc:  # cannot happen for masked moves (tested); never leave a broken state
            raise AssertionError(f"internal error: a masked move created a cycle: {exc}") from None
        if kind == "move" and self._ev.cmax != predicted:
            raise AssertionError(f"internal error: predicted makespan {predicted} != evaluated {self._ev.cmax}")
        reward = float(max(self._incumbent_cmax - self._ev.cmax, 0))
        if self._ev.cmax < self._incumbent_cmax:
            self._incumbent, self._incumbent_cmax = self._sol.copy(), self._ev.cmax
        self.t += 1
        terminated = not self._action_mask.any()
        truncated = self.t >= self.horizon
        return self._obs(), reward, terminated, truncated, {}

    # ---------------------------------------------------------------- results
    @property
    def solution(self) -> Solution:
        return self._sol.copy()

    @property
    def incumbent(self) -> Solution:
        return self._incumbent.copy()

    @property
    def makespan(self) -> int:
        """The incumbent's makespan."""
        return int(self._incumbent_cmax)

    def heterodata(self):
        """The current solution as a ``torch_geometric`` ``HeteroData``
        (:func:`~papergym.envs.scheduling.fjsp.hetero.to_heterodata`; torch extra)."""
        from papergym.envs.scheduling.fjsp.hetero import to_heterodata

        return to_heterodata(self.instance, self._sol, self._ev)

    @property
    def moves(self):
        """The current legal moves with their exact makespans (instance indexing, see :meth:`decode`)."""
        return self._moves

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.instance is None:
            return None
        return (
            f"{self.instance.name}: t={self.t}/{self.horizon}, cmax={self._ev.cmax}, "
            f"incumbent={self._incumbent_cmax}, legal moves={len(self._moves)}"
        )
