"""Pieces shared by ``FJSP-v0`` and ``FJSPImprove-v0``: the instance source (named sets, generators,
single benchmark instances, files), padding, the legal-action ``Discrete`` space and the oracle."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from papergym.envs.scheduling.fjsp.generators import sd1_instance, sd2_instance
from papergym.envs.scheduling.fjsp.instance import Instance
from papergym.envs.scheduling.fjsp.parser import read_instance
from papergym.envs.scheduling.fjsp.sets import load_instance, load_set, reference
from papergym.envs.spec import InvalidActionError, instance_seed
from papergym.validate import one_of, positive_float, positive_int

__all__ = [
    "InstanceSource",
    "LegalDiscrete",
    "FJSPOracle",
    "BIG",
    "FAMILIES",
    "ILLEGAL_ACTIONS",
    "compare_seeds",
    "instance_from_observation",
    "action_index",
    "check_illegal_action",
]

BIG = 2**31 - 1  # upper bound of time-valued observation entries
FAMILIES = ("sd1", "sd2", "benchmark", "file")


def int_box(low: int, shape: tuple[int, ...], high: int = BIG) -> gym.spaces.Box:
    """An int64 ``Box`` (the observation entries of both envs)."""
    return gym.spaces.Box(low, high, shape=shape, dtype=np.int64)


def action_index(action: Any, n: int) -> int:
    """A ``Discrete(n)`` action as an int: a Python or numpy integer (or a 0-d integer array) in
    ``0..n-1``; anything else (bool, float, string, None, arrays) is an :class:`InvalidActionError`."""
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise InvalidActionError(f"action must be an integer in 0..{n - 1}, got {action!r}")
    a = int(action)
    if not 0 <= a < n:
        raise InvalidActionError(f"action {a} outside 0..{n - 1}")
    return a


ILLEGAL_ACTIONS = ("penalty", "raise")


def check_illegal_action(illegal_action: str, illegal_penalty: float) -> float:
    """Validate the ``illegal_action`` / ``illegal_penalty`` env arguments; the penalty as a float."""
    one_of(illegal_action, "illegal_action", ILLEGAL_ACTIONS)
    return positive_float(illegal_penalty, "illegal_penalty", allow_zero=True)


class LegalDiscrete(gym.spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` draws a legal action of the env's current state unless a ``mask``
    or ``probability`` is given.

    The env keeps :attr:`legal_mask` (an int8 ``(n,)`` array, ``None`` before the first reset) equal to its
    current action mask on every ``reset`` and ``step``. The mask is plain data on the space, so it
    survives ``pickle``, ``copy.deepcopy`` and the round trip of ``AsyncVectorEnv.get_attr("action_space")``
    (a copy of the space samples the legal actions of the state it was copied in). When no action is legal
    (before the first reset, or once an ``FJSP-v0`` schedule is complete) ``sample()`` draws uniformly from
    ``0..n-1``. Equality, ``contains`` and serialisation are ``Discrete``'s."""

    def __init__(self, n: int, seed: int | None = None):
        super().__init__(n, seed=seed)
        self.legal_mask: np.ndarray | None = None

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None):
        if mask is None and probability is None and self.legal_mask is not None:
            m = np.asarray(self.legal_mask, dtype=np.int8)
            if m.any():
                mask = m
        return super().sample(mask=mask, probability=probability)


class InstanceSource:
    """Where an env's instances come from (constructor kwargs of both envs).

    The first of ``instances``, ``instance``, ``path`` given wins; otherwise ``family`` decides.

    * ``instances="<set>"``: a named fixed set (:func:`~papergym.envs.scheduling.fjsp.sets.load_set`),
      member ``options["index"]`` at reset, default ``seed mod len(set)``;
    * ``family="sd1" | "sd2"`` with ``n_jobs``, ``n_machines``: a fresh instance per seed from the instance
      stream of ``SeedSequence(seed)`` (the leaderboard's hidden-seed test split);
    * ``family="benchmark"``, ``instance="brandimarte/mk01"``: one named instance;
    * ``family="file"``, ``path=...`` (``one_based``): one instance file.
    """

    def __init__(
        self,
        *,
        instances: str | None = None,
        family: str = "sd2",
        n_jobs: int = 10,
        n_machines: int = 5,
        instance: str | None = None,
        path: str | None = None,
        one_based: bool | None = None,
    ):
        self.fixed: list[Instance] | None = None
        self.family = family
        if instances is not None:
            if not isinstance(instances, str):
                raise ValueError(f"instances must be a set name, got {instances!r}")
            self.fixed = load_set(instances)
            self.label = instances
        elif instance is not None or family == "benchmark":
            if not instance:
                raise ValueError("family='benchmark' needs instance='<set>/<member>' (e.g. 'brandimarte/mk01')")
            self.fixed = [load_instance(instance)]
            self.label = instance
        elif path is not None or family == "file":
            if not path:
                raise ValueError("family='file' needs path='<file.fjs>'")
            self.fixed = [read_instance(path, one_based=one_based)]
            self.label = str(path)
        elif family in ("sd1", "sd2"):
            self.n_jobs, self.n_machines = positive_int(n_jobs, "n_jobs"), positive_int(n_machines, "n_machines")
            self.label = f"{family}-{self.n_jobs}x{self.n_machines}-gen"
        else:
            raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
        if self.fixed is not None:
            self.max_jobs = max(i.n_jobs for i in self.fixed)
            self.max_machines = max(i.n_machines for i in self.fixed)
            self.max_ops = max(i.n_ops for i in self.fixed)
            self.max_proc = max(int(i.proc.max()) for i in self.fixed)
        else:
            m = self.n_machines
            per_job = max(1, int(1.2 * m)) if family == "sd1" else m
            self.max_jobs, self.max_machines, self.max_ops = self.n_jobs, m, self.n_jobs * per_job
            self.max_proc = 20 if family == "sd1" else 99

    @classmethod
    def of(cls, instances: list[Instance], label: str = "given") -> InstanceSource:
        """A fixed source over given :class:`Instance` objects (tools and tests)."""
        src = cls.__new__(cls)
        src.family, src.fixed, src.label = "given", list(instances), label
        src.max_jobs = max(i.n_jobs for i in src.fixed)
        src.max_machines = max(i.n_machines for i in src.fixed)
        src.max_ops = max(i.n_ops for i in src.fixed)
        src.max_proc = max(int(i.proc.max()) for i in src.fixed)
        return src

    def __len__(self) -> int:
        return len(self.fixed) if self.fixed is not None else 0

    def draw(self, seed: int | None, options: dict | None, np_random: np.random.Generator) -> Instance:
        options = options or {}
        if self.fixed is not None:
            if "index" in options:
                i = options["index"]
                if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < len(self.fixed):
                    raise ValueError(f"options['index'] must be an integer in 0..{len(self.fixed) - 1}, got {i!r}")
                return self.fixed[int(i)]
            i = int(seed) % len(self.fixed) if seed is not None else int(np_random.integers(len(self.fixed)))
            return self.fixed[i]
        rng = np.random.default_rng(instance_seed(int(seed))) if seed is not None else np_random
        gen = sd1_instance if self.family == "sd1" else sd2_instance
        tag = f"seed{int(seed)}" if seed is not None else "unseeded"
        return gen(self.n_jobs, self.n_machines, rng, name=f"{self.label}/{tag}")


def instance_from_observation(obs: dict, name: str = "") -> Instance:
    """The instance of a run, rebuilt from any observation of either env (its padded static arrays
    ``proc``, ``op_job``, ``op_pos``; padding rows have ``op_job = -1`` and machines beyond the instance's
    are all-zero columns). Trailing machines that no operation can use are indistinguishable from padding
    and dropped (mk06 declares 15 machines, 5 of them unused: the rebuilt instance has 10), which changes
    no schedule. The public problem is the same for every run of a family; each run's instance is public
    through its observations."""
    op_job = np.asarray(obs["op_job"])
    real = op_job >= 0
    proc = np.asarray(obs["proc"])[real]
    used = np.flatnonzero((proc > 0).any(axis=0))
    M = int(used.max()) + 1 if used.size else proc.shape[1]
    job_ops = np.bincount(op_job[real], minlength=int(op_job[real].max()) + 1)
    return Instance(job_ops.astype(np.int64), proc[:, :M].astype(np.int64), name=name)


def pad_static(inst: Instance, N: int, M: int) -> dict[str, np.ndarray]:
    """Padded static instance arrays (``op_job = op_pos = -1`` and ``proc = 0`` on padding rows)."""
    proc = np.zeros((N, M), dtype=np.int64)
    proc[: inst.n_ops, : inst.n_machines] = inst.proc
    op_job = np.full(N, -1, dtype=np.int64)
    op_job[: inst.n_ops] = inst.op_job
    op_pos = np.full(N, -1, dtype=np.int64)
    op_pos[: inst.n_ops] = inst.op_pos
    for a in (proc, op_job, op_pos):
        a.setflags(write=False)
    return {"proc": proc, "op_job": op_job, "op_pos": op_pos}


class FJSPOracle:
    """Evaluation-side quantities of the current instance.

    ``lower_bound`` = max(table LB, ``max_j Σ_{o∈J_j} min_k p_ok``, ``⌈Σ_o min_k p_ok / m⌉``);
    ``reference`` = best known makespan (``bks.json``) or papergym's offline CP-SAT reference
    (``references.json``), ``None`` for a fresh generated instance; ``gap(C) = (C − C_ref)/C_ref`` (negative
    allowed, never clipped). The per-step regret is ``0`` except at an episode's last step, where it is the
    final makespan (``FJSP-v0``) or the incumbent's (``FJSPImprove-v0``) minus ``lower_bound`` (≥ 0), so the
    cumulative regret of a run is ``C − LB``.
    """

    PER_INSTANCE_TABLE = True

    def __init__(self, env: Any):
        self._env = env

    @property
    def instance(self) -> Instance:
        return self._env.instance

    @property
    def ref(self):
        return reference(self.instance.name)

    @property
    def lower_bound(self) -> int:
        r = self.ref
        lb = self.instance.lower_bound()
        if r is not None and r.lb is not None and not r.flag:
            lb = max(lb, r.lb)
        return int(lb)

    def _reference(self) -> tuple[int | None, str]:
        """(value, source). A flagged entry (its source's LB exceeds its UB, so one of them is wrong) falls
        back to DANIEL's csv upper bound where recorded, else no reference."""
        r = self.ref
        if r is None or r.ub is None:
            return None, ""
        if r.flag:
            csv = (r.alt or {}).get("daniel-csv") or {}
            if csv.get("ub") is not None and int(csv["ub"]) >= self.instance.lower_bound():
                return int(csv["ub"]), f"daniel-csv ({r.source} entry flagged: {r.flag})"
            return None, ""
        return int(r.ub), r.source

    @property
    def reference(self) -> int | None:
        return self._reference()[0]

    @property
    def proved_optimal(self) -> bool:
        r = self.ref
        return bool(r is not None and r.optimal and not r.flag)

    def gap(self, makespan: float) -> float:
        ref = self.reference
        return math.nan if ref is None else (float(makespan) - ref) / ref

    def optimal_value(self, t: int) -> float:
        """The makespan lower bound against which regret is measured."""
        return float(self.lower_bound)

    def mean_reward(self, action: Any, t: int) -> float:
        return float(self._env.peek_reward(action))

    def regret(self, action: Any, t: int) -> float:
        """Regret of ``action`` played at round ``t``: booked before the step (``env.t == t - 1``: the runner,
        ``RegretRecorder``) or after it (``env.t == t``: the leaderboard's evaluator books a round while the
        agent computes the next one); both give the same value."""
        env = self._env
        if env.t == t:  # round t already played: the action's effect is the current state
            final = env.final_makespan_after(t)
        elif env.t == t - 1:
            final = env.peek_final_makespan(action, t)
        else:
            raise ValueError(
                f"regret of round {t} asked at round {env.t}: only the round being played or "
                "the one just played can be scored"
            )
        return 0.0 if final is None else float(final - self.lower_bound)

    def instance_metrics(self) -> dict[str, Any]:
        r = self.ref
        inst = self.instance
        return {
            "instance": inst.name,
            "n_jobs": inst.n_jobs,
            "n_machines": inst.n_machines,
            "n_ops": inst.n_ops,
            "lower_bound": self.lower_bound,
            "reference": self.reference,
            "reference_source": self._reference()[1],
            "proved_optimal": self.proved_optimal,
            "alt": {} if r is None else r.alt,
        }

    @staticmethod
    def score_run(
        instance: dict[str, Any], final_regret: float, diagnostics: dict[str, Any], env_kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        """Makespan and gaps of a run from its cumulative regret (``C − LB``). An agent that is a
        reference line rather than a walk of the env (``cpsat`` on ``FJSPImprove-v0``) reports its own
        makespan in ``diagnostics["makespan"]``."""
        if not instance:
            return {}
        lb = float(instance["lower_bound"])
        c = float(diagnostics["makespan"]) if "makespan" in diagnostics else lb + float(final_regret)
        ref = instance.get("reference")
        out: dict[str, Any] = {
            "instance": instance["instance"],
            "reference_source": instance.get("reference_source", ""),
            "makespan": c,
            "lower_bound": lb,
            "reference": math.nan if ref is None else float(ref),
            "gap": math.nan if not ref else (c - ref) / ref,
            "gap_lb": (c - lb) / lb if lb > 0 else math.nan,
        }
        # a makespan below a proven lower bound is impossible: a data error (a wrong bound or instance file)
        # or a broken schedule; the compare table prints an ERROR line for it
        out["below_lower_bound"] = float(c < lb)
        csv = (instance.get("alt") or {}).get("daniel-csv") or {}
        if csv.get("ub"):
            out["gap_daniel_csv"] = (c - csv["ub"]) / csv["ub"]
        return out


def compare_seeds(env_kwargs: dict[str, Any]) -> int | None:
    """Default number of seeds of ``papergym compare`` for these kwargs: every member of a fixed set
    (seed ``i`` plays member ``i``), 1 for a single instance, ``None`` (the env's default) for generators."""
    if env_kwargs.get("instances") is not None:
        return len(load_set(env_kwargs["instances"]))
    if env_kwargs.get("instance") is not None or env_kwargs.get("path") is not None:
        return 1
    return None
