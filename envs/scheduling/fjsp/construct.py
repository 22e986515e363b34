"""``FJSP-v0``: build a flexible job-shop schedule one (operation, machine) decision at a time.

Description
    Jobs are chains of operations; each operation runs on one of its eligible machines with a
    machine-dependent integer time. At each step the agent schedules the next operation of an
    unfinished job on an eligible machine; it starts at ``max(job_ready_j, machine_ready_k)`` and is
    appended to the machine's sequence. The episode builds a complete semi-active schedule.
Action Space
    ``LegalDiscrete(J·M)`` (a ``Discrete`` whose ``sample()`` draws legal actions of the current state):
    ``a = j·M + k`` schedules job ``j``'s next operation on machine ``k``. ``J``, ``M`` are the family's padded
    maximum sizes. ``env.action_masks()`` returns the current legal actions as a bool array (the method
    sb3-contrib's ``MaskablePPO`` reads); the same mask is the observation's ``action_mask``.
Illegal actions
    An action outside the space (not an integer, out of ``0..J·M-1``), a step before ``reset`` or after the
    schedule is complete always raises :class:`~papergym.envs.InvalidActionError`. An action inside the space
    that the state forbids (a finished job, an ineligible or padding machine) depends on ``illegal_action``:
    ``"penalty"`` (default) makes the step a no-op: the state (including ``t``) is unchanged, the
    observation is the current one, the reward is ``-illegal_penalty`` (default 1.0), ``terminated`` and
    ``truncated`` are ``False`` and ``info == {"illegal_action": True, "reason": <message>}``, so unmasked
    learners (plain SB3 ``PPO``) and ``gymnasium.utils.env_checker.check_env`` (which samples an action
    before ``reset``) run; ``"raise"`` raises :class:`~papergym.envs.InvalidActionError` and leaves the
    state unchanged. ``validate_action`` raises in both modes (the leaderboard's ``RegretRecorder`` and
    the vector env validate first, so an illegal action in an evaluation run is an error either way).
Observation Space
    ``Dict`` of padded int64 arrays (``N`` = padded operations): ``proc (N×M)`` (0 = ineligible),
    ``op_job (N)``, ``op_pos (N)`` (``-1`` on padding), ``scheduled (N)`` (1 on padding), ``assigned_machine (N)``
    and ``start (N)`` (``-1`` until scheduled), ``job_ready (J)``, ``machine_ready (M)``, ``next_op (J)`` (global
    operation index, ``-1`` when the job is done or padding), ``action_mask (J·M)`` (int8). Features for
    GNNs are computed agent-side (e.g. :func:`~papergym.envs.scheduling.fjsp.hetero.to_heterodata`).
Rewards
    ``reward_mode="dense_lb"`` (default): ``LB_t − LB_{t+1}`` with ``LB_t = max(max_j (job_ready_j +
    Σ_{remaining o ∈ J_j} min_k p_ok), max_k machine_ready_k)``, a valid lower bound on the final makespan,
    so the return is ``LB_0 − C_max`` [design, after Song et al.'s estimate-difference reward];
    ``"terminal"``: ``0`` until the last step, then ``−C_max``.
Starting State
    Nothing scheduled. The instance comes from the ``instances`` set (member ``options["index"]``, default
    ``seed mod size``) or a generator family (fresh instance from the seed's instance stream).
Episode End
    ``terminated`` when every operation is scheduled (episode length = number of operations); never
    truncated.
Arguments
    ``instances`` (named set: ``brandimarte``, ``hurink-edata|rdata|vdata``, ``sd1-10x5``, ``sd2-10x5``, ...),
    ``family`` ∈ {sd1, sd2, benchmark, file} (default ``sd2``), ``n_jobs`` = 10, ``n_machines`` = 5,
    ``instance`` (``"brandimarte/mk01"``, family benchmark), ``path``/``one_based`` (family file),
    ``reward_mode``, ``horizon`` (``None`` or the padded operation count: one decision per operation),
    ``illegal_action`` ∈ {``penalty`` (default), ``raise``}, ``illegal_penalty`` (1.0).
Oracle and regret
    ``env.unwrapped.oracle`` (:class:`~papergym.envs.scheduling.fjsp.common.FJSPOracle`): ``lower_bound``,
    ``reference`` (best known value with provenance), ``proved_optimal``, ``gap(C)``; the regret is 0 until
    the last decision and ``C_max − lower_bound`` there.
Paper
    J. Wang et al., *Learning Memory-Enhanced Improvement Heuristics for Flexible Job Shop Scheduling*
    (MIStar), NeurIPS 2025; the constructive MDP follows Song et al. (IEEE TII 2023) and DANIEL (Wang et
    al., IEEE TNNLS 2023).
Version History
    v0: initial version.

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
from papergym.envs.scheduling.fjsp.graph import Solution
from papergym.envs.scheduling.fjsp.instance import Instance
from papergym.envs.spec import InvalidActionError, ProblemSpec
from papergym.validate import one_of

__all__ = ["FJSPEnv", "ENV_ID", "COMPARE_DEFAULTS", "REWARD_MODES", "construct_problem"]

ENV_ID = "FJSP-v0"
REWARD_MODES = ("dense_lb", "terminal")
#: ``papergym compare FJSP-v0`` defaults: the 20 first SD2 10x5 test instances.
COMPARE_DEFAULTS: dict[str, Any] = {"seeds": 20, "env_kwargs": {"instances": "sd2-10x5"}}
REGRET_NAME = "C_max - LB"
#: ``papergym compare`` draws the makespan of the partial schedule (``env.makespan``) after every step, as the gap to
#: the reference in % (the makespan where an instance has no reference), not the cumulative regret (0 until the last
#: step)
PLOT_KIND = "makespan"
#: what the makespan curve measures after each step (the figure's y label)
MAKESPAN_OF = "the partial schedule"


def construct_observation_space(N: int, M: int, J: int) -> spaces.Dict:
    return spaces.Dict(
        {
            "proc": int_box(0, (N, M)),
            "op_job": int_box(-1, (N,), max(J - 1, 0)),
            "op_pos": int_box(-1, (N,), max(N - 1, 0)),
            "scheduled": spaces.MultiBinary(N),
            "assigned_machine": int_box(-1, (N,), M - 1),
            "start": int_box(-1, (N,)),
            "job_ready": int_box(0, (J,)),
            "machine_ready": int_box(0, (M,)),
            "next_op": int_box(-1, (J,), N - 1),
            "action_mask": spaces.MultiBinary(J * M),
        }
    )


def construct_problem(
    inst: Instance | None, N: int, M: int, J: int, horizon: int, observation_space: spaces.Dict | None = None
) -> ProblemSpec:
    """The public problem: spaces, the horizon (padded operation count) and the padded sizes. The same for
    every run of a family: each run's instance is in its observations (``instance_from_observation``)."""
    obs_space = observation_space if observation_space is not None else construct_observation_space(N, M, J)
    return ProblemSpec(
        ENV_ID, spaces.Discrete(J * M), obs_space, int(horizon), {"n_jobs": J, "n_machines": M, "n_ops": N}
    )


class FJSPEnv(gym.Env):
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
        reward_mode: str = "dense_lb",
        horizon: int | None = None,
        render_mode: str | None = None,
        illegal_action: str = "penalty",
        illegal_penalty: float = 1.0,
    ):
        self.illegal_penalty = check_illegal_action(illegal_action, illegal_penalty)
        self.illegal_action = illegal_action
        one_of(reward_mode, "reward_mode", REWARD_MODES)
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
        self.reward_mode = reward_mode
        self.render_mode = render_mode
        self.N, self.M, self.J = self.source.max_ops, self.source.max_machines, self.source.max_jobs
        if horizon is not None and horizon != self.N:
            raise ValueError(
                f"horizon: FJSP-v0 takes one decision per operation, so its horizon is fixed by the "
                f"instances ({self.N} = the largest operation count); got {horizon!r}"
            )
        self.action_space = LegalDiscrete(self.J * self.M)
        self.observation_space = construct_observation_space(self.N, self.M, self.J)
        self.oracle = FJSPOracle(self)
        self.instance: Instance | None = None
        self.t = 0
        self.problem = construct_problem(None, self.N, self.M, self.J, self.N)

    # ---------------------------------------------------------------- state
    def _mask(self) -> np.ndarray:
        return self._action_mask if self.instance is not None else np.zeros(self.J * self.M, dtype=np.int8)

    def action_masks(self) -> np.ndarray:
        """The legal actions of the current state as a bool ``(J·M,)`` array (a copy; all ``False`` before
        ``reset`` and once the schedule is complete). The method sb3-contrib's ``MaskablePPO`` calls."""
        return self._mask().astype(bool)

    def _update_mask_row(self, j: int) -> None:
        M = self.M
        o = self._next_op[j]
        self._action_mask[j * M : (j + 1) * M] = self._elig[o] if o >= 0 else 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._begin(self.source.draw(seed, options, self.np_random))
        return self._obs(), {}

    @classmethod
    def on_instance(cls, inst: Instance, *, reward_mode: str = "terminal") -> FJSPEnv:
        """An env already reset on ``inst`` (unpadded; used to build initial solutions and by tools)."""
        env = cls.__new__(cls)
        env.reward_mode, env.render_mode, env.source = reward_mode, None, InstanceSource.of([inst], inst.name)
        env.N, env.M, env.J = inst.n_ops, inst.n_machines, inst.n_jobs
        env.illegal_action, env.illegal_penalty = "raise", 1.0
        env.action_space = LegalDiscrete(env.J * env.M)
        env.observation_space = construct_observation_space(env.N, env.M, env.J)
        env.oracle = FJSPOracle(env)
        env._begin(inst)
        return env

    def _begin(self, inst: Instance) -> None:
        self.instance = inst
        N, M, J = self.N, self.M, self.J
        st = pad_static(inst, N, M)
        self._proc = st["proc"]
        self._static = st
        self._elig = (self._proc > 0).astype(np.int8)
        self._minp = np.zeros(N, dtype=np.int64)
        self._minp[: inst.n_ops] = inst.min_proc
        self._job_end = np.zeros(J, dtype=np.int64)
        self._job_end[: inst.n_jobs] = inst.job_start[1:]
        self._scheduled = np.ones(N, dtype=np.int8)
        self._scheduled[: inst.n_ops] = 0
        self._assigned = np.full(N, -1, dtype=np.int64)
        self._start = np.full(N, -1, dtype=np.int64)
        self._job_ready = np.zeros(J, dtype=np.int64)
        self._machine_ready = np.zeros(M, dtype=np.int64)
        self._next_op = np.full(J, -1, dtype=np.int64)
        self._next_op[: inst.n_jobs] = inst.job_start[:-1]
        self._rem_min = np.zeros(J, dtype=np.int64)
        self._rem_min[: inst.n_jobs] = np.add.reduceat(inst.min_proc, inst.job_start[:-1])
        self._action_mask = np.zeros(J * M, dtype=np.int8)
        for j in range(inst.n_jobs):
            self._update_mask_row(j)
        self._sequences: list[list[int]] = [[] for _ in range(inst.n_machines)]
        self._remaining = inst.n_ops
        self._cmax = 0
        self._lb = self._lower_bound()
        self.t = 0
        self.problem = construct_problem(inst, N, M, J, N, self.observation_space)
        self.action_space.legal_mask = self._action_mask  # the sampler follows the state (updated in place)

    def _lower_bound(self) -> int:
        return int(max((self._job_ready + self._rem_min).max(), self._machine_ready.max()))

    @property
    def remaining(self) -> int:
        """Operations still to schedule."""
        return self._remaining

    def _obs(self) -> dict[str, np.ndarray]:
        return {
            "proc": self._proc.copy(),
            "op_job": self._static["op_job"].copy(),
            "op_pos": self._static["op_pos"].copy(),
            "scheduled": self._scheduled.copy(),
            "assigned_machine": self._assigned.copy(),
            "start": self._start.copy(),
            "job_ready": self._job_ready.copy(),
            "machine_ready": self._machine_ready.copy(),
            "next_op": self._next_op.copy(),
            "action_mask": self._action_mask.copy(),
        }

    def _checked_index(self, action: Any) -> int:
        """The action as an int in the space of a running episode; :class:`InvalidActionError` for a step
        before ``reset``, an action outside the space or a complete schedule (raised in every mode)."""
        if self.instance is None:
            raise InvalidActionError("call reset() before step()")
        a = action_index(action, self.J * self.M)
        if self._remaining == 0:
            raise InvalidActionError("the schedule is complete; call reset()")
        return a

    def _illegal_reason(self, a: int) -> str | None:
        """Why the in-space action ``a`` is illegal in the current state, ``None`` if it is legal."""
        j, k = divmod(a, self.M)
        o = int(self._next_op[j])
        if o < 0:
            return f"action {a}: job {j} has no operation left to schedule"
        if not self._elig[o, k]:
            return (
                f"action {a}: machine {k} cannot process operation {o} (job {j}); "
                f"eligible machines: {np.flatnonzero(self._elig[o]).tolist()}"
            )
        return None

    def validate_action(self, action: Any) -> tuple[int, int, int]:
        """``(job, machine, operation)`` of a legal action; :class:`InvalidActionError` otherwise (whatever
        ``illegal_action`` is)."""
        a = self._checked_index(action)
        why = self._illegal_reason(a)
        if why is not None:
            raise InvalidActionError(why)
        j, k = divmod(a, self.M)
        return j, k, int(self._next_op[j])

    def _place(self, j: int, k: int, o: int) -> tuple[int, int]:
        p = int(self._proc[o, k])
        s = max(int(self._job_ready[j]), int(self._machine_ready[k]))
        return s, s + p

    def peek_reward(self, action: Any) -> float:
        j, k, o = self.validate_action(action)
        s, e = self._place(j, k, o)
        if self.reward_mode == "terminal":
            return -float(max(self._cmax, e)) if self._remaining == 1 else 0.0
        jr = self._job_ready.copy()
        mr = self._machine_ready.copy()
        rm = self._rem_min.copy()
        jr[j], mr[k] = e, e
        rm[j] -= self._minp[o]
        return float(self._lb - max((jr + rm).max(), mr.max()))

    def peek_final_makespan(self, action: Any, t: int) -> int | None:
        """The final makespan if ``action`` completes the schedule, else ``None``."""
        j, k, o = self.validate_action(action)
        if self._remaining != 1:
            return None
        return max(self._cmax, self._place(j, k, o)[1])

    def final_makespan_after(self, t: int) -> int | None:
        """The final makespan if round ``t`` (just played) completed the schedule, else ``None``."""
        return int(self._cmax) if self._remaining == 0 and self.t == t else None

    def step(self, action: Any):
        a = self._checked_index(action)
        why = self._illegal_reason(a)
        if why is not None:
            if self.illegal_action == "raise":
                raise InvalidActionError(why)
            # a documented no-op: nothing changes, the reward is the penalty
            return self._obs(), -self.illegal_penalty, False, False, {"illegal_action": True, "reason": why}
        j, k = divmod(a, self.M)
        o = int(self._next_op[j])
        s, e = self._place(j, k, o)
        self._start[o] = s
        self._assigned[o] = k
        self._scheduled[o] = 1
        self._job_ready[j] = e
        self._machine_ready[k] = e
        self._rem_min[j] -= self._minp[o]
        self._sequences[k].append(o)
        self._next_op[j] = o + 1 if o + 1 < self._job_end[j] else -1
        self._update_mask_row(j)
        self.action_space.legal_mask = self._action_mask
        if e > self._cmax:
            self._cmax = e
        self._remaining -= 1
        self.t += 1
        done = self._remaining == 0
        if self.reward_mode == "dense_lb":
            lb = self._lower_bound()
            reward = float(self._lb - lb)
            self._lb = lb
        else:
            reward = -float(self._cmax) if done else 0.0
        return self._obs(), reward, done, False, {}

    # ---------------------------------------------------------------- results
    @property
    def makespan(self) -> int:
        """Current makespan (the final ``C_max`` once the episode has terminated)."""
        return int(self._cmax)

    def schedule(self) -> tuple[np.ndarray, np.ndarray]:
        """``(machine, start)`` of the instance's operations (``-1`` where not yet scheduled)."""
        n = self.instance.n_ops
        return self._assigned[:n].copy(), self._start[:n].copy()

    def solution(self) -> Solution:
        """The (routing, sequences) solution built so far (complete once terminated)."""
        return Solution.from_sequences(self.instance, self._sequences)

    def heterodata(self):
        """The partial schedule as a ``torch_geometric`` ``HeteroData``
        (:func:`~papergym.envs.scheduling.fjsp.hetero.partial_heterodata`; torch extra)."""
        from papergym.envs.scheduling.fjsp.hetero import partial_heterodata

        machine, start = self.schedule()
        return partial_heterodata(self.instance, machine, start, self._sequences, self._lb)

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.instance is None:
            return None
        lines = [f"{self.instance.name}: t={self.t}, makespan={self._cmax}, remaining={self._remaining}"]
        for k, seq in enumerate(self._sequences):
            lines.append(f"  M{k}: " + " ".join(f"{o}@{self._start[o]}" for o in seq))
        return "\n".join(lines)
