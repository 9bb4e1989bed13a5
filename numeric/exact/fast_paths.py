"""Structure-aware exact solvers by family: the exact task's fast paths.

As the mean field does (:data:`numeric.meanfield.entry.FAST_PATHS`), a model family
whose ``info.fast_path`` names a registered solver has its finite-N chain
solved by it in :func:`numeric.exact.solve`, unless ``route="general"`` or
the call asks for something the fast path cannot honour (a ``start`` or a
``truncation``).  A fast path is

``f(model, params, *, N, method, tol, memory_limit, progress) -> ExactResult | None``

and returns ``None`` for a member of its family it does not handle (the
general chain then runs).  The built-in fast paths (:data:`BUILTIN`) register
themselves when their module is imported, which :func:`fast_path` does on the
first lookup of their name: the answer never depends on what was imported
before.  This module imports nothing heavy.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

#: ``ModelInfo.fast_path`` name -> exact solver.
FAST_PATHS: dict[str, Callable[..., Any]] = {}

#: Built-in fast paths: ``ModelInfo.fast_path`` name -> the module that registers it.
BUILTIN: dict[str, str] = {"supermarket": "numeric.exact.supermarket"}


def register_fast_path(name: str, solver: Callable[..., Any]) -> None:
    """Solve the finite-N chain of models whose ``info.fast_path`` is ``name`` by ``solver``."""
    FAST_PATHS[name] = solver


def fast_path(model: Any) -> Callable[..., Any] | None:
    """The registered exact solver of ``model``'s family, or ``None``."""
    info = getattr(model, "info", None)
    name = getattr(info, "fast_path", None) or ""
    if name not in FAST_PATHS and name in BUILTIN:
        importlib.import_module(BUILTIN[name])
    return FAST_PATHS.get(name)
