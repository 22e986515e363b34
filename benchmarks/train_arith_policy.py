"""Rewrite the shipped arithmetic policy of ``RLDataSelection-v0``
(``envs/tasks/data_selection/weights/arith_policy.npz``) and its card (``arith_policy.md``) with the deterministic
pre-training :func:`papergym.envs.tasks.data_selection.model.pretrain_policy` (one torch thread).

    python benchmarks/train_arith_policy.py                # defaults of the shipped weights
    python benchmarks/train_arith_policy.py --out /tmp/w   # write elsewhere
    python benchmarks/train_arith_policy.py --smoke        # 5 steps of 16 problems, written to a temporary folder
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from papergym.envs.tasks.data_selection.model import PRETRAIN_DEFAULTS, WEIGHTS_PATH, pretrain_policy

CARD = (
    """# Arithmetic policy of RLDataSelection-v0 (papergym)

**What**: the partially competent policy whose RL training subset `RLDataSelection-v0` asks to choose
(`docs/papers/ufo-rl.md`): a character-level decoder-only Transformer, 2 layers, d = 64, 4 heads, MLP 256
(GELU), pre-LayerNorm, learned positions ({max_len} positions), output tied to the token embedding;
{n_params:,} parameters, float32, `arith_policy.npz` ({size_kb:.0f} kB; numpy arrays by parameter name plus
`config`). Tokenizer: one token per character of `_$0123456789+-=` (`_` pad, `$` EOS). Architecture and
tokenizer: `papergym/envs/tasks/data_selection/model.py`.

**How trained** (`pretrain_policy`): supervised cross-entropy on the answer tokens and EOS of freshly generated
problems `a+b=` / `a-b=` (a >= b), sizes (digits of the longer operand) 1, 2, 3 with probabilities
{digit_probs} (1–2-digit problems plus 30 % 3-digit ones; a 5 % share left the policy at 3 % on 3 digits,
without the partial competence GRPO needs, so `full-data` RL gained nothing), {steps} steps of {batch_size}
problems, Adam lr {lr:g} with {warmup} linear warm-up steps, then a cosine to {min_lr_ratio:g} x lr (1: constant;
a checkpoint annealed to lr 0 was too sharp for the task's RL recipe, see `pretrain_policy`), seed {seed}
(torch.Generator for the initialisation, numpy generator for the data), one torch thread; """
    """{seconds:.0f} s on a shared 2-core CPU. Final training loss
{final_loss:.4f} per token.

**Exact command**: `python benchmarks/train_arith_policy.py` (defaults: `{args}`).

**Accuracy reached** (greedy decoding, exact answer + EOS, {eval_n} fresh problems per size, seed {seed} + 1):

| size (digits) | 1 | 2 | 3 | 4 | 5 | 6 |
|---|---|---|---|---|---|---|
| accuracy | {acc} |

Sizes 4–6 are outside the training law (and their positions beyond 3-digit problems were never trained), so the
policy is competent on 1–2 digits, partial on 3 (about half right: the zone where GRPO groups mix right and wrong
answers) and poor beyond: the zone of proximal development the task's data selection is about.

**Provenance / licence**: generated data only, trained by this repository's code; same licence as papergym.
Determinism: bit-for-bit on one machine and torch build with one thread; other builds may differ in the last bits.
"""
)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=PRETRAIN_DEFAULTS["seed"])
    ap.add_argument("--steps", type=int, default=PRETRAIN_DEFAULTS["steps"])
    ap.add_argument("--batch-size", type=int, default=PRETRAIN_DEFAULTS["batch_size"])
    ap.add_argument("--lr", type=float, default=PRETRAIN_DEFAULTS["lr"])
    ap.add_argument("--warmup", type=int, default=PRETRAIN_DEFAULTS["warmup"])
    ap.add_argument("--eval-n", type=int, default=PRETRAIN_DEFAULTS["eval_n"])
    ap.add_argument("--min-lr-ratio", type=float, default=PRETRAIN_DEFAULTS["min_lr_ratio"])
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder of arith_policy.npz / .md (default: the shipped weights' folder; --smoke: a temporary folder)",
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny training (5 steps of 16 problems, 1 warm-up step, 16 evaluation problems per size) "
        "written to a temporary folder unless --out names one",
    )
    a = ap.parse_args(argv)
    if a.smoke:
        import tempfile

        a.steps, a.batch_size, a.warmup, a.eval_n = 5, 16, 1, 16
        a.out = a.out or Path(tempfile.mkdtemp(prefix="papergym-arith-policy-"))
    a.out = a.out or WEIGHTS_PATH.parent
    digit_probs = PRETRAIN_DEFAULTS["digit_probs"]
    t0 = time.perf_counter()
    w, card = pretrain_policy(
        seed=a.seed,
        steps=a.steps,
        batch_size=a.batch_size,
        lr=a.lr,
        warmup=a.warmup,
        digit_probs=digit_probs,
        eval_n=a.eval_n,
        min_lr_ratio=a.min_lr_ratio,
        log=lambda s: print(f"{s} ({time.perf_counter() - t0:.0f} s)", flush=True),
    )
    secs = time.perf_counter() - t0
    a.out.mkdir(parents=True, exist_ok=True)
    npz = a.out / "arith_policy.npz"
    np.savez_compressed(npz, **w)
    acc = card["accuracy_by_digits"]
    args = {
        "seed": a.seed,
        "steps": a.steps,
        "batch_size": a.batch_size,
        "lr": a.lr,
        "warmup": a.warmup,
        "eval_n": a.eval_n,
        "min_lr_ratio": a.min_lr_ratio,
    }
    text = CARD.format(
        max_len=int(w["config"][4]),
        n_params=card["n_params"],
        size_kb=npz.stat().st_size / 1024,
        digit_probs=", ".join(f"{p:g}" for p in digit_probs),
        steps=a.steps,
        batch_size=a.batch_size,
        lr=a.lr,
        warmup=a.warmup,
        min_lr_ratio=a.min_lr_ratio,
        seed=a.seed,
        seconds=secs,
        final_loss=card["final_loss"],
        args=json.dumps(args),
        eval_n=a.eval_n,
        acc=" | ".join(f"{acc[d]:.3f}" for d in range(1, 7)),
    )
    (a.out / "arith_policy.md").write_text(text)
    print(json.dumps({"accuracy_by_digits": acc, "seconds": round(secs, 1), "n_params": card["n_params"]}))


if __name__ == "__main__":
    main()
