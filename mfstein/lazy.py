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


def lazy_package(
    package: str,
    modules: Mapping[str, Iterable[str]],
    *,
    before: Callable[[], None] | None = None,
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__all__, __getattr__, __dir__)`` for ``package``.

    Parameters
    ----------
    package:
        The package's ``__name__``.
    modules:
        Module (absolute dotted path) -> the public names it defines.  A name
        given by two modules is refused (``ValueError``): each name has one home.
    before:
        Called once before the first lazy import (e.g. to register plug-ins).
    """
    exports: dict[str, str] = {}
    for module, names in modules.items():
        for name in names:
            if exports.setdefault(name, module) != module:
                raise ValueError(f"{package}: {name!r} exported by {exports[name]} and {module}")
    return sorted(exports), *lazy_exports(package, exports, before=before)


def lazy_exports(
    package: str, exports: Mapping[str, str], *, before: Callable[[], None] | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__getattr__, __dir__)`` for ``package``.

    Parameters
    ----------
    package:
        The package's ``__name__``.
    exports:
        Public name -> module that defines it (absolute dotted path).
    before:
        Called once before the first lazy import (e.g. to register plug-ins).
    """
    done = [before is None]
    sys.modules[package].__class__ = _export_preferring(exports)

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if not done[0]:
            done[0] = True
            before()  # type: ignore[misc]
        value = getattr(importlib.import_module(target), name)
        globals_ = importlib.import_module(package).__dict__
        globals_[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__


def _export_preferring(exports: Mapping[str, str]) -> type[types.ModuleType]:
    """A module class that keeps an exported function when a submodule of the same
    name is imported (``numeric.equilibrium`` is the function, as with eager
    imports, even after ``import numeric.supermarket.equilibrium`` bound the submodule)."""

    class _Package(types.ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            if (
                isinstance(value, types.ModuleType)
                and exports.get(name) == value.__name__
                and hasattr(value, name)
            ):
                value = getattr(value, name)
            super().__setattr__(name, value)

    return _Package
