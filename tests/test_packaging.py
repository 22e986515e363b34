"""The distribution ships every subpackage: pyproject.toml lists packages explicitly (the package-dir mapping
papergym.envs -> envs/ etc. rules out automatic discovery), so a new folder must be added there or a wheel install
loses it while the editable install still works."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setuptools() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["setuptools"]


def _package_folders(package_dir: dict[str, str]) -> set[str]:
    found = set()
    for name, folder in package_dir.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            if "__pycache__" in rel.parts:
                continue
            found.add(name if rel == Path(".") else ".".join((name, *rel.parts)))
    return found


def test_every_package_folder_is_listed_and_every_listed_package_exists():
    cfg = _setuptools()
    listed, folders = set(cfg["packages"]), _package_folders(cfg["package-dir"])
    assert not folders - listed, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(folders - listed)}"
    for name in listed - folders:  # namespace folders (no __init__.py) are fine if they exist and hold modules
        top = max((k for k in cfg["package-dir"] if name == k or name.startswith(k + ".")), key=len)
        path = ROOT / cfg["package-dir"][top] / Path(*name[len(top) + 1 :].split(".")) if name != top else None
        assert path is not None and path.is_dir() and any(path.glob("*.py")), f"{name} is listed but has no folder"


def test_package_data_globs_match_files():
    cfg = _setuptools()
    for name, globs in cfg.get("package-data", {}).items():
        top = max((k for k in cfg["package-dir"] if name == k or name.startswith(k + ".")), key=len)
        base = ROOT / cfg["package-dir"][top] / Path(*name[len(top) + 1 :].split("."))
        for pattern in globs:
            assert list(base.glob(pattern)), f"package-data {name}: {pattern!r} matches nothing under {base}"
