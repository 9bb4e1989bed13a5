"""Structure-aware exact solvers by family: the exact task's fast paths.

As the mean field does, a model family whose ``info.fast_path`` names a fast
path with an ``exact`` route in the one table (:mod:`mfstein.ground.fast_paths`:
the built-in :data:`~mfstein.ground.fast_paths.FAST_PATHS` and the families
registered at run time with :func:`mfstein.ground.fast_paths.register`) has its
finite-N chain solved by it in :func:`numeric.exact.solve`, unless
``route="general"`` or the call asks for something the fast path cannot honour
(a ``start`` or a ``truncation``).  A fast path is

``f(problem, *, N, solver, tol, memory_limit, progress) -> ExactResult | None``

of the prepared problem of the call (:class:`numeric.prepared.problem.PreparedProblem`
of the model at its parameters, ``N`` filled in for a model with a parameter
``N``: :meth:`numeric.exact.prepared.PreparedModel.problem`), with the linear
solver ``solver`` (``"auto"``, ``"direct"``, ``"bicgstab"``, ``"gmres"``), and
returns ``None`` for a member of its family it does not handle (the general chain
then runs).  Built-in routes are imported on the first lookup of their name (the
answer never depends on what was imported before).

:func:`register_fast_path` (``numeric.exact.register_fast_path``) is the older
form of the registration, a deprecated wrapper onto
:func:`mfstein.ground.fast_paths.register`; it still takes the older form
``f(model, params, *, N, method, tol, memory_limit, progress)`` (wrapped, with a
:class:`DeprecationWarning`).  This module imports nothing heavy.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from mfstein.ground.fast_paths import load, register, registered, takes_problem

#: The keywords of the protocol (with the values its form is checked with).
KEYWORDS = {"N": 1, "solver": "auto", "tol": None, "memory_limit": None, "progress": False}


def register_fast_path(name: str, solver: Callable[..., Any]) -> None:
    """Deprecated: ``mfstein.ground.fast_paths.register(name, FastPath(exact=solver))``,
    which registers every task of a family at once.  Solves the finite-N chain of
    models whose ``info.fast_path`` is ``name`` by ``solver``, keeping the other
    tasks of an earlier registration of ``name``."""
    warnings.warn(
        "numeric.exact.register_fast_path is deprecated; use "
        "mfstein.ground.fast_paths.register(name, FastPath(exact=f)) with "
        "f(problem, *, N, solver, tol, memory_limit, progress).",
        DeprecationWarning,
        stacklevel=2,
    )
    register(name, replace(registered(name), exact=_of_problem(solver)))


def _of_problem(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` as an exact fast path of the prepared problem: itself when it takes the
    problem, else (the old form ``f(model, params, *, N, method, ...)``) a wrapper,
    with a warning."""
    if takes_problem(f, **KEYWORDS):
        return f
    warnings.warn(
        "an exact fast path f(model, params, *, N, method, tol, memory_limit, progress) is "
        "deprecated; register f(problem, *, N, solver, tol, memory_limit, progress), which "
        "reads the prepared problem (problem.model, problem.params).",
        DeprecationWarning,
        stacklevel=3,
    )

    def old_form(problem: Any, *, solver: str, **options: Any) -> Any:
        return f(problem.model, dict(problem.params), method=solver, **options)

    return old_form


def fast_path(model: Any) -> Callable[..., Any] | None:
    """The exact solver of ``model``'s family (registered, else built in), or ``None``."""
    info = getattr(model, "info", None)
    return load(getattr(info, "fast_path", None) or "", "exact")
