"""Lazy package exports (PEP 562), so that importing a package stays cheap.

A package ``__init__`` declares, per submodule, the public names it provides;
the submodule is imported on first attribute access.  ``mfstein --help`` thus
imports no SymPy, numba or SciPy.  The whole ``__init__`` is one call::

    __all__, __getattr__, __dir__ = lazy_package(
        __name__,
        {
            "numeric.tails.mmn": ("erlang_c", "mm1_law", "mmn_law"),
            "numeric.tails.ssq": ("SSQSolution", "solve_ssq"),
        },
    )
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["VERSION", "lazy_package"]

#: A public name the module defines under the same name, or a pair ``(name, attribute)``:
#: the module's ``attribute`` exported as ``name`` (``attribute`` ``""``: the module itself).
Export = str | tuple[str, str]

#: ``unlisted`` of every package: ``__version__``, read from the installed distribution
#: on first use (:mod:`mfstein.ground.version`).
VERSION: Mapping[str, Iterable[Export]] = {"mfstein.ground.version": (("__version__", "VERSION"),)}


def lazy_package(
    package: str,
    modules: Mapping[str, Iterable[Export]],
    *,
    before: Callable[[], None] | None = None,
    unlisted: Mapping[str, Iterable[Export]] | None = None,
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__all__, __getattr__, __dir__)`` for ``package``.

    Parameters
    ----------
    package:
        The package's ``__name__``.
    modules:
        Module (absolute dotted path) -> the public names it provides (:data:`Export`).
        A name given twice is refused (``ValueError``): each name has one home.
    before:
        Called once before the first lazy import (e.g. to register plug-ins).
    unlisted:
        More names imported on first use, like ``modules``'s, but not public: neither
        in ``__all__`` nor in ``__dir__()`` (:data:`VERSION`).
    """
    exports: dict[str, tuple[str, str]] = {}
    for module, entries in [*modules.items(), *(unlisted or {}).items()]:
        for entry in entries:
            name, attribute = (entry, entry) if isinstance(entry, str) else entry
            if name in exports:
                raise ValueError(f"{package}: {name!r} exported by {exports[name][0]} and {module}")
            exports[name] = (module, attribute)
    done = [before is None]
    sys.modules[package].__class__ = _export_preferring(exports)

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if not done[0]:
            done[0] = True
            before()  # type: ignore[misc]
        module = importlib.import_module(target[0])
        value = getattr(module, target[1]) if target[1] else module
        sys.modules[package].__dict__[name] = value
        return value

    public = sorted(name for entries in modules.values() for name in _names(entries))

    def __dir__() -> list[str]:
        return list(public)

    return list(public), __getattr__, __dir__


def _names(entries: Iterable[Export]) -> list[str]:
    return [entry if isinstance(entry, str) else entry[0] for entry in entries]


def _export_preferring(exports: Mapping[str, tuple[str, str]]) -> type[types.ModuleType]:
    """A module class that keeps an exported function when a submodule of the same
    name is imported (``derive.kernels`` is the function, as with eager
    imports, even after ``import derive.kernels`` bound the submodule)."""

    class _Package(types.ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            if (
                isinstance(value, types.ModuleType)
                and exports.get(name) == (value.__name__, name)
                and hasattr(value, name)
            ):
                value = getattr(value, name)
            super().__setattr__(name, value)

    return _Package
