"""papergym.canonical: the one canonical-JSON / hashing rule (cache keys, instance keys, store rows).

The expected strings and keys below were computed with the per-module implementations that
:mod:`papergym.canonical` replaced (``compare._canon``, ``bench._canon``, ``base._jsonable`` and
``store._jsonable``); they pin the cache keys and hidden-seed derivations to their former values.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

from papergym.canonical import NonFiniteError, NotJSONError, canonical_json, digest, to_json_value
from papergym.envs.tasks.base import InstanceRef, hidden_seeds
from papergym.envs.tasks.base import canonical_json as task_canonical_json
from papergym.leaderboard.board.store import _dumps as store_dumps
from papergym.leaderboard.runner import bench as B
from papergym.leaderboard.runner import compare as C

SAMPLES = [
    {},
    {"horizon": 1000, "n_arms": 5},
    {"b": 2.5, "a": [1, 2, 3], "c": {"z": None, "y": True, "x": "s"}},
    {"lr": np.float64(0.1), "k": np.int64(7), "flag": np.bool_(True), "v": np.arange(3), "m": np.eye(2)},
    {"t": (1, (2.0, 3)), 3: "int key", "nested": [{"q": 1e-300}, {"p": -0.0}]},
    {"f32": np.float32(0.1), "big": 2**70, "u": "\u03a9\u00e9\u2603"},
]
NONFIN = [{"x": math.inf, "y": -math.inf, "z": [math.nan, 1.0]}, {"arr": np.array([1.0, np.inf])}]

# former outputs (computed before the implementations were merged)
COMPARE_JSON = [
    "{}",
    '{"horizon":1000,"n_arms":5}',
    '{"a":[1,2,3],"b":2.5,"c":{"x":"s","y":true,"z":null}}',
    '{"flag":true,"k":7,"lr":0.1,"m":[[1.0,0.0],[0.0,1.0]],"v":[0,1,2]}',
    '{"3":"int key","nested":[{"q":1e-300},{"p":-0.0}],"t":[1,[2.0,3]]}',
    '{"big":1180591620717411303424,"f32":0.10000000149011612,"u":"\\u03a9\\u00e9\\u2603"}',
    '{"x":"inf","y":"-inf","z":["nan",1.0]}',
    '{"arr":[1.0,"inf"]}',
]
STORE_JSON = [
    "{}",
    '{"horizon": 1000, "n_arms": 5}',
    '{"a": [1, 2, 3], "b": 2.5, "c": {"x": "s", "y": true, "z": null}}',
    '{"flag": true, "k": 7, "lr": 0.1, "m": [[1.0, 0.0], [0.0, 1.0]], "v": [0, 1, 2]}',
    '{"3": "int key", "nested": [{"q": 1e-300}, {"p": -0.0}], "t": [1, [2.0, 3]]}',
    '{"big": 1180591620717411303424, "f32": 0.10000000149011612, "u": "\\u03a9\\u00e9\\u2603"}',
    '{"x": "Infinity", "y": "-Infinity", "z": ["NaN", 1.0]}',
    '{"arr": [1.0, "Infinity"]}',
]
BENCH_COLUMN_JSON = [
    "{}",
    '{"horizon": 1000, "n_arms": 5}',
    '{"a": [1, 2, 3], "b": 2.5, "c": {"x": "s", "y": true, "z": null}}',
    '{"flag": true, "k": 7, "lr": 0.1, "m": [[1.0, 0.0], [0.0, 1.0]], "v": [0, 1, 2]}',
    '{"3": "int key", "nested": [{"q": 1e-300}, {"p": -0.0}], "t": [1, [2.0, 3]]}',
    '{"big": 1180591620717411303424, "f32": 0.10000000149011612, "u": "\\u03a9\\u00e9\\u2603"}',
    '{"x": "inf", "y": "-inf", "z": ["nan", 1.0]}',
    '{"arr": [1.0, "inf"]}',
]
INSTANCE_KEYS = [
    "ef4fccb630aa3042",
    "dc5645975cd8afe0",
    "edc23e745124a5c6",
    "e31c928d091596a6",
    "69f7b9e95ce35bad",
    "7b6320c8136825b7",
    "13358c6f8d4bcab6",
    "b9ef6c191090db96",
]
HIDDEN_SEEDS = [831627490, 2134179496, 1442553412]
CELL_KEYS = [
    "0f715f30430462ef4bd90a72b4279442",
    "aff0b2e8c8116c0c61bdeb601f4fdc6a",
    "e8dc5241206545033b4f5a1bfed06816",
    "c6b55668f0bb1d246f57446b3164c936",
    "d84f81953f993b6819b7a12842461042",
    "67dbfc452d0d2f88ef25c2f27b7d5183",
]
SOLVE_KEYS = [
    "0c0f6a562c3772da0365b6b145c8bc4e",
    "369913a8b0d20a7a09062e0cffced8d9",
    "3118872e87560edf4e7461f0f044da91",
    "5d0b52c2c93dc5d2fb28978a86d85ddb",
    "df2ac9f0769e9a35a912a06ed7e07852",
    "3dfee1ae959a2499edbc55aa9db3b2d4",
]


# ------------------------------------------------------------------------------- the former outputs
@pytest.mark.parametrize("i", range(len(SAMPLES) + len(NONFIN)))
def test_cache_key_json_unchanged(i):
    value = (SAMPLES + NONFIN)[i]
    assert canonical_json(value, nonfinite="repr") == COMPARE_JSON[i]
    assert C.canonical_json(value) == COMPARE_JSON[i]
    assert B.canonical_json(value) == COMPARE_JSON[i]  # compare and bench share the cell-key rule
    assert canonical_json(value, nonfinite="repr", compact=False) == BENCH_COLUMN_JSON[i]


@pytest.mark.parametrize("i", range(len(SAMPLES) + len(NONFIN)))
def test_store_json_unchanged(i):
    value = (SAMPLES + NONFIN)[i]
    assert store_dumps(value, "spec") == STORE_JSON[i]
    assert canonical_json(value, nonfinite="name", compact=False, strict_keys=True) == STORE_JSON[i]


def test_task_canonical_json_is_the_strict_rule():
    for value, expected in zip(SAMPLES, COMPARE_JSON):
        assert task_canonical_json(value) == expected == canonical_json(value)
    with pytest.raises(ValueError, match="not a finite number"):
        task_canonical_json(NONFIN[0])


def test_instance_keys_and_hidden_seeds_unchanged():
    refs = [InstanceRef("T-v0", "dev", f"n{i}", i, s) for i, s in enumerate(SAMPLES + NONFIN)]
    assert [r.key for r in refs] == INSTANCE_KEYS
    assert hidden_seeds("T-v0", refs[2].key, 3, secret="s3cret") == HIDDEN_SEEDS
    # the instance key is json.dumps's default form (non-finite floats as the literals NaN / Infinity)
    assert refs[6].as_dict()["params"]["x"] == math.inf
    text = json.dumps(refs[6].as_dict(), sort_keys=True)
    assert "Infinity" in text and refs[6].key == hashlib.sha256(text.encode()).hexdigest()[:16]


def test_cell_keys_unchanged():
    cells = [C.Cell("E-v0", "abc", s, "agent", "def", {"lr": 0.5, "n": np.int32(3)}, 4) for s in SAMPLES]
    assert [C.cell_key(c) for c in cells] == CELL_KEYS
    solve = [
        B.SolveCell(
            "T-v0", "h", s, {"name": "x", "seed": 1}, "solver", "sh", {"eta": np.float64(1e-3)}, 2, {"max_seconds": 5.0}
        )
        for s in SAMPLES
    ]
    assert [c.key for c in solve] == SOLVE_KEYS


# --------------------------------------------------------------------------------------- the rule
def test_known_answers_and_digest():
    assert canonical_json({"b": 1, "a": [True, None, "x", 0.5]}) == '{"a":[true,null,"x",0.5],"b":1}'
    assert canonical_json({"b": 1, "a": 2}, compact=False) == '{"a": 2, "b": 1}'
    assert digest({"a": 1}) == hashlib.sha256(b'{"a":1}').hexdigest()[:16] == "015abd7f5cc57a2d"
    assert digest({"a": 1}, n=64) == hashlib.sha256(b'{"a":1}').hexdigest()
    assert len(digest([], n=5)) == 5
    for bad in (0, 65, 1.5, True):
        with pytest.raises(ValueError, match="n must be"):
            digest({}, n=bad)


def test_key_order_does_not_matter():
    a = {"x": 1, "y": {"p": 2, "q": [3, {"s": 4, "r": 5}]}}
    b = {"y": {"q": [3, {"r": 5, "s": 4}], "p": 2}, "x": 1}
    assert canonical_json(a) == canonical_json(b) and digest(a) == digest(b)
    assert digest({"x": [1, 2]}) != digest({"x": [2, 1]})  # list order does


def test_numpy_values_hash_like_python_values():
    py = {"f": 0.25, "i": 3, "b": False, "l": [[1, 2], [3, 4]], "t": [1.5, 2]}
    npv = {
        "f": np.float64(0.25),
        "i": np.int16(3),
        "b": np.bool_(False),
        "l": np.array([[1, 2], [3, 4]]),
        "t": (np.float32(1.5), np.uint8(2)),
    }
    assert canonical_json(npv) == canonical_json(py) and digest(npv) == digest(py)
    assert type(to_json_value(np.int64(7))) is int and type(to_json_value(np.float32(0.5))) is float
    assert to_json_value(np.zeros((0, 2))) == []


@pytest.mark.parametrize(
    ("rule", "nan", "pos", "neg"), [("repr", "nan", "inf", "-inf"), ("name", "NaN", "Infinity", "-Infinity")]
)
def test_nonfinite_as_strings(rule, nan, pos, neg):
    value = {"a": math.nan, "b": [math.inf, -math.inf], "c": np.float64(np.inf), "d": np.array([np.nan])}
    assert to_json_value(value, nonfinite=rule) == {"a": nan, "b": [pos, neg], "c": pos, "d": [nan]}
    assert json.loads(canonical_json(value, nonfinite=rule)) == {"a": nan, "b": [pos, neg], "c": pos, "d": [nan]}


def test_nonfinite_raise_and_keep():
    for v in (math.nan, math.inf, -math.inf, np.float32("nan")):
        with pytest.raises(NonFiniteError, match=r"value\['a'\]\[1\]: .* is not a finite number"):
            canonical_json({"a": [0.0, v]})
    kept = to_json_value({"a": math.inf}, nonfinite="keep")
    assert kept == {"a": math.inf}
    assert canonical_json({"b": math.nan, "a": -math.inf}, nonfinite="keep") == '{"a":-Infinity,"b":NaN}'
    with pytest.raises(ValueError, match="nonfinite must be one of"):
        canonical_json({}, nonfinite="null")


@dataclasses.dataclass
class _Point:
    x: int


@pytest.mark.parametrize("value", [Path("a/b"), _Point(1), {1, 2}, print, b"bytes", 1 + 2j])
def test_non_json_values_raise(value):
    with pytest.raises(NotJSONError, match=r"value\['k'\]: \w+ value .* is not a JSON value"):
        canonical_json({"k": value})
    # NotJSONError is both: TypeError (runner's contract) and ValueError (store's contract)
    with pytest.raises(TypeError):
        C.canonical_json({"k": value})
    with pytest.raises(ValueError, match=r"spec\['k'\]"):
        store_dumps({"k": value}, "spec")
    assert to_json_value({"k": value}, unknown="keep") == {"k": value}


def test_keys():
    assert canonical_json({1: "a", "2": "b"}) == '{"1":"a","2":"b"}'
    assert canonical_json({(1, 2): 0}) == '{"(1, 2)":0}'  # any key -> str(key) by default
    for key in ((1, 2), True, 1.5, None):
        with pytest.raises(NotJSONError, match="is not a string"):
            canonical_json({key: 0}, strict_keys=True)
    with pytest.raises(ValueError, match="is not a string"):
        store_dumps({True: 0}, "spec")
