"""The runner's cell cache: atomic, checksummed, self-verifying entry files.

``compare`` (runs of an agent on an env seed, and per-seed instance facts), ``bench`` (solves of a
solver on an instance) and ``sweep`` (through ``compare``) all store their finished cells here, one
file per cell, named by the cell's key (the keys are chosen by the callers; this module never
changes them).

Writes
    Every entry is written to a temporary file in the same folder and moved into place with
    ``os.replace``: readers see the old entry or the new one, never a partial file, and concurrent
    writers of the same key cannot interleave (the last one wins, whole).

Checksums
    Each entry carries the SHA-256 of its payload inside the same file, so one ``os.replace`` writes
    payload and checksum together and no separate index can disagree with them:

    * JSON entries (``<key>.json``) are the JSON object the caller gives, serialised with
      ``json.dumps``, followed by one last member ``"sha256": "<64 hex>"``: the SHA-256 of the payload
      bytes, that is of the file with that member cut out. The file stays plain JSON; a reader that
      does not know about the checksum sees one extra field.
    * Parquet entries (``<key>.parquet``) keep their metadata under the schema metadata key
      ``papergym`` and add ``papergym.sha256``: the SHA-256 of that metadata and of every column's
      name, type and values (:func:`table_digest`). Parquet page checksums (CRC32) are written and
      verified too, so most damage is caught before anything is decoded.

Reads
    An entry is used only when its checksum verifies. A corrupt or truncated entry (unreadable,
    checksum mismatch) is logged as a warning naming the file and reported as missing, so the caller
    recomputes the cell and overwrites the file.

Entries written before checksums existed
    An entry without a checksum (written by an older papergym) cannot be verified, so it is treated
    as missing: the cell is recomputed once and rewritten with a checksum (logged at INFO level).
    Cells are pure, so the recomputed numbers are the same, bit for bit; only time is spent.
    Accepting such files unverified would keep exactly the silent corruption that the checksums
    exist to catch.

Files that are records rather than cache entries (``<key>.error.json`` of a failed cell, never read
back as results) are written atomically with :func:`atomic_write_bytes`, without a checksum.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "CHECKSUM_FIELD",
    "DIGEST_KEY",
    "META_KEY",
    "atomic_write_bytes",
    "default_cache_dir",
    "read_json",
    "read_table",
    "table_digest",
    "write_json",
    "write_table",
]

logger = logging.getLogger(__name__)

CHECKSUM_FIELD = "sha256"
META_KEY = b"papergym"
DIGEST_KEY = b"papergym.sha256"
_JSON_TAIL = re.compile(rb'(,\s*)?"' + CHECKSUM_FIELD.encode() + rb'":\s*"([0-9a-f]{64})"\s*}\s*\Z')


def default_cache_dir() -> Path:
    """User cache folder of cell files (``$PAPERGYM_CACHE`` overrides it)."""
    env = os.environ.get("PAPERGYM_CACHE")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("papergym")) / "cells"


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, then ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _corrupt(path: Path, why: str) -> None:
    logger.warning("cache entry %s is corrupt (%s): ignoring it, the cell is recomputed", path, why)


def _unverified(path: Path) -> None:
    logger.info("cache entry %s has no checksum (written by an older papergym): the cell is recomputed", path)


# ---------------------------------------------------------------------------------------------- JSON
def _json_with_checksum(record: dict[str, Any]) -> bytes:
    if not isinstance(record, dict):
        raise TypeError(f"a JSON cache entry is a JSON object, got {type(record).__name__}")
    if CHECKSUM_FIELD in record:
        raise ValueError(f"a JSON cache entry may not have its own {CHECKSUM_FIELD!r} field")
    payload = json.dumps(record).encode()
    digest = hashlib.sha256(payload).hexdigest()
    sep = b"" if payload == b"{}" else b", "
    return payload[:-1] + sep + b'"' + CHECKSUM_FIELD.encode() + b'": "' + digest.encode() + b'"}'


def write_json(path: str | os.PathLike, record: dict[str, Any]) -> None:
    """Write the JSON object ``record`` to ``path`` as a checksummed cache entry, atomically."""
    atomic_write_bytes(path, _json_with_checksum(record))


def read_json(path: str | os.PathLike) -> dict[str, Any] | None:
    """The verified JSON object at ``path``, or ``None`` (missing, corrupt or unverifiable)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        _corrupt(path, f"unreadable: {exc}")
        return None
    m = _JSON_TAIL.search(data)
    if m is None:
        try:
            obj = json.loads(data)
        except ValueError:
            obj = None
        # a complete JSON object whose last member is no (damaged) checksum: written by an older papergym
        last = list(obj.values())[-1] if isinstance(obj, dict) and obj else None
        if isinstance(obj, dict) and CHECKSUM_FIELD not in obj and not (isinstance(last, str) and len(last) == 64):
            _unverified(path)
        else:
            _corrupt(path, "not a checksummed JSON entry (truncated?)")
        return None
    payload = data[: m.start()] + b"}"
    if hashlib.sha256(payload).hexdigest() != m.group(2).decode():
        _corrupt(path, "checksum mismatch")
        return None
    try:
        record = json.loads(payload)
    except ValueError as exc:  # pragma: no cover - a payload whose checksum verifies was written valid
        _corrupt(path, f"invalid JSON: {exc}")
        return None
    if not isinstance(record, dict):  # pragma: no cover - idem
        _corrupt(path, "not a JSON object")
        return None
    return record


# ------------------------------------------------------------------------------------------- parquet
def table_digest(table: Any, meta: bytes) -> str:
    """SHA-256 of a table's metadata bytes ``meta`` and of every column's name, type and values.

    Columns must be numeric (or boolean) without nulls: the values are hashed as their raw bytes, so
    two tables have the same digest exactly when they hold the same numbers, bit for bit.
    """
    import numpy as np

    h = hashlib.sha256()
    h.update(len(meta).to_bytes(8, "little"))
    h.update(meta)
    for name, col in zip(table.column_names, table.columns):
        if col.null_count:
            raise TypeError(f"column {name!r} has nulls; a cache table holds plain numbers")
        values = np.ascontiguousarray(col.to_numpy())
        if values.dtype.kind not in "biuf":
            raise TypeError(f"column {name!r} has type {col.type}; a cache table holds plain numbers")
        for part in (name.encode(), str(col.type).encode(), values.tobytes()):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
    return h.hexdigest()


def write_table(path: str | os.PathLike, table: Any, meta: dict[str, Any]) -> None:
    """Write the pyarrow ``table`` with metadata ``meta`` (a JSON object) as a checksummed parquet entry."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta_bytes = json.dumps(meta).encode()
    digest = table_digest(table, meta_bytes)
    table = table.replace_schema_metadata({META_KEY: meta_bytes, DIGEST_KEY: digest.encode()})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, write_page_checksum=True)
    atomic_write_bytes(path, sink.getvalue().to_pybytes())


def read_table(path: str | os.PathLike) -> tuple[dict[str, Any], Any] | None:
    """``(meta, table)`` of the verified parquet entry at ``path``, or ``None`` (missing, corrupt, unverifiable)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    try:  # one read of one open file: a concurrent os.replace cannot mix two versions
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        _corrupt(path, f"unreadable: {exc}")
        return None
    try:
        table = pq.read_table(pa.BufferReader(data), page_checksum_verification=True)
        stored = table.schema.metadata or {}
    except Exception as exc:  # noqa: BLE001 - any failure to read is damage, never a result
        _corrupt(path, f"unreadable parquet: {type(exc).__name__}: {exc}")
        return None
    meta_bytes, digest = stored.get(META_KEY), stored.get(DIGEST_KEY)
    if digest is None:
        if set(stored) == {META_KEY}:  # an entry written by an older papergym
            _unverified(path)
        else:
            _corrupt(path, "no papergym metadata")
        return None
    try:
        ok = meta_bytes is not None and table_digest(table.replace_schema_metadata(None), meta_bytes) == digest.decode()
    except (TypeError, UnicodeDecodeError) as exc:
        _corrupt(path, str(exc))
        return None
    if not ok:
        _corrupt(path, "checksum mismatch")
        return None
    try:
        meta = json.loads(meta_bytes)
    except ValueError as exc:  # pragma: no cover - metadata whose checksum verifies was written valid
        _corrupt(path, f"invalid metadata: {exc}")
        return None
    return meta, table.replace_schema_metadata({META_KEY: meta_bytes})
