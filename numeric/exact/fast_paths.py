"""Structure-aware exact solvers by family: the exact task's fast paths.

As the mean field does, a model family whose ``info.fast_path`` names a fast
path has its finite-N chain solved by it in :func:`numeric.exact.solve`, unless
``route="general"`` or the call asks for something the fast path cannot honour
(a ``start`` or a ``truncation``).  A fast path is

``f(model, params, *, N, method, tol, memory_limit, progress) -> ExactResult | None``

and returns ``None`` for a member of its family it does not handle (the
general chain then runs).  The built-in ones are the ``exact`` routes of the one
table :data:`mfstein.ground.fast_paths.FAST_PATHS`, imported on the first lookup of
their name (the answer never depends on what was imported before); a user's
family registers here with :func:`register_fast_path`, which is consulted
first.  This module imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mfstein.ground.fast_paths import load

#: ``ModelInfo.fast_path`` name -> exact solver registered at run time.
FAST_PATHS: dict[str, Callable[..., Any]] = {}


def register_fast_path(name: str, solver: Callable[..., Any]) -> None:
    """Solve the finite-N chain of models whose ``info.fast_path`` is ``name`` by ``solver``."""
    FAST_PATHS[name] = solver


def fast_path(model: Any) -> Callable[..., Any] | None:
    """The exact solver of ``model``'s family (registered, else built in), or ``None``."""
    info = getattr(model, "info", None)
    name = getattr(info, "fast_path", None) or ""
    if name in FAST_PATHS:
        return FAST_PATHS[name]
    return load(name, "exact")
