"""MIStar inference without torch: the policy's forward pass for **one** solution graph in dense numpy.

The search (:class:`~.agent.Searcher`) scores one solution per step. Through torch and PyG that costs about
3 ms on a 50-operation instance, nearly all of it per-call overhead (about 60 module calls and scatter
kernels on 50 x 64 tensors), while the neighbourhood's exact pricing costs microseconds. This module
evaluates the same network as :class:`~.model.MIStarPolicy` (same weights, same equations; the module
docstring of :mod:`.model` states them) with the operation graph as small dense matrices:

* GIN channel: ``μ^l = ReLU(MLP^l((1 + ε^l) μ^{l−1} + A μ^{l−1}))`` with ``A[i, j]`` the number of job and
  machine arcs (both directions) ``j → i`` — PyG's ``GINConv`` sums over edges, so a pair linked by a job
  arc *and* a machine arc counts twice here too;
* GAT channel: ``α_OU ∝ m_OU exp(LeakyReLU_{0.2}(a_dst·Wν_O + a_src·Wν_U))`` over the predecessors and the
  operation itself (``m_OU`` the arc multiplicity, 1 for the self-loop), ``ν^l = ReLU(Σ_U α_OU Wν_U + b)``;
* machines: the bipartite GAT over the operations each machine processes, plus the root map;
* the decoder on the legal pairs only, its first layer split per component (as in the torch module).

Float32 throughout like torch's CPU kernels; :func:`max_logit_error` checks the two against each other
(the tests require agreement to 1e-4 on every candidate). The value and auxiliary heads are training-only
and are not evaluated here.
"""

from __future__ import annotations

import numpy as np

from papergym.envs.scheduling.fjsp.graph import Evaluation, Moves, Solution
from papergym.envs.scheduling.fjsp.hetero import machine_features, op_features
from papergym.envs.scheduling.fjsp.instance import Instance

__all__ = ["NumpyPolicy", "max_logit_error"]


def _relu(a: np.ndarray) -> np.ndarray:
    return np.maximum(a, 0.0, out=a)


def _attend(logit: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """Row-wise softmax of ``LeakyReLU_{0.2}(logit)`` weighted by the arc multiplicities ``mult`` (0 = no arc);
    rows without arcs are all zero."""
    e = np.where(logit > 0, logit, 0.2 * logit)
    e = np.where(mult > 0, e, -np.inf)
    top = e.max(axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    w = mult * np.exp(e - top)
    s = w.sum(axis=1, keepdims=True)
    return w / np.where(s > 0, s, 1.0)


class NumpyPolicy:
    """The pair scores of a :class:`~.model.MIStarPolicy` computed in numpy (module docstring).

    ``NumpyPolicy(policy)`` copies the weights once; call :meth:`logits` per solution. ``memory`` mirrors the
    torch policy: without memory the votes are ignored (zeros)."""

    def __init__(self, policy) -> None:
        sd = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in policy.state_dict().items()}
        self.memory = bool(policy.memory)
        self.layers = int(policy.config["layers"])

        def lin(name: str, bias: bool = True):
            w = np.ascontiguousarray(sd[f"{name}.weight"].T)
            return (w, sd[f"{name}.bias"]) if bias else (w, None)

        e = "encoder"
        self.op_in, self.m_in = lin(f"{e}.op_in"), lin(f"{e}.m_in")
        self.gin = [
            (1.0 + float(sd[f"{e}.gin.{i}.eps"][0]), lin(f"{e}.gin.{i}.nn.0"), lin(f"{e}.gin.{i}.nn.2"))
            for i in range(self.layers)
        ]
        self.gat = [
            (
                lin(f"{e}.gat.{i}.lin", False)[0],
                sd[f"{e}.gat.{i}.att_src"].reshape(-1),
                sd[f"{e}.gat.{i}.att_dst"].reshape(-1),
                sd[f"{e}.gat.{i}.bias"],
            )
            for i in range(self.layers)
        ]
        self.m_src = lin(f"{e}.m_att.lin_src", False)[0]
        self.m_dst = lin(f"{e}.m_att.lin_dst", False)[0]
        self.m_a_src = sd[f"{e}.m_att.att_src"].reshape(-1)
        self.m_a_dst = sd[f"{e}.m_att.att_dst"].reshape(-1)
        self.m_bias = sd[f"{e}.m_att.bias"]
        self.m_root = lin(f"{e}.m_root")
        self.w_v = lin("w_v")
        self.w_x = lin("w_x", False)[0]
        self.w_k = lin("w_k", False)[0]
        self.w_g = lin("w_g", False)[0]
        self.w_extra = lin("w_extra", False)[0]
        self.s1, self.s3 = lin("score.1"), lin("score.3")

    def logits(
        self,
        inst: Instance,
        sol: Solution,
        ev: Evaluation,
        links,
        progress: float,
        mv: Moves,
        votes: np.ndarray | None = None,
    ) -> np.ndarray:
        """Float64 scores of the legal moves ``mv`` of ``sol`` (the same order), as ``policy(batch)[0]``."""
        N, M = inst.n_ops, inst.n_machines
        _, js = links
        # operation graph as arc multiplicities: A[i, j] = arcs j -> i (job and machine successors)
        o = np.arange(N)
        src = np.concatenate([o[js >= 0], o[sol.msucc >= 0]])
        dst = np.concatenate([js[js >= 0], sol.msucc[sol.msucc >= 0]])
        pred = np.bincount(dst * N + src, minlength=N * N).reshape(N, N).astype(np.float32)  # U -> O
        both = pred + pred.T
        pred_self = pred + np.eye(N, dtype=np.float32)
        serves = np.zeros((M, N), dtype=np.float32)
        serves[sol.assign, o] = 1.0

        w, b = self.op_in
        x0 = _relu(op_features(inst, sol, ev) @ w + b)
        mu, nu = x0, x0
        for (one_eps, (w1, b1), (w2, b2)), (wg, a_s, a_d, bg) in zip(self.gin, self.gat):
            mu = _relu(_relu((one_eps * mu + both @ mu) @ w1 + b1) @ w2 + b2)
            h = nu @ wg
            alpha = _attend((h @ a_d)[:, None] + (h @ a_s)[None, :], pred_self)
            nu = _relu(alpha @ h + bg)
        h_op = np.concatenate([mu, nu], axis=1)
        w, b = self.m_in
        xm = _relu(machine_features(inst, sol, ev) @ w + b)
        hs = h_op @ self.m_src
        hd = xm @ self.m_dst
        alpha = _attend((hd @ self.m_a_dst)[:, None] + (hs @ self.m_a_src)[None, :], serves)
        w, b = self.m_root
        h_m = _relu(alpha @ hs + self.m_bias + xm @ w + b)
        g = np.concatenate([h_op.mean(axis=0), h_m.mean(axis=0), np.float32([progress])]).astype(np.float32)

        v, x = mv.v, mv.x
        end = x >= N
        k = np.where(end, x - N, sol.assign[np.minimum(x, N - 1)])
        c = float(max(ev.cmax, 1))
        if votes is None or not self.memory:
            votes = np.zeros((v.shape[0], 2), dtype=np.float32)
        extra = np.concatenate(
            [
                np.asarray(votes, np.float32),
                end[:, None].astype(np.float32),
                (inst.proc[v, k] / c)[:, None].astype(np.float32),
                (k == sol.assign[v])[:, None].astype(np.float32),
            ],
            axis=1,
        )
        w, b = self.w_v
        hx = h_op @ self.w_x
        tgt = np.where(end[:, None], np.float32(0.0), hx[np.where(end, 0, x)])
        z = (h_op @ w + b)[v] + tgt + (h_m @ self.w_k)[k] + (g @ self.w_g)[None, :] + extra @ self.w_extra
        (w1, b1), (w3, b3) = self.s1, self.s3
        return (_relu(_relu(z) @ w1 + b1) @ w3 + b3)[:, 0].astype(np.float64)


def max_logit_error(
    policy,
    inst: Instance,
    sol: Solution,
    ev: Evaluation,
    links,
    progress: float,
    mv: Moves,
    votes: np.ndarray | None = None,
) -> float:
    """Largest absolute difference between the torch and the numpy scores of ``mv`` (a consistency check)."""
    import torch

    from papergym.agents.scheduling.mistar.model import batch_graphs

    b = batch_graphs([(inst, sol, ev, links)], [progress], [mv], [votes])
    with torch.no_grad():
        ref = policy(b)[0].double().numpy()
    return float(np.abs(ref - NumpyPolicy(policy).logits(inst, sol, ev, links, progress, mv, votes)).max())
