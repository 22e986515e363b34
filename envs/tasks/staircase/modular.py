"""``FeatureStaircase-v0``, setting ``modular-addition``: a two-layer network with quadratic activation learning
the group composition of a template on ℤ_p (optional track; AGF paper §5,
notebook ``modular arithmetic`` [code]).

Instance [design unless tagged]:

* a template ``τ ∈ ℝ^p`` (``p = 20``) with the spectrum ``10, 5, 2.5`` at frequencies ``1, 3, 5`` [code] and
  phases drawn from the seed, at the notebook's scale: ``τ = ifft(spectrum).real``, i.e. ``τ_c = Σ_k (2A_k/p)
  cos(2πkc/p + φ_k)`` (cosine amplitudes 1, 0.5, 0.25 at ``p = 20``; ``‖τ‖² = 13.125``) [code];
* inputs ``x_{ab} = [ρ_a τ, ρ_b τ] ∈ ℝ^{2p}`` (``ρ_a``: cyclic shift by ``a``), targets ``y_{ab} = ρ_{a+b} τ``, all
  ``p² = 400`` pairs (the full batch) [code: full batch 400];
* the network ``f(x) = W_out (W_in x)²`` (``W_in``: width × 2p, ``W_out``: p × width), width 18, entries
  ``N(0, init²/fan_in)`` with ``init = 1e−2`` [code]; loss ``½ mean_{ab} ‖y − f(x)‖²``;
* training (the ground truth): full-batch heavy-ball GD, momentum ``0.9`` [code], ``2·10⁵`` iterations (the
  horizon), step ``lr = 0.02/p`` (``1e−3`` at ``p = 20``): the notebook's SGD lr 0.01 on ``nn.MSELoss`` (the mean
  over the ``p²`` pairs *and* the ``p`` outputs, no ½) is the same trajectory as lr ``0.01·2/p`` on this loss
  (½ mean over pairs of the sum over outputs) [code]. All three frequencies are learned within the horizon (seed 0:
  frequency 1 by ≈ 1·10⁴ iterations, 3 by ≈ 2.5·10⁴, 5 at ≈ 6.5·10⁴ and ≈ 1.1·10⁵, loss 1e−4 of ``ℓ_0`` at 2·10⁵;
  the notebook's run: loss ≈ 0 by 1.7·10⁵ epochs). In the slow phases heavy-ball moves like gradient flow at time
  ``t = lr·k/(1 − β)``.

  An earlier version normalised ``τ`` to unit norm and kept lr 0.01 on this loss: both changes slow the dynamics
  (the quadratic network's utility is cubic in the data scale), and frequency 5 then fell outside the horizon, so
  the staircase showed only frequencies 1 and 3.

Features are frequencies ``k ∈ {1, …, p/2}``: the power ``‖F_k f‖`` of the network's output at ``k`` (mean over the
batch), per iteration; the drop's feature is the frequency whose power grows most. A frequency is learned in
several sub-drops (one per neuron that activates on it; a quadratic neuron represents only part of a frequency's
component), each at the level AGF predicts; the frequencies appear in decreasing amplitude order and the plateau
after each equals the energy of the frequencies not yet learned (tested).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["modular_instance", "modular_init", "modular_lr", "gd_modular", "fourier_power", "AMPLITUDES"]

AMPLITUDES = {1: 10.0, 3: 5.0, 5: 2.5}  # [code] template Fourier amplitudes by frequency


def modular_instance(
    p: int, seed: int, amplitudes: dict[int, float] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X (p², 2p), Y (p², p), template (p,))`` of the module docstring; pairs ``(a, b)`` in row-major order."""
    amps = dict(AMPLITUDES if amplitudes is None else amplitudes)
    p = int(p)
    if p < 3 or any(not (1 <= int(k) <= p // 2) for k in amps) or any(not a > 0 for a in amps.values()):
        raise ValueError(f"p must be >= 3 and the frequencies in 1..p//2 with positive amplitudes; got p={p}, {amps}")
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(13, 4)))
    c = np.arange(p)
    # ifft of the spectrum (A_k at ±k, phase φ_k): (2 A_k / p) cos(2πkc/p + φ_k); the Nyquist bin (2k = p) is one bin
    tau = sum(
        (a if 2 * int(k) == p else 2.0 * a) / p * np.cos(2 * np.pi * int(k) * c / p + rng.uniform(0, 2 * np.pi))
        for k, a in sorted(amps.items())
    )
    shifts = np.stack([np.roll(tau, a) for a in range(p)])
    a_idx, b_idx = np.repeat(c, p), np.tile(c, p)
    X = np.concatenate([shifts[a_idx], shifts[b_idx]], axis=1)
    return X, shifts[(a_idx + b_idx) % p], tau


def modular_lr(p: int, notebook_lr: float = 0.01) -> float:
    """This loss's GD step equal to the notebook's ``notebook_lr`` on ``nn.MSELoss``: ``2·notebook_lr/p``."""
    return 2.0 * float(notebook_lr) / int(p)


def modular_init(p: int, width: int, init: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``W_in (width, 2p)`` and ``W_out (p, width)``, entries ``N(0, init²/fan_in)``."""
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(13, 5)))
    return (
        rng.standard_normal((width, 2 * p)) * (init / math.sqrt(2 * p)),
        rng.standard_normal((p, width)) * (init / math.sqrt(width)),
    )


def fourier_power(W_out: np.ndarray, gram: np.ndarray) -> np.ndarray:
    """``sqrt(mean_x |F_k f(x)|²)`` for ``k = 0 … p/2`` with ``f = W_out a`` and ``gram = mean_x a aᵀ``."""
    p = W_out.shape[0]
    FW = W_out.T @ np.fft.rfft(np.eye(p), axis=1)  # (width, p//2 + 1)
    return np.sqrt(np.maximum(np.real(np.einsum("hk,hg,gk->k", FW.conj(), gram, FW)), 0.0))


def gd_modular(
    X: Any, Y: Any, W_in: Any, W_out: Any, lr: float, momentum: float, iterations: int
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
