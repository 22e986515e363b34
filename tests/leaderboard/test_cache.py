"""The runner's cell cache (``papergym.leaderboard.runner.cache``): reuse, damage detection, legacy, concurrency."""

from __future__ import annotations

import json
import logging
import multiprocessing as mp
import time
from typing import ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from papergym.agents import base as abase
from papergym.envs.tasks import base as tbase
from papergym.envs.tasks.base import Budget, InstanceRef
from papergym.leaderboard.cli import main as cli_main
from papergym.leaderboard.runner import cache as cellcache
from papergym.leaderboard.runner import compare as runner
from papergym.leaderboard.runner.bench import bench
from papergym.leaderboard.runner.compare import compare

ENV = "NonStatLipschitz-v0"
CACHE_LOGGER = "papergym.leaderboard.runner.cache"


def _curves(res):
    return res.curves.sort_values(["agent", "seed", "t"]).reset_index(drop=True)


def _flip(path, pos: int) -> None:
    data = bytearray(path.read_bytes())
    data[pos] ^= 0x01
    path.write_bytes(bytes(data))


def _numbers(summary):
    """The summary without its wall-time columns (the only part of a result that is not pure)."""
    return summary[[c for c in summary.columns if "sec" not in c]]


def _warned(caplog, path) -> bool:
    return any(
        r.levelno == logging.WARNING and r.name == CACHE_LOGGER and str(path) in r.getMessage() for r in caplog.records
    )


# ------------------------------------------------------------------------------------ the module itself
RECORD = {
    "cell": {"seed": 3, "kw": {"b": [1, 2.5, -0.0]}},
    "key": "ab" * 16,
    "status": "ok",
    "x": 1e-300,
    "s": 'd\u00e9j\u00e0 "vu"',
    "metrics": {"error": "nan"},
}


def test_json_entry_round_trip_is_plain_json(tmp_path):
    path = tmp_path / "e" / "k.json"
    cellcache.write_json(path, RECORD)
    assert cellcache.read_json(path) == RECORD
    raw = json.loads(path.read_text())  # still plain JSON: one extra member, the checksum
    assert raw.pop("sha256") and raw == RECORD
    assert not list(tmp_path.rglob(".tmp-*"))
    cellcache.write_json(tmp_path / "empty.json", {})
    assert cellcache.read_json(tmp_path / "empty.json") == {}
    assert cellcache.read_json(tmp_path / "missing.json") is None
    with pytest.raises(ValueError):
        cellcache.write_json(tmp_path / "bad.json", {"sha256": "x"})


def test_every_single_byte_flip_of_a_json_entry_is_caught(tmp_path, caplog):
    path = tmp_path / "k.json"
    cellcache.write_json(path, RECORD)
    good = path.read_bytes()
    payload_end = good.rindex(b', "sha256"')
    for pos in range(len(good)):
        path.write_bytes(good)
        _flip(path, pos)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger=CACHE_LOGGER):
            got = cellcache.read_json(path)
        # never a wrong record; every change of the payload bytes is refused with a warning naming the file
        assert got is None or got == RECORD, pos
        if pos < payload_end:
            assert got is None and _warned(caplog, path), pos
    for n in range(len(good)):  # truncation anywhere
        path.write_bytes(good[:n])
        caplog.clear()
        with caplog.at_level(logging.INFO, logger=CACHE_LOGGER):
            assert cellcache.read_json(path) is None
        assert _warned(caplog, path), n


def _table():
    t = np.arange(1, 65, dtype=np.int64)
    return pa.table({"t": t, "cum_regret": np.sqrt(t) * 1.2345, "simple": 1.0 / t})


def test_byte_flips_of_a_parquet_entry_are_caught(tmp_path, caplog):
    path = tmp_path / "k.parquet"
    meta = {"key": "ab" * 16, "diagnostics": {"restarts": 3}}
    cellcache.write_table(path, _table(), meta)
    got = cellcache.read_table(path)
    assert got is not None and got[0] == meta and got[1].equals(_table())
    assert pq.read_table(path).schema.metadata[b"papergym"] == json.dumps(meta).encode()  # plain parquet
    good = path.read_bytes()
    refused, tried = 0, range(0, len(good), 3)  # every third byte: all regions, a third of the time
    for pos in tried:
        path.write_bytes(good)
        _flip(path, pos)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger=CACHE_LOGGER):
            got = cellcache.read_table(path)
        if got is None:
            refused += 1
            assert _warned(caplog, path), pos
        else:  # a flip the reader cannot see (e.g. in statistics it does not use) changes no number
            assert got[0] == meta and got[1].select(["t", "cum_regret", "simple"]).equals(_table()), pos
    assert refused > len(tried) // 2
    for n in range(0, len(good), 11):
        path.write_bytes(good[:n])
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=CACHE_LOGGER):
            assert cellcache.read_table(path) is None
        assert _warned(caplog, path), n


def _writer(args):
    path, kind, i, n = args
    for j in range(n):
        if kind == "json":
            cellcache.write_json(path, {"key": "k", "writer": i, "j": j, "pad": "x" * (100 * i)})
        else:
            cellcache.write_table(path, pa.table({"v": np.full(1000 * (i + 1), float(i))}), {"key": "k", "writer": i})
    return i


def _reader(args):
    path, kind, seconds = args
    bad, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        if kind == "json":
            got = cellcache.read_json(path)
            bad += got is not None and got["pad"] != "x" * (100 * got["writer"])
        else:
            got = cellcache.read_table(path)
            bad += got is not None and not (got[1]["v"].to_numpy() == got[0]["writer"]).all()
        bad += got is None and path.exists()  # once written, an entry is always whole
    return bad


@pytest.mark.parametrize("kind", ["json", "parquet"])
def test_concurrent_writers_never_corrupt_an_entry(tmp_path, kind, caplog):
    path = tmp_path / "cell" / f"k.{kind}"
    _writer((path, kind, 0, 1))
    ctx = mp.get_context("fork")
    with caplog.at_level(logging.WARNING, logger=CACHE_LOGGER), ctx.Pool(5) as pool:
        readers = pool.map_async(_reader, [(path, kind, 3.0)])
        writers = pool.map(_writer, [(path, kind, i, 40) for i in range(4)])
        assert writers == [0, 1, 2, 3] and readers.get(timeout=60) == [0]
    got = cellcache.read_json(path) if kind == "json" else cellcache.read_table(path)
    assert got is not None and not list(path.parent.glob(".tmp-*"))


# ---------------------------------------------------------------------------------------- compare
@pytest.fixture
def counted(monkeypatch):
    calls = []
    real = runner.run_cells

    def counting(env_id, kwargs, agent, hp, seeds, mode):
        calls.extend((agent, s) for s in seeds)
        return real(env_id, kwargs, agent, hp, seeds, mode)

    monkeypatch.setattr(runner, "run_cells", counting)
    return calls


KW = {"agents": ["binning-ucb", "uniform-random"], "seeds": [0, 1], "horizon": 300, "backend": "serial"}


def test_compare_reuses_cells_and_recomputes_damaged_ones(tmp_path, counted, caplog):
    cache = tmp_path / "cache"
    first = compare(ENV, **KW, out=cache)
    assert len(counted) == 4
    counted.clear()
    again = compare(ENV, **KW, out=cache)
    assert counted == []  # reused
    pd.testing.assert_frame_equal(_curves(first), _curves(again), check_exact=True)
    fresh = compare(ENV, **KW, out=tmp_path / "fresh", cache=False)
    files = sorted(cache.rglob("*.parquet"))
    assert len(files) == 4
    for damage in ("flip", "truncate"):
        victim = files[0 if damage == "flip" else 3]
        data = victim.read_bytes()
        if damage == "flip":
            _flip(victim, len(data) // 3)
        else:
            victim.write_bytes(data[: len(data) // 2])
        counted.clear()
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=CACHE_LOGGER):
            res = compare(ENV, **KW, out=cache)
        assert _warned(caplog, victim), damage
        assert len(counted) == 1, damage  # only the damaged cell ran again
        pd.testing.assert_frame_equal(_curves(res), _curves(fresh), check_exact=True)
        pd.testing.assert_frame_equal(_numbers(res.summary), _numbers(fresh.summary), check_exact=True)
        assert cellcache.read_table(victim) is not None  # rewritten whole
    # the per-seed instance facts (JSON) are checked the same way
    facts = sorted((cache / ENV).rglob("*.json"))
    assert facts
    _flip(facts[0], len(facts[0].read_bytes()) // 2)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=CACHE_LOGGER):
        res = compare(ENV, **KW, out=cache)
    assert _warned(caplog, facts[0]) and cellcache.read_json(facts[0]) is not None
    pd.testing.assert_frame_equal(_numbers(res.summary), _numbers(fresh.summary), check_exact=True)


def test_cli_compare_with_a_damaged_cache_warns_and_exits_0(tmp_path, caplog):
    cache = tmp_path / "cache"
    argv = [
        "compare",
        ENV,
        "--agents",
        "uniform-random",
        "--seeds",
        "2",
        "--horizon",
        "200",
        "--backend",
        "serial",
        "--quiet",
        "--cache-dir",
        str(cache),
    ]
    assert cli_main([*argv, "--out", str(tmp_path / "a")]) == 0
    victim = min(cache.rglob("*.parquet"))
    _flip(victim, len(victim.read_bytes()) // 4)
    with caplog.at_level(logging.WARNING, logger=CACHE_LOGGER):
        assert cli_main([*argv, "--out", str(tmp_path / "b")]) == 0
    assert _warned(caplog, victim)
    assert cli_main([*argv, "--out", str(tmp_path / "c"), "--no-cache"]) == 0
    pd.testing.assert_frame_equal(
        _numbers(pd.read_csv(tmp_path / "b" / "summary.csv")),
        _numbers(pd.read_csv(tmp_path / "c" / "summary.csv")),
        check_exact=True,
    )
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "b" / "curves.parquet"),
        pd.read_parquet(tmp_path / "c" / "curves.parquet"),
        check_exact=True,
    )


def test_compare_entries_without_checksum_are_recomputed_and_upgraded(tmp_path, counted, caplog):
    cache = tmp_path / "cache"
    first = compare(ENV, **KW, out=cache)
    for f in cache.rglob("*.parquet"):  # rewrite as an older papergym did: no checksum
        table = pq.read_table(f)
        meta = table.schema.metadata[b"papergym"]
        pq.write_table(table.replace_schema_metadata({b"papergym": meta}), f)
    for f in (cache / ENV).rglob("*.json"):
        f.write_text(json.dumps(cellcache.read_json(f)))
    counted.clear()
    with caplog.at_level(logging.INFO, logger=CACHE_LOGGER):
        res = compare(ENV, **KW, out=cache)
    assert len(counted) == 4
    assert any("no checksum" in r.getMessage() for r in caplog.records)
    assert not any(r.levelno >= logging.WARNING for r in caplog.records if r.name == CACHE_LOGGER)
    pd.testing.assert_frame_equal(_curves(res), _curves(first), check_exact=True)
    assert all(cellcache.read_table(f) is not None for f in cache.rglob("*.parquet"))
    assert all(cellcache.read_json(f) is not None for f in (cache / ENV).rglob("*.json"))
    counted.clear()
    compare(ENV, **KW, out=cache)
    assert counted == []


# ------------------------------------------------------------------------------------------ bench
TOY = "ToyCacheQuadratic-v0"


class _ToyEvaluator:
    def __init__(self, target):
        self.target = target

    def evaluate(self, solution):
        err = float(np.linalg.norm(np.asarray(solution, dtype=float) - self.target))
        return {"error": err, "solved": float(err < 1e-6)}


class _ToyTask:
    id = TOY
    metrics: ClassVar[dict[str, str]] = {"error": "min", "solved": "max"}
    primary = "error"
    default_budget = Budget(max_seconds=30, max_iterations=50)

    def __init__(self, dims=(2, 5)):
        self.dims = [int(d) for d in dims]

    def instances(self, split="dev"):
        return [InstanceRef(TOY, split, f"q{d}", 0, {"dim": d}) for d in self.dims]

    def make(self, ref):
        a = np.random.default_rng(ref.params["dim"]).normal(size=ref.params["dim"])
        return {"dim": ref.params["dim"], "grad": lambda x, a=a: 2 * (x - a)}, _ToyEvaluator(a)


class _GD:
    calls = 0

    def __init__(self, *, seed=None, lr=0.3):
        self.lr = lr

    def solve(self, problem, budget, report):
        type(self).calls += 1
        x = np.zeros(problem["dim"])
        for _ in range(budget.max_iterations):
            x = x - self.lr * problem["grad"](x)
        return x


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(tbase._TASKS, TOY, (__name__, _ToyTask))
    abase.register_solver("toy-cache-gd", _GD, tasks=[TOY], role="baseline")
    _GD.calls = 0
    yield
    abase._SOLVERS.pop("toy-cache-gd", None)


def test_bench_reuses_solves_and_recomputes_damaged_ones(toy, tmp_path, caplog):
    cache = tmp_path / "cache"
    first = bench(TOY, solvers=["toy-cache-gd"], backend="serial", out=cache)
    assert _GD.calls == 2
    again = bench(TOY, solvers=["toy-cache-gd"], backend="serial", out=cache)
    assert _GD.calls == 2  # reused
    pd.testing.assert_frame_equal(_numbers(first.summary), _numbers(again.summary), check_exact=True)
    fresh = bench(TOY, solvers=["toy-cache-gd"], backend="serial", out=tmp_path / "fresh", cache=False)
    files = sorted(cache.rglob("*.json"))
    assert len(files) == 2
    for victim, damage in zip(files, ("flip", "truncate")):
        data = victim.read_bytes()
        if damage == "flip":
            pos = data.index(b'"metrics": {"error": ') + len(b'"metrics": {"error": ')  # 0.0 -> 1.0: still valid JSON
            _flip(victim, pos)
        else:
            victim.write_bytes(data[:-10])
        calls = _GD.calls
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=CACHE_LOGGER):
            res = bench(TOY, solvers=["toy-cache-gd"], backend="serial", out=cache)
        assert _warned(caplog, victim) and _GD.calls == calls + 1, damage
        cols = ["label", "instance", "seed", "status", "error", "solved"]
        pd.testing.assert_frame_equal(
            res.runs[cols].reset_index(drop=True), fresh.runs[cols].reset_index(drop=True), check_exact=True
        )
        pd.testing.assert_frame_equal(_numbers(res.summary), _numbers(fresh.summary), check_exact=True)
        assert cellcache.read_json(victim) is not None
