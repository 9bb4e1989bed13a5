"""Prepared records kept on disk, for a fast first call in a new process.

A task given a library model by name (``simulate("sir", ...)``,
``numeric.exact.solve("sir", ...)``) builds the model in SymPy, parses its
parameters and solves its mean field before any numeric work: about 1 s of CPU
in a new process, for a record of a few hundred bytes that is the same every
time.  :mod:`sim.prepared_runs`, :mod:`numeric.exact.kept` and
:mod:`derive.models.stored` (under its own key) keep such records
in the cache directory (:func:`mfstein.ground.cache.cache_dir`, folder
``prepared``) under a key that covers everything the record depends on:

* every value as given (:func:`value_text`: ``repr``; a value whose ``repr``
  names an object's address or is abridged has no key);
* the SHA-256 of the source of mfstein's packages and the installed releases of
  SymPy, mpmath, NumPy, SciPy and numba (:func:`code_digest`).

Library models only: a model file may import other files, which no key would
cover (:func:`library_name`).  Files end with the digest of their content
(:func:`mfstein.ground.cache.with_check`); a damaged or unreadable file is a miss,
and is written afresh.  So the files are written atomically but not flushed to disk
(``atomic_write(..., durable=False)``): a crash of the system may leave one empty
or torn, which its check refuses, and the first call that writes a record waits for
no disk.  A record may keep NumPy arrays beside it
(:func:`save_arrays`, checked by their CRC-32 in the record).  Standard library
only at import (NumPy is imported by the functions that keep arrays).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import zlib
from pathlib import Path
from typing import Any

from mfstein.ground import cache

_ROOT = Path(__file__).resolve().parents[2]
_PACKAGES = ("mfstein", "derive", "numeric", "sim")
#: Libraries whose release the preparation depends on: each one's installed
#: ``__init__.py`` (path, size and modification time) is part of the key.
_LIBRARIES = ("sympy", "mpmath", "numpy", "scipy", "numba")


@functools.cache
def code_digest() -> str:
    """SHA-256 of the source files of mfstein's packages (names and contents) and of the
    installed releases of the libraries it prepares a record with (:data:`_LIBRARIES`):
    any edit or upgrade gives new keys.  Hashing the sources costs some 6 ms of CPU,
    once per process; it is kept (:func:`_kept_digest`) under :func:`source_stamp`, so a
    later process with the same files reads it (about 1 ms)."""
    stamp = source_stamp()
    digest = _kept_digest(stamp)
    if digest is None:
        digest = content_digest()
        _keep_digest(stamp, digest)
    return digest


def content_digest() -> str:
    """:func:`code_digest` computed from the files' contents."""
    h = hashlib.sha256()
    for package in _PACKAGES:
        for path in sorted((_ROOT / package).rglob("*.py")):
            h.update(str(path.relative_to(_ROOT)).encode() + b"\0")
            h.update(path.read_bytes())
    for name in _LIBRARIES:
        h.update(library_stamp(name).encode() + b"\0")
    return h.hexdigest()


def source_stamp() -> str:
    """SHA-256 of what says the sources changed without reading them, as Python's
    bytecode cache decides (it keeps the size and the modification time in seconds):
    each source file's path, size, modification time in nanoseconds, inode and change
    time, and the libraries' :func:`library_stamp` (one ``scandir`` per folder, the
    files' lines sorted once, one hash update: some 1 ms for 260 files, against 1.6 ms
    by ``os.walk``).  Strings, not tuples: a first call in a process that imported
    NumPy, SciPy and numba pays a full garbage collection (some 20 ms) when it makes
    a few hundred objects the collector tracks."""
    parts = []
    folders = [str(_ROOT / package) for package in _PACKAGES]
    while folders:
        with os.scandir(folders.pop()) as listing:
            for e in listing:
                if e.name.endswith(".py") and e.is_file():
                    st = e.stat()
                    parts.append(
                        f"{e.path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}:{st.st_ctime_ns}"
                    )
                elif e.is_dir(follow_symlinks=False) and e.name != "__pycache__":
                    folders.append(e.path)
    parts.sort()  # the paths are distinct: one order whatever the listings' order
    parts.extend(library_stamp(name) for name in _LIBRARIES)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _stamp_path(stamp: str) -> Path:
    return cache.cache_dir() / "prepared" / f"code-{stamp}.txt"


def _kept_digest(stamp: str) -> str | None:
    """The :func:`content_digest` kept under ``stamp``; ``None`` when there is none or
    the file is not a digest."""
    try:
        text = _stamp_path(stamp).read_text()
    except (OSError, UnicodeDecodeError):
        return None
    return text if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else None


def _keep_digest(stamp: str, digest: str) -> None:
    """Keep ``digest`` under ``stamp`` (skipped when the cache cannot be written)."""
    from mfstein.ground.io import atomic_write

    path = _stamp_path(stamp)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, digest, durable=False)
    except OSError:
        pass


def library_stamp(name: str) -> str:
    """The installed release of library ``name`` without importing it: the path, size
    and modification time of its ``__init__.py`` (``"name:missing"`` when absent)."""
    import importlib.util

    origin = getattr(importlib.util.find_spec(name), "origin", None) or ""
    try:
        st = os.stat(origin)
    except OSError:
        return f"{name}:missing"
    return f"{name}:{origin}:{st.st_size}:{st.st_mtime_ns}"


def value_text(value: Any) -> str | None:
    """``repr(value)``, ``None`` when it depends on the object's address or leaves
    entries out (NumPy's summary of a large array)."""
    text = repr(value)
    return None if " at 0x" in text or "..." in text else text


def library_name(model: Any) -> bool:
    """Whether ``model`` names a library model (not ``file.py:factory``, not an object)."""
    return isinstance(model, str) and ":" not in model and not model.endswith(".py")


def digest(parts: list[Any]) -> str:
    """The key of a record made from ``parts`` (JSON-ready) and :func:`code_digest`."""
    return parts_key([parts[0], code_digest(), *parts[1:]])


def parts_key(parts: list[Any]) -> str:
    """The key of a record made from ``parts`` (JSON-ready) alone: SHA-256 of their JSON."""
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def call_key(
    head: list[Any], model: Any, params: Any, fields: list[Any], tail: list[Any]
) -> str | None:
    """The key of a record of a call on the library model named ``model`` with
    ``params`` (a mapping or ``None``) and ``fields`` (values as given), between the
    record's ``head`` (its format) and ``tail``; ``None`` when it cannot be kept: a model
    file or object (:func:`library_name`) or a value without a stable ``repr``."""
    values = {str(k): value_text(v) for k, v in (params or {}).items()}
    texts = [value_text(v) for v in fields]
    if not library_name(model) or None in values.values() or None in texts:
        return None
    return digest([*head, model, sorted(values.items()), texts, *tail])


def _path(key: str) -> Path:
    return cache.cache_dir() / "prepared" / f"{key}.json"


def load(key: str | None) -> dict | None:
    """The record saved under ``key``; ``None`` when there is none or it is damaged."""
    return None if key is None else read(_path(key))


def read(path: Path) -> dict | None:
    """The record (a JSON object ending with its check) in file ``path``; ``None`` when
    the file is missing, unreadable or damaged."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return None
    if not cache.intact(text):
        return None
    try:
        record = json.loads(text.rpartition(cache.CHECK_PREFIX)[0])
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _arrays_path(key: str) -> Path:
    return cache.cache_dir() / "prepared" / f"{key}.arrays"


#: Each array's data starts at a multiple of this many bytes of an arrays file.
_ALIGN = 64


def save_arrays(key: str | None, arrays: dict[str, Any]) -> str | None:
    """Keep NumPy ``arrays`` (numbers, no objects) beside the record ``key`` and return
    the file's check (:func:`arrays_check`), for the record to hold (:func:`load_arrays`
    compares it); ``None`` when there is no key, an array holds objects or the cache
    cannot be written.

    The file is the length of a JSON header (8 bytes, little-endian), the header
    (each array's name, dtype, shape and offset) and the arrays' bytes in C order,
    each at a multiple of :data:`_ALIGN` bytes: read back as views of one buffer,
    without parsing a ``.npz`` (some 1.5 ms for the 8 arrays of SIR at N = 100)."""
    if key is None:
        return None
    import numpy as np

    from mfstein.ground.io import atomic_write

    blocks = {name: np.asarray(a, order="C") for name, a in arrays.items()}
    if any(a.dtype.hasobject for a in blocks.values()):
        return None
    layout, offset = [], 0
    for name, a in blocks.items():
        layout.append([name, a.dtype.str, list(a.shape), offset])
        offset += -(-a.nbytes // _ALIGN) * _ALIGN
    head = json.dumps(layout).encode()
    head += b" " * (-(8 + len(head)) % _ALIGN)
    pieces = [len(head).to_bytes(8, "little") + head]
    for a in blocks.values():  # each array's own buffer: no copy is made of the file
        pieces += [a.reshape(-1).view(np.uint8), bytes(-a.nbytes % _ALIGN)]

    def fill(fh: Any) -> None:
        fh.writelines(pieces)

    try:
        atomic_write(_arrays_path(key), fill, durable=False)
    except OSError:
        return None
    return arrays_check(pieces)


#: The arrays file's check as a record holds it: ``"crc32:"`` and 8 hex digits (a record
#: of stop 47 or before held a SHA-256 in 64, which no file matches now: a miss).
_CRC_PREFIX = "crc32:"


def arrays_check(pieces: Any) -> str:
    """The check of an arrays file whose bytes are the buffers ``pieces`` in turn: their
    CRC-32 (:func:`zlib.crc32`).  It finds the damage a crash or the disk leaves (a torn
    end, blocks of zeros, changed bits) in a third of the time of a SHA-256 (0.08 against
    0.27 ms for the 490 KB of SIR at N = 100: in the first call's write and in every later
    call's read); the record that holds it ends with its own SHA-256
    (:func:`mfstein.ground.cache.with_check`)."""
    crc = 0
    for piece in pieces:
        crc = zlib.crc32(piece, crc)
    return _CRC_PREFIX + format(crc, "08x")


def load_arrays(key: str | None, check: Any) -> dict[str, Any] | None:
    """The arrays :func:`save_arrays` kept beside the record ``key`` (writable views of
    one buffer), when the file's check (:func:`arrays_check`) is ``check``; ``None``
    when it is missing, unreadable or not that file."""
    if key is None or not isinstance(check, str):
        return None
    import numpy as np

    try:
        with open(_arrays_path(key), "rb") as f:
            data = bytearray(f.read())
    except OSError:
        return None
    if arrays_check([data]) != check:
        return None
    size = int.from_bytes(data[:8], "little")
    base = 8 + size
    out = {}
    for name, dtype, shape, offset in json.loads(data[8:base]):
        count = 1
        for n in shape:
            count *= n
        out[name] = np.frombuffer(data, dtype, count, base + offset).reshape(tuple(shape))
    return out


def save(key: str | None, record: dict) -> None:
    """Keep ``record`` (JSON-ready) under ``key``; a cache that cannot be written is
    silently skipped (the record is only an acceleration)."""
    if key is None:
        return
    try:
        write(_path(key), record)
    except OSError:
        pass


def write(path: Path, record: dict, *, sort_keys: bool = True) -> None:
    """Write ``record`` (JSON-ready) to ``path`` with its check, atomically (the folder
    is made; ``sort_keys=False`` keeps the order of its mappings); an ``OSError`` is the
    caller's to handle."""
    from mfstein.ground.io import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    text = cache.with_check(json.dumps(record, sort_keys=sort_keys) + "\n")
    atomic_write(path, text, durable=False)
