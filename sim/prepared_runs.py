"""Prepared runs of the generic simulator kept on disk, for a fast first call.

Preparing a simulation of a model given by name (``simulate("sir", ...)``) builds
the model in SymPy, parses its parameters, solves its mean field at 20 digits
for the centre ``s*`` and places the start on the lattice: about 1 s of CPU in a
new process, for a record of a few hundred bytes (:class:`sim.generic.GenericSpec`
and the notes) that is the same every time.  This module keeps that record in
the cache directory (:func:`mfstein.cache.cache_dir`, folder ``prepared``), so a
later process that asks for the same run -- same model name and factory
options, parameters, ``N``, start, truncation and engine, and the same source of
mfstein and of the model file -- reads the record and starts simulating without
SymPy, SciPy or the mean-field solve.

Only runs that were prepared without error are kept (a refusal is never cached:
the input is checked afresh), and a key covers everything the record depends on:

* every value as given (``repr``; a value whose ``repr`` names an object's
  address is not cached);
* the SHA-256 of the source of mfstein's packages (:func:`code_digest`) and,
  for a model ``file.py:factory``, of that file.

Files end with the digest of their content (:func:`mfstein.cache.with_check`); a
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

from mfstein import cache

#: Format of a record (part of the key: a new format never reads an old file).
VERSION = 1
_ROOT = Path(__file__).resolve().parent.parent
_PACKAGES = ("mfstein", "derive", "numeric", "sim")


@functools.cache
def code_digest() -> str:
    """SHA-256 of the source files of mfstein's packages (names and contents): any edit
    of the code that prepares a run gives new keys (some 10 ms, once per process)."""
    h = hashlib.sha256()
    for package in _PACKAGES:
        for path in sorted((_ROOT / package).rglob("*.py")):
            h.update(str(path.relative_to(_ROOT)).encode() + b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()


def _model_digest(model: str) -> str | None:
    """The content digest of a model file (``file.py:factory``), ``""`` for a library
    name, ``None`` when the file cannot be read (then nothing is cached)."""
    path, sep, _factory = model.rpartition(":")
    if not sep or not path.endswith(".py"):
        return ""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


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
    """The key of a prepared run of the model named ``model``, ``None`` when it cannot
    be cached (a value without a stable ``repr``, an unreadable model file)."""
    digest = _model_digest(model)
    values = {str(k): _text(v) for k, v in (params or {}).items()}
    fields = [_text(N), _text(start), _text(truncation)]
    if digest is None or None in values.values() or None in fields:
        return None
    if ":" in model:
        model = f"{os.path.realpath(model.rpartition(':')[0])}:{model.rpartition(':')[2]}"
    blob = json.dumps(
        [VERSION, code_digest(), model, digest, sorted(values.items()), fields, engine]
    )
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
    from mfstein.io import atomic_write

    try:
        atomic_write(_path(key), cache.with_check(json.dumps(record, sort_keys=True) + "\n"))
    except OSError:
        pass
