"""MkDocs hook: let mkdocstrings (griffe) find ``papergym.*`` modules without importing them.

setuptools maps ``papergym.envs`` -> ``envs/``, ``papergym.agents`` -> ``agents/``, ... (``[tool.setuptools]
package-dir`` in ``pyproject.toml``), a layout griffe's static finder cannot follow. Before mkdocstrings loads
anything, this hook builds a temporary ``papergym`` package of symbolic links that mirrors that mapping and gives
its folder to the python handler as its search path. Nothing in the repository is written.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import tomllib
from pathlib import Path

from mkdocs.plugins import event_priority


def _mirror(root: Path) -> Path:
    mapping = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    tmp = Path(tempfile.mkdtemp(prefix="papergym-docs-api-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    pkg = tmp / "papergym"
    pkg.mkdir()
    for entry in (root / mapping["papergym"]).iterdir():  # papergym/__init__.py, canonical.py, ...
        (pkg / entry.name).symlink_to(entry.resolve())
    for name, folder in mapping.items():
        if name.count(".") == 1:  # papergym.envs -> envs/, ...
            link = pkg / name.split(".", 1)[1]
            if link.exists() or link.is_symlink():
                link.unlink()
            link.symlink_to((root / folder).resolve(), target_is_directory=True)
    return tmp


@event_priority(100)  # before mkdocstrings reads its handler configuration
def on_config(config, **kwargs):
    root = Path(config.config_file_path).resolve().parent
    handlers = config.plugins["mkdocstrings"].config.handlers
    python = handlers.setdefault("python", {})
    python["paths"] = [str(_mirror(root))]
    return config
