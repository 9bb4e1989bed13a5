"""numba, with the compiled caches of mfstein's code in mfstein's cache directory.

Every module of mfstein that compiles with numba imports it from here
(``from mfstein.jit import numba``), and so do the generated kernel modules.
Importing this module registers :class:`MfsteinCacheLocator` with numba ahead
of numba's own cache locators.  numba picks a function's locator when
``njit(cache=True)`` decorates it; for a function defined in a file of
mfstein's packages (``mfstein``, ``derive``, ``numeric``, ``sim``) or in a
generated module under the cache directory, the locator puts the index
(``.nbi``) and object code (``.nbc``) under ``<cache_dir>/numba/`` (see
:func:`mfstein.cache.cache_dir`) instead of a ``__pycache__`` next to the
source, which is unwritable in a read-only install.  Functions of other
packages (and the user's own numba code) keep numba's usual locators and
``$NUMBA_CACHE_DIR``.

The first time a directory of compiled caches is used in a process, its
``.nbi`` and ``.nbc`` files are checked to be complete pickle streams (without
unpickling them); a damaged or emptied file is removed, which makes numba
compile and store that function again, with one warning per process
(:func:`mfstein.cache.report_damaged`).  Without this check numba stops on such
a file (``EOFError: Ran out of input``).

This module is the one place that imports numba; it is imported only by the
numeric code, never by ``mfstein --help``.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import pickletools
import threading
from pathlib import Path
from typing import Any

import numba
from numba.core import caching

from mfstein import cache

__all__ = ["MfsteinCacheLocator", "numba"]

_PACKAGES = ("mfstein", "derive", "numeric", "sim")
_ROOT = Path(__file__).resolve().parent.parent
_OWN_DIRS = tuple(str(_ROOT / name) + os.sep for name in _PACKAGES)
_checked: set[str] = set()
_lock = threading.Lock()


@functools.cache
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def _complete_pickles(data: bytes, count: int) -> bool:
    """Whether ``data`` is exactly ``count`` complete pickle streams, back to back."""
    stream = io.BytesIO(data)
    try:
        for _ in range(count):
            for _op in pickletools.genops(stream):
                pass
    except Exception:  # a truncated or garbled stream, whatever pickletools says
        return False
    return stream.tell() == len(data)


def check_compiled_caches(directory: str) -> None:
    """Remove damaged ``.nbi``/``.nbc`` files of ``directory`` (once per process).

    numba writes an index as two pickles (its version, then the source stamp
    and the overload table) and each object-code file as one pickle.
    """
    with _lock:
        if directory in _checked:
            return
        _checked.add(directory)
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        count = 2 if name.endswith(".nbi") else 1 if name.endswith(".nbc") else 0
        if not count:
            continue
        path = os.path.join(directory, name)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if not _complete_pickles(data, count):
            cache.report_damaged(path)
            try:
                os.unlink(path)
            except OSError:
                pass


def _ours(py_file: str) -> bool:
    """Whether ``py_file`` is mfstein's: in its packages or in its cache directory
    (asked without creating the cache directory for someone else's function)."""
    path = os.path.realpath(py_file)
    if path.startswith(_OWN_DIRS):
        return True
    return any(path.startswith(os.path.realpath(d) + os.sep) for d in cache.known_dirs())


class MfsteinCacheLocator(caching._CacheLocator):
    """numba cache locator for mfstein's own and generated functions.

    Caches go to ``<cache_dir>/numba/<folder>_<sha1 of folder>``; the source
    stamp is the digest of the source file's content, so a copied or
    re-installed file with the same content reuses its cache.
    """

    def __init__(self, py_func: Any, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        sub = self.get_suitable_cache_subpath(py_file)
        self._cache_path = str(cache.cache_dir() / "numba" / sub)

    def ensure_cache_path(self) -> None:
        super().ensure_cache_path()
        check_compiled_caches(self._cache_path)

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self) -> str:
        st = os.stat(self._py_file)
        return _file_digest(self._py_file, st.st_mtime_ns, st.st_size)

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> MfsteinCacheLocator | None:
        if not os.path.isfile(py_file) or not _ours(py_file):
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except OSError:
            return None
        return self


def _register() -> None:
    # numba >= 0.68 calls the class CacheImpl, earlier releases _CacheImpl
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    if MfsteinCacheLocator not in impl._locator_classes:
        impl._locator_classes.insert(0, MfsteinCacheLocator)


_register()
