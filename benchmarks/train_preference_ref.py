"""Rewrite the reference policies of ``PreferenceHallucination-v0`` (``envs/tasks/weights/preference_ref*.npz``):
supervised fine-tuning of the toy GRU captioner on 5,000 captions of which 20 % name the absent co-occurrence
partner (``papergym.envs.tasks.preference.train_reference``; deterministic for a seed, one CPU thread, float32).

    python benchmarks/train_preference_ref.py                  # both sizes (~25 s + ~60 s on one core)
    python benchmarks/train_preference_ref.py --sizes default  # only O = 12
    python benchmarks/train_preference_ref.py --smoke          # O = 12, 200 captions, 1 epoch, to a temporary folder

Prints the SFT loss and the greedy-caption statistics on 1,000 fresh scenes (the numbers of ``preference_ref.md``).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from papergym.envs.tasks.preference.task import SIZES, WEIGHTS_DIR, train_reference

RECIPE = {"n_captions": 5000, "halluc_frac": 0.2, "epochs": 40, "lr": 3e-3, "batch_size": 64, "seed": 0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="default,paper-scale", help="comma list of sizes (default, paper-scale)")
    ap.add_argument(
        "--out", default=None, help="output folder (default: the package's weights; --smoke: a temporary folder)"
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny training (size default, 200 captions, 1 epoch), written to a temporary folder unless "
        "--out names one",
    )
    args = ap.parse_args(argv)
    recipe = dict(RECIPE)
    if args.smoke:
        import tempfile

        args.sizes = "default"
        recipe.update(n_captions=200, epochs=1)
        args.out = args.out or tempfile.mkdtemp(prefix="papergym-preference-ref-")
    args.out = args.out or str(WEIGHTS_DIR)
    for size in [s for s in args.sizes.split(",") if s]:
        d = SIZES[size]
        t = time.perf_counter()
        W, stats = train_reference(n_objects=d["n_objects"], n_pairs=d["n_pairs"], **recipe)
        path = f"{args.out}/{d['weights']}"
        np.savez_compressed(path, **W)
        print(
            json.dumps(
                {
                    "size": size,
                    "file": path,
                    "seconds": round(time.perf_counter() - t, 1),
                    "n_params": int(sum(v.size for v in W.values())),
                    **recipe,
                    **{k: round(float(v), 4) for k, v in stats.items()},
                }
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
