"""What mfstein keeps in its cache directory, and its removal (``mfstein cache``).

The cache directory (:func:`mfstein.ground.cache.configured_cache_dir`) holds four
kinds of files, each written by one module:

- generated code: the kernel, exact-rate and simulation-chain modules generated per
  model (:mod:`mfstein.ground.generated`; top-level ``NAME.py`` files that end with
  their digest line, :data:`mfstein.ground.cache.CHECK_PREFIX`) and their bytecode
  (``__pycache__``);
- compiled code: numba's object code of those modules and of mfstein's own files
  (``numba/``, :mod:`mfstein.ground.jit`);
- kept results: prepared exact chains and simulation runs (``prepared/``,
  :mod:`mfstein.ground.records`);
- stored models: models made by their factories, kept by their inputs (``models/``,
  :mod:`derive.models.stored`).

Every file is a function of its inputs and is made again when missing, so removing
them costs only the time to make them again.  Anything else in the directory is not
mfstein's and is never removed -- the directory may be one the user shares
(``MFSTEIN_CACHE_DIR`` pointing at a folder of their own).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from mfstein.ground.cache import CHECK_PREFIX

__all__ = ["PARTS", "CachePart", "clear", "survey"]

#: The kinds of files, in the order they are listed: (name, top-level folders).
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("generated code", ("__pycache__",)),
    ("compiled code", ("numba",)),
    ("kept results", ("prepared",)),
    ("stored models", ("models",)),
)


@dataclass(frozen=True)
class CachePart:
    """One kind of file in the cache directory."""

    #: One of the names of :data:`PARTS`, or ``"not mfstein's"``.
    name: str
    #: How many files (folders counted by the files inside them).
    files: int
    #: Their total size in bytes.
    size: int
    #: The top-level entries of the directory that make it up.
    entries: tuple[Path, ...]

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "files": self.files, "bytes": self.size}


def _generated(path: Path) -> bool:
    """Whether ``path`` is a module mfstein generated: a ``.py`` file whose last line
    carries the digest of its content (read from its tail only), or one left half
    written (``.NAME.py.*.tmp``, :func:`mfstein.ground.io.atomic_write`)."""
    name = path.name
    if name.startswith(".") and ".py." in name and name.endswith(".tmp") and path.is_file():
        return True
    if path.suffix != ".py" or not path.is_file():
        return False
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - 200))
            return CHECK_PREFIX.encode() in fh.read()
    except OSError:
        return False


def _files_and_size(path: Path) -> tuple[int, int]:
    if path.is_symlink() or path.is_file():
        return 1, path.lstat().st_size
    files = size = 0
    for folder, _, names in os.walk(path):
        for name in names:
            try:
                size += os.lstat(os.path.join(folder, name)).st_size
            except OSError:  # removed meanwhile by another process
                continue
            files += 1
    return files, size


def survey(directory: Path) -> list[CachePart]:
    """The parts of ``directory`` (:data:`PARTS`, then what is not mfstein's), each
    with its files and bytes; empty parts are listed too, an absent directory is
    empty."""
    groups: dict[str, list[Path]] = {name: [] for name, _ in PARTS}
    other: list[Path] = []
    folders = {folder: name for name, names in PARTS for folder in names}
    if directory.is_dir():
        for entry in sorted(directory.iterdir()):
            if entry.name in folders and entry.is_dir() and not entry.is_symlink():
                groups[folders[entry.name]].append(entry)
            elif _generated(entry):
                groups["generated code"].append(entry)
            else:
                other.append(entry)
    parts = []
    for name, entries in [*groups.items(), ("not mfstein's", other)]:
        counts = [_files_and_size(e) for e in entries]
        parts.append(
            CachePart(
                name=name,
                files=sum(c[0] for c in counts),
                size=sum(c[1] for c in counts),
                entries=tuple(entries),
            )
        )
    return parts


def clear(directory: Path) -> list[CachePart]:
    """Remove mfstein's parts of ``directory`` (never the rest); returns what was
    there (:func:`survey`).  A process running meanwhile makes the files it needs
    again."""
    parts = survey(directory)
    for part in parts[:-1]:  # the last part is not mfstein's
        for entry in part.entries:
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
    return parts
