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
from typing import Any

from mfstein.ground.cache import CHECK_PREFIX
from mfstein.ground.display import Presentable
from mfstein.ground.limits import human_bytes

__all__ = [
    "ENDINGS",
    "OTHER",
    "PARTS",
    "CachePart",
    "CacheSurvey",
    "clear",
    "look",
    "survey",
]

#: The kinds of files, in the order they are listed: (name, top-level folders).
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("generated code", ("__pycache__",)),
    ("compiled code", ("numba",)),
    ("kept results", ("prepared",)),
    ("stored models", ("models",)),
)
#: The endings of the files mfstein writes into each folder of :data:`PARTS` (and its
#: half-written ``.tmp`` files): a folder holding anything else is not taken for
#: mfstein's -- a ``models`` folder of the user's own in a shared directory stays.
ENDINGS: dict[str, tuple[str, ...]] = {
    "__pycache__": (".code", ".pyc"),
    "numba": (".nbi", ".nbc"),
    "prepared": (".json", ".arrays", ".npz", ".txt"),
    "models": (".json",),
}
#: The part of what is in the directory but not mfstein's (listed last, never removed).
OTHER = "not mfstein's"


@dataclass(frozen=True)
class CachePart:
    """One kind of file in the cache directory: its name (one of :data:`PARTS`, or
    ``"not mfstein's"``), how many files (folders counted by the files inside them)
    and their total size in bytes."""

    #: One of :data:`PARTS`, or ``"not mfstein's"``.
    name: str
    #: How many files (a folder counted by the files inside it).
    files: int
    #: Their total size in bytes (``"bytes"`` in :meth:`to_dict`).
    size: int

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


def _ours(folder: Path) -> bool:
    """Whether ``folder`` (named in :data:`PARTS`) holds only files mfstein writes there
    (:data:`ENDINGS`), and no link."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    endings = (*ENDINGS[folder.name], ".tmp")
    for here, dirs, names in os.walk(folder):
        if any(os.path.islink(os.path.join(here, d)) for d in dirs):
            return False
        if not all(name.endswith(endings) for name in names):
            return False
    return True


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


def _groups(directory: Path) -> dict[str, list[Path]]:
    """The top-level entries of ``directory`` by part (:data:`PARTS`, then what is not
    mfstein's, last); an absent directory has none."""
    groups: dict[str, list[Path]] = {name: [] for name, _ in PARTS}
    groups[OTHER] = []
    folders = {folder: name for name, names in PARTS for folder in names}
    if directory.is_dir():
        for entry in sorted(directory.iterdir()):
            if entry.name in folders and _ours(entry):
                groups[folders[entry.name]].append(entry)
            else:
                groups["generated code" if _generated(entry) else OTHER].append(entry)
    return groups


def survey(directory: Path) -> list[CachePart]:
    """The parts of ``directory`` (:data:`PARTS`, then what is not mfstein's), each
    with its files and bytes; empty parts are listed too."""
    return _measured(_groups(directory))


def clear(directory: Path) -> list[CachePart]:
    """Remove mfstein's parts of ``directory`` (never the rest); returns what was
    there (:func:`survey`), from the one look at the directory that decided what to
    remove.  A process running meanwhile makes the files it needs again."""
    groups = _groups(directory)
    parts = _measured(groups)
    for name, entries in groups.items():
        for entry in entries if name != OTHER else ():
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
    return parts


@dataclass(frozen=True, repr=False)
class CacheSurvey(Presentable):
    """What the cache directory holds (``mfstein cache``), or held before ``--clear``
    removed mfstein's parts of it (:func:`look`)."""

    #: The cache directory (:func:`mfstein.ground.cache.configured_cache_dir`).
    directory: Path
    #: Whether mfstein's parts were removed (then :attr:`parts` is what was there).
    cleared: bool
    #: Each part (:data:`PARTS`, then what is not mfstein's, listed last), empty ones too.
    parts: tuple[CachePart, ...]
    #: Whether the directory exists (after the removal, with ``cleared``).
    exists: bool = True

    _MORE = "all parts: .parts; .to_dict() for JSON"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the directory, whether it was cleared, each part's
        ``name``, ``files`` and ``bytes``."""
        return {
            "directory": str(self.directory),
            "cleared": self.cleared,
            "parts": [p.to_dict() for p in self.parts],
        }

    def _mine(self) -> str:
        """mfstein's files, all parts but the last, as ``"N files, SIZE"``."""
        mine = self.parts[:-1]
        return f"{_files(sum(p.files for p in mine))}, {human_bytes(sum(p.size for p in mine))}"

    def _rows(self) -> list[tuple[str, str]]:
        rows = [("directory", str(self.directory) + ("" if self.exists else " (none yet)"))]
        rows += [(p.name, f"{_files(p.files)}, {human_bytes(p.size)}") for p in self.parts]
        rows.append(("removed" if self.cleared else "mfstein's", self._mine()))
        return rows

    def to_text(self) -> str:
        """The text ``mfstein cache`` prints: the directory, one line per part (the last,
        what is not mfstein's, "left alone" by ``--clear``) and mfstein's total."""
        lines = [f"cache directory: {self.directory}" + ("" if self.exists else " (none yet)")]
        width = max(len(p.name) for p in self.parts)
        for part in self.parts:
            kept = " (left alone)" if self.cleared and part is self.parts[-1] else ""
            what = f"{_files(part.files)}, {human_bytes(part.size)}"
            lines.append(f"  {part.name:<{width}}  {what}{kept}")
        verb = "removed from" if self.cleared else "in"
        lines.append(f"mfstein's files {verb} it: {self._mine()}")
        return "\n".join(lines)


def _files(n: int) -> str:
    """``"1 file"``, ``"1,234 files"``."""
    return f"{n:,} file" + ("" if n == 1 else "s")


def look(directory: Path, *, clear_it: bool = False) -> CacheSurvey:
    """The :class:`CacheSurvey` of ``directory`` (:func:`survey`), after removing
    mfstein's parts of it with ``clear_it`` (:func:`clear`; the parts are then what
    was there)."""
    parts = clear(directory) if clear_it else survey(directory)
    return CacheSurvey(directory, clear_it, tuple(parts), directory.is_dir())


def _measured(groups: dict[str, list[Path]]) -> list[CachePart]:
    parts = []
    for name, entries in groups.items():
        counts = [_files_and_size(e) for e in entries]
        parts.append(CachePart(name, sum(c[0] for c in counts), sum(c[1] for c in counts)))
    return parts
