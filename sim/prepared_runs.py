"""Prepared runs of the generic simulator kept on disk, for a fast first call.

Preparing a simulation of a model given by name (``simulate("sir", ...)``) builds
the model in SymPy, parses its parameters, solves its mean field at 20 digits
for the centre ``s*`` and places the start on the lattice: about 1 s of CPU in a
new process, for a record of a few hundred bytes (:class:`sim.generic.GenericSpec`
and the notes) that is the same every time.  This module keeps that record in
the cache directory (:func:`mfstein.ground.cache.cache_dir`, folder ``prepared``), so a
later process that asks for the same run -- same model name and factory
options, parameters, ``N``, start, truncation and engine, and the same source of
mfstein and of the libraries it uses -- reads the record and starts simulating
without SymPy or the mean-field solve.  Library models only: a model file may
import other files, which no key would cover.

Only runs that were prepared without error are kept (a refusal is never cached:
the input is checked afresh), and a key covers everything the record depends on:

* every value as given (``repr``; a value whose ``repr`` names an object's
  address is not cached);
* the SHA-256 of the source of mfstein's packages and the installed releases of
  SymPy, mpmath, NumPy, SciPy and numba (:func:`code_digest`).

Files end with the digest of their content (:func:`mfstein.ground.cache.with_check`); a
damaged or unreadable file is a miss, and is written afresh.  Standard library
only.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mfstein.ground import cache

#: Format of a record (part of the key: a new format never reads an old file).
VERSION = 1
_ROOT = Path(__file__).resolve().parent.parent
_PACKAGES = ("mfstein", "derive", "numeric", "sim")


#: Libraries whose release the preparation depends on: each one's installed
#: ``__init__.py`` (path, size and modification time) is part of the key.
_LIBRARIES = ("sympy", "mpmath", "numpy", "scipy", "numba")


@functools.cache
def code_digest() -> str:
    """SHA-256 of the source files of mfstein's packages (names and contents) and of the
    installed releases of the libraries it prepares a run with (:data:`_LIBRARIES`):
    any edit or upgrade gives new keys (some 50 ms, once per process)."""
    import importlib.util

    h = hashlib.sha256()
    for package in _PACKAGES:
        for path in sorted((_ROOT / package).rglob("*.py")):
            h.update(str(path.relative_to(_ROOT)).encode() + b"\0")
            h.update(path.read_bytes())
    for name in _LIBRARIES:
        spec = importlib.util.find_spec(name)
        origin = getattr(spec, "origin", None) or ""
        try:
            st = os.stat(origin)
            stamp = f"{name}:{origin}:{st.st_size}:{st.st_mtime_ns}"
        except OSError:
            stamp = f"{name}:missing"
        h.update(stamp.encode() + b"\0")
    return h.hexdigest()


def _text(value: Any) -> str | None:
    """``repr(value)``, ``None`` when it depends on the object's address."""
    text = repr(value)
    return None if " at 0x" in text else text


def run_key(
    model: str,
    params: Mapping[str, Any] | None,
    N: Any,
    start: Any,
    truncation: Any,
    engine: str,
) -> str | None:
    """The key of a prepared run of the library model named ``model``, ``None`` when it
    cannot be cached: a model file (``file.py:factory`` may import other files, which no
    key would cover) or a value without a stable ``repr``."""
    values = {str(k): _text(v) for k, v in (params or {}).items()}
    fields = [_text(N), _text(start), _text(truncation)]
    if ":" in model or model.endswith(".py") or None in values.values() or None in fields:
        return None
    blob = json.dumps([VERSION, code_digest(), model, sorted(values.items()), fields, engine])
    return hashlib.sha256(blob.encode()).hexdigest()


def _path(key: str) -> Path:
    return cache.cache_dir() / "prepared" / f"{key}.json"


def load(key: str | None) -> dict | None:
    """The record saved under ``key``; ``None`` when there is none or it is damaged."""
    if key is None:
        return None
    try:
        text = _path(key).read_text()
    except (OSError, UnicodeDecodeError):
        return None
    if not cache.intact(text):
        return None
    try:
        record = json.loads(text.rpartition(cache.CHECK_PREFIX)[0])
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def save(key: str | None, record: dict) -> None:
    """Keep ``record`` (JSON-ready) under ``key``; a cache that cannot be written is
    silently skipped (the record is only an acceleration)."""
    if key is None:
        return
    from mfstein.ground.io import atomic_write

    try:
        atomic_write(_path(key), cache.with_check(json.dumps(record, sort_keys=True) + "\n"))
    except OSError:
        pass
