"""MIStar's network: the MHGNN encoder and the pair-scoring decoder (Wang et al.,
NeurIPS 2025, OpenReview ``sdlLycSeZl``; ``docs/papers/fjsp-mistar.md``).

Input graph
    The directed heterogeneous disjunctive graph of a complete solution, with the raw features of
    :mod:`papergym.envs.scheduling.fjsp.hetero` (9 per operation, 4 per machine). The encoder uses its
    ``job_next`` and ``machine_next`` arcs (and their reverses) between operations and the ``served_by``
    arcs from operations to their machine; the ``first`` arcs are implied by the machine orders and the
    ``eligible`` arcs enter as operation features (mean and min eligible time) and as a pair attribute of
    the decoder. :func:`batch_graphs` builds this graph for many solutions at once as one disjoint union
    (numpy index offsets instead of collating one PyG ``HeteroData`` per solution), with one graph-level
    input, the episode progress ``t/T``.
MHGNN encoder
    Operation embedding ``h_O = [μ^L ‖ ν^L] ∈ R^{2q}`` from two channels run side by side for ``L`` layers:

    * a **topological GIN channel** over the operation graph (job and machine arcs, both directions):
      ``μ^l = MLP^l((1 + ε^l) μ^{l−1} + Σ_{U ∈ N(O)} μ_U^{l−1})``;
    * a **semantic attention channel**, a GAT over each operation's job- and machine-**predecessors**
      (plus itself): ``ν^l_O = ReLU(Σ_{U ∈ P(O) ∪ {O}} α_OU W^l ν^{l−1}_U)``,
      ``α_OU = softmax_U(LeakyReLU(a^T [W ν_O ‖ W ν_U]))``.

    Machine embedding ``h_M ∈ R^q``: heterogeneous attention over the operations in the machine's
    sequence, with separate linear maps for the two node types (a bipartite GAT
    ``(op → machine)``) plus a root term ``W_root x_M``. Graph embedding
    ``g = [mean_O h_O ‖ mean_M h_M ‖ t/T]`` [design: mean pooling].
Decoder
    An action is a pair ``(O_m, x)``: move ``O_m`` before operation ``x`` or, for an end-of-machine target,
    to the end of machine ``k`` [design]. Score ``s = MLP([h_Om ‖ h_x ‖ h_Mk ‖ g ‖ votes ‖ end ‖ a])`` with
    the raw pair attributes ``a = (p_{O_m,k}/C_max, [k = current machine of O_m])`` [design: the time of the
    moved operation on the target machine is an instance datum no node embedding carries] over the
    **legal** pairs only (the ``nopt2-lite`` neighbourhood), softmax per graph: pairs outside the mask are
    never scored, so they get probability exactly 0. ``h_x = 0`` for end targets, ``h_Mk`` is the target
    machine's embedding, ``votes`` the memory's two soft votes (:mod:`.memory`). The first
    MLP layer is applied per component and summed (the same function, computed once per node instead of
    once per pair). A value head ``V = (1 − t/T) · MLP(g)`` serves PPO: the factor makes the value vanish at
    the horizon by construction (with ``t/T`` only as one input among ``3q + 1``, a plain ``MLP(g)`` predicted
    the same value early and late in an episode and its error swamped the shared encoder's gradient).
Hyperparameters [design; the paper's sizes are unknown]
    ``hidden`` q (64 in the shipped weights, 128 in L2S's ``parameters.py``), ``layers`` L = 4, one
    attention head, dropout 0.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch_geometric.nn import GATConv, GINConv
from torch_geometric.utils import scatter

from papergym.envs.scheduling.fjsp.graph import Evaluation, Solution, job_links
from papergym.envs.scheduling.fjsp.hetero import machine_features, op_features
from papergym.envs.scheduling.fjsp.instance import Instance

__all__ = [
    "GraphBatch",
    "batch_graphs",
    "concat_batches",
    "MHGNN",
    "MIStarPolicy",
    "N_OP_FEATURES",
    "N_MACHINE_FEATURES",
]

N_OP_FEATURES = 9
N_MACHINE_FEATURES = 4


@dataclass
class GraphBatch:
    """A disjoint union of solution graphs plus their candidate pairs (the legal moves).

    Node-level: ``x_op (ΣN, 9)``, ``x_m (ΣM, 4)``, ``op_graph``, ``m_graph`` (graph of each node).
    Edges (``2 × E``, PyG convention source → target): ``op_both`` (job and machine arcs, both
    directions), ``op_pred`` (predecessor → operation), ``serves`` (operation → its machine).
    Graph-level: ``progress (G, 1)`` = ``t/T``. Candidates: ``cand_graph``, ``cand_v`` (global operation
    index), ``cand_x`` (global operation index of the target, −1 for end-of-machine), ``cand_k`` (global
    machine index), ``votes (C, 2)``, ``pair (C, 2)`` raw pair attributes (``p_{O_m,k} / C_max``, the
    moved operation's time on the target machine — the ``eligible`` arc's attribute — and a flag for a move
    within its own machine); ``n_cand`` per graph (to map back to each graph's move list);
    ``delta (C,)`` = ``(C_max after the move − C_max) / C_max``, the exact effect of each move — a training
    target of the auxiliary head only, never an input of the policy."""

    x_op: torch.Tensor
    x_m: torch.Tensor
    op_graph: torch.Tensor
    m_graph: torch.Tensor
    op_both: torch.Tensor
    op_pred: torch.Tensor
    serves: torch.Tensor
    progress: torch.Tensor
    cand_graph: torch.Tensor
    cand_v: torch.Tensor
    cand_x: torch.Tensor
    cand_k: torch.Tensor
    votes: torch.Tensor
    pair: torch.Tensor
    delta: torch.Tensor
    n_cand: np.ndarray
    n_graphs: int


def _graph_arrays(inst: Instance, sol: Solution, ev: Evaluation, links=None):
    jp, js = links if links is not None else job_links(inst)
    o = np.arange(inst.n_ops)
    has_js = js >= 0
    has_ms = sol.msucc >= 0
    src = np.concatenate([o[has_js], o[has_ms]])
    dst = np.concatenate([js[has_js], sol.msucc[has_ms]])
    return src, dst


def batch_graphs(items, progress, moves, votes=None) -> GraphBatch:
    """Batch ``items`` = ``[(inst, sol, ev, links), ...]`` with their legal ``moves`` (:class:`Moves`, instance
    indexing: target ``x < N`` an operation, ``x ≥ N`` the end of machine ``x − N``), ``progress`` (one
    ``t/T`` per graph) and ``votes`` (one ``(len(moves), 2)`` array per graph or ``None`` = zeros)."""
    xo, xm, og, mg, both, pred, serv = [], [], [], [], [], [], []
    cg, cv, cx, ck, vt, nc, dl, pr = [], [], [], [], [], [], [], []
    n_off = m_off = 0
    for g, (inst, sol, ev, links) in enumerate(items):
        N, M = inst.n_ops, inst.n_machines
        xo.append(op_features(inst, sol, ev))
        xm.append(machine_features(inst, sol, ev))
        og.append(np.full(N, g))
        mg.append(np.full(M, g))
        src, dst = _graph_arrays(inst, sol, ev, links)
        both.append(np.stack([np.concatenate([src, dst]), np.concatenate([dst, src])]) + n_off)
        pred.append(np.stack([src, dst]) + n_off)
        serv.append(np.stack([np.arange(N) + n_off, sol.assign + m_off]))
        mv = moves[g]
        v, x = mv.v, mv.x
        end = x >= N
        k = np.where(end, x - N, sol.assign[np.minimum(x, N - 1)])
        cg.append(np.full(len(v), g))
        cv.append(v + n_off)
        cx.append(np.where(end, -1, x + n_off))
        ck.append(k + m_off)
        vt.append(
            np.zeros((len(v), 2), np.float32) if votes is None or votes[g] is None else np.asarray(votes[g], np.float32)
        )
        nc.append(len(v))
        pr.append(np.stack([inst.proc[v, k] / float(max(ev.cmax, 1)), (k == sol.assign[v])], axis=1))
        dl.append((mv.cmax - ev.cmax) / float(max(ev.cmax, 1)))
        n_off += N
        m_off += M

    def t(a, dtype=torch.long):
        return torch.from_numpy(np.ascontiguousarray(np.concatenate(a) if isinstance(a, list) else a)).to(dtype)

    return GraphBatch(
        x_op=t(xo, torch.float32),
        x_m=t(xm, torch.float32),
        op_graph=t(og),
        m_graph=t(mg),
        op_both=torch.from_numpy(np.concatenate(both, axis=1)).long(),
        op_pred=torch.from_numpy(np.concatenate(pred, axis=1)).long(),
        serves=torch.from_numpy(np.concatenate(serv, axis=1)).long(),
        progress=torch.as_tensor(np.asarray(progress, np.float32).reshape(-1, 1)),
        cand_graph=t(cg),
        cand_v=t(cv),
        cand_x=t(cx),
        cand_k=t(ck),
        votes=t(vt, torch.float32),
        pair=t(pr, torch.float32),
        delta=t(dl, torch.float32),
        n_cand=np.asarray(nc, dtype=np.int64),
        n_graphs=len(items),
    )


def concat_batches(batches: list[GraphBatch]) -> GraphBatch:
    """One :class:`GraphBatch` from several (offsets shifted), for one PPO forward over a whole rollout."""
    n_off = m_off = g_off = 0
    parts: dict[str, list] = {k: [] for k in GraphBatch.__dataclass_fields__}
    for b in batches:
        parts["x_op"].append(b.x_op)
        parts["x_m"].append(b.x_m)
        parts["op_graph"].append(b.op_graph + g_off)
        parts["m_graph"].append(b.m_graph + g_off)
        parts["op_both"].append(b.op_both + n_off)
        parts["op_pred"].append(b.op_pred + n_off)
        parts["serves"].append(b.serves + torch.tensor([[n_off], [m_off]]))
        parts["progress"].append(b.progress)
        parts["cand_graph"].append(b.cand_graph + g_off)
        parts["cand_v"].append(b.cand_v + n_off)
        parts["cand_x"].append(torch.where(b.cand_x >= 0, b.cand_x + n_off, b.cand_x))
        parts["cand_k"].append(b.cand_k + m_off)
        parts["votes"].append(b.votes)
        parts["delta"].append(b.delta)
        parts["pair"].append(b.pair)
        parts["n_cand"].append(b.n_cand)
        n_off += b.x_op.shape[0]
        m_off += b.x_m.shape[0]
        g_off += b.n_graphs
    out = {
        k: torch.cat(v, dim=1 if k in ("op_both", "op_pred", "serves") else 0)
        for k, v in parts.items()
        if k not in ("n_cand", "n_graphs")
    }
    return GraphBatch(**out, n_cand=np.concatenate(parts["n_cand"]), n_graphs=g_off)


def segment_log_softmax(logits: torch.Tensor, seg: torch.Tensor, n: int) -> torch.Tensor:
    """``log softmax`` of ``logits`` within each segment (graph) ``seg``, stabilised by the segment max."""
    m = scatter(logits.detach(), seg, dim=0, dim_size=n, reduce="max")
    z = logits - m[seg]
    lse = torch.log(scatter(z.exp(), seg, dim=0, dim_size=n, reduce="sum"))
    return z - lse[seg]


def _mlp(i: int, h: int, o: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, o))


class MHGNN(nn.Module):
    """The memory-enhanced heterogeneous GNN encoder (module docstring)."""

    def __init__(self, hidden: int = 64, layers: int = 4):
        super().__init__()
        q = hidden
        self.hidden, self.layers = q, layers
        self.op_in = nn.Linear(N_OP_FEATURES, q)
        self.m_in = nn.Linear(N_MACHINE_FEATURES, q)
        # topological GIN channel: μ^l = MLP^l((1 + ε^l) μ^{l−1} + Σ_{U∈N(O)} μ_U^{l−1})
        self.gin = nn.ModuleList(GINConv(_mlp(q, q, q), train_eps=True) for _ in range(layers))
        # semantic attention channel over job- and machine-predecessors (self-loops included)
        self.gat = nn.ModuleList(GATConv(q, q, heads=1, add_self_loops=True) for _ in range(layers))
        # heterogeneous attention for machines: op -> machine, separate maps per node type
        self.m_att = GATConv((2 * q, q), q, heads=1, add_self_loops=False)
        self.m_root = nn.Linear(q, q)

    @property
    def graph_dim(self) -> int:
        return 3 * self.hidden + 1

    def forward(self, b: GraphBatch):
        x0 = torch.relu(self.op_in(b.x_op))
        mu, nu = x0, x0
        for gin, gat in zip(self.gin, self.gat):
            mu = torch.relu(gin(mu, b.op_both))
            nu = torch.relu(gat(nu, b.op_pred))
        h_op = torch.cat([mu, nu], dim=1)
        xm = torch.relu(self.m_in(b.x_m))
        h_m = torch.relu(self.m_att((h_op, xm), b.serves) + self.m_root(xm))
        g = torch.cat(
            [
                scatter(h_op, b.op_graph, dim=0, dim_size=b.n_graphs, reduce="mean"),
                scatter(h_m, b.m_graph, dim=0, dim_size=b.n_graphs, reduce="mean"),
                b.progress,
            ],
            dim=1,
        )
        return h_op, h_m, g


class MIStarPolicy(nn.Module):
    """Encoder + pair-scoring decoder + value head. ``forward(b)`` returns per-candidate logits, the
    per-candidate log-probabilities (softmax within each graph) and the per-graph values; with
    ``aux=True`` also the auxiliary head's predictions of ``10 · delta`` (training only)."""

    def __init__(self, hidden: int = 64, layers: int = 4, memory: bool = True):
        super().__init__()
        q = hidden
        self.config = {"hidden": int(hidden), "layers": int(layers), "memory": bool(memory)}
        self.memory = bool(memory)
        self.encoder = MHGNN(hidden, layers)
        gd = self.encoder.graph_dim
        # first decoder layer split per component: W [h_v ‖ h_x ‖ h_k ‖ g ‖ votes ‖ end] = Σ W_i part_i
        self.w_v = nn.Linear(2 * q, q)
        self.w_x = nn.Linear(2 * q, q, bias=False)
        self.w_k = nn.Linear(q, q, bias=False)
        self.w_g = nn.Linear(gd, q, bias=False)
        self.w_extra = nn.Linear(5, q, bias=False)  # 2 memory votes, end-of-machine flag, 2 pair attributes
        self.score = nn.Sequential(nn.ReLU(), nn.Linear(q, q), nn.ReLU(), nn.Linear(q, 1))
        self.value = _mlp(gd, q, 1)
        # auxiliary head (training only): predicts each move's exact relative makespan change from the same
        # per-pair hidden vector the score uses, so the encoder learns what a move does [design]
        self.aux = nn.Sequential(nn.ReLU(), nn.Linear(q, q), nn.ReLU(), nn.Linear(q, 1))

    def forward(self, b: GraphBatch, aux: bool = False):
        h_op, h_m, g = self.encoder(b)
        end = b.cand_x < 0
        hx = self.w_x(h_op)
        tgt = torch.where(end.unsqueeze(1), torch.zeros(1, hx.shape[1]), hx[b.cand_x.clamp(min=0)])
        votes = b.votes if self.memory else torch.zeros_like(b.votes)
        extra = torch.cat([votes, end.float().unsqueeze(1), b.pair], dim=1)
        z = self.w_v(h_op)[b.cand_v] + tgt + self.w_k(h_m)[b.cand_k] + self.w_g(g)[b.cand_graph] + self.w_extra(extra)
        logits = self.score(z).squeeze(1)
        # V(s_t) = (1 − t/T) · MLP(g): the gain still to come shrinks with the remaining budget [design]
        value = (1.0 - b.progress.squeeze(1)) * self.value(g).squeeze(1)
        out = (logits, segment_log_softmax(logits, b.cand_graph, b.n_graphs), value)
        return out + (self.aux(z).squeeze(1),) if aux else out

    @staticmethod
    def entropy(logp: torch.Tensor, b: GraphBatch) -> torch.Tensor:
        """Per-graph entropy of the candidate distribution."""
        return scatter(-(logp.exp() * logp), b.cand_graph, dim=0, dim_size=b.n_graphs, reduce="sum")
