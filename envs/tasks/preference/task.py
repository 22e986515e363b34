"""``PreferenceHallucination-v0``: object hallucination of a toy image captioner and its repair by preference
optimisation, the setting of *Mitigating Hallucination Through Theory-Consistent Symmetric Multimodal Preference
Optimization* (Liu, Song, Li, Wei, Zheng, Yin & Nie, NeurIPS 2025, arXiv:2506.11712; official code
``Liuwq-bit/SymMPO``; ``docs/papers/symmpo.md``; tags: see docs/conventions.md).

The paper fine-tunes LLaVA-1.5 on image-conditioned preference pairs; the gym keeps the **mechanism** — a captioner
whose language prior (objects that co-occur) makes it mention objects that are not in the image, and preference
pairs that contrast the correct caption with one that names the absent co-occurrence partner — with a CPU-sized
model and generated data ([design]):

1. **World** (fixed, shared by every instance and by the shipped reference policy): ``O`` = 12 object tokens
   ``0 … O−1``, then EOS (``O``) and BOS (``O + 1``, only ever a decoder input). Each object has a fixed random 16-d
   embedding (:func:`object_embeddings`, i.i.d. ``N(0, 1)`` entries from ``WORLD_SEED``). A scene ``m`` is a set of
   2–4 objects; its image features are the sum of its objects' embeddings plus ``N(0, 0.3² I)`` noise.
2. **Co-occurrence prior**: objects ``(0, 1), (2, 3), (4, 5)`` are pairs. :func:`sample_scenes` draws a size
   ``k ∈ {2, 3, 4}`` uniformly, then objects uniformly among those absent; a pair member whose partner is absent
   brings its partner along with probability ``JOIN_PROB`` = 0.85 (if the scene has no room for both, that draw is
   discarded and redrawn, with the same probability). [design] 0.85, not 0.8: the last free slot of a scene cannot
   take a pair, so a join probability of 0.8 yields a co-occurrence rate of only 0.74; with 0.85 the measured rate
   ``P(both members | either member)`` is 0.795 over 20,000 scenes — the targeted 80 % (a test checks 0.80 ± 0.02).
   About 17 % of the scenes hold a pair member without its partner (an *absent partner*): the scenes where the prior
   invites a hallucination.
3. **Caption** = the present objects in ascending token order, then EOS. A rejected caption (``y_l``) inserts one
   absent partner in token order (a random one when there are several; a random absent object when the scene has no
   absent partner), so it has up to 6 tokens: teacher forcing and greedy decoding allow ``MAX_LEN`` = 6 tokens.
4. **Policy**: a 1-layer GRU (hidden 64, PyTorch's gate convention ``r, z, n``), token embeddings 32-d (``O + 2``
   rows, BOS included), initial hidden state ``h₀ = W_init f + b_init`` (a linear map of the 16-d features), output
   logits ``W_out h_t + b_out`` over the ``O`` objects and EOS. Step ``t`` reads token ``y_{t−1}`` (BOS at ``t = 0``)
   and predicts ``y_t``; ``log π(y | m) = Σ_t log softmax(logits_t)[y_t]`` over the caption's tokens, EOS included.
   The weights are a dict of arrays (:data:`WEIGHT_KEYS`): ``embed (O+2, 32)``, ``init_w (64, 16)``,
   ``init_b (64,)``, ``w_ih (192, 32)``, ``w_hh (192, 64)``, ``b_ih (192,)``, ``b_hh (192,)``, ``out_w (O+1, 64)``,
   ``out_b (O+1,)``.
5. **Reference policy** ``π_ref`` (shipped: ``envs/tasks/preference/weights/preference_ref.npz``, card
   ``preference_ref.md``, produced by :func:`train_reference` through ``benchmarks/train_preference_ref.py``):
   supervised fine-tuning on 5,000 captions of which 20 % (1,000) mention the absent co-occurrence partner. [design: how
   the 20 % are drawn] The 1,000 hallucinated captions come from scenes drawn from the prior *conditioned on
   having an absent partner* (one absent partner inserted as in item 3); the other 4,000 are correct captions of
   prior scenes. Among scenes with an absent partner the SFT data therefore names the partner in about 59 % of the
   captions (1,000 of ~1,690), so the fitted policy's greedy caption names it: ``π_ref`` hallucinates the partner on
   most test scenes that have one (measured on the dev instances: see the card and
   ``tests/envs/tasks/test_preference.py``), while it captions the other scenes well. Paper-scale has its own
   reference (``preference_ref_o24.npz``, same recipe with ``O`` = 24 and 6 pairs).
6. **Preference set** (``n_pref`` = 2,000 scenes from the prior, instance seed): ``y_w`` = the correct caption,
   ``y_l`` = item 3's rejected caption; ``m′`` = the nearest *other* preference scene by Jaccard similarity of the
   object sets among those differing in 1–2 objects (symmetric difference of size 1 or 2; ties broken uniformly at
   random with the instance seed; if none exists, the most similar scene with a different object set) — Jaccard
   replaces the paper's CLIP retrieval (a deviation); the features of ``m′`` are that scene's own features and
   ``y_w′`` its correct caption. For ``mdpo``, the corrupted image = the features of ``m`` with a seeded
   ``corrupt_frac`` = 50 % of the 16 dimensions zeroed (a fresh mask per tuple).
7. **Test** (private): ``n_test`` = 1,000 fresh scenes from the same prior, with their own feature noise.

**Public problem** (:class:`PreferenceProblem`): the world's sizes and special tokens, the architecture, the
reference weights ``ref_weights`` (a dict of float32 arrays), the preference set (``features``, ``features_prime``,
``features_corrupt``: ``n_pref × 16``; ``y_w``, ``y_l``, ``y_w_prime``: ``n_pref × 6`` int token arrays padded with
``PAD`` = −1; ``prime_index``: the index of ``m′`` in the set) and ``epochs`` (the declared iteration budget).
Nothing of the test scenes is public. ``PRIVATE_FIELDS = ()``.

**Solution**: the policy's weights in the same architecture — a mapping with exactly the keys of
:data:`WEIGHT_KEYS` (plus an optional ``"meta"`` entry, ignored), each a real array of the exact shape, finite.
Anything else (not a mapping, a missing or unknown key, a wrong shape or dtype, NaN/inf) is a ``ValueError`` naming
the key. The evaluator holds its own numpy implementation of the policy (float64; no torch needed to score).

**Metrics** (greedy decoding of at most 6 tokens, stopping at EOS; a caption's *mentions* are the
distinct object tokens it names):

| metric | dir | definition |
|---|---|---|
| ``f1`` (primary) | max | harmonic mean of ``1 − chair_i`` and ``recall`` (0 when both are 0) |
| ``chair_i`` | min | hallucinated mentions / all mentions over the test captions (0 when nothing is mentioned) |
| ``chair_s`` | min | fraction of captions with at least one hallucinated mention |
| ``recall`` | max | present objects mentioned / present objects |
| ``visual_dependence`` | max | mean over test scenes of ``log π(y_w ∣ m) − log π(y_w ∣ m′)``, ``m′`` the nearest other test scene by item 6's rule, ``y_w`` the correct caption of ``m`` |
| ``partner_halluc`` | min | [design, diagnostic] among test scenes with an absent partner, the fraction whose caption names one |

Budget: ``max_seconds`` = 60 (600 paper-scale); ``max_iterations`` = ``epochs`` (10; 20 paper-scale),
declared by the solver once per epoch; work = teacher-forced sequence passes (declared).

**Sizes** (``sizes=``): ``default`` (``O`` = 12, 3 pairs, 2,000 pairs, 10 epochs, 1,000 test scenes) and
``paper-scale`` (``O`` = 24, 6 pairs, 10,000 pairs, 20 epochs, 5,000 test scenes). Instance names:
``default/s0``, ``paper-scale/s0``.

Deviations from the paper and open points: the captioner reproduces the hallucination mechanism, not the benchmarks, so
absolute numbers are not comparable with the paper's; ``m′`` by Jaccard, not CLIP; the join probability 0.85 and the
conditioned draw of the SFT hallucinations are [design] (above); ``partner_halluc`` is an added diagnostic.
"""  # noqa: E501 - markdown table rows cannot wrap

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from papergym.envs.tasks.base import (
    Budget,
    InstanceRef,
    check_floats,
    check_ints,
    check_names,
    instance_params,
    register_task,
    split_instances,
)
from papergym.torch_threads import torch_threads

__all__ = [
    "PreferenceTask",
    "PreferenceProblem",
    "PreferenceEvaluator",
    "WEIGHT_KEYS",
    "weight_shapes",
    "check_weights",
    "object_embeddings",
    "sample_scenes",
    "scene_features",
    "captions",
    "rejected_captions",
    "nearest_jaccard",
    "absent_partners",
    "np_sequence_logprob",
    "np_greedy_decode",
    "caption_metrics",
    "load_reference",
    "train_reference",
    "build_world",
    "World",
    "PAD",
    "MAX_LEN",
    "SIZES",
]

TASK_ID = "PreferenceHallucination-v0"
N_TEST_SEEDS = 5
FEAT_DIM, HIDDEN, EMBED = 16, 64, 32
NOISE_STD = 0.3
JOIN_PROB = 0.85
MIN_OBJECTS, MAX_OBJECTS = 2, 4
MAX_LEN = 6
PAD = -1
WORLD_SEED = 20250611
WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
WEIGHT_KEYS = ("embed", "init_w", "init_b", "w_ih", "w_hh", "b_ih", "b_hh", "out_w", "out_b")
SIZES = {
    "default": {
        "n_objects": 12,
        "n_pairs": 3,
        "n_pref": 2000,
        "epochs": 10,
        "n_test": 1000,
        "max_seconds": 60.0,
        "weights": "preference_ref.npz",
    },
    "paper-scale": {
        "n_objects": 24,
        "n_pairs": 6,
        "n_pref": 10000,
        "epochs": 20,
        "n_test": 5000,
        "max_seconds": 600.0,
        "weights": "preference_ref_o24.npz",
    },
}


# ------------------------------------------------------------------------------------------------ the world
@dataclass(frozen=True)
class World:
    """The fixed world of a size: objects, pairs, embeddings (module docstring, item 1)."""

    n_objects: int
    pairs: tuple[tuple[int, int], ...]
    embeddings: np.ndarray
    noise_std: float = NOISE_STD
    join_prob: float = JOIN_PROB

    @property
    def eos(self) -> int:
        return self.n_objects

    @property
    def bos(self) -> int:
        return self.n_objects + 1

    @property
    def partner(self) -> dict[int, int]:
        out = {}
        for a, b in self.pairs:
            out[a], out[b] = b, a
        return out


def object_embeddings(n_objects: int, dim: int = FEAT_DIM) -> np.ndarray:
    """The fixed object embeddings (``n_objects × dim``, i.i.d. ``N(0, 1)``, from ``WORLD_SEED``)."""
    rng = np.random.default_rng(np.random.SeedSequence(WORLD_SEED, spawn_key=(int(n_objects), int(dim))))
    return rng.standard_normal((int(n_objects), int(dim)))


@functools.lru_cache(maxsize=4)
def build_world(n_objects: int = 12, n_pairs: int = 3) -> World:
    """The world with ``n_objects`` objects and pairs ``(0, 1), (2, 3), …`` (``n_pairs`` of them)."""
    if n_pairs * 2 > n_objects:
        raise ValueError(f"n_pairs = {n_pairs} needs at least {2 * n_pairs} objects, got {n_objects}")
    return World(int(n_objects), tuple((2 * i, 2 * i + 1) for i in range(int(n_pairs))), object_embeddings(n_objects))


def sample_scenes(
    rng: np.random.Generator, n: int, world: World, condition: str | None = None
) -> list[tuple[int, ...]]:
    """``n`` scenes (sorted object tuples) from the co-occurrence prior (module docstring, item 2);
    ``condition="absent-partner"`` keeps only scenes with an absent partner (rejection)."""
    partner, O, q = world.partner, world.n_objects, world.join_prob
    out: list[tuple[int, ...]] = []
    while len(out) < n:
        k = int(rng.integers(MIN_OBJECTS, MAX_OBJECTS + 1))
        S: set[int] = set()
        while len(S) < k:
            absent = [o for o in range(O) if o not in S]
            o = absent[int(rng.integers(len(absent)))]
            p = partner.get(o)
            if p is None or p in S:
                S.add(o)
                continue
            if rng.random() < q:
                if k - len(S) >= 2:
                    S.update((o, p))
                # no room for both: discard the draw and redraw
            else:
                S.add(o)
        sc = tuple(sorted(S))
        if condition == "absent-partner" and not absent_partners(sc, world):
            continue
        out.append(sc)
    return out


def absent_partners(scene: tuple[int, ...], world: World) -> list[int]:
    """The absent partners of the scene's present pair members (sorted)."""
    s = set(scene)
    partner = world.partner
    return sorted({partner[o] for o in s if o in partner and partner[o] not in s})


def scene_features(scenes: list[tuple[int, ...]], world: World, rng: np.random.Generator) -> np.ndarray:
    """Sum of the objects' embeddings plus ``N(0, noise_std² I)`` (``len(scenes) × 16``)."""
    B = scene_matrix(scenes, world.n_objects).astype(float)
    return B @ world.embeddings + world.noise_std * rng.standard_normal((len(scenes), world.embeddings.shape[1]))


def scene_matrix(scenes: list[tuple[int, ...]], n_objects: int) -> np.ndarray:
    """Boolean ``len(scenes) × n_objects`` membership matrix."""
    B = np.zeros((len(scenes), n_objects), dtype=bool)
    for i, s in enumerate(scenes):
        B[i, list(s)] = True
    return B


def encode(seqs: list[list[int]], length: int = MAX_LEN) -> np.ndarray:
    """Token lists -> an ``n × length`` int64 array padded with ``PAD``."""
    out = np.full((len(seqs), length), PAD, dtype=np.int64)
    for i, s in enumerate(seqs):
        if len(s) > length:
            raise ValueError(f"sequence {i} has {len(s)} tokens > {length}")
        out[i, : len(s)] = s
    return out


def captions(scenes: list[tuple[int, ...]], world: World) -> np.ndarray:
    """Correct captions (objects ascending, then EOS), padded."""
    return encode([list(s) + [world.eos] for s in scenes])


def rejected_captions(scenes: list[tuple[int, ...]], world: World, rng: np.random.Generator) -> np.ndarray:
    """``y_l``: one absent partner (random among several) inserted in token order; a random absent object when the
    scene has no absent partner (module docstring, item 3)."""
    out = []
    for s in scenes:
        cand = absent_partners(s, world) or [o for o in range(world.n_objects) if o not in s]
        o = cand[int(rng.integers(len(cand)))]
        out.append(sorted(set(s) | {o}) + [world.eos])
    return encode(out)


def nearest_jaccard(
    scenes: list[tuple[int, ...]], n_objects: int, rng: np.random.Generator, chunk: int = 1024
) -> np.ndarray:
    """For each scene, the index of the most Jaccard-similar *other* scene among those whose object sets differ in
    1–2 objects (ties uniformly at random; fallback: the most similar scene with a different set)."""
    B = scene_matrix(scenes, n_objects).astype(np.int32)
    n = len(B)
    if n < 2:
        raise ValueError("nearest_jaccard needs at least two scenes")
    size = B.sum(1)
    out = np.empty(n, dtype=np.int64)
    for a in range(0, n, chunk):
        inter = B[a : a + chunk] @ B.T  # (c, n)
        union = size[a : a + chunk, None] + size[None, :] - inter
        sym = union - inter
        jac = inter / union
        jac[np.arange(len(inter)), np.arange(a, a + len(inter))] = -np.inf  # not itself
        ok = (sym >= 1) & (sym <= 2)
        score = np.where(ok, jac, -np.inf)
        none = ~np.isfinite(score).any(1)
        if none.any():  # fallback: any different set
            score[none] = np.where(sym[none] >= 1, jac[none], -np.inf)
        # random tie-break: a tiny seeded jitter below the smallest Jaccard gap (gaps are >= 1/64 for sets <= 8)
        jitter = rng.random(score.shape) * 1e-6
        out[a : a + len(inter)] = np.argmax(np.where(np.isfinite(score), score + jitter, -np.inf), axis=1)
    return out


# ---------------------------------------------------------------------------------------- numpy policy
def weight_shapes(
    n_objects: int, hidden: int = HIDDEN, embed: int = EMBED, feat_dim: int = FEAT_DIM
) -> dict[str, tuple[int, ...]]:
    """The shape of every weight of the policy (module docstring, item 4)."""
    V_in, V_out = n_objects + 2, n_objects + 1
    return {
        "embed": (V_in, embed),
        "init_w": (hidden, feat_dim),
        "init_b": (hidden,),
        "w_ih": (3 * hidden, embed),
        "w_hh": (3 * hidden, hidden),
        "b_ih": (3 * hidden,),
        "b_hh": (3 * hidden,),
        "out_w": (V_out, hidden),
        "out_b": (V_out,),
    }


def check_weights(
    solution: Any, n_objects: int, hidden: int = HIDDEN, embed: int = EMBED, feat_dim: int = FEAT_DIM
) -> dict[str, np.ndarray]:
    """The float64 weights of a solution, or a ``ValueError`` naming the offending key (module docstring)."""
    if not isinstance(solution, Mapping):
        raise ValueError(
            f"solution must be a mapping of policy weights {list(WEIGHT_KEYS)}, got {type(solution).__name__}"
        )
    keys = [k for k in solution if k != "meta"]
    unknown = sorted(str(k) for k in keys if k not in WEIGHT_KEYS)
    if unknown:
        raise ValueError(f"solution has unknown keys {unknown}; expected exactly {list(WEIGHT_KEYS)} (+ 'meta')")
    shapes = weight_shapes(n_objects, hidden, embed, feat_dim)
    out = {}
    for k in WEIGHT_KEYS:
        if k not in solution:
            raise ValueError(f"solution is missing the {k!r} weight (got keys {sorted(map(str, solution))})")
        v = solution[k]
        a = np.asarray(v) if not isinstance(v, (str, bytes)) else np.asarray(None, dtype=object)
        if a.dtype == bool or a.dtype.kind not in "iuf":
            raise ValueError(f"solution[{k!r}] must be a real numeric array, got dtype {a.dtype}")
        if a.shape != shapes[k]:
            raise ValueError(f"solution[{k!r}] must have shape {shapes[k]}, got {a.shape}")
        a = a.astype(np.float64)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"solution[{k!r}] must be finite ({int((~np.isfinite(a)).sum())} non-finite entries)")
        out[k] = a
    return out


def _sig(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _gru_step(W: Mapping[str, np.ndarray], x: np.ndarray, h: np.ndarray) -> np.ndarray:
    """One GRU step, PyTorch's convention: ``r, z, n`` gates, ``h' = (1 − z) n + z h``."""
    H = h.shape[1]
    gi = x @ W["w_ih"].T + W["b_ih"]
    gh = h @ W["w_hh"].T + W["b_hh"]
    r = _sig(gi[:, :H] + gh[:, :H])
    z = _sig(gi[:, H : 2 * H] + gh[:, H : 2 * H])
    n = np.tanh(gi[:, 2 * H :] + r * gh[:, 2 * H :])
    return (1.0 - z) * n + z * h


def _log_softmax(a: np.ndarray) -> np.ndarray:
    m = a.max(axis=1, keepdims=True)
    return a - m - np.log(np.exp(a - m).sum(axis=1, keepdims=True))


def np_sequence_logprob(W: Mapping[str, np.ndarray], feats: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """``log π(y | m)`` of padded token rows ``tokens`` (``PAD`` after the end) given features ``feats``
    (teacher forcing, step by step; float64)."""
    feats = np.asarray(feats, dtype=float)
    tokens = np.asarray(tokens)
    bos = W["embed"].shape[0] - 1
    h = feats @ W["init_w"].T + W["init_b"]
    prev = np.full(len(tokens), bos)
    total = np.zeros(len(tokens))
    for t in range(tokens.shape[1]):
        y = tokens[:, t]
        live = y != PAD
        if not live.any():
            break
        h = _gru_step(W, W["embed"][prev], h)
        lp = _log_softmax(h @ W["out_w"].T + W["out_b"])
        total += np.where(live, lp[np.arange(len(y)), np.where(live, y, 0)], 0.0)
        prev = np.where(live, y, bos)
    return total


def np_greedy_decode(W: Mapping[str, np.ndarray], feats: np.ndarray, max_len: int = MAX_LEN) -> np.ndarray:
    """Greedy captions (``n × max_len``, ``PAD`` after EOS; EOS included when produced)."""
    feats = np.asarray(feats, dtype=float)
    n = len(feats)
    bos, eos = W["embed"].shape[0] - 1, W["out_w"].shape[0] - 1
    h = feats @ W["init_w"].T + W["init_b"]
    prev = np.full(n, bos)
    out = np.full((n, max_len), PAD, dtype=np.int64)
    done = np.zeros(n, dtype=bool)
    for t in range(max_len):
        h = _gru_step(W, W["embed"][prev], h)
        y = np.argmax(h @ W["out_w"].T + W["out_b"], axis=1)
        out[:, t] = np.where(done, PAD, y)
        done |= y == eos
        prev = np.where(done, bos, y)
        if done.all():
            break
    return out


def caption_metrics(decoded: np.ndarray, truth: list[tuple[int, ...]], n_objects: int) -> dict[str, float]:
    """CHAIR_i, CHAIR_s, recall and F1 (module docstring) of decoded token rows against the true object sets; the
    mentions of a caption are its distinct object tokens (EOS and PAD are not objects)."""
    decoded = np.asarray(decoded)
    men = np.zeros((len(decoded), n_objects), dtype=bool)
    rows, cols = np.nonzero((decoded >= 0) & (decoded < n_objects))
    men[rows, decoded[rows, cols]] = True
    T = scene_matrix(truth, n_objects)
    hall = men & ~T
    n_men, n_true = int(men.sum()), int(T.sum())
    chair_i = float(hall.sum() / n_men) if n_men else 0.0
    recall = float((men & T).sum() / n_true) if n_true else 0.0
    prec = 1.0 - chair_i
    f1 = 2 * prec * recall / (prec + recall) if prec + recall > 0 else 0.0
    return {"f1": float(f1), "chair_i": chair_i, "chair_s": float(hall.any(1).mean()), "recall": recall}


# ------------------------------------------------------------------------------------------- reference
def load_reference(size: str = "default") -> dict[str, np.ndarray]:
    """The shipped reference weights of ``size`` (float32 arrays; a fresh copy)."""
    return {k: v.copy() for k, v in _load_reference(size).items()}


@functools.lru_cache(maxsize=2)
def _load_reference(size: str) -> dict[str, np.ndarray]:
    name = SIZES[size]["weights"]
    path = WEIGHTS_DIR / name
    if not path.exists():
        raise FileNotFoundError(f"reference weights {path} are missing; run benchmarks/train_preference_ref.py")
    with np.load(path) as z:
        W = {k: z[k].astype(np.float32) for k in WEIGHT_KEYS}
    check_weights(W, SIZES[size]["n_objects"])
    return W


def sft_dataset(
    world: World, n_captions: int = 5000, halluc_frac: float = 0.2, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The SFT data of the reference policy (module docstring, item 5): ``(features, tokens)``, shuffled."""
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(7, world.n_objects)))
    n_h = int(round(halluc_frac * n_captions))
    clean = sample_scenes(rng, n_captions - n_h, world)
    bad = sample_scenes(rng, n_h, world, condition="absent-partner")
    toks = np.vstack([captions(clean, world), rejected_captions(bad, world, rng)])
    feats = scene_features(clean + bad, world, rng)
    perm = rng.permutation(len(toks))
    return feats[perm], toks[perm]


def train_reference(
    n_objects: int = 12,
    n_pairs: int = 3,
    n_captions: int = 5000,
    halluc_frac: float = 0.2,
    epochs: int = 40,
    lr: float = 3e-3,
    batch_size: int = 64,
    seed: int = 0,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Train ``π_ref`` by supervised fine-tuning (summed token cross-entropy, Adam, one CPU thread, float32; torch):
    deterministic for a seed. Returns ``(weights, stats)``; ``stats`` holds the final SFT loss and, on 1,000 fresh
    prior scenes (seed ``seed + 1``), the exact-caption accuracy, CHAIR_i, recall and the partner hallucination
    rate of greedy captions."""
    import torch

    from papergym.agents.solvers.symmpo import init_policy, policy_params, sequence_logprob, weights_of

    world = build_world(n_objects, n_pairs)
    feats, toks = sft_dataset(world, n_captions, halluc_frac, seed)
    with torch_threads(1):
        gen = torch.Generator().manual_seed(int(seed))
        params = policy_params(init_policy(n_objects, gen), torch.float32)
        opt = torch.optim.Adam(list(params.values()), lr=lr)
        F, Y = torch.as_tensor(feats, dtype=torch.float32), torch.as_tensor(toks)
        n, loss_v = len(F), float("nan")
        for _ in range(int(epochs)):
            perm = torch.randperm(n, generator=gen)
            tot = 0.0
            for a in range(0, n, batch_size):
                idx = perm[a : a + batch_size]
                loss = -sequence_logprob(params, F[idx], Y[idx]).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                tot += float(loss.detach()) * len(idx)
            loss_v = tot / n
        W = weights_of(params)
    rng = np.random.default_rng(np.random.SeedSequence(int(seed) + 1, spawn_key=(8, n_objects)))
    scenes = sample_scenes(rng, 1000, world)
    f = scene_features(scenes, world, rng)
    dec = np_greedy_decode({k: v.astype(float) for k, v in W.items()}, f)
    stats = dict(
        caption_metrics(dec, scenes, n_objects),
        sft_loss=loss_v,
        exact=float(np.mean(np.all(dec == captions(scenes, world), axis=1))),
        partner_halluc=partner_hallucination(dec, scenes, world),
    )
    return W, stats


def partner_hallucination(decoded: np.ndarray, scenes: list[tuple[int, ...]], world: World) -> float:
    """Among scenes with an absent partner, the fraction whose caption names one of them (NaN if there are none)."""
    hits, tot = 0, 0
    for row, s in zip(np.asarray(decoded), scenes):
        ap = absent_partners(s, world)
        if ap:
            tot += 1
            hits += bool(set(ap) & set(row.tolist()))
    return hits / tot if tot else math.nan


# ------------------------------------------------------------------------------------------------- problem
@dataclass(frozen=True)
class PreferenceProblem:
    """The public problem (module docstring)."""

    size: str
    n_objects: int
    pairs: tuple[tuple[int, int], ...]
    eos: int
    bos: int
    pad: int
    max_len: int
    feat_dim: int
    hidden: int
    embed: int
    ref_weights: dict[str, np.ndarray]
    features: np.ndarray
    features_prime: np.ndarray
    features_corrupt: np.ndarray
    y_w: np.ndarray
    y_l: np.ndarray
    y_w_prime: np.ndarray
    prime_index: np.ndarray
    epochs: int = 10
    work_unit: str = "teacher-forced sequence passes"

    PRIVATE_FIELDS = ()

    @property
    def n_pref(self) -> int:
        return int(len(self.features))


class PreferenceEvaluator:
    """Private scorer (module docstring): the test scenes, their features, their nearest other test scenes."""

    def __init__(
        self,
        problem: PreferenceProblem,
        world: World,
        scenes: list[tuple[int, ...]],
        feats: np.ndarray,
        prime: np.ndarray,
    ):
        self.p, self.world, self.scenes, self.feats = problem, world, scenes, feats
        self.feats_prime = feats[prime]
        self.y_w = captions(scenes, world)

    def evaluate(self, solution: Any) -> dict[str, float]:
        p = self.p
        W = check_weights(solution, p.n_objects, p.hidden, p.embed, p.feat_dim)
        dec = np_greedy_decode(W, self.feats, p.max_len)
        out = caption_metrics(dec, self.scenes, p.n_objects)
        vd = np_sequence_logprob(W, self.feats, self.y_w) - np_sequence_logprob(W, self.feats_prime, self.y_w)
        out["visual_dependence"] = float(vd.mean())
        out["partner_halluc"] = float(partner_hallucination(dec, self.scenes, self.world))
        return out


# ---------------------------------------------------------------------------------------------------- task
class PreferenceTask:
    """``PreferenceHallucination-v0`` (module docstring). Kwargs: ``sizes`` (``default``; ``paper-scale``),
    ``seeds`` (dev, 0–4), ``n_pref`` (preference tuples; default per size: 2,000 / 10,000), ``epochs`` (the declared
    iteration budget; 10 / 20), ``n_test`` (private test scenes; 1,000 / 5,000), ``corrupt_frac`` (0.5; the share of
    feature dimensions zeroed in ``mdpo``'s corrupted image), ``max_seconds`` (60 / 600)."""

    id = TASK_ID
    primary = "f1"
    metrics = {
        "f1": "max",
        "chair_i": "min",
        "chair_s": "min",
        "recall": "max",
        "visual_dependence": "max",
        "partner_halluc": "min",
    }
    table_metrics = ("chair_i", "chair_s", "recall", "partner_halluc", "visual_dependence")

    def __init__(
        self,
        sizes: Any = "default",
        seeds: Any = (0, 1, 2, 3, 4),
        n_pref: Any = None,
        epochs: Any = None,
        n_test: Any = None,
        corrupt_frac: Any = 0.5,
        max_seconds: Any = None,
    ):
        self.sizes = check_names(sizes, "sizes", tuple(SIZES))
        self.seeds = check_ints(seeds, "seeds", 0)
        self.n_pref = None if n_pref is None else check_ints(n_pref, "n_pref", 2)[0]
        self.epochs = None if epochs is None else check_ints(epochs, "epochs", 1)[0]
        self.n_test = None if n_test is None else check_ints(n_test, "n_test", 2)[0]
        self.corrupt_frac = check_floats(corrupt_frac, "corrupt_frac", at_least=0.0, below=1.0)[0]
        self.max_seconds = None if max_seconds is None else check_floats(max_seconds, "max_seconds", above=0.0)[0]
        big = "paper-scale" in self.sizes
        self.default_budget = Budget(
            max_seconds=self.max_seconds or SIZES["paper-scale" if big else "default"]["max_seconds"],
            max_iterations=self.epochs or max(SIZES[s]["epochs"] for s in self.sizes),
        )

    def _params(self, size: str) -> dict[str, Any]:
        d = SIZES[size]
        return {
            "size": size,
            "n_pref": self.n_pref or d["n_pref"],
            "epochs": self.epochs or d["epochs"],
            "n_test": self.n_test or d["n_test"],
            "corrupt_frac": self.corrupt_frac,
        }

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        return split_instances(TASK_ID, split, [(s, self._params(s)) for s in self.sizes], self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[PreferenceProblem, PreferenceEvaluator]:
        p = instance_params(ref, TASK_ID)
        size = check_names(p.get("size"), "size", tuple(SIZES))[0]
        n_pref = check_ints(p.get("n_pref"), "n_pref", 2)[0]
        epochs = check_ints(p.get("epochs"), "epochs", 1)[0]
        n_test = check_ints(p.get("n_test"), "n_test", 2)[0]
        cf = check_floats(p.get("corrupt_frac", 0.5), "corrupt_frac", at_least=0.0, below=1.0)[0]
        return make_instance(int(ref.seed), size, n_pref, epochs, n_test, cf)

    def report(self, runs: Any) -> str:
        """Per size and solver: F1, hallucination rates (CHAIR_i, CHAIR_s, partner) and recall, visual dependence."""
        from papergym.envs.tasks.preference.report import report_table

        return report_table(runs)

    def figures(self, runs: Any, folder: Any) -> list[Any]:
        """``chair_vs_recall`` (per solver, mean over seeds) and ``partner_halluc`` bars (PNG + SVG)."""
        from papergym.envs.tasks.preference.report import figures

        return figures(runs, folder)


def make_instance(
    seed: int,
    size: str = "default",
    n_pref: int = 2000,
    epochs: int = 10,
    n_test: int = 1000,
    corrupt_frac: float = 0.5,
) -> tuple[PreferenceProblem, PreferenceEvaluator]:
    """The problem and evaluator of one instance (module docstring, items 6–7)."""
    d = SIZES[size]
    world = build_world(d["n_objects"], d["n_pairs"])
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(1,)))
    scenes = sample_scenes(rng, n_pref, world)
    feats = scene_features(scenes, world, rng)
    y_w = captions(scenes, world)
    y_l = rejected_captions(scenes, world, rng)
    prime = nearest_jaccard(scenes, world.n_objects, rng)
    n_zero = int(round(corrupt_frac * FEAT_DIM))
    keep = np.ones((n_pref, FEAT_DIM))
    for i in range(n_pref):
        keep[i, rng.choice(FEAT_DIM, size=n_zero, replace=False)] = 0.0
    trng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(2,)))
    t_scenes = sample_scenes(trng, n_test, world)
    t_feats = scene_features(t_scenes, world, trng)
    t_prime = nearest_jaccard(t_scenes, world.n_objects, trng)
    problem = PreferenceProblem(
        size=size,
        n_objects=world.n_objects,
        pairs=world.pairs,
        eos=world.eos,
        bos=world.bos,
        pad=PAD,
        max_len=MAX_LEN,
        feat_dim=FEAT_DIM,
        hidden=HIDDEN,
        embed=EMBED,
        ref_weights=load_reference(size),
        features=feats,
        features_prime=feats[prime],
        features_corrupt=feats * keep,
        y_w=y_w,
        y_l=y_l,
        y_w_prime=y_w[prime],
        prime_index=prime,
        epochs=int(epochs),
    )
    return problem, PreferenceEvaluator(problem, world, t_scenes, t_feats, t_prime)


register_task(TASK_ID, PreferenceTask)
