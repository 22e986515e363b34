"""Search settings, learning curve and model-card check for shipped MIStar weights.

``tune``  runs the parallel greedy search of a weights file on DANIEL's SD2 10x5 *validation* split (never
          the test set) for each search setting (tabu rule x temperature) and prints mean makespans; the
          agent's defaults are chosen from this table.
``check`` runs ``mistar`` through ``FJSPImprove-v0`` on the first ``--count`` SD2 10x5 test instances
          (T = ``--horizon``, seed 0, the protocol's ``sampled-dispatch`` start) and writes
          ``weights/<name>.card.json``: the training metadata stored in the weights file plus these makespans
          and their mean gap, which ``tests/agents/scheduling/test_mistar.py`` reproduces.
``choose-p`` picks the deployed ``P`` on the validation split (:func:`choose_p`).
``curve``  prints the learning curve of a training run from its ``<weights>.history.json`` (validation mean
          makespan per checkpoint, wall time) as a markdown table for the model card.

    python benchmarks/mistar_card.py tune sd2-10x5 --count 20 --horizon 100
    python benchmarks/mistar_card.py check sd2-10x5 --count 5 --horizon 100
    python benchmarks/mistar_card.py curve agents/scheduling/mistar/weights/sd2-10x5.pt.history.json
    python benchmarks/mistar_card.py --smoke    # tune, choose-p and check on 1 instance, T = 5; card to a temp folder

``curve`` needs the history file of a training run, which is not shipped: ``--smoke`` trains a tiny policy (one
batch of 2 episodes, :func:`~papergym.agents.scheduling.mistar.train.train_to_file`) into its temporary folder
and prints that run's curve.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

import papergym.envs  # noqa: F401
from papergym.agents.base import make_agent, play_episode
from papergym.agents.scheduling.mistar.agent import WEIGHTS_DIR, load_policy
from papergym.agents.scheduling.mistar.train import greedy_search, validation_instances


def tune(name: str, count: int, horizon: int) -> None:
    torch.set_num_threads(1)
    pol, meta = load_policy(name)
    val = validation_instances("sd2", 10, 5, count)
    print(f"{name}: parallel greedy search (P = 16) on {count} SD2 10x5 validation instances, T = {horizon}")
    print(f"{'tabu':<10}{'temperature':>12}{'mean C_max':>12}{'s':>7}")
    for tabu in ("reverse", "visited"):
        for temp in (1.0, 2.0, 4.0):
            t0 = time.perf_counter()
            c = [greedy_search(pol, inst, horizon, p=16, seed=0, tabu=tabu, temperature=temp) for inst in val]
            print(f"{tabu:<10}{temp:>12.1f}{np.mean(c):>12.2f}{time.perf_counter() - t0:>7.0f}")


def choose_p(name: str, count: int, horizon: int, grid=(1, 2, 4, 8, 16)) -> int:
    """The deployed ``P``: the value of ``grid`` with the lowest mean makespan of the search with these weights
    on DANIEL's SD2 10x5 *validation* split (seed 0; ties to the smaller ``P``), at the temperature and tabu
    rule stored with the weights. Uniform proposals at the same ``P`` are printed for reference."""
    torch.set_num_threads(1)
    pol, meta = load_policy(name)
    search = dict(meta.get("search") or {})
    temp, tabu = float(search.get("temperature", 2.0)), str(search.get("tabu", "visited"))
    val = validation_instances("sd2", 10, 5, count)
    print(f"{name}: search on {count} SD2 10x5 validation instances, T = {horizon}, temperature {temp}, {tabu} tabu")
    print(f"{'P':>4}{'trained':>10}{'uniform':>10}")
    best = None
    for p in grid:
        c = np.mean([greedy_search(pol, inst, horizon, p=p, seed=0, tabu=tabu, temperature=temp) for inst in val])
        u = np.mean(
            [greedy_search(pol, inst, horizon, p=p, seed=0, tabu=tabu, temperature=temp, uniform=True) for inst in val]
        )
        print(f"{p:>4}{c:>10.2f}{u:>10.2f}", flush=True)
        if best is None or c < best[1]:
            best = (p, c)
    print(f"chosen P = {best[0]}")
    return best[0]


def check(name: str, count: int, horizon: int, out_dir: str | None = None) -> None:
    _, meta = load_policy(name)
    agent = "mistar" if name == "sd2-10x5" else "mistar-no-memory"
    names, cmax, gaps = [], [], []
    for i in range(count):
        env = gym.make("FJSPImprove-v0", instances="sd2-10x5", horizon=horizon, init="sampled-dispatch").unwrapped
        obs, _ = env.reset(seed=0, options={"index": i})
        pol = make_agent(agent, env.problem, seed=0, weights=name)
        play_episode(pol, env, obs)
        names.append(env.instance.name)
        cmax.append(int(env.makespan))
        gaps.append(env.oracle.gap(env.makespan))
    card = {
        "weights": f"{name}.pt",
        "agent": agent,
        "training": meta,
        "check": {
            "set": "sd2-10x5",
            "init": "sampled-dispatch",
            "instances": names,
            "horizon": horizon,
            "seed": 0,
            "makespans": cmax,
            "mean_gap": float(np.mean(gaps)),
            "torch": str(torch.__version__),
        },
    }
    out = (WEIGHTS_DIR if out_dir is None else Path(out_dir)) / f"{name}.card.json"
    out.write_text(json.dumps(card, indent=1) + "\n")
    print(json.dumps(card["check"], indent=1))
    print(f"wrote {out}")


def curve(history: str) -> None:
    with open(history) as fh:
        h = json.loads(fh.read())
    print("| batch | episodes | validation mean makespan | wall time (s) |")
    print("|---|---|---|---|")
    n_envs = h["config"]["n_envs"]
    for v in h["validation"]:
        print(f"| {v['batch']} | {v['batch'] * n_envs} | {v['mean_cmax']:.2f} | {v['seconds']:.0f} |")
    print(
        f"\nbest: batch {h.get('best_batch')} ({h['best_validation']:.2f}); {h['transitions']} transitions in "
        f"{h['seconds']:.0f} s"
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", nargs="?", choices=("tune", "choose-p", "check", "curve"))
    ap.add_argument("weights", nargs="?", default="sd2-10x5")
    ap.add_argument("--count", type=int, default=None)
    ap.add_argument("--horizon", type=int, default=100)
    ap.add_argument("--out-dir", default=None, help="check: folder of the card (default: the weights folder)")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run of tune, choose-p (P in 1, 2) and check (1 instance, T = 5, card to a temp folder), "
        "then curve of a tiny training run written there",
    )
    args = ap.parse_args(argv)
    if args.smoke:
        if args.command is not None:
            ap.error("--smoke runs tune, choose-p and check itself: give no command")
        out_dir = args.out_dir or tempfile.mkdtemp(prefix="papergym-mistar-card-")
        tune(args.weights, 1, 5)
        choose_p(args.weights, 1, 5, grid=(1, 2))
        check(args.weights, 1, 5, out_dir)
        from papergym.agents.scheduling.mistar.train import TrainConfig, train_to_file

        cfg = TrainConfig(
            episodes=2,
            n_envs=2,
            horizon=5,
            n_step=5,
            epochs=1,
            p=2,
            hidden=8,
            layers=1,
            validate_every=1,
            validate_count=1,
            validate_horizon=5,
        )
        train_to_file(cfg, Path(out_dir) / "smoke.pt", log=lambda _msg: None)
        curve(str(Path(out_dir) / "smoke.pt.history.json"))
        return
    if args.command is None:
        ap.error("the following arguments are required: command")
    if args.command == "curve":
        curve(args.weights)
    elif args.command == "choose-p":
        choose_p(args.weights, args.count or 20, args.horizon)
    elif args.command == "tune":
        tune(args.weights, args.count or 20, args.horizon)
    else:
        check(args.weights, args.count or 5, args.horizon, args.out_dir)


if __name__ == "__main__":
    main()
