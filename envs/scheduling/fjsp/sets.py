"""The instance catalogue: shipped benchmark files, regenerated synthetic sets and their reference values.

Named sets (``instances=`` of the environments, ``papergym fjsp show``):

==================  ===========================================================================
``brandimarte``     mk01–mk10 (Brandimarte 1993), ``data/brandimarte/``
``hurink-edata``    la01–la40 of Hurink, Jurisch & Thole (1994), e/r/v data, ``data/hurink/<x>data/``
``hurink-rdata``
``hurink-vdata``
``sd1-<n>x<m>``     SD1 test files of Song et al. (fjsp-drl), shipped for the sizes in ``data/sd1/``
``sd2-<n>x<m>``     DANIEL's SD2 "mix" test set, regenerated with the legacy RNG (seed 200, 100 instances)
==================  ===========================================================================

Single instances are named ``<set>/<member>``: ``brandimarte/mk01``, ``hurink-rdata/la16``,
``sd2-10x5/007`` (1-based like DANIEL's file names). Reference values (:func:`reference`) come from the
versioned table ``data/bks.json`` (benchmarks: LB, UB, source; validated ``LB ≤ UB`` on load, a flagged
entry is kept and reported) and ``data/references.json`` (papergym's own offline CP-SAT runs on the
synthetic sets, with solver version, workers and time limit).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from papergym.envs.scheduling.fjsp.generators import parse_size, sd2_published
from papergym.envs.scheduling.fjsp.instance import Instance
from papergym.envs.scheduling.fjsp.parser import read_fjs

__all__ = [
    "DATA_DIR",
    "FIXED_SETS",
    "list_sets",
    "load_set",
    "load_instance",
    "reference",
    "Reference",
    "bks_table",
    "UnknownInstanceError",
]

DATA_DIR = Path(str(resources.files("papergym.envs.scheduling.fjsp") / "data"))

FIXED_SETS = {
    "brandimarte": "brandimarte",
    "hurink-edata": "hurink/edata",
    "hurink-rdata": "hurink/rdata",
    "hurink-vdata": "hurink/vdata",
}


class UnknownInstanceError(ValueError):
    def __str__(self) -> str:
        return str(self.args[0])


def _sd1_sizes() -> list[str]:
    d = DATA_DIR / "sd1"
    return sorted(p.name for p in d.iterdir() if p.is_dir()) if d.is_dir() else []


def list_sets() -> list[str]:
    """Every named set: the shipped benchmarks, the shipped SD1 sizes and the SD2 training and
    generalisation sizes (any ``sd2-<n>x<m>`` is accepted)."""
    sd2 = ["sd2-10x5", "sd2-20x5", "sd2-15x10", "sd2-20x10", "sd2-30x10", "sd2-40x10"]
    return list(FIXED_SETS) + [f"sd1-{s}" for s in _sd1_sizes()] + sd2


@functools.lru_cache(maxsize=64)
def _load_set(name: str) -> tuple[Instance, ...]:
    if name in FIXED_SETS:
        folder = DATA_DIR / FIXED_SETS[name]
        files = sorted(folder.glob("*.fjs"))
        if not files:
            raise UnknownInstanceError(f"instance set {name!r}: no files in {folder}")
        return tuple(read_fjs(f, name=f"{name}/{f.stem}") for f in files)
    m = re.fullmatch(r"(sd1|sd2)-(\d+x\d+)", name)
    if m:
        fam, size = m.groups()
        n_jobs, n_mach = parse_size(size)
        if fam == "sd2":
            return tuple(sd2_published(n_jobs, n_mach, split="test", name_prefix=name))
        folder = DATA_DIR / "sd1" / size
        files = sorted(folder.glob("*.fjs"))
        if not files:
            raise UnknownInstanceError(
                f"instance set {name!r}: SD1 files are shipped for {_sd1_sizes() or 'no size'}; "
                f"use family='sd1' with n_jobs/n_machines to generate fresh instances"
            )
        return tuple(read_fjs(f, name=f"{name}/{i + 1:03d}") for i, f in enumerate(files))
    raise UnknownInstanceError(
        f"unknown instance set {name!r}; valid sets: {', '.join(list_sets())} (and any sd2-<n>x<m>)"
    )


def load_set(name: str) -> list[Instance]:
    """The instances of a named set, in a fixed order."""
    return list(_load_set(str(name)))


def load_instance(name: str) -> Instance:
    """One instance by ``<set>/<member>`` (``brandimarte/mk01``, ``sd2-10x5/007``)."""
    if "/" not in str(name):
        raise UnknownInstanceError(f"instance names look like '<set>/<member>' (e.g. 'brandimarte/mk01'), got {name!r}")
    set_name, member = str(name).split("/", 1)
    for inst in _load_set(set_name):
        if inst.name == f"{set_name}/{member}":
            return inst
    members = [i.name.split("/", 1)[1] for i in _load_set(set_name)]
    raise UnknownInstanceError(f"set {set_name!r} has no member {member!r}; members: {', '.join(members)}")


# ------------------------------------------------------------------------------------------- references
@dataclass(frozen=True)
class Reference:
    """Reference values of one instance: ``lb`` (proven lower bound or None), ``ub`` (best known
    makespan or None), ``optimal`` (``lb == ub`` proven), ``source`` (provenance), ``alt`` (other sources'
    values, e.g. DANIEL's csv, kept for comparability), ``flag`` (a data problem found on validation)."""

    lb: int | None
    ub: int | None
    optimal: bool
    source: str
    alt: dict
    flag: str = ""


@functools.lru_cache(maxsize=1)
def bks_table() -> dict[str, Reference]:
    """``data/bks.json`` and ``data/references.json`` merged, validated (``lb ≤ ub`` or flagged)."""
    out: dict[str, Reference] = {}
    for fname in ("bks.json", "references.json"):
        path = DATA_DIR / fname
        if not path.is_file():
            continue
        doc = json.loads(path.read_text())
        for key, e in doc.get("instances", {}).items():
            lb, ub = e.get("lb"), e.get("ub")
            flag = str(e.get("flag", ""))
            if lb is not None and ub is not None and lb > ub and not flag:
                flag = "lb > ub in source"
            out[key] = Reference(
                lb=None if lb is None else int(lb),
                ub=None if ub is None else int(ub),
                optimal=bool(e.get("optimal", lb is not None and lb == ub)),
                source=str(e.get("source", fname)),
                alt=dict(e.get("alt", {})),
                flag=flag,
            )
    return out


def reference(name: str) -> Reference | None:
    """The reference of an instance name (``None`` if none is recorded)."""
    return bks_table().get(str(name))
