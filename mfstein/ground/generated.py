"""The one loader of the Python modules mfstein generates at run time.

The model kernels (:mod:`derive.kernels`) and the simulator's event loops
(:mod:`sim.generic_kernels`) are Python source printed from a model, written
once into the cache directory (:func:`mfstein.ground.cache.cache_dir`) and imported
from there by every later call and every worker process.  They all go
through :func:`generated_module` (the process that can generate) or
:func:`load_generated` (a worker that only has the name):

* the **name** is ``<prefix>_<first 20 hex digits of sha256(key)>``, where the
  *key* is the text that identifies what was generated from what (the
  model's key, the generator's version and the digest of the generator's own
  source files -- chosen by the caller);
* the **file** starts with the line ``# mfstein-key: <key>`` and ends with the
  digest line of :func:`mfstein.ground.cache.with_check` over everything above it;
  it is written atomically (:func:`mfstein.ground.io.atomic_write`), so a reader
  sees the old file or the new one, never half of one;
* **before it is trusted** the text read back must pass its digest, carry a
  key line whose digest is the file's name (so a module generated for another
  model or another generator version, copied or renamed into place, is
  refused even though its own digest is valid), compile, execute, and define
  the names the caller requires; the text executed is the text checked (it is
  not read from disk a second time; its bytecode is kept beside it under the
  digest of that text, :func:`_code`);
* a file that fails any of these is **damaged**: reported once per process
  (:func:`mfstein.ground.cache.report_damaged`) and generated again from the source
  (the model) by :func:`generated_module`; :func:`load_generated`, which has
  no source, refuses it in one sentence (:class:`mfstein.ground.errors.ParameterError`).

Standard library and the ground package only, so it is cheap to import.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import CodeType, ModuleType, SimpleNamespace
from typing import Any, NamedTuple

from mfstein.ground import cache
from mfstein.ground.errors import ParameterError
from mfstein.ground.io import atomic_write

__all__ = ["KEY_PREFIX", "Generated", "generated_module", "load_generated", "module_name"]

#: First line of every generated module: the key it was generated from.
KEY_PREFIX = "# mfstein-key: "

_lock = threading.RLock()
#: name -> the module, once checked and executed in this process
_loaded: dict[str, ModuleType] = {}


class Generated(NamedTuple):
    """A checked generated module: its cache name, file, text and the module (a named
    tuple: a frozen dataclass costs a new process some 0.6 ms to create, and this
    module is imported by a first exact call that reads none)."""

    name: str
    path: Path
    text: str
    module: ModuleType


def module_name(prefix: str, key: str) -> str:
    """The cache name of the module generated from ``key``: ``prefix_<digest>``."""
    return f"{prefix}_{hashlib.sha256(key.encode()).hexdigest()[:20]}"


def _sys_name(name: str) -> str:
    return f"mfstein_{name}"


def _sealed(key: str, body: str) -> str:
    if "\n" in key:
        raise ValueError("a generated module's key is one line")
    return cache.with_check(f"{KEY_PREFIX}{key}\n{body}")


def _key_matches(text: str, name: str) -> bool:
    """Whether ``text``'s key line is the one that ``name`` was derived from."""
    first = text.partition("\n")[0]
    if not first.startswith(KEY_PREFIX):
        return False
    prefix = name.rpartition("_")[0]
    return module_name(prefix, first[len(KEY_PREFIX) :]) == name


def _read(path: Path, name: str) -> str | None:
    """The file's text when it passes its digest and key check, else ``None``
    (a missing file silently, a damaged one reported)."""
    try:
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    if cache.intact(text) and _key_matches(text, name):
        return text
    cache.report_damaged(path)
    return None


def _code(text: str, path: Path) -> CodeType:
    """The code object of the checked ``text``: from the bytecode kept beside it
    (``__pycache__/<file>.<digest of the text>.<python>.code``, written the first
    time), else compiled -- compiling a generated module of a large model costs
    seconds, as Python's own ``.pyc`` files save for ordinary modules.  A kept
    file that does not load is compiled and written again."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    tag = sys.implementation.cache_tag or "py"
    kept = path.parent / "__pycache__" / f"{path.stem}.{digest}.{tag}.code"
    try:
        code = marshal.loads(kept.read_bytes())
        if isinstance(code, CodeType) and code.co_filename == str(path):
            return code
    except (OSError, EOFError, ValueError, TypeError):
        pass
    code = compile(text, str(path), "exec")
    try:
        atomic_write(kept, marshal.dumps(code))
    except OSError:
        pass  # a read-only cache: compile every time
    return code


def _execute(text: str, path: Path, name: str, required: Sequence[str]) -> ModuleType:
    """Execute the checked ``text`` as the module ``mfstein_<name>`` (file ``path``,
    so that numba's cache locator finds the source); raise when it fails or lacks
    a required name."""
    spec = importlib.util.spec_from_loader(_sys_name(name), loader=None, origin=str(path))
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    sys.modules[_sys_name(name)] = module
    try:
        exec(_code(text, path), module.__dict__)  # the checked text
        missing = [n for n in required if not hasattr(module, n)]
        if missing:
            raise ImportError(f"{path.name} defines no {', '.join(missing)}")
    except BaseException:
        sys.modules.pop(_sys_name(name), None)
        raise
    return module


def _trusted(text: str, path: Path, name: str, required: Sequence[str]) -> ModuleType | None:
    try:
        return _execute(text, path, name, required)
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except BaseException:  # any failure of a cached file: it is regenerated
        cache.report_damaged(path)
        return None


def generated_module(
    prefix: str,
    key: str,
    generate: Callable[[], str],
    *,
    required: Sequence[str] = (),
) -> Generated:
    """The module generated from ``key``, from the cache when intact, else from ``generate``.

    The file is read and checked on every call (callers keep the result in
    memory); the module is then also what :func:`load_generated` returns for
    ``name`` in this process.

    Parameters
    ----------
    prefix:
        Start of the cache name (``"kernels_numba"``, ``"simchain"``, ...).
    key:
        One line that identifies the generated text (module docstring); two
        calls with the same key must generate the same text.
    generate:
        Prints the module's source; called only when the cached file is
        missing or damaged.
    required:
        Names the module must define to be trusted.
    """
    name = module_name(prefix, key)
    with _lock:
        path = cache.cache_dir() / f"{name}.py"
        text = _read(path, name)
        module = _trusted(text, path, name, required) if text is not None else None
        if module is None:
            text = _sealed(key, generate())
            atomic_write(path, text)
            module = _execute(text, path, name, required)
        _loaded[name] = module
        return Generated(name, path, text, module)


def load_generated(
    name: str, path: Path | None = None, *, required: Sequence[str] = ()
) -> ModuleType:
    """The generated module ``name`` in a process that cannot generate it (a worker).

    Returns the module already loaded in this process, else reads ``path``
    (default: the file of that name in the cache directory), checks it as
    :func:`generated_module` does, and executes it.  A missing or damaged file
    is one sentence (:class:`mfstein.ground.errors.ParameterError`).
    """
    with _lock:
        hit = _loaded.get(name)
        if hit is not None:
            return hit
        path = cache.cache_dir() / f"{name}.py" if path is None else Path(path)
        if not path.is_file():
            raise ParameterError(
                f"the generated module {path} is missing in this process; share the kernel "
                "cache ($MFSTEIN_CACHE_DIR) with every worker."
            )
        text = _read(path, name)
        module = _trusted(text, path, name, required) if text is not None else None
        if module is None:
            raise ParameterError(
                f"the generated module {path} is damaged; run the command again in one "
                "process to generate it afresh."
            )
        _loaded[name] = module
        return module


class _PlainNumba:
    """``numba`` as :func:`load_plain` shows it to a generated module: ``njit`` leaves
    each function as written."""

    @staticmethod
    def njit(*args: Any, **options: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not options:
            return args[0]
        return lambda fn: fn


def _as_written(fn: Any) -> Any:
    """:func:`mfstein.ground.jit.reads_inputs` as :func:`load_plain` shows it: no mark."""
    return fn


_plain: dict[str, ModuleType | None] = {}


def load_plain(name: str, path: Path) -> ModuleType | None:
    """The generated module ``name`` (file ``path``, checked as :func:`load_generated`
    checks it) as plain Python: its functions as written, ``numba.njit`` a no-op.

    For an evaluation in NumPy (:mod:`numeric.exact.small`) that reads the functions'
    source and should not pay what executing the module costs numba (a dispatcher
    and a cache locator per function and, first in a process, numba's target
    context: some 12 ms of CPU for the SIR kernels).  ``None`` when the file is
    missing or damaged, or does not run so (then :func:`load_generated`)."""
    with _lock:
        if name in _plain:
            return _plain[name]
        text = _read(Path(path), name)
        module = None if text is None else _execute_plain(text, Path(path), name)
        _plain[name] = module
        return module


def _execute_plain(text: str, path: Path, name: str) -> ModuleType | None:
    """``text`` executed as a module whose ``from mfstein.ground.jit import numba,
    reads_inputs`` gives :class:`_PlainNumba` and :func:`_as_written` (not entered in
    ``sys.modules``)."""
    import builtins

    def importer(module: str, *args: Any, **kwargs: Any) -> Any:
        if module == "mfstein.ground.jit":
            return SimpleNamespace(numba=_PlainNumba, reads_inputs=_as_written)
        return builtins.__import__(module, *args, **kwargs)

    plain = ModuleType(f"{_sys_name(name)}_plain")
    plain.__file__ = str(path)
    plain.__dict__["__builtins__"] = {**vars(builtins), "__import__": importer}
    try:
        exec(_code(text, path), plain.__dict__)  # the checked text
    except Exception:
        return None
    return plain
