"""``symmpo``: Symmetric Multimodal Preference Optimization (Liu, Song, Li, Wei, Zheng, Yin & Nie, NeurIPS 2025,
arXiv:2506.11712; official code ``Liuwq-bit/SymMPO``, ``muffin/train/trainers.py::dpo_loss``), the paper's method of
``PreferenceHallucination-v0`` (``docs/papers/symmpo.md``; tags: see docs/conventions.md; torch extra).

The shared numerics of the task's solvers live here once — the GRU captioner in torch (:func:`sequence_logprob`,
teacher forcing; the same equations as the evaluator's numpy
:func:`papergym.envs.tasks.preference.np_sequence_logprob`), the losses (:func:`dpo_loss`, :func:`symmpo_loss`,
:func:`mdpo_loss`) and the training loop (:class:`PreferenceOptimizer`); the ``dpo`` and ``mdpo`` baselines
(``papergym.baselines.solvers.preference``) run the same loop with another objective, and the task's reference-policy
training (``train_reference``) reuses the forward.

Loss (the code's ``dpo_loss``). With the sequence log-ratio ``ρ(y | m) = log π_θ(y | m) − log π_ref(y | m)``
(summed token log-probabilities, EOS included; the code's default ``dpo_use_average = False``), ``m′`` the retrieved
similar image and ``y_w′`` its preferred caption, the five log-ratios are ``ρ(y_w|m)``, ``ρ(y_l|m)``, ``ρ(y_w′|m)``,
``ρ(y_w|m′)``, ``ρ(y_w′|m′)`` and, per tuple,

(1) ``L_DPO = −log σ(β [ρ(y_w|m) − ρ(y_l|m)])`` (Rafailov et al. 2023; the code's
    ``losses = -F.logsigmoid(beta_1*logits)``);
(2) ``Δ₁ = ρ(y_w|m) − ρ(y_w′|m)``, ``Δ₂ = ρ(y_w′|m′) − ρ(y_w|m′)`` (the code's ``logits_1``, ``logits_2``): the
    symmetric pairs compare two responses *under the same image*, so the partition functions ``Z(m)`` cancel
    (the paper's consistency argument);
(3) ``L_Pair = −log σ(β Δ₁) − log σ(β Δ₂)``;
(4) ``L_Margin = (Δ₁ − Δ₂)²`` on raw log-ratio differences (no β; the code's "Regular Term");
(5) ``L_Anc = −log σ(β₁ ρ(y_w|m) − δ) − log σ(β₂ ρ(y_w′|m′) − δ)`` (the code's anchor, ``δ = 0`` there);
(6) ``L = L_DPO + λ L_Pair + γ L_Margin + η L_Anc``, averaged over the batch.

Constants (the code's training script): ``β`` = 0.1 (the argument default is 0.5; papergym follows the script),
``β₁ = β₂ = β``, ``λ`` = 0.5, ``γ`` = 1e−4, ``η`` = 1, ``δ`` = 0. With ``λ = γ = η = 0`` the loss *is* ``L_DPO``
(a test checks it bit for bit, and that ``symmpo`` then trains exactly like ``dpo``).

Training [design]: ``π_θ`` starts at ``π_ref`` (the problem's ``ref_weights``), ``π_ref`` is frozen; the reference
log-probabilities of every tuple are computed once (they never change); each batch of ``batch_size`` = 64 tuples
(reshuffled every epoch) runs the policy on the needed (image, caption) passes in one concatenated teacher-forced
call; Adam, ``lr`` = 1e−3, ``epochs`` = the problem's (10; 20 paper-scale; ``min`` with ``budget.max_iterations``).
After every epoch the current weights are reported (``report(weights, iteration=epoch, work=passes)``; work =
cumulative teacher-forced sequence passes, reference passes included); training stops early once
``stop_fraction · budget.max_seconds`` have elapsed (the partial epoch's weights are returned and reported).
The code's lr 5e−6 / cosine / warm-up / weight decay belong to a 7B model and are not reproduced [design].
Randomness: a local ``torch.Generator`` seeded from ``numpy.random.default_rng(seed)`` (batch order only: the start
is ``π_ref``); ``torch.set_num_threads(1)`` during ``solve`` (restored); float32.

Hyperparameters (enter the cell key)
------------------------------------
================  ==========  ===================================================================================
name              default     provenance
================  ==========  ===================================================================================
``lam``           ``0.5``     code: weight λ of ``L_Pair`` (ablation ``lam=0``)
``gamma``         ``1e-4``    code: weight γ of ``L_Margin`` (ablation ``gamma=0``)
``eta``           ``1.0``     code: weight η of ``L_Anc`` (ablation ``eta=0``)
``beta``          ``0.1``     code's training script (argument default 0.5; ablation ``beta ∈ {0.1, 0.5}``)
``beta1``         ``None``    code: anchor temperature on ``ρ(y_w|m)``; ``None`` = ``beta``
``beta2``         ``None``    code: anchor temperature on ``ρ(y_w′|m′)``; ``None`` = ``beta``
``delta``         ``0.0``     anchor offset δ (code: 0)
``lr``            ``1e-3``    [design], Adam
``batch_size``    ``64``      [design]
``epochs``        ``None``    ``None`` = the problem's declared epochs (default 10)
``stop_fraction`` ``0.9``     [design] fraction of ``max_seconds`` after which training stops
================  ==========  ===================================================================================

Measured cost (2-core shared CPU, torch 2.13, one thread, default instance): a 10-epoch ``symmpo`` solve (2,000
tuples, five policy passes each) takes about 13 s alone and 17–21 s in ``papergym bench`` with two workers (``dpo``
7 s, ``mdpo`` 16–24 s), inside the 60 s budget.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.validate import finite_float, in_range, one_of, positive_float, positive_int

__all__ = [
    "PreferenceOptimizer",
    "symmpo_loss",
    "dpo_loss",
    "mdpo_loss",
    "sequence_logprob",
    "policy_params",
    "weights_of",
    "init_policy",
    "weights_from",
    "OBJECTIVES",
    "PASSES",
    "TASK",
]

TASK = "PreferenceHallucination-v0"
PAD = -1
WEIGHT_KEYS = ("embed", "init_w", "init_b", "w_ih", "w_hh", "b_ih", "b_hh", "out_w", "out_b")
OBJECTIVES = ("symmpo", "dpo", "mdpo")
# the (image, caption) passes of each objective, in the order its loss reads them
PASSES = {
    "symmpo": (("m", "y_w"), ("m", "y_l"), ("m", "y_w_prime"), ("m_prime", "y_w"), ("m_prime", "y_w_prime")),
    "dpo": (("m", "y_w"), ("m", "y_l")),
    "mdpo": (("m", "y_w"), ("m", "y_l"), ("m_corrupt", "y_w")),
}


# --------------------------------------------------------------------------------------------- the policy
def weights_from(obj: Any) -> dict[str, np.ndarray]:
    """Weights as a plain dict of arrays from a mapping or a namespace (a sandboxed problem's nested dicts arrive as
    ``types.SimpleNamespace``)."""
    d = obj if isinstance(obj, Mapping) else vars(obj)
    return {k: np.asarray(d[k]) for k in WEIGHT_KEYS}


def init_policy(
    n_objects: int, gen: Any, hidden: int = 64, embed: int = 32, feat_dim: int = 16
) -> dict[str, np.ndarray]:
    """Fresh weights with PyTorch's default laws (embedding ``N(0, 1)``; linear and GRU ``U(±1/√fan)``), drawn from
    the ``torch.Generator`` ``gen`` (float32 numpy arrays)."""
    import torch

    def u(shape: tuple[int, ...], fan: int) -> np.ndarray:
        b = 1.0 / math.sqrt(fan)
        return ((torch.rand(shape, generator=gen) * 2 - 1) * b).numpy()

    V_in, V_out = n_objects + 2, n_objects + 1
    return {
        "embed": torch.randn((V_in, embed), generator=gen).numpy(),
        "init_w": u((hidden, feat_dim), feat_dim),
        "init_b": u((hidden,), feat_dim),
        "w_ih": u((3 * hidden, embed), hidden),
        "w_hh": u((3 * hidden, hidden), hidden),
        "b_ih": u((3 * hidden,), hidden),
        "b_hh": u((3 * hidden,), hidden),
        "out_w": u((V_out, hidden), hidden),
        "out_b": u((V_out,), hidden),
    }


def policy_params(W: Mapping[str, Any], dtype: Any = None, requires_grad: bool = True) -> dict[str, Any]:
    """Torch leaf tensors (copies) of the weights ``W``."""
    import torch

    dtype = dtype or torch.float32
    return {k: torch.tensor(np.asarray(W[k]), dtype=dtype).requires_grad_(requires_grad) for k in WEIGHT_KEYS}


def weights_of(params: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """float32 numpy copies of torch parameters."""
    return {k: params[k].detach().cpu().numpy().astype(np.float32).copy() for k in WEIGHT_KEYS}


def sequence_logprob(params: Mapping[str, Any], feats: Any, tokens: Any) -> Any:
    """``log π(y | m)`` per row (torch; module docstring): ``h₀ = W_init f + b_init``; step ``t`` embeds the previous
    token (BOS first), runs one GRU step (gates ``r, z, n``; ``h = (1 − z) n + z h``) and scores ``y_t`` by
    ``log softmax(W_out h + b_out)``; ``PAD`` (−1) ends a row."""
    import torch

    emb = params["embed"]
    H = params["w_hh"].shape[1]
    bos = emb.shape[0] - 1
    h = feats @ params["init_w"].T + params["init_b"]
    n = tokens.shape[0]
    prev = torch.full((n,), bos, dtype=torch.long)
    total = feats.new_zeros(n)
    for t in range(tokens.shape[1]):
        y = tokens[:, t]
        live = y != PAD
        if not bool(live.any()):
            break
        gi = emb[prev] @ params["w_ih"].T + params["b_ih"]
        gh = h @ params["w_hh"].T + params["b_hh"]
        r = torch.sigmoid(gi[:, :H] + gh[:, :H])
        z = torch.sigmoid(gi[:, H : 2 * H] + gh[:, H : 2 * H])
        cand = torch.tanh(gi[:, 2 * H :] + r * gh[:, 2 * H :])
        h = (1.0 - z) * cand + z * h
        lp = torch.log_softmax(h @ params["out_w"].T + params["out_b"], dim=1)
        yy = torch.where(live, y, torch.zeros_like(y))
        total = total + torch.where(live, lp.gather(1, yy[:, None])[:, 0], torch.zeros_like(total))
        prev = torch.where(live, y, torch.full_like(y, bos))
    return total


# ------------------------------------------------------------------------------------------------- losses
def dpo_loss(rw_m: Any, rl_m: Any, beta: float = 0.1) -> Any:
    """(1) ``−log σ(β [ρ(y_w|m) − ρ(y_l|m)])`` per tuple (Rafailov et al. 2023)."""
    import torch.nn.functional as F

    return -F.logsigmoid(beta * (rw_m - rl_m))


def symmpo_loss(
    rw_m: Any,
    rl_m: Any,
    rwp_m: Any,
    rw_mp: Any,
    rwp_mp: Any,
    *,
    beta: float = 0.1,
    lam: float = 0.5,
    gamma: float = 1e-4,
    eta: float = 1.0,
    beta1: float | None = None,
    beta2: float | None = None,
    delta: float = 0.0,
) -> Any:
    """SymMPO per tuple, from the five log-ratio tensors ``ρ(y_w|m), ρ(y_l|m), ρ(y_w′|m), ρ(y_w|m′), ρ(y_w′|m′)``
    (module docstring, (1)–(6); the code's ``dpo_loss``)."""
    import torch.nn.functional as F

    b1 = beta if beta1 is None else beta1
    b2 = beta if beta2 is None else beta2
    loss = dpo_loss(rw_m, rl_m, beta)  # (1) L_DPO
    d1 = rw_m - rwp_m  # (2) Δ₁: y_w vs y_w′ under m
    d2 = rwp_mp - rw_mp  #     Δ₂: y_w′ vs y_w under m′
    loss = loss + lam * (-F.logsigmoid(beta * d1) - F.logsigmoid(beta * d2))  # (3) λ L_Pair
    loss = loss + gamma * (d1 - d2) ** 2  # (4) γ L_Margin (raw, no β)
    loss = loss + eta * (-F.logsigmoid(b1 * rw_m - delta) - F.logsigmoid(b2 * rwp_mp - delta))  # (5) η L_Anc
    return loss  # (6)


def mdpo_loss(rw_m: Any, rl_m: Any, rw_c: Any, *, beta: float = 0.1, delta: float = 0.0) -> Any:
    """mDPO (Wang et al., EMNLP 2024) per tuple: ``L_DPO − log σ(β [ρ(y_w|m) − ρ(y_w|m_corrupt)])
    − log σ(β ρ(y_w|m) − δ)`` (conditional preference on the image, reward anchor)."""
    import torch.nn.functional as F

    return dpo_loss(rw_m, rl_m, beta) - F.logsigmoid(beta * (rw_m - rw_c)) - F.logsigmoid(beta * rw_m - delta)


# ------------------------------------------------------------------------------------------------- solver
class PreferenceOptimizer:
    """Preference fine-tuning of the captioner from ``π_ref`` with ``objective`` ∈ ``symmpo``, ``dpo``, ``mdpo``
    (module docstring)."""

    def __init__(
        self,
        *,
        seed: Any = None,
        objective: str = "symmpo",
        lam: float = 0.5,
        gamma: float = 1e-4,
        eta: float = 1.0,
        beta: float = 0.1,
        beta1: float | None = None,
        beta2: float | None = None,
        delta: float = 0.0,
        lr: float = 1e-3,
        batch_size: int = 64,
        epochs: int | None = None,
        stop_fraction: float = 0.9,
    ):
        self.seed, self.objective = seed, one_of(objective, "objective", OBJECTIVES)
        self.lam = positive_float(lam, "lam", allow_zero=True)
        self.gamma = positive_float(gamma, "gamma", allow_zero=True)
        self.eta = positive_float(eta, "eta", allow_zero=True)
        self.beta = positive_float(beta, "beta")
        self.beta1 = positive_float(beta1, "beta1", allow_none=True)
        self.beta2 = positive_float(beta2, "beta2", allow_none=True)
        self.delta = finite_float(delta, "delta")
        self.lr = positive_float(lr, "lr")
        self.batch_size = positive_int(batch_size, "batch_size")
        self.epochs = None if epochs is None else positive_int(epochs, "epochs")
        self.stop_fraction = in_range(stop_fraction, "stop_fraction", 0, 1, high_closed=True)

    def loss(self, rho: list[Any]) -> Any:
        """Per-tuple loss of the objective from the log-ratios of its passes (:data:`PASSES` order)."""
        if self.objective == "dpo":
            return dpo_loss(rho[0], rho[1], self.beta)
        if self.objective == "mdpo":
            return mdpo_loss(*rho, beta=self.beta, delta=self.delta)
        return symmpo_loss(
            *rho,
            beta=self.beta,
            lam=self.lam,
            gamma=self.gamma,
            eta=self.eta,
            beta1=self.beta1,
            beta2=self.beta2,
            delta=self.delta,
        )

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict[str, Any]:
        from papergym.agents.base import torch_single_thread

        with torch_single_thread() as torch:
            return self._solve(torch, problem, budget, report)

    def _solve(self, torch: Any, problem: Any, budget: Any, report: Callable[..., None]) -> dict[str, Any]:
        start = time.perf_counter()
        gen = torch.Generator().manual_seed(int(np.random.default_rng(self.seed).integers(2**62)))
        W0 = weights_from(problem.ref_weights)
        ref = policy_params(W0, torch.float32, requires_grad=False)  # frozen π_ref
        pol = policy_params(W0, torch.float32)  # π_θ = π_ref at the start
        src = {
            "m": problem.features,
            "m_prime": problem.features_prime,
            "m_corrupt": problem.features_corrupt,
            "y_w": problem.y_w,
            "y_l": problem.y_l,
            "y_w_prime": problem.y_w_prime,
        }
        feats = {k: torch.as_tensor(np.asarray(src[k], dtype=np.float32)) for k in ("m", "m_prime", "m_corrupt")}
        toks = {k: torch.as_tensor(np.asarray(src[k], dtype=np.int64)) for k in ("y_w", "y_l", "y_w_prime")}
        passes = PASSES[self.objective]
        N = int(feats["m"].shape[0])
        with torch.no_grad():  # reference log-probs, once
            ref_lp = [sequence_logprob(ref, feats[f], toks[y]) for f, y in passes]
        work = float(len(passes) * N)
        opt = torch.optim.Adam(list(pol.values()), lr=self.lr)
        max_it = getattr(budget, "max_iterations", None)
        n_ep = self.epochs if self.epochs is not None else int(getattr(problem, "epochs", 10))
        n_ep = min(n_ep, int(max_it)) if max_it else n_ep
        max_s = getattr(budget, "max_seconds", None)
        t_stop = None if max_s is None else self.stop_fraction * float(max_s)
        bs, P = min(self.batch_size, N), len(passes)
        stopped, loss_v, epoch = "epochs", float("nan"), 0
        for epoch in range(1, n_ep + 1):
            perm = torch.randperm(N, generator=gen)
            tot, cnt = 0.0, 0
            for a in range(0, N, bs):
                idx = perm[a : a + bs]
                B = len(idx)
                lp = sequence_logprob(
                    pol, torch.cat([feats[f][idx] for f, _ in passes]), torch.cat([toks[y][idx] for _, y in passes])
                )
                rho = [lp[k * B : (k + 1) * B] - ref_lp[k][idx] for k in range(P)]  # ρ = log π_θ − log π_ref
                loss = self.loss(rho).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                work += P * B
                tot, cnt = tot + float(loss.detach()) * B, cnt + B
                if not math.isfinite(tot):
                    stopped = "non-finite loss"
                    break
                if t_stop is not None and time.perf_counter() - start >= t_stop:
                    stopped = "max_seconds"
                    break
            loss_v = tot / max(cnt, 1)
            sol = self._solution(pol, epoch, loss_v, stopped, start)
            report(sol, iteration=epoch, work=work)
            if stopped != "epochs":
                return sol
        return sol if n_ep >= 1 else self._solution(pol, 0, loss_v, stopped, start)

    def _solution(self, pol: Mapping[str, Any], epoch: int, loss: float, stopped: str, start: float) -> dict[str, Any]:
        sol: dict[str, Any] = weights_of(pol)
        sol["meta"] = {
            "objective": self.objective,
            "epochs": epoch,
            "loss": loss,
            "stopped": stopped,
            "fit_seconds": time.perf_counter() - start,
        }
        return sol


def _symmpo(*, seed: Any = None, **hp: Any) -> PreferenceOptimizer:
    if "objective" in hp:
        raise ValueError("symmpo has no 'objective' hyperparameter (use the dpo / mdpo solvers)")
    return PreferenceOptimizer(seed=seed, objective="symmpo", **hp)


DEFAULTS = {
    "lam": 0.5,
    "gamma": 1e-4,
    "eta": 1.0,
    "beta": 0.1,
    "beta1": None,
    "beta2": None,
    "delta": 0.0,
    "lr": 1e-3,
    "batch_size": 64,
    "epochs": None,
    "stop_fraction": 0.9,
}

register_solver(
    "symmpo",
    _symmpo,
    tasks=[TASK],
    role="paper",
    description="SymMPO from pi_ref: L_DPO + 0.5 L_Pair (symmetric same-image pairs with the retrieved "
    "m') + 1e-4 L_Margin + L_Anc, beta = 0.1; Adam 1e-3, 10 epochs",
    defaults=DEFAULTS,
    requires=("torch",),
)
