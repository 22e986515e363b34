"""``DistributedRegression-v0``: local SGD under second-order heterogeneity (Patel, Zindari, Stich, Wang,
*Revisiting Consensus Error: A Fine-grained Analysis of Local SGD under Second-order Data Heterogeneity*,
NeurIPS 2025, OpenReview ``u1QFeoxnhW``).

``M`` machines minimise ``F(x) = (1/M) Σ_m F_m(x)`` with linear-regression losses. Generator (this
project's design), for instance seed ``s``:

1. ``Σ = U diag(λ) Uᵀ``, ``U`` Haar-orthogonal, ``λ = 10^{linspace(−1, 0, d)}``;
2. ``G_m = (B_m + B_mᵀ)/2`` (``B_m`` Gaussian), ``E_m = (G_m − Ḡ)/max_m ‖G_m − Ḡ‖_op`` so ``Σ_m E_m = 0`` and
   ``max_m ‖E_m‖_op = 1``; ``Σ_m = Σ + τE_m`` — the instance's **second-order heterogeneity**
   ``max_m ‖∇²F_m − ∇²F‖_op`` is exactly ``τ`` (``τ < 0.1`` keeps ``Σ_m ≻ 0``);
3. ``w̄ ~ N(0, I)``, ``u_m = (g_m − ḡ)/√((1/M) Σ‖g_m − ḡ‖²)``, ``w_m = w̄ + spread·u_m`` (the optimum spread);
4. machine ``m``'s samples: ``a = Σ_m^{1/2} z``, ``z ~ N(0, I_d)``, ``y = aᵀw_m + σ_ε ξ``.

Closed forms (evaluator): ``F_m(x) = ½(x − w_m)ᵀΣ_m(x − w_m) + σ_ε²/2``,
``x* = (Σ_m Σ_m)⁻¹ Σ_m Σ_m w_m``, ``F* = F(x*)``, ``ζ*² = (1/M) Σ_m ‖Σ_m(x* − w_m)‖²``, ``x_0 = 0``.

Public problem (:class:`DistributedProblem`): ``d``, ``M``, ``K`` (local steps), ``R`` (rounds), ``H`` (largest
eigenvalue of any ``Σ_m``), ``mu`` (smallest), ``tau``, ``sigma``, ``x0`` and ``oracle`` — executed by the
evaluator:

* ``oracle.grad(m, x)``: one fresh stochastic gradient ``a(aᵀx − y)`` of machine ``m`` (1 work unit; with
  ``exact_gradients=True`` the population gradient ``Σ_m(x − w_m)`` instead); at most ``K`` per machine
  between communications (a :class:`ProtocolError` otherwise), samples of machine ``m`` drawn in call order
  from its own stream (common random numbers across solvers);
* ``oracle.communicate(vectors)``: one communication round (at most ``R``; ``BudgetExceeded`` after), an
  all-gather: every machine's vectors ``(M, d)`` or ``(M, k, d)`` come back to all; the solver applies its
  server rule (SCAFFOLD sends iterates and control variates together, ``k = 2``).

Both callables are sealed (:func:`~papergym.envs.tasks.sealed.seal`): nothing reachable from the problem
leads back to the oracle or the instance (``x*``, ``w_m``, ``Σ_m`` stay in the evaluator).

Solution: ``x̂`` (array ``(d,)``) or ``{"theta": x̂, ...}`` (other entries, such as a solver's own
``consensus_error``, are ignored: the evaluator measures it). Metrics:

| metric | dir | definition |
|---|---|---|
| ``subopt_ratio`` (primary) | min | ``(F(x̂) − F*)/(F(x_0) − F*)`` (``bench``'s geometric mean = ``10^mean log10``) |
| ``log10_subopt`` | min | ``log10`` of the ratio |
| ``subopt`` | min | ``F(x̂) − F*`` |
| ``rounds_to_eps`` | min | first reported round with ratio ``≤ 1e−3`` (``R + 1`` if never; rounds counted by the oracle) |
| ``reached_eps`` | max | 1 if the final ratio is ``≤ 1e−3`` |
| ``consensus_error`` | min | measured by the oracle: mean over rounds of ``(1/M) Σ_m ‖x_m − x̄‖²`` over the points ``x_m`` of each machine's last gradient query of the round (``k = K − 1``; 0 for the mini-batch baselines and for ``K = 1``) |
| ``diverged`` | — | 1 if ``x̂`` is non-finite or the ratio is ``≥ 1`` (then ``subopt_ratio`` = ``1e300``, the failure value) |
| ``zeta_star``, ``tau`` | — | instance descriptors |

Instances: every ``tau`` × ``spread`` × ``K`` × seed (default ``tau ∈ {0, 0.01, 0.03, 0.08}``,
``spread ∈ {0, 0.1, 1}``, ``K ∈ {1, 10, 50}``, ``d = 50``, ``M = 8``, ``R = 10``, ``σ_ε = 0.5``, dev seeds 0–4).

Why ``R = 10`` (rule: ``R = κ = λ_max(Σ)/λ_min(Σ)``): the local-vs-mini-batch question is about the
communication-limited regime, where mini-batch SGD at its largest stable step ``1/H`` cannot finish the
optimisation in ``R`` rounds (its deterministic term ``(1 − μ/H)^R`` stays large) while local SGD makes ``K``
steps per round (Woodworth, Patel, Srebro, *Minibatch vs Local SGD for Heterogeneous Distributed Learning*,
NeurIPS 2020). With ``R = 100 ≫ κ = 10`` both methods reach the same statistical floor and tie, as that
analysis predicts; ``rounds=100`` still gives that family.
"""  # noqa: E501 - markdown table rows cannot wrap

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from papergym.envs.tasks.base import (
    Budget,
    BudgetExceeded,
    InstanceRef,
    check_floats,
    check_ints,
    instance_params,
    register_task,
    split_instances,
)
from papergym.envs.tasks.haar import haar
from papergym.envs.tasks.sealed import seal

__all__ = [
    "DistributedTask",
    "DistributedProblem",
    "DistributedInstance",
    "FederatedOracle",
    "DistributedEvaluator",
    "ProtocolError",
]

TASK_ID = "DistributedRegression-v0"
N_TEST_SEEDS = 5
EPS = 1e-3
# A ratio at or above this (or a non-finite iterate) is a diverged run: ``x̂`` is no better than the common start
# ``x_0 = 0`` after its rounds. The ratio is normalised by ``F(x_0) − F*``, so 1 is exactly "no progress"; every
# stable method (mini-batch SGD at step ``≤ 1/H``, local SGD, accelerated mini-batch, SCAFFOLD) decreases ``F`` in
# expectation from the first round, and a final ratio of 1 to 1e3 is an unstable step whose growth has not yet
# exploded within the ``R`` rounds.
DIVERGED_RATIO = 1.0
FAIL_RATIO = 1e300  # the failure value of ``subopt_ratio`` for a diverged run
CHUNK = 512


class ProtocolError(ValueError):
    """A solver broke the communication protocol (more than ``K`` local gradients between rounds)."""


def _sym_sqrt(S: np.ndarray) -> np.ndarray:
    w, V = np.linalg.eigh(S)
    return (V * np.sqrt(np.maximum(w, 0.0))) @ V.T


class DistributedInstance:
    """The private instance (module docstring, generator steps 1–3 and the closed forms)."""

    def __init__(self, d: int, M: int, tau: float, spread: float, sigma: float, seed: int):
        self.d, self.M, self.tau, self.spread, self.sigma = d, M, float(tau), float(spread), float(sigma)
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(0,)))
        lam = 10.0 ** np.linspace(-1.0, 0.0, d)
        U = haar(rng, d)
        Sigma = (U * lam) @ U.T
        Gs = [(B + B.T) / 2 for B in rng.standard_normal((M, d, d))]
        Gbar = np.mean(Gs, axis=0)
        dev = [G - Gbar for G in Gs]
        scale = max(np.linalg.norm(E, 2) for E in dev)
        self.E = np.array([E / scale for E in dev])
        self.Sigmas = Sigma[None] + self.tau * self.E
        wbar = rng.standard_normal(d)
        g = rng.standard_normal((M, d))
        gc = g - g.mean(axis=0)
        u = gc / math.sqrt(float(np.mean(np.sum(gc**2, axis=1))))
        self.w = wbar[None] + self.spread * u
        self.sqrt = np.array([_sym_sqrt(S) for S in self.Sigmas])
        A = self.Sigmas.sum(axis=0)
        self.x_star = np.linalg.solve(A, np.einsum("mij,mj->i", self.Sigmas, self.w))
        self.F_star = self.F(self.x_star)
        self.zeta_star = math.sqrt(
            float(np.mean(np.sum(np.einsum("mij,mj->mi", self.Sigmas, self.x_star[None] - self.w) ** 2, axis=1)))
        )
        eig = np.array([np.linalg.eigvalsh(S) for S in self.Sigmas])
        self.H, self.mu = float(eig.max()), float(eig.min())

    def F(self, x: np.ndarray) -> float:
        """``(1/M) Σ_m ½(x − w_m)ᵀΣ_m(x − w_m) + σ²/2``."""
        r = x[None] - self.w
        return 0.5 * float(np.mean(np.einsum("mi,mij,mj->m", r, self.Sigmas, r))) + 0.5 * self.sigma**2

    def grad_m(self, m: int, x: np.ndarray) -> np.ndarray:
        """Population gradient of machine ``m``: ``Σ_m(x − w_m)``."""
        return self.Sigmas[m] @ (x - self.w[m])


class FederatedOracle:
    """The trusted gradient and communication oracle of one solve (module docstring)."""

    def __init__(self, inst: DistributedInstance, K: int, R: int, seed: int, exact: bool = False):
        self.inst, self.K, self.R, self.exact = inst, int(K), int(R), bool(exact)
        self._rngs = [np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(1, m))) for m in range(inst.M)]
        self._buf: list[tuple[np.ndarray, np.ndarray]] = [(np.empty((0, inst.d)), np.empty(0))] * inst.M
        self._pos = [0] * inst.M
        self.local = np.zeros(inst.M, dtype=np.int64)  # gradients since the last communication
        self.rounds = 0
        self.work = 0
        self._last = np.zeros((inst.M, inst.d))  # each machine's last gradient query point this round
        self._cons_sum, self._cons_rounds = 0.0, 0

    def _sample(self, m: int) -> tuple[np.ndarray, float]:
        A, y = self._buf[m]
        if self._pos[m] >= len(y):
            rng = self._rngs[m]
            z = rng.standard_normal((CHUNK, self.inst.d))
            A = z @ self.inst.sqrt[m]
            y = A @ self.inst.w[m] + self.inst.sigma * rng.standard_normal(CHUNK)
            self._buf[m], self._pos[m] = (A, y), 0
        i = self._pos[m]
        self._pos[m] += 1
        return A[i], float(y[i])

    def grad(self, m: Any, x: Any) -> np.ndarray:
        inst = self.inst
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 0 <= m < inst.M:
            raise ValueError(f"oracle.grad: machine must be an integer in [0, {inst.M}), got {m!r}")
        try:
            xv = np.asarray(x, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"oracle.grad: x must be a float array of shape ({inst.d},): {exc}") from None
        if xv.shape != (inst.d,):
            raise ValueError(f"oracle.grad: x must have shape ({inst.d},), got {xv.shape}")
        if self.local[m] >= self.K:
            raise ProtocolError(f"machine {int(m)} asked for more than K = {self.K} gradients between communications")
        if self.rounds >= self.R:
            raise BudgetExceeded(f"all R = {self.R} rounds are used")
        self.local[m] += 1
        self.work += 1
        self._last[m] = xv
        if self.exact:
            return inst.grad_m(int(m), xv)
        a, y = self._sample(int(m))
        with np.errstate(over="ignore", invalid="ignore"):
            return a * (a @ xv - y)

    def communicate(self, vectors: Any) -> np.ndarray:
        inst = self.inst
        try:
            v = np.array(vectors, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"oracle.communicate: vectors must be a float array (M, d) or (M, k, d): {exc}") from None
        if v.ndim not in (2, 3) or v.shape[0] != inst.M or v.shape[-1] != inst.d:
            raise ValueError(
                f"oracle.communicate: vectors must have shape ({inst.M}, {inst.d}) or "
                f"({inst.M}, k, {inst.d}), got {v.shape}"
            )
        if self.rounds >= self.R:
            raise BudgetExceeded(f"all R = {self.R} rounds are used")
        self.rounds += 1
        if np.all(self.local > 0):  # consensus of this round's last query points, measured here
            if np.all(self._last == self._last[0]):
                c = 0.0  # every machine at one point (mini-batch): exactly 0, not a rounding residue
            else:
                with np.errstate(over="ignore", invalid="ignore"):
                    c = float(np.mean(np.sum((self._last - self._last.mean(axis=0)) ** 2, axis=1)))
            self._cons_sum += c if math.isfinite(c) else math.inf
            self._cons_rounds += 1
        self.local[:] = 0
        return v

    @property
    def consensus_error(self) -> float:
        """Mean over the rounds with gradient queries of ``(1/M) Σ_m ‖x_m − x̄‖²`` at each machine's last
        query of the round (NaN before any such round)."""
        return self._cons_sum / self._cons_rounds if self._cons_rounds else float("nan")


@dataclass(frozen=True)
class DistributedOracleView:
    """``problem.oracle``: both calls run in the evaluator."""

    grad: Callable[[int, np.ndarray], np.ndarray]
    communicate: Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class DistributedProblem:
    """The public problem (module docstring)."""

    d: int
    M: int
    K: int
    R: int
    H: float
    mu: float
    tau: float
    sigma: float
    x0: np.ndarray
    oracle: DistributedOracleView

    PRIVATE_FIELDS = ()


class DistributedEvaluator:
    """Private scorer (module docstring); records ``(round, ratio)`` of the reported iterates."""

    def __init__(self, inst: DistributedInstance, oracle: FederatedOracle):
        self.inst, self.oracle = inst, oracle
        self.F0 = inst.F(np.zeros(inst.d))
        self.first_hit: int | None = None

    def evaluate(self, solution: Any) -> dict[str, float]:
        inst = self.inst
        if isinstance(solution, Mapping):
            if "theta" not in solution:
                raise ValueError(f"solution mapping needs a 'theta' entry, got keys {sorted(solution)}")
            solution = solution["theta"]
        try:
            x = np.asarray(solution, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"solution must be a float array of shape ({inst.d},): {exc}") from None
        if x.shape != (inst.d,):
            raise ValueError(f"solution must have shape ({inst.d},), got {x.shape}")
        F = inst.F(x) if np.all(np.isfinite(x)) else float("inf")
        sub = max(F - inst.F_star, 0.0) if math.isfinite(F) else float("inf")
        ratio = sub / (self.F0 - inst.F_star)
        diverged = not (ratio < DIVERGED_RATIO)  # no progress from x_0; NaN / inf included
        if diverged:
            ratio = FAIL_RATIO
        if ratio <= EPS and self.first_hit is None and self.oracle.rounds > 0:
            self.first_hit = self.oracle.rounds
        return {
            "subopt_ratio": ratio,
            "log10_subopt": math.log10(ratio) if ratio > 0 else -300.0,
            "subopt": sub,
            "rounds_to_eps": float(self.first_hit if self.first_hit is not None else self.oracle.R + 1),
            "reached_eps": float(ratio <= EPS),
            "consensus_error": self.oracle.consensus_error,
            "zeta_star": inst.zeta_star,
            "tau": inst.tau,
            "rounds": float(self.oracle.rounds),
            "diverged": float(diverged),
        }


class DistributedTask:
    """``DistributedRegression-v0`` (module docstring). Kwargs: ``tau``, ``spread``, ``local_steps`` (``K``),
    ``d``, ``machines`` (``M``), ``rounds`` (``R``), ``sigma``, ``seeds``, ``exact_gradients``,
    ``max_seconds``."""

    id = TASK_ID
    primary = "subopt_ratio"
    metrics = {
        "subopt_ratio": "min",
        "log10_subopt": "min",
        "subopt": "min",
        "rounds_to_eps": "min",
        "reached_eps": "max",
        "consensus_error": "min",
        "zeta_star": "min",
        "tau": "min",
        "rounds": "max",
        "diverged": "min",
    }
    table_metrics = ("log10_subopt", "rounds_to_eps", "consensus_error", "zeta_star")

    def __init__(
        self,
        tau: Any = (0.0, 0.01, 0.03, 0.08),
        spread: Any = (0.0, 0.1, 1.0),
        local_steps: Any = (1, 10, 50),
        d: int = 50,
        machines: int = 8,
        rounds: int = 10,
        sigma: float = 0.5,
        seeds: Any = (0, 1, 2, 3, 4),
        exact_gradients: bool = False,
        max_seconds: float = 60.0,
    ):
        self.tau = check_floats(tau, "tau", at_least=0.0, below=0.1)
        self.spread = check_floats(spread, "spread", at_least=0.0)
        self.local_steps = check_ints(local_steps, "local_steps", 1)
        self.d = check_ints(d, "d", 1)[0]
        self.machines = check_ints(machines, "machines", 2)[0]
        self.rounds = check_ints(rounds, "rounds", 1)[0]
        self.sigma = check_floats(sigma, "sigma", at_least=0.0)[0]
        self.seeds = check_ints(seeds, "seeds", 0)
        self.exact_gradients = bool(exact_gradients)
        ms = check_floats(max_seconds, "max_seconds", above=0.0)[0]
        K = max(self.local_steps)
        self.default_budget = Budget(
            max_seconds=ms, max_iterations=self.rounds, max_work=self.machines * K * self.rounds
        )

    @staticmethod
    def _key(t: float, s: float, K: int) -> str:
        return f"tau={t:g},spread={s:g}/K={K}"

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        configs = [
            (
                self._key(t, s, K),
                {
                    "tau": t,
                    "spread": s,
                    "K": K,
                    "d": self.d,
                    "M": self.machines,
                    "R": self.rounds,
                    "sigma": self.sigma,
                    "exact": self.exact_gradients,
                },
            )
            for t, s, K in itertools.product(self.tau, self.spread, self.local_steps)
        ]
        return split_instances(TASK_ID, split, configs, self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[DistributedProblem, DistributedEvaluator]:
        p = instance_params(ref, TASK_ID)
        missing = {"tau", "spread", "K", "d", "M", "R", "sigma"} - set(p)
        if missing:
            raise ValueError(f"instance {ref.name!r}: params miss {sorted(missing)}")
        inst = DistributedInstance(
            check_ints(p["d"], "d", 1)[0],
            check_ints(p["M"], "M", 2)[0],
            check_floats(p["tau"], "tau", at_least=0.0, below=0.1)[0],
            check_floats(p["spread"], "spread", at_least=0.0)[0],
            check_floats(p["sigma"], "sigma", at_least=0.0)[0],
            ref.seed,
        )
        K, R = check_ints(p["K"], "K", 1)[0], check_ints(p["R"], "R", 1)[0]
        oracle = FederatedOracle(inst, K, R, ref.seed, exact=bool(p.get("exact", False)))
        problem = DistributedProblem(
            d=inst.d,
            M=inst.M,
            K=K,
            R=R,
            H=inst.H,
            mu=inst.mu,
            tau=inst.tau,
            sigma=inst.sigma,
            x0=np.zeros(inst.d),
            oracle=DistributedOracleView(
                grad=seal(oracle.grad, "oracle.grad"), communicate=seal(oracle.communicate, "oracle.communicate")
            ),
        )
        return problem, DistributedEvaluator(inst, oracle)

    def report(self, runs: Any) -> str:
        """Mean over seeds of the final ``log10`` suboptimality (the geometric mean ``bench``'s summary ranks
        by) per (spread, K) and τ for every solver, and local SGD minus mini-batch SGD (negative: local SGD
        ahead) — the paper's regime table; its last line aggregates all cells like the summary."""
        from papergym.envs.tasks.distributed_regression.report import regime_table

        return regime_table(runs)

    def figures(self, runs: Any, folder: Any) -> list[Any]:
        """``subopt_vs_tau``: final suboptimality against τ, one panel per (spread, K), local vs mini-batch SGD
        and the others (PNG + SVG)."""
        from papergym.envs.tasks.distributed_regression.report import tau_figure

        return tau_figure(runs, folder)


register_task(TASK_ID, DistributedTask)
