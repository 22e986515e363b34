"""What each leaderboard evaluates: the board configuration of every env and task, the evaluator's
configuration (the secret), and the version of a board.

Board configuration
-------------------
An **env board** (:class:`EnvBoardConfig`) scores agents on *strata*: instance families (env kwargs),
each played for ``horizon`` rounds on ``seeds`` hidden test seeds. The ranked metric is the final
*regret* of the paper's notion: the cumulative dynamic regret ``R_T``, or the static pseudo-regret for
families whose oracle tracks it (``MSetSemiBandit-v0``'s ``oblivious-switching``). Every family draws
its randomness (peaks, phases, functions, hidden sets) from the hidden seed, and the ``ProblemSpec`` an
agent receives carries no family name, so hard-coding an instance gains nothing.

A **task board** (:class:`TaskBoardConfig`) scores solvers on the task's ``test`` instances (the task
draws their seeds from the secret), optionally restricted by task kwargs (``sizes``), with the task's
default budget; the ranked metric is the task's ``primary``. Strata are the instance names without the
seed part (``L1/n=100``), seeds the test seeds of each.

``references`` names the registered agents/solvers ``papergym leaderboard refresh`` scores (default:
every one with role ``paper`` or ``baseline``, plus ``oracle`` / ``reference`` roles as unranked
reference lines); ``skip_references`` those left out by default because of their cost (named in the
docs; ``refresh --include NAME`` adds them).

The evaluator's configuration
-----------------------------
A JSON file (``$PAPERGYM_EVALUATOR_CONFIG``, default ``<user config dir>/papergym/evaluator.json``,
created with mode 0600 on first use)::

    {"secret": "<64 hex digits>",
     "boards": {"NonStatLipschitz-v0": {"horizon": 20000, "seeds": 10}}}

``secret`` is the HMAC key of the test seeds (``$PAPERGYM_TEST_SECRET`` overrides it). It never goes
into the repository, the store, or a sandbox. ``boards`` overrides fields of the default board
configurations (a shared board's operator sets its own; tests use small ones).

Version
-------
A board's version is a hash of the env/task source, the board configuration and the result format:
results are only compared within a version, and changing any of them starts a fresh board (older
results stay in the store, shown as stale).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import secrets as _secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "BOARD_FORMAT",
    "CONFIG_ENV",
    "DEFAULT_BOARDS",
    "EnvBoardConfig",
    "EvaluatorConfig",
    "TaskBoardConfig",
    "board_config",
    "board_ids",
    "board_version",
    "load_evaluator_config",
    "stratum_seeds",
]

CONFIG_ENV = "PAPERGYM_EVALUATOR_CONFIG"
BOARD_FORMAT = 1  # bump when what a run stores changes


@dataclass(frozen=True)
class EnvBoardConfig:
    """Board of an environment (module docstring)."""

    benchmark_id: str
    strata: Mapping[str, Mapping[str, Any]]  # stratum name -> env kwargs
    seeds: int = 20
    horizon: int | None = None  # None: the env's default
    description: str = ""
    skip_references: tuple[str, ...] = ()
    kind: str = "env"
    metric: str = "regret"
    direction: str = "min"

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["strata"] = {k: dict(v) for k, v in self.strata.items()}
        d["skip_references"] = list(self.skip_references)
        return d


@dataclass(frozen=True)
class TaskBoardConfig:
    """Board of a solver task (module docstring)."""

    benchmark_id: str
    task_kwargs: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    skip_references: tuple[str, ...] = ()
    kind: str = "task"
    metric: str = ""  # "" -> the task's primary
    direction: str = ""  # "" -> the task's direction of the primary
    profile_cost: str = "par2_seconds"  # performance profiles: cost of a run (inf when it failed)
    profile_success: str = "passed_gate"  # ... a run counts as solved when this metric is >= 1 ("": when it ended ok)

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["task_kwargs"] = dict(self.task_kwargs)
        d["skip_references"] = list(self.skip_references)
        return d


DEFAULT_BOARDS: dict[str, EnvBoardConfig | TaskBoardConfig] = {
    "NonStatLipschitz-v0": EnvBoardConfig(
        "NonStatLipschitz-v0",
        strata={
            "two-peak-cyclic": {"instance": "two-peak-cyclic"},
            "piecewise-tents": {"instance": "piecewise-tents"},
            "drifting-peak": {"instance": "drifting-peak"},
        },
        seeds=20,
        horizon=100_000,
        description="Non-stationary Lipschitz bandit on [0,1]: dynamic regret R_T at T = 100,000 on three "
        "families (the paper's two-peak cyclic, piecewise tents, a drifting peak), 20 hidden "
        "seeds each.",
    ),
    "NoiseFreeGPBandit-v0": EnvBoardConfig(
        "NoiseFreeGPBandit-v0",
        strata={
            "se-1d-rkhs": {"kernel": "se", "d": 1, "instance": "rkhs-sum"},
            "matern-2.5-2d-rkhs": {"kernel": "matern-2.5", "d": 2, "instance": "rkhs-sum"},
            "matern-1.5-1d-gp": {"kernel": "matern-1.5", "d": 1, "instance": "gp-interpolant"},
        },
        seeds=20,
        description="Noise-free GP bandit: cumulative regret R_T at the env's default horizon on three "
        "kernel / dimension / family combinations, 20 hidden seeds each.",
    ),
    "MSetSemiBandit-v0": EnvBoardConfig(
        "MSetSemiBandit-v0",
        strata={
            "stochastic": {"instance": "stochastic", "d": 10, "m": 3},
            "stochastically-constrained-adversarial": {
                "instance": "stochastically-constrained-adversarial",
                "d": 10,
                "m": 3,
            },
            "oblivious-switching": {"instance": "oblivious-switching", "d": 10, "m": 3},
        },
        seeds=20,
        horizon=10_000,
        description="m-set semi-bandit (d = 10, m = 3): pseudo-regret at n = 10,000 in the stochastic, "
        "stochastically constrained adversarial and oblivious-switching regimes (static regret "
        "against the best fixed set where the means switch), 20 hidden seeds each.",
    ),
    "FJSP-v0": EnvBoardConfig(
        "FJSP-v0",
        strata={
            "sd2-10x5": {"family": "sd2", "n_jobs": 10, "n_machines": 5},
            "sd2-20x10": {"family": "sd2", "n_jobs": 20, "n_machines": 10},
        },
        seeds=20,
        description="Flexible job shop, constructive: C_max minus the instance's lower bound (the regret at "
        "the last decision), on fresh SD2 instances (10x5 and 20x10) drawn from 20 hidden seeds each.",
    ),
    "FJSPImprove-v0": EnvBoardConfig(
        "FJSPImprove-v0",
        strata={"sd2-10x5": {"family": "sd2", "n_jobs": 10, "n_machines": 5, "init": "sampled-dispatch"}},
        seeds=20,
        horizon=100,
        description="Flexible job shop, improvement: the incumbent's C_max minus the instance's lower bound "
        "after T = 100 moves from the sampled-dispatch start (best of 100 sampled dispatching "
        "rollouts, about 12% above the references on SD2 10x5, like MIStar's DANIEL-sampled start), "
        "on fresh SD2 10x5 instances from 20 hidden seeds.",
    ),
    "EntropicMatrixGame-v0": EnvBoardConfig(
        "EntropicMatrixGame-v0",
        strata={
            "random": {"instance": "random", "role": "both"},
            "random-cold": {"instance": "random", "sigma": 0.1, "sigma_max": 0.1, "a": 0.05, "b": 0.05, "role": "both"},
        },
        seeds=20,
        horizon=200,
        description="Entropic matrix games in self-play (the submission moves both players): the cumulative "
        "NI error of the iterates over 200 best-response evaluations, on 5x5 games with non-convex / "
        "non-concave quadratic terms drawn from 20 hidden seeds, at sigma = 1 and sigma = 0.1.",
    ),
    "EntropicMarkovGame-v0": EnvBoardConfig(
        "EntropicMarkovGame-v0",
        strata={
            "random": {"instance": "random", "role": "both"},
            "random-cold": {"instance": "random-cold", "role": "both"},
        },
        seeds=20,
        horizon=200,
        description="Entropy-regularised zero-sum Markov games in self-play: the cumulative NI error of the "
        "policy pairs over 200 steps (3 states, 2 x 2 actions, gamma = 0.9; tau = 1 and 0.1), "
        "games drawn from 20 hidden seeds.",
    ),
    "PowerLawRandomFeatures-v0": TaskBoardConfig(
        "PowerLawRandomFeatures-v0",
        task_kwargs={"d": [100], "steps": 20_000},
        profile_cost="excess_ratio",
        profile_success="stable",
        description="One-pass training on power-law random features: the excess-risk ratio (P(theta_T) - P_inf) / "
        "(P(theta_0) - P_inf) after T = 20,000 single-sample gradients from the evaluator's oracle, "
        "at four (alpha, beta) pairs, d = 100, 5 hidden feature seeds each.",
    ),
    "DistributedRegression-v0": TaskBoardConfig(
        "DistributedRegression-v0",
        task_kwargs={"local_steps": [10, 50], "spread": [0.1, 1.0]},
        profile_cost="subopt_ratio",
        profile_success="reached_eps",
        description="Distributed linear regression on 8 machines, 100 communication rounds: the final "
        "suboptimality ratio (F - F*)/(F(x0) - F*) over second-order heterogeneity tau in {0, 0.01, "
        "0.03, 0.08}, optimum spread 0.1 and 1, K = 10 and 50 local gradients per round, 5 hidden "
        "seeds each.",
    ),
    "DeepRegression-v0": TaskBoardConfig(
        "DeepRegression-v0",
        task_kwargs={"family": ["teacher", "random"], "activation": "leaky-relu", "depth": [3, 5], "max_sweeps": 500},
        profile_cost="train_loss",
        profile_success="solved",
        description="Deep leaky-ReLU regression to zero training loss (n = 200 <= d_in = 256): the training loss "
        "recomputed from the reported weights after 500 sweeps / epochs, teacher and random labels, "
        "depth 3 and 5, 5 hidden seeds each.",
    ),
    "LowRankRecovery-v0": TaskBoardConfig(
        "LowRankRecovery-v0",
        task_kwargs={"kappa": [1, 100], "kappa_H": [100], "rank": [3], "max_calls": 2000},
        profile_cost="par2_iters",
        profile_success="solved",
        description="Ill-conditioned low-rank sensing and regression (40 x 40, rank 3): oracle calls to relative "
        "error 1e-6 (PAR-2 over 2,000 calls) at kappa = 1 and 100 (regression: kappa_H = 100), "
        "5 hidden seeds each.",
    ),
    "DecentralizedBilevel-v0": TaskBoardConfig(
        "DecentralizedBilevel-v0",
        task_kwargs={"family": ["syn", "digits"], "graph": ["ring", "er"], "heterogeneity": [1.0]},
        # ranked by the upper-level loss, not by the task's primary |grad Phi|^2: the hypergradient vanishes on
        # the flat region x -> +inf (infinite ridge, y* = 0), so a submission returning x = 1e6 without any work
        # would score ~1e-23 there; the upper-level loss cannot be gamed that way
        metric="val_loss",
        direction="min",
        profile_cost="val_loss",
        profile_success="",
        description="Decentralized bilevel hyperparameter tuning on 10 agents (ring and Erdos-Renyi graphs, "
        "heterogeneous data): the upper-level (validation) loss f(x_bar, y*(x_bar)) / c_f of the agents' "
        "average after T rounds (2,000 ridge / 1,000 digits logistic regression), one setting across "
        "the scale pairs c_l:c_f in {1:1, 10:0.1, 0.1:10} (what rewards parameter-freeness), 5 hidden "
        "seeds each. The squared hypergradient norm is stored with every run but not ranked: it is "
        "near zero on the flat region of huge ridge weights, where nothing has been learned.",
    ),
    "SimpleBilevel-v0": TaskBoardConfig(
        "SimpleBilevel-v0",
        profile_cost="par2_calls",
        profile_success="stationary",
        description="Nonconvex simple bilevel problems (min f over argmin g): work units (one (grad f, grad g) "
        "pair = 1) until a reported iterate is (1e-3, 1e-3)-stationary, PAR-2 over 1e5 units, on the "
        "circle, balanced factorisation, min-norm network and min-norm regression families, 5 hidden "
        "seeds each.",
    ),
    "SubspaceDisentangle-v0": TaskBoardConfig(
        "SubspaceDisentangle-v0",
        task_kwargs={"family": ["ls-gmm"], "supervision": ["labels", "views"], "n": [4000], "angle": [0.0]},
        profile_cost="subspace_error",
        profile_success="",
        description="Disentangling a latent-subspace Gaussian mixture (D = 16, 2-D content and style subspaces, style "
        "variance above content variance) under weak supervision (style labels, or paired views sharing "
        "the style), n = 4,000: the disentangle score, mean of 1 - subspace error ||U_hat U_hat^T - "
        "U U^T||_F / 2, content accuracy and style accuracy of 1,000 style transfers, 5 hidden seeds "
        "each; the oracle (true U, exact score) is a reference line.",
    ),
    "PointCloudPH-v0": TaskBoardConfig(
        "PointCloudPH-v0",
        task_kwargs={"families": ["fidelity"], "shapes": ["cheese", "torus"], "fidelity_n": [10_000, 30_000]},
        skip_references=("flooder",),
        profile_cost="par2_seconds",
        profile_success="valid",
        description="Persistent homology (H0-H2) of 3-D point clouds: PAR-2 seconds (wall time of construction "
        "+ persistence when the diagrams are valid, twice the 60 s budget otherwise) on swiss cheese "
        "(6 voids) and noisy tori at N = 10^4 and 3*10^4, 5 hidden seeds each. Valid: the voids / "
        "Betti signal recovered and the bottleneck distance to the Alpha diagram within 0.3 r_lo "
        "in every dimension. The authors' flooder package is a reference, not scored by default "
        "(`refresh --include flooder`).",
    ),
    "FeatureStaircase-v0": TaskBoardConfig(
        "FeatureStaircase-v0",
        task_kwargs={"setting": ["diagonal-linear", "linear"], "max_seconds": 0.25},
        # pesme-flammarion equals agf to rounding on diagonal nets (S - 2 log(1/alpha) = O(alpha^4)) and has no rule
        # for dense linear nets; the 0.25 s budget (agf needs <= 10 ms) leaves no room to simulate the dynamics
        skip_references=("pesme-flammarion",),
        profile_cost="staircase_error",
        profile_success="",
        description="Predict the loss staircase of gradient descent from small initialisation without simulating "
        "it: the staircase error (log-ratio of drop times + log-ratio of plateau levels + relative "
        "count error + Kendall order term) against GD run by the evaluator (10^6 iterations, lr 1e-3) "
        "on diagonal linear nets (d = 5, 10; covariance power a = 0.5, 1, 2; alpha = 1e-2, 1e-4, "
        "1e-8) and two-layer linear nets (d = 4, 8; init 1e-8), 5 hidden seeds each, 0.25 s per "
        "prediction (integrating the gradient flow takes 0.4-0.6 s, GD several seconds).",
    ),
    "NystromODE-v0": TaskBoardConfig(
        "NystromODE-v0",
        task_kwargs={"sizes": [100, 1000]},
        skip_references=("pinn",),
        description="Initial-value problems solved by collocation: PAR-2 seconds (wall time of a solve that "
        "passes the accuracy gate, twice the 60 s budget otherwise) over the 16-problem suite at "
        "n = 100 and 1000, 5 hidden parameter seeds each. The PINN baseline is not scored by "
        "default (each solve takes up to the full budget); `refresh --include pinn` adds it.",
    ),
    "LipschitzApprox-v0": TaskBoardConfig(
        "LipschitzApprox-v0",
        task_kwargs={"families": ["approx"], "dims": [2, 5], "targets": ["f1", "f2", "f3", "f4"], "epochs": 200},
        profile_cost="error",
        profile_success="certified",
        description="Certified 1-Lipschitz regression on [-1, 1]^d (d = 2 and 5; |x1|, distance to 5 points, a "
        "max-min of 4 planes, sin(4 w.x)/4; 4,096 samples, 200 epochs, 60 s): the test RMSE / std of "
        "the target of the submitted network, 1.0 unless its certified Lipschitz bound (exact spectral "
        "norms over a fixed layer vocabulary) is <= 1, 5 hidden seeds each. The uncertified "
        "mlp-unconstrained is a reference line.",
    ),
    "ContinualDomains-v0": TaskBoardConfig(
        "ContinualDomains-v0",
        task_kwargs={"hetero": [False, True]},
        profile_cost="final_error",
        profile_success="",
        description="Multi-domain continual learning on 8x8 digits (original, rotated, inverted, pixel-permuted, "
        "noisy-blurred, contrast-compressed; plus wine, breast-cancer and iris projected to 64-d), in a "
        "seeded order, 5 epochs per domain, 60 s: the final accuracy A_T averaged over all domains after "
        "the last one, with the stand-in backbone shipped in the problem, 5 hidden seeds each. The "
        "evaluator drives the stream (training data one domain at a time, unlabelled test batches of "
        "every domain shuffled after each stage, no domain ids) and scores its own records of the "
        "answers, so no submission sees a test label or can return a score; test images never occur in "
        "any training set. joint (cumulative training on all data seen) is a reference line.",
    ),
    "PreferenceHallucination-v0": TaskBoardConfig(
        "PreferenceHallucination-v0",
        task_kwargs={"sizes": ["default"]},
        profile_cost="chair_i",
        profile_success="",
        description="Preference fine-tuning of a toy GRU captioner (12 objects, 3 co-occurring pairs) that "
        "hallucinates absent co-occurrence partners, from 2,000 public preference tuples and the shipped "
        "reference policy: F1 of (1 - CHAIR_i) and recall of the submitted weights' greedy captions on "
        "1,000 private test scenes drawn per hidden seed (5 seeds); the weights are scored by the "
        "evaluator's own decoder, so no caption can be hand-written.",
    ),
    "RLDataSelection-v0": TaskBoardConfig(
        "RLDataSelection-v0",
        task_kwargs={},
        # full-data trains on the whole pool (10x the RL compute of a ranked entry); `refresh --include full-data`
        skip_references=("full-data",),
        profile_cost="select_seconds",
        profile_success="",
        description="RL data selection for a partially competent arithmetic Transformer (shipped weights): choose "
        "k = 400 of 4,000 public a+b / a-b problems (1-4 digits) in 30 s, through a policy served and "
        "counted by the evaluator (token-forwards, max_work = 10x one pass); ranked by the exact-match "
        "greedy accuracy on 1,000 private test problems after the evaluator's own fixed GRPO run on the "
        "selection, 5 hidden seeds. The solution is only indices (count, range and duplicates checked), "
        "training and testing happen in the evaluator, and the test problems are drawn from the hidden "
        "seed, so nothing but the choice of data can change the score. The recipe separates selections: "
        "on the full pool it raises test accuracy by 0.059 +- 0.008 over the dev seeds.",
    ),
}


# benchmarks without a board, and why (a board needs instances that a submission cannot know in advance)
NO_BOARD = {
    "EntropicMeanField-v0": "its problems are deterministic (the seed does not change the instance), so a "
    "submission could hard-code the minimiser; compare agents locally with papergym compare",
}


def board_ids() -> list[str]:
    """Every benchmark with a board: each registered env and task except those in :data:`NO_BOARD`."""
    import papergym.envs as penvs
    from papergym.envs.tasks.base import list_tasks

    return sorted((set(penvs.list_envs()) | set(list_tasks())) - set(NO_BOARD))


# ------------------------------------------------------------------------------------ evaluator config
@dataclass(frozen=True)
class EvaluatorConfig:
    """The evaluator's private configuration (module docstring)."""

    path: Path
    secret: str | None
    boards: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def config_path() -> Path:
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env)
    from platformdirs import user_config_dir

    return Path(user_config_dir("papergym")) / "evaluator.json"


def load_evaluator_config(*, create_secret: bool = False) -> EvaluatorConfig:
    """The evaluator's configuration. ``$PAPERGYM_TEST_SECRET`` overrides the file's secret. With
    ``create_secret``, a missing secret is generated (``secrets.token_hex(32)``) and saved, the file
    being created with mode 0600. A malformed file is a ``ValueError`` naming it."""
    from papergym.envs.tasks.base import SECRET_ENV

    path = config_path()
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"evaluator config {path}: not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise ValueError(f"evaluator config {path}: expected a JSON object, got {type(data).__name__}")
        unknown = sorted(set(data) - {"secret", "boards"})
        if unknown:
            raise ValueError(f"evaluator config {path}: unknown key(s) {unknown}; valid: secret, boards")
    boards = data.get("boards", {}) or {}
    if not isinstance(boards, dict) or not all(isinstance(v, dict) for v in boards.values()):
        raise ValueError(f"evaluator config {path}: 'boards' must map benchmark ids to objects")
    secret = os.environ.get(SECRET_ENV) or data.get("secret")
    if secret is not None and (not isinstance(secret, str) or len(secret) < 16):
        raise ValueError(f"evaluator config {path}: 'secret' must be a string of at least 16 characters")
    if secret is None and create_secret:
        secret = _secrets.token_hex(32)
        data["secret"] = secret
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, stat.S_IRUSR | stat.S_IWUSR)
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, indent=1)
        os.replace(tmp, path)
    return EvaluatorConfig(path=path, secret=secret, boards=boards)


def board_config(benchmark_id: str, overrides: Mapping[str, Any] | None = None) -> EnvBoardConfig | TaskBoardConfig:
    """The board configuration of ``benchmark_id``: the default, with the evaluator config's fields
    (or ``overrides``) replacing it. A benchmark without a default board (an env registered later) gets
    one stratum of its default kwargs, 20 seeds. Unknown fields are a ``ValueError``."""
    if benchmark_id in NO_BOARD:
        raise ValueError(f"{benchmark_id} has no leaderboard: {NO_BOARD[benchmark_id]}")
    base = DEFAULT_BOARDS.get(benchmark_id)
    if base is None:
        from papergym.envs.tasks.base import list_tasks

        base = (
            TaskBoardConfig(benchmark_id)
            if benchmark_id in list_tasks()
            else EnvBoardConfig(benchmark_id, strata={"default": {}})
        )
    if overrides is None:
        overrides = load_evaluator_config().boards.get(benchmark_id, {})
    if not overrides:
        return base
    names = {f.name for f in dataclasses.fields(base)} - {"benchmark_id", "kind"}
    bad = sorted(set(overrides) - names)
    if bad:
        raise ValueError(f"board override(s) {bad} for {benchmark_id} are not fields; valid: {sorted(names)}")
    kw = dict(overrides)
    if "skip_references" in kw:
        kw["skip_references"] = tuple(kw["skip_references"])
    cfg = dataclasses.replace(base, **kw)
    if isinstance(cfg, EnvBoardConfig):
        if not cfg.strata or not all(isinstance(v, Mapping) for v in cfg.strata.values()):
            raise ValueError(f"board {benchmark_id}: 'strata' must map names to env kwargs")
        if isinstance(cfg.seeds, bool) or not isinstance(cfg.seeds, int) or cfg.seeds < 1:
            raise ValueError(f"board {benchmark_id}: 'seeds' must be a positive integer, got {cfg.seeds!r}")
        if cfg.horizon is not None and (
            isinstance(cfg.horizon, bool) or not isinstance(cfg.horizon, int) or cfg.horizon < 1
        ):
            raise ValueError(f"board {benchmark_id}: 'horizon' must be a positive integer, got {cfg.horizon!r}")
    return cfg


def _source_hash(benchmark_id: str, kind: str) -> str:
    """SHA-256 of the code (:func:`code_fingerprint`) of the env/task module **and of every papergym env module
    it uses** (transitively, through the names it imports), so a change in e.g. the start-solution rule an env
    imports starts a fresh board too, while a documentation edit does not."""
    import importlib
    import inspect
    import sys

    if kind == "task":
        from papergym.envs.tasks.base import TASK_MODULES, check_task_id

        mod = importlib.import_module(TASK_MODULES[check_task_id(benchmark_id)])
    else:
        import gymnasium as gym

        import papergym.envs as penvs

        spec = gym.spec(penvs.check_env_id(benchmark_id))
        mod = importlib.import_module(spec.entry_point.split(":")[0])
    seen, todo = {mod.__name__: mod}, [mod]
    while todo:
        for obj in list(vars(todo.pop()).values()):
            name = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", None)
            if isinstance(name, str) and name.startswith("papergym.envs") and name not in seen and name in sys.modules:
                seen[name] = sys.modules[name]
                todo.append(sys.modules[name])
    h = hashlib.sha256()
    for name in sorted(seen):
        path = inspect.getsourcefile(seen[name])
        if path is None:  # pragma: no cover - compiled module
            continue
        h.update(name.encode() + b"\0")
        with open(path, "rb") as fh:
            h.update(code_fingerprint(fh.read()))
    return h.hexdigest()


def code_fingerprint(source: bytes | str) -> bytes:
    """What of a module's source can change a score: its syntax tree without docstrings, comments, layout or
    line numbers (``ast.dump``). Editing documentation therefore keeps a board's version; any change to code,
    a constant or a default starts a fresh board."""
    import ast

    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False).encode()


def board_version(cfg: EnvBoardConfig | TaskBoardConfig) -> str:
    """Hash of the env/task source, the board configuration and :data:`BOARD_FORMAT` (16 hex)."""
    payload = json.dumps(
        {"source": _source_hash(cfg.benchmark_id, cfg.kind), "config": cfg.as_dict(), "format": BOARD_FORMAT},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def stratum_seeds(benchmark_id: str, stratum: str, role: str, k: int, secret: str) -> list[int]:
    """The ``k`` hidden seeds of ``stratum`` for ``role`` (``"env"``: the instance and noise; ``"agent"``:
    the agent's own generator, independent of the instance so it reveals nothing about it)."""
    from papergym.envs.tasks.base import hidden_seeds

    return hidden_seeds(benchmark_id, f"{stratum}/{role}", k, secret=secret)
