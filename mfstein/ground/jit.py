"""numba, with the compiled caches of mfstein's code in mfstein's cache directory.

Every module of mfstein that compiles with numba imports it from here
(``from mfstein.ground.jit import numba``), and so do the generated kernel modules.
Importing this module registers :class:`MfsteinCacheLocator` with numba ahead
of numba's own cache locators.  numba picks a function's locator when
``njit(cache=True)`` decorates it; for a function defined in a file of
mfstein's packages (``mfstein``, ``derive``, ``numeric``, ``sim``) or in a
generated module under the cache directory, the locator puts the index
(``.nbi``) and object code (``.nbc``) under ``<cache_dir>/numba/`` (see
:func:`mfstein.ground.cache.cache_dir`) instead of a ``__pycache__`` next to the
source, which is unwritable in a read-only install.  Functions of other
packages (and the user's own numba code) keep numba's usual locators and
``$NUMBA_CACHE_DIR``.

Compiled caches heal from any damage.  Every index and object-code file of
mfstein's ends with the SHA-256 digest of its content (:class:`SealedCacheFile`,
put in place of numba's ``IndexDataCacheFile`` for mfstein's caches only), and
a file is unpickled only once its digest matches: garbled bytes never reach
the unpickler (a garbled length field asked it for exabytes: "not enough
memory" on every later run) nor LLVM (garbled object code aborted the process
inside LLVM).  Loading a cached function of mfstein's (numba's
``Cache.load_overload``, wrapped once by this module for caches under
mfstein's directory only) that fails in any way -- an emptied, truncated or
garbled index (``.nbi``) or object-code file (``.nbc``), a well-formed pickle
of the wrong thing, object code that does not rebuild -- removes that
function's index and data files, warns once per process
(:func:`mfstein.ground.cache.report_damaged`) and returns "not cached", so numba
compiles the function and stores it again.  Without this numba stops on such
a file (``EOFError: Ran out of input``, ``UnpicklingError``, ...).  Caches of
other packages are not touched: their errors propagate as numba raises them.

numba's first load of a compiled function (or first compilation) no longer
imports ``scipy.linalg``: importing ``numba.np.arraymath``, which numba does then
(``CPUContext.load_additional_registries``), asks whether BLAS is there by
importing ``scipy.linalg.cython_blas`` -- the whole of ``scipy.linalg``, some 0.2 s
of CPU that a simulation never uses.  That one question is answered by finding the
module's file instead (:func:`_blas_found`; an installation without it is asked
the usual way); every use of BLAS or LAPACK in compiled code still imports and
checks them as numba does (issue 34).

numba's compiler runs with Ctrl-C and SIGTERM held back until it returns
(``Dispatcher.compile``, wrapped once by this module in
:func:`mfstein.ground.signals.deferred`): interrupted inside LLVM it printed tracebacks
of ctypes callbacks and left the process to die by SIGSEGV on its way out.

This module is the one place that imports numba; it is imported only by the
numeric code, never by ``mfstein --help``.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import io
import os
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numba
from numba.core import caching, codegen

from mfstein.ground import cache, read_inputs, signals
from mfstein.ground.read_inputs import reads_inputs

__all__ = [
    "ANNOUNCE_SECONDS",
    "DamagedCacheFile",
    "MfsteinCacheLocator",
    "SealedCacheFile",
    "announce_compile",
    "first_compile_seconds",
    "has_index",
    "import_closure",
    "is_compiled",
    "numba",
    "reads_inputs",
    "source_stamp",
]

_PACKAGES = ("mfstein", "derive", "numeric", "sim")
_ROOT = Path(__file__).resolve().parents[2]
_OWN_DIRS = tuple(str(_ROOT / name) + os.sep for name in _PACKAGES)


@functools.cache
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


#: A module-level import of the source: ``from a.b import (x, y)`` or ``import a.b``.
_IMPORT = re.compile(
    r"^(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([\w.]+))", re.M
)


def _module_file(module: str, root: Path) -> str | None:
    """The file of ``module`` (one of mfstein's packages) under ``root``, if any."""
    base = root / module.replace(".", os.sep)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return str(path)
    return None


def _imported_files(path: str, root: Path) -> list[str]:
    """The files of mfstein's modules that ``path`` imports at module level (lines
    starting in column 0): a compiled function reads their functions and constants
    (inlined helpers, the RNG, op-code tables) into its object code."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    found = []
    for m in _IMPORT.finditer(text):
        module = m.group(1) or m.group(3)
        if module.partition(".")[0] not in _PACKAGES:
            continue
        names = re.sub(r"#[^\n]*", "", m.group(2) or "").strip("() \t")
        candidates = [module] + [
            f"{module}.{n.split()[0]}" for n in names.split(",") if m.group(1) and n.split()
        ]
        found += [f for f in (_module_file(c, root) for c in candidates) if f is not None]
    return found


@functools.cache
def import_closure(path: str, root: Path = _ROOT) -> tuple[str, ...]:
    """``path`` and every file of mfstein's packages it reaches by module-level
    imports, transitively (sorted): what its compiled functions may have inlined."""
    seen: set[str] = set()
    todo = [os.path.realpath(path)]
    while todo:
        here = todo.pop()
        if here not in seen:
            seen.add(here)
            todo += (os.path.realpath(f) for f in _imported_files(here, root))
    return tuple(sorted(seen))


def source_stamp(py_file: str, root: Path = _ROOT) -> str:
    """The stamp of a compiled function's cache: the SHA-256 digests of the content of
    ``py_file`` and of every file of :func:`import_closure` -- so that a change in an
    inlined helper of another file (``sim.generic_kernels.invert`` in
    ``sim.table_loop``'s loop, ``sim.rng.next_u64`` everywhere) or in a constant table
    compiles the functions that read it again, where numba's own stamp (the file's
    modification time and size) keeps the stale object code."""
    own = os.path.realpath(py_file)
    others = sorted(os.path.relpath(p, root) for p in import_closure(own, root) if p != own)
    parts = [_digest_now(own)] + [f"{rel}:{_digest_now(str(root / rel))}" for rel in others]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _digest_now(path: str) -> str:
    st = os.stat(path)
    return _file_digest(path, st.st_mtime_ns, st.st_size)


def _discard(cache_file: Any) -> None:
    """Remove the index and every object-code file of one function's cache."""
    index = cache_file._index_path
    stem = index[: -len(".nbi")]
    for path in (index, *glob.glob(glob.escape(stem) + ".*.nbc")):
        try:
            os.unlink(path)
        except OSError:
            pass


#: Between a cache file's content and the SHA-256 digest of that content, its last bytes.
SEAL = b"\nmfstein-sha256:"
#: Folder of the sealed caches under ``<cache_dir>/numba/``: files of the unsealed
#: layout, kept elsewhere, are never read (nor taken for damaged ones).
_LAYOUT = "sealed"


class DamagedCacheFile(Exception):
    """A cache file's content does not match the digest it ends with."""


def _check_seal(path: str) -> None:
    """Raise :class:`DamagedCacheFile` unless the file at ``path`` ends with the
    digest of its content (:data:`SEAL`); a missing file passes (numba's own code
    treats it as "not cached")."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return
    cut = len(data) - len(SEAL) - hashlib.sha256().digest_size
    if cut < 0 or data[cut:] != SEAL + hashlib.sha256(data[:cut]).digest():
        raise DamagedCacheFile(path)


class SealedCacheFile(caching.IndexDataCacheFile):
    """numba's index (``.nbi``) and object-code (``.nbc``) files, each written with
    :data:`SEAL` and the SHA-256 digest of its content appended, and read by numba's
    own code only once that digest matches (pickle ignores the bytes after a pickle,
    so numba's readers take a sealed file as it is)."""

    def _load_index(self) -> dict:
        _check_seal(self._index_path)
        return super()._load_index()

    def _load_data(self, name: str) -> Any:
        _check_seal(self._data_path(name))
        return super()._load_data(name)

    def save(self, key: Any, data: Any) -> None:
        try:  # numba reads the index before adding to it: a damaged one starts afresh
            _check_seal(self._index_path)
        except DamagedCacheFile:
            self._save_index({})
        super().save(key, data)

    @contextlib.contextmanager
    def _open_for_write(self, filepath: str) -> Iterator[io.BytesIO]:
        buffer = io.BytesIO()
        yield buffer
        body = buffer.getvalue()
        with super()._open_for_write(filepath) as fh:  # numba's atomic replace
            fh.write(body + SEAL + hashlib.sha256(body).digest())


def _sealed_init(init: Any) -> Any:
    """numba's ``Cache.__init__``, with :class:`SealedCacheFile` for mfstein's caches."""

    @functools.wraps(init)
    def __init__(self: Any, py_func: Any) -> None:
        init(self, py_func)
        if isinstance(getattr(self._impl, "locator", None), MfsteinCacheLocator):
            self._cache_file = SealedCacheFile(
                cache_path=self._cache_path,
                filename_base=self._impl.filename_base,
                source_stamp=self._cache_file._source_stamp,
            )

    __init__.__mfstein_guard__ = True  # type: ignore[attr-defined]
    return __init__


def _guarded_load(load: Any) -> Any:
    """numba's ``Cache.load_overload``, healing mfstein's damaged caches (module docstring)."""

    @functools.wraps(load)
    def load_overload(self: Any, sig: Any, target_context: Any) -> Any:
        if not isinstance(getattr(self._impl, "locator", None), MfsteinCacheLocator):
            return load(self, sig, target_context)
        try:
            return _light_load(load, self, sig, target_context)
        except (KeyboardInterrupt, SystemExit, MemoryError):
            raise  # a sealed file that passed its digest needs no more than its size
        except Exception as exc:  # any damage: compile afresh
            damaged = exc.args[0] if isinstance(exc, DamagedCacheFile) else None
            cache.report_damaged(damaged or self._cache_file._index_path)
            _discard(self._cache_file)
            return None

    load_overload.__mfstein_guard__ = True  # type: ignore[attr-defined]
    return load_overload


#: Set while :func:`_light_load` rebuilds cached code (read by :func:`_checked_finalize`).
_LIGHT = threading.local()


class _NeedsRefresh(Exception):
    """Cached object code names a symbol that neither the process nor numba's JIT
    defines yet: numba's full ``refresh`` may define it (numba's own load follows)."""


def _unresolved(module: Any, engine: Any) -> list[str]:
    """The symbols that the LLVM ``module`` declares (the external references of its
    object code) and that are neither in LLVM's symbol table of the process
    (``llvmlite.binding.address_of_symbol``: C helpers added by numba, the C
    library) nor defined by a module of numba's JIT ``engine``; LLVM intrinsics
    (``llvm.*``) are lowered by the compiler itself and skipped."""
    import llvmlite.binding as ll

    missing = []
    for values in (module.functions, module.global_variables):
        for gv in values:
            name = gv.name
            if not gv.is_declaration or name.startswith("llvm."):
                continue
            if not engine.is_symbol_defined(name) and ll.address_of_symbol(name) is None:
                missing.append(name)
    return missing


def _checked_finalize(finalize: Any) -> Any:
    """numba's ``CPUCodeLibrary._finalize_final_module``, which links object code
    (an unresolved symbol there aborts the process inside LLVM), raising
    :class:`_NeedsRefresh` first when a library that :func:`_light_load` rebuilds
    refers to a symbol not defined yet (:func:`_unresolved`)."""

    @functools.wraps(finalize)
    def _finalize_final_module(self: Any) -> Any:
        shared = getattr(self, "_shared_module", None)
        if getattr(_LIGHT, "on", False) and shared is not None:
            missing = _unresolved(shared, self._codegen._engine)
            if missing:
                raise _NeedsRefresh(missing)
        return finalize(self)

    _finalize_final_module.__mfstein_guard__ = True  # type: ignore[attr-defined]
    return _finalize_final_module


def _light_load(load: Any, cache_: Any, sig: Any, target_context: Any) -> Any:
    """numba's ``Cache.load_overload`` (``load``) for one of mfstein's caches, without
    the ``target_context.refresh()`` it starts with when every symbol the object code
    needs is already defined (:func:`_checked_finalize`), and numba's own otherwise.

    The refresh installs the typing and lowering registries that a *compilation*
    needs: it imports some 60 modules of numba (``numba.np.linalg``,
    ``numba.np.arraymath``, the random generators, typed containers...) and builds
    their templates, some 0.2 s of CPU in a first ``simulate`` -- none of which
    running compiled object code uses (its only part that does, the NRT's symbols,
    is initialised here).  One module of the refresh is imported here all the same:
    ``numba.experimental.function_type`` registers the ``typeof`` of a ``cfunc``
    (``CFunc``), which a call types before any compilation -- a ``cfunc`` loaded from
    the cache and passed to a kernel (the PI simulator's split rule) was typed
    ``pyobject`` without it.  numba's compiler refreshes both contexts itself before
    compiling (``CompilerBase.__init__``), so a later compilation in the process is
    unchanged; the object code rebuilt is the same bytes (issue 34)."""
    from numba.core.runtime import nrt
    from numba.experimental import function_type  # noqa: F401  (see the docstring)

    nrt.rtsys.initialize(target_context)
    _LIGHT.on = True
    try:
        with cache_._guard_against_spurious_io_errors():
            return cache_._load_overload(sig, target_context)
    except _NeedsRefresh:
        pass
    finally:
        _LIGHT.on = False
    return load(cache_, sig, target_context)


def _ours(py_file: str) -> bool:
    """Whether ``py_file`` is mfstein's: in its packages or in its cache directory
    (asked without creating the cache directory for someone else's function)."""
    path = os.path.realpath(py_file)
    if path.startswith(_OWN_DIRS):
        return True
    return any(path.startswith(os.path.realpath(d) + os.sep) for d in cache.known_dirs())


class MfsteinCacheLocator(caching._CacheLocator):
    """numba cache locator for mfstein's own and generated functions.

    Caches go to ``<cache_dir>/numba/sealed/<folder>_<sha1 of folder>`` (files
    sealed by :class:`SealedCacheFile`); the source
    stamp is the digest of the source file's content, so a copied or
    re-installed file with the same content reuses its cache.
    """

    def __init__(self, py_func: Any, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        sub = self.get_suitable_cache_subpath(py_file)
        self._cache_path = str(cache.cache_dir() / "numba" / _LAYOUT / sub)

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self) -> str:
        return source_stamp(self._py_file)

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


def is_compiled(dispatcher: Any) -> bool:
    """Whether calling the ``njit`` function ``dispatcher`` can skip numba's compiler:
    it has compiled code in this process, or an index of compiled code (``.nbi``)
    in its on-disk cache.

    Used to say before a long first compilation that one is coming (an index of
    another signature, or a damaged one, makes this answer ``True`` and the
    compilation goes unannounced: never the other way round).
    """
    if getattr(dispatcher, "overloads", None):
        return True
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    index = getattr(cache_file, "_index_path", None)
    return isinstance(index, str) and os.path.isfile(index)


def has_index(py_file: Path) -> bool:
    """Whether any function of the file ``py_file`` (one of mfstein's or a generated
    module in the cache directory) has an index of compiled code (``.nbi``) where
    :class:`MfsteinCacheLocator` keeps it -- found without loading the file, so that
    ``False`` tells that nothing of it was ever compiled into this cache."""
    sub = MfsteinCacheLocator.get_suitable_cache_subpath(str(py_file))
    folder = cache.cache_dir() / "numba" / _LAYOUT / sub
    return any(folder.glob(f"{glob.escape(Path(py_file).stem)}.*.nbi"))


#: A first compilation estimated to take at least this many seconds of one core is
#: announced (:func:`announce_compile`).
ANNOUNCE_SECONDS = 3.0


def first_compile_seconds(seconds: float, *dispatchers: Any) -> float | None:
    """``seconds`` (an estimate of numba's first compilation of some code) unless
    every ``njit`` function of ``dispatchers`` is compiled (:func:`is_compiled`);
    then ``None``: nothing is left to compile."""
    return None if all(is_compiled(d) for d in dispatchers) else float(seconds)


def announce_compile(what: str, seconds: float | None) -> bool:
    """Say on standard error, in one line, that a first compilation of ``what`` is
    coming, when it is estimated (``seconds`` of one core, ``None`` for nothing to
    compile) to take at least :data:`ANNOUNCE_SECONDS`; returns whether it did.

    The one home of this line (the generic simulator, the supermarket and PI
    simulators and the exact solver call it), printed before the wait so that a
    first run is not taken for a hang; callers call it only when a progress bar
    would show (standard error a terminal, no ``--json``).
    """
    import sys

    from mfstein.ground.limits import human_seconds

    if seconds is None or seconds < ANNOUNCE_SECONDS:
        return False
    print(
        f"mfstein: compiling {what} (first run, about {human_seconds(seconds)} of one core; "
        "cached for later runs)...",
        file=sys.stderr,
        flush=True,
    )
    return True


def _deferring_compile(compile_: Any) -> Any:
    """numba's ``Dispatcher.compile``, with Ctrl-C and SIGTERM held back until it
    returns (:func:`mfstein.ground.signals.deferred`): interrupted inside LLVM, numba left
    tracebacks of ctypes callbacks and, at exit, a SIGSEGV.  A kernel marked
    :func:`mfstein.ground.read_inputs.reads_inputs` is compiled for read-only arrays
    only (:func:`mfstein.ground.read_inputs.compile_read_only`)."""

    @functools.wraps(compile_)
    def compile(self: Any, sig: Any) -> Any:
        with signals.deferred():
            if getattr(self, read_inputs.MARK, False):
                return read_inputs.compile_read_only(compile_, self, sig, numba)
            return compile_(self, sig)

    compile.__mfstein_guard__ = True  # type: ignore[attr-defined]
    return compile


def _blas_found() -> bool:
    """Whether SciPy's ``scipy.linalg.cython_blas`` extension module is installed, found
    by its file without importing ``scipy.linalg`` (:mod:`importlib.machinery`)."""
    from importlib.machinery import PathFinder

    scipy = PathFinder.find_spec("scipy")
    folders = getattr(scipy, "submodule_search_locations", None) or []
    linalg = [os.path.join(folder, "linalg") for folder in folders]
    return PathFinder.find_spec("scipy.linalg.cython_blas", linalg) is not None


def _light_blas_check(load: Any) -> Any:
    """numba's ``CPUContext.load_additional_registries``, which imports
    ``numba.np.arraymath``, with that module's import-time BLAS check
    (``_check_blas``: ``ensure_blas()`` imports ``scipy.linalg``) answered by
    :func:`_blas_found` when the file is there, and by numba's own ``ensure_blas``
    otherwise (the same ``_HAVE_BLAS``); ``ensure_blas`` is numba's again afterwards."""

    @functools.wraps(load)
    def load_additional_registries(self: Any) -> Any:
        if "numba.np.arraymath" in sys.modules:
            return load(self)
        from numba.np import linalg

        real = linalg.ensure_blas

        def ensure_blas() -> None:
            if not _blas_found():
                real()

        linalg.ensure_blas = ensure_blas
        try:
            return load(self)
        finally:
            linalg.ensure_blas = real
            arraymath = sys.modules.get("numba.np.arraymath")
            if getattr(arraymath, "ensure_blas", None) is ensure_blas:
                arraymath.ensure_blas = real  # type: ignore[union-attr]

    load_additional_registries.__mfstein_guard__ = True  # type: ignore[attr-defined]
    return load_additional_registries


def _extensions_named() -> bool:
    """Whether an installed distribution's ``entry_points.txt`` names numba's
    ``numba_extensions`` group -- the same files :func:`importlib.metadata.entry_points`
    reads, searched as text instead of parsed into every entry point of every
    distribution (some 40 ms of CPU with a hundred distributions)."""
    from importlib import metadata

    for dist in metadata.distributions():
        text = dist.read_text("entry_points.txt")
        if text and "numba_extensions" in text:
            return True
    return False


def _lean_init_all(init_all: Any) -> Any:
    """numba's ``entrypoints.init_all`` (run before numba's first compilation or load of
    a compiled function: the ``init`` entry points of the ``numba_extensions`` group),
    left to numba whenever a distribution names that group (:func:`_extensions_named`)
    and otherwise only marked as done: there is nothing to run."""
    from numba.core import entrypoints

    @functools.wraps(init_all)
    def lean_init_all() -> None:
        if entrypoints._already_initialized:
            return
        if _extensions_named():
            init_all()
        else:
            entrypoints._already_initialized = True

    lean_init_all.__mfstein_guard__ = True  # type: ignore[attr-defined]
    return lean_init_all


def _lean_typeof_ndarray(real: Any) -> Any:
    """numba's type of an ``ndarray`` argument (``typeof_impl`` for ``np.ndarray``), which
    first asks ``isinstance(val, np.ma.MaskedArray)`` -- importing ``numpy.ma``, some 15 ms
    of CPU at a first call's first array.  For an exact ``ndarray`` while ``numpy.ma`` is
    not imported the answer is known (no masked array exists), and the same three steps
    follow (element type, layout, writeability); anything else -- ``numpy.ma`` imported,
    a subclass, an unsupported element type -- is numba's own code (``real``)."""
    import numpy as np
    from numba.core import errors, types
    from numba.np import numpy_support

    @functools.wraps(real)
    def typeof_ndarray(val: Any, c: Any) -> Any:
        if type(val) is not np.ndarray or "numpy.ma" in sys.modules:
            return real(val, c)
        try:
            dtype = numpy_support.from_dtype(val.dtype)
        except errors.NumbaNotImplementedError:
            return real(val, c)  # numba's own error
        layout = numpy_support.map_layout(val)
        return types.Array(dtype, val.ndim, layout, readonly=not val.flags.writeable)

    typeof_ndarray.__mfstein_guard__ = True  # type: ignore[attr-defined]
    return typeof_ndarray


def _register() -> None:
    # numba >= 0.68 calls the class CacheImpl, earlier releases _CacheImpl
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    if MfsteinCacheLocator not in impl._locator_classes:
        impl._locator_classes.insert(0, MfsteinCacheLocator)
    if not getattr(caching.Cache.__init__, "__mfstein_guard__", False):
        caching.Cache.__init__ = _sealed_init(caching.Cache.__init__)
    dispatcher = numba.core.dispatcher.Dispatcher
    if not getattr(dispatcher.compile, "__mfstein_guard__", False):
        dispatcher.compile = _deferring_compile(dispatcher.compile)
    if not getattr(caching.Cache.load_overload, "__mfstein_guard__", False):
        caching.Cache.load_overload = _guarded_load(caching.Cache.load_overload)
    library = codegen.CPUCodeLibrary
    if not getattr(library._finalize_final_module, "__mfstein_guard__", False):
        library._finalize_final_module = _checked_finalize(library._finalize_final_module)
    from numba.core import entrypoints

    if not getattr(entrypoints.init_all, "__mfstein_guard__", False):
        entrypoints.init_all = _lean_init_all(entrypoints.init_all)
    import numpy as np
    from numba.core.typing import typeof

    real = typeof.typeof_impl.dispatch(np.ndarray)
    if not getattr(real, "__mfstein_guard__", False):
        typeof.typeof_impl.register(np.ndarray)(_lean_typeof_ndarray(real))
    cpu = numba.core.cpu.CPUContext
    if not getattr(cpu.load_additional_registries, "__mfstein_guard__", False):
        cpu.load_additional_registries = _light_blas_check(cpu.load_additional_registries)


_register()
