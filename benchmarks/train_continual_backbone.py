"""Rewrite the stand-in backbone of ``ContinualDomains-v0``
(``envs/tasks/continual_domains/weights/continual_backbone.npz``) and its card (``continual_backbone.md``),
deterministically: :func:`papergym.envs.tasks.continual_domains.train_backbone` on the fixed 297-image source split of
``load_digits`` (torch, one thread, seed 0).

    python benchmarks/train_continual_backbone.py            # rewrite both files
    python benchmarks/train_continual_backbone.py --check    # retrain and compare with the shipped weights
    python benchmarks/train_continual_backbone.py --smoke    # 2 epochs, written to a temporary folder
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path

import numpy as np

from papergym.envs.tasks.continual_domains import WEIGHTS_PATH, train_backbone

CARD = """# ContinualDomains-v0 stand-in backbone

`continual_backbone.npz` (numpy, float32; {size} bytes; SHA-256 `{sha}`): the stand-in backbone of
`ContinualDomains-v0` (`docs/papers/lear.md`), the CPU-sized analogue of LEAR's pretrained ViT-B/16.

| array | shape | meaning |
|---|---|---|
| `W1`, `b1` | 128 × 64, 128 | first layer (frozen by every solver) |
| `W2`, `b2` | 128 × 128, 128 | second layer: the trainable layer of the global / local backbones |

Features: `relu(W2 relu(W1 x + b1) + b2)`, `x` an 8×8 digit image flattened, pixels / 16.

**Data**: scikit-learn's bundled `load_digits` (BSD-3; the UCI optical recognition of handwritten digits data set),
the fixed source split `source_split()` (the first {n_source} of `numpy.random.default_rng(0).permutation(1797)`),
original (untransformed) images only. The other {n_pool} images are the pool the task's domains draw from; no
domain image is a training image of the backbone.

**Training**: MLP 64 → 128 → 128 → 10 (ReLU), PyTorch default initialisation drawn from `torch.Generator` seeded
{seed}, Adam (lr {lr:g}, weight decay {wd:g}), cross-entropy, {epochs} epochs of mini-batches of {bs} (order from
`numpy.random.default_rng({seed})`), one CPU thread; the 10-way head is discarded.

**Accuracy reached** (with the discarded head): source split {acc_src:.4f}, the 1,500-image pool (held out,
original domain) {acc_pool:.4f}. Training took {secs:.1f} s on one CPU thread (torch {torch_version}).

**Reproduce** (rewrites this card and the weights; `--check` compares instead):

```
python benchmarks/train_continual_backbone.py
```
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="retrain and compare with the shipped weights")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder of continual_backbone.npz / .md (default: the shipped weights' folder; --smoke: a "
        "temporary folder)",
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny training (2 epochs) written to a temporary folder unless --out names one; with "
        "--check, compares the 2-epoch weights with the shipped ones",
    )
    args = ap.parse_args()
    import torch

    t0 = time.perf_counter()
    w, info = train_backbone(epochs=2) if args.smoke else train_backbone()
    secs = time.perf_counter() - t0
    out = args.out or (Path(tempfile.mkdtemp(prefix="papergym-continual-backbone-")) if args.smoke else None)
    path = WEIGHTS_PATH if out is None else out / WEIGHTS_PATH.name
    if args.check:
        with np.load(WEIGHTS_PATH) as z:
            diff = max(float(np.max(np.abs(z[k] - w[k]))) for k in w)
        print(f"max |retrained - shipped| = {diff:.3g}; pool accuracy {info['pool_accuracy']:.4f}")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **w)
    data = path.read_bytes()
    card = CARD.format(
        size=len(data),
        sha=hashlib.sha256(data).hexdigest(),
        n_source=info["n_source"],
        n_pool=info["n_pool"],
        seed=info["seed"],
        lr=info["lr"],
        wd=info["weight_decay"],
        epochs=info["epochs"],
        bs=info["batch_size"],
        acc_src=info["source_accuracy"],
        acc_pool=info["pool_accuracy"],
        secs=secs,
        torch_version=torch.__version__,
    )
    path.with_suffix(".md").write_text(card)
    print(
        f"wrote {path} ({len(data)} bytes) and its card; source {info['source_accuracy']:.4f}, "
        f"pool {info['pool_accuracy']:.4f}, {secs:.1f} s"
    )


if __name__ == "__main__":
    main()
