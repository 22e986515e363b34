"""``FeatureStaircase-v0``, setting ``modular-addition``: a two-layer network with quadratic activation learning
the group composition of a template on ℤ_p (spec ``learning-dynamics.md`` §1.2, optional track; AGF paper §5,
notebook ``modular arithmetic`` [code]).

Instance [design unless tagged]:

* a template ``τ ∈ ℝ^p`` (``p = 20``) with Fourier amplitudes ``10, 5, 2.5`` at frequencies ``1, 3, 5`` [code] and
  phases drawn from the seed, ``τ_c = Σ_k A_k cos(2πkc/p + φ_k)``, normalised to unit norm (the amplitudes fix the
  spectrum's shape; at the raw scale full-batch momentum GD at the notebook's step diverges);
* inputs ``x_{ab} = [ρ_a τ, ρ_b τ] ∈ ℝ^{2p}`` (``ρ_a``: cyclic shift by ``a``), targets ``y_{ab} = ρ_{a+b} τ``, all
  ``p² = 400`` pairs (the full batch) [code: full batch 400];
* the network ``f(x) = W_out (W_in x)²`` (``W_in``: width × 2p, ``W_out``: p × width), width 18, entries
  ``N(0, init²/fan_in)`` with ``init = 1e−2`` [code]; loss ``½ mean_{ab} ‖y − f(x)‖²``;
* training (the ground truth): full-batch heavy-ball GD, ``lr = 0.01``, momentum ``0.9`` [code], ``2·10⁵``
  iterations (the horizon; frequencies 1 and 3 are learned within it, frequency 5, with 1/8 of frequency 3's
  utility, far later). In the slow phases heavy-ball moves like gradient flow at time ``t = lr·k/(1 − β)``.

Features are frequencies ``k ∈ {1, …, p/2}``: the power ``‖F_k f‖`` of the network's output at ``k`` (mean over the
batch), per iteration; the drop's feature is the frequency whose power grows most (§1.3). A frequency is learned in
several sub-drops (one per neuron that activates on it; a quadratic neuron represents only part of a frequency's
component), each at the level AGF predicts; the frequencies appear in decreasing amplitude order and the plateau
after each equals the energy of the frequencies not yet learned (tested).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["modular_instance", "modular_init", "gd_modular", "fourier_power", "AMPLITUDES"]

AMPLITUDES = {1: 10.0, 3: 5.0, 5: 2.5}  # [code] template Fourier amplitudes by frequency


def modular_instance(p: int, seed: int, amplitudes: dict[int, float] | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X (p², 2p), Y (p², p), template (p,))`` of the module docstring; pairs ``(a, b)`` in row-major order."""
    amps = dict(AMPLITUDES if amplitudes is None else amplitudes)
    p = int(p)
    if p < 3 or any(not (1 <= int(k) <= p // 2) for k in amps) or any(not a > 0 for a in amps.values()):
        raise ValueError(f"p must be >= 3 and the frequencies in 1..p//2 with positive amplitudes; got p={p}, {amps}")
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(13, 4)))
    c = np.arange(p)
    tau = sum(a * np.cos(2 * np.pi * int(k) * c / p + rng.uniform(0, 2 * np.pi)) for k, a in sorted(amps.items()))
    tau = tau / np.linalg.norm(tau)
    shifts = np.stack([np.roll(tau, a) for a in range(p)])
    a_idx, b_idx = np.repeat(c, p), np.tile(c, p)
    X = np.concatenate([shifts[a_idx], shifts[b_idx]], axis=1)
    return X, shifts[(a_idx + b_idx) % p], tau


def modular_init(p: int, width: int, init: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``W_in (width, 2p)`` and ``W_out (p, width)``, entries ``N(0, init²/fan_in)``."""
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(13, 5)))
    return (rng.standard_normal((width, 2 * p)) * (init / math.sqrt(2 * p)),
            rng.standard_normal((p, width)) * (init / math.sqrt(width)))


def fourier_power(W_out: np.ndarray, gram: np.ndarray) -> np.ndarray:
    """``sqrt(mean_x |F_k f(x)|²)`` for ``k = 0 … p/2`` with ``f = W_out a`` and ``gram = mean_x a aᵀ``."""
    p = W_out.shape[0]
    FW = W_out.T @ np.fft.rfft(np.eye(p), axis=1)  # (width, p//2 + 1)
    return np.sqrt(np.maximum(np.real(np.einsum("hk,hg,gk->k", FW.conj(), gram, FW)), 0.0))


def gd_modular(X: Any, Y: Any, W_in: Any, W_out: Any, lr: float, momentum: float, iterations: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """Full-batch heavy-ball GD (``v ← βv + ∇L``, ``W ← W − lr·v``) on ``½ mean ‖y − W_out (W_in x)²‖²``. Returns
    the losses ``(T + 1,)`` and the output's Fourier power per frequency ``(T + 1, p//2 + 1)`` (float32)."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    Wi, Wo = np.array(W_in, dtype=np.float64), np.array(W_out, dtype=np.float64)
    N = X.shape[0]
    vi, vo = np.zeros_like(Wi), np.zeros_like(Wo)
    T = int(iterations)
    losses = np.empty(T + 1)
    mags = np.empty((T + 1, Y.shape[1] // 2 + 1), dtype=np.float32)
    for it in range(T + 1):
        h = X @ Wi.T
        a = h * h
        r = Y - a @ Wo.T
        losses[it] = 0.5 * np.einsum("ij,ij->", r, r) / N
        mags[it] = fourier_power(Wo, a.T @ a / N)
        if it == T:
            break
        vo = momentum * vo - (r.T @ a) / N
        vi = momentum * vi - ((2.0 * h * (r @ Wo)).T @ X) / N
        Wi -= lr * vi
        Wo -= lr * vo
        if not np.isfinite(losses[it]):
            raise FloatingPointError(f"gradient descent diverged at iteration {it} (lr={lr}, momentum={momentum})")
    return losses, mags
