"""The one table of fast paths: which model family each task solves its own way.

A model family declares a name in ``ModelInfo.fast_path``; the entry of that name
in :data:`FAST_PATHS` (built in) or :data:`REGISTERED` (added at run time by
:func:`register`) says where each task finds the family's structure-aware route,
as ``"module:attribute"`` text or, for a family registered at run time, the
object itself.  Every route takes the prepared problem
(:class:`numeric.prepared.problem.PreparedProblem`: ``problem.model``, the
parameters as given ``problem.params``, their values ``problem.values`` read once):

``mean_field``   ``f(problem, *, dps, M) -> MeanFieldSolution``, the family's solution of
                 the problem ``numeric.solve`` prepared
``fixed_point``  ``g(problem) -> array | None``, the family's float64 fixed point of the
                 prepared problem
``restriction``  ``r(problem, kept) -> Model | None``, the member of the family on the
                 coordinates ``kept`` of ``problem.model`` (the others zero), or
                 ``None``; structural, so it reads ``problem.model`` only (its answer
                 is kept per model and shared by every parameter point)
``exact``        ``f(problem, *, N, solver, tol, memory_limit, progress)
                 -> ExactResult | None`` (``numeric.exact.solve``; the problem of the
                 finite-N call: ``N`` filled in for a model with a parameter ``N``)
``simulation``   a :class:`sim.base.Simulator` subclass (``sim.simulate``), built from
                 the problem of the finite-N call, ``cls.from_problem(problem, N, *,
                 truncation=)`` (a class with a constructor of its own: by it, warned)
``negligible_tail``  ``t(problem) -> Model | None``, the family member on fewer
                 coordinates that gives the same float64 order-2 numbers (the
                 others negligible at the fixed point), or ``None``
``short_forms``  the public names the family adds to a package's lazy table, as
                 ``(package, "module:attribute")`` pairs (:func:`short_forms`): the
                 supermarket's ``numeric.bound``, ``numeric.exact.solve_exact``,
                 ``sim.simulate_supermarket``, ...; the package itself names no family
``short_options``  the command-line options the family takes as its own
                 (:class:`ShortOptions`: ``argparse`` destinations such as the
                 supermarket's ``lam``, ``d``, ``mu``, and the size check of a run);
                 :mod:`mfstein.cli.short_options` reads them and names no family

A route returning ``None`` declines that member of its family (the task's general
route runs).  Nothing is imported until a task asks (:func:`load`), so this module
-- data and the standard library only -- is part of the ground that everything may
import, and the general code of each task (``numeric.meanfield``,
``numeric.exact``, ``sim.api``) finds a family here instead of naming it.  The
built-in entry is the whole registration of a family: its routes and short forms
name modules of the family's own package ``mfstein.families.<family>`` (the layer
above ``sim``, which no general module imports; ``tests/test_fast_paths.py`` checks
it), but for the restriction to fewer coordinates, which is the model's definition
in ``derive``.

A user's family registers once, for every task it serves, with
:func:`register` ``(name, FastPath(...))`` and leaves with :func:`unregister`;
a task its entry leaves ``None`` falls back to the built-in entry of the same
name, if any.  The older ``numeric.register_fast_path``,
``numeric.exact.register_fast_path`` and ``sim.base.register_simulator`` are
deprecated wrappers onto :func:`register`.

>>> FAST_PATHS["supermarket"].exact
'mfstein.families.supermarket.exact:supermarket_fast'
>>> "mu" in FAST_PATHS["supermarket"].short_options.dests
True
>>> route("supermarket", "simulation")
'mfstein.families.supermarket.fast_path:SupermarketFastPath'
>>> route("sir", "exact") is None and route(None, "exact") is None
True
>>> register("doc-family", FastPath(exact=len))
>>> load("doc-family", "exact") is len and "doc-family" in families("exact")
True
>>> unregister("doc-family") == FastPath(exact=len)
True
>>> route("doc-family", "exact") is None
True
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from mfstein.ground.errors import ParameterError, check_choice

__all__ = [
    "FAST_PATHS",
    "REGISTERED",
    "TASKS",
    "FastPath",
    "ShortOptions",
    "families",
    "load",
    "register",
    "registered",
    "route",
    "short_forms",
    "takes_problem",
    "unregister",
]


@dataclass(frozen=True)
class ShortOptions:
    """One family's own command-line options: their ``argparse`` destinations
    (``dests``) and, optionally, its check of a run's size before the model is built
    (``check``, ``"module:function"`` called as ``f(N, options)`` with the factory
    options).  Plain data: ``mfstein --help`` reads it without importing the family."""

    dests: tuple[str, ...] = ()
    check: str | None = None


@dataclass(frozen=True)
class FastPath:
    """Where each task finds one family's own route (``"module:attribute"``, or the
    object itself for a family registered at run time; ``None``: the task runs its
    general route for the family).  The protocol of each task is in the module
    docstring."""

    mean_field: Any = None
    fixed_point: Any = None
    restriction: Any = None
    exact: Any = None
    simulation: Any = None
    negligible_tail: Any = None
    #: The public short forms: ``(package, "module:attribute")`` pairs, each added to
    #: the package's lazy table under the attribute's name (:func:`short_forms`; read
    #: from the built-in table only).
    short_forms: tuple[tuple[str, str], ...] = ()
    #: The family's own command-line options (:class:`ShortOptions`; read from the
    #: built-in table only, by :mod:`mfstein.cli.short_options`).
    short_options: ShortOptions = ShortOptions()


#: The fields of :class:`FastPath` that declare rather than route.
_DECLARATIONS = ("short_forms", "short_options")
#: The tasks a fast path may serve: the routes of :class:`FastPath`.
TASKS: tuple[str, ...] = tuple(f.name for f in fields(FastPath) if f.name not in _DECLARATIONS)

#: The package of the supermarket family (:mod:`mfstein.families.supermarket`).
_SUPERMARKET = "mfstein.families.supermarket"

#: The built-in fast paths, by the family's ``ModelInfo.fast_path`` name.
FAST_PATHS: Mapping[str, FastPath] = MappingProxyType(
    {
        # the power-of-d supermarket and its relabellings (JSQ(L), ...):
        # derive.models.supermarket.queue_model declares the name
        "supermarket": FastPath(
            mean_field=f"{_SUPERMARKET}.solver:solve_model",
            fixed_point=f"{_SUPERMARKET}.solver:shooting_point64",
            restriction="derive.models.supermarket:first_levels",
            exact=f"{_SUPERMARKET}.exact:supermarket_fast",
            simulation=f"{_SUPERMARKET}.fast_path:SupermarketFastPath",
            negligible_tail=f"{_SUPERMARKET}.tail:negligible_tail",
            short_forms=(
                ("numeric", f"{_SUPERMARKET}.equilibrium:equilibrium"),
                ("numeric", f"{_SUPERMARKET}.equilibrium:reference_point"),
                ("numeric", f"{_SUPERMARKET}.short_form:bound"),
                ("numeric", f"{_SUPERMARKET}.solver:auto_buffer"),
                ("numeric", f"{_SUPERMARKET}.sweep:constant_float64"),
                ("numeric.exact", f"{_SUPERMARKET}.exact:solve_exact"),
                ("sim", f"{_SUPERMARKET}.simulate_short_form:simulate_supermarket"),
            ),
            short_options=ShortOptions(
                dests=("lam", "gamma", "alpha", "d", "without_replacement", "mu"),
                check=f"{_SUPERMARKET}.exact_size:check_exact_states",
            ),
        ),
    }
)


_REGISTERED: dict[str, FastPath] = {}
#: The families registered at run time (:func:`register`), read-only; consulted
#: before :data:`FAST_PATHS`, task by task.
REGISTERED: Mapping[str, FastPath] = MappingProxyType(_REGISTERED)


def register(name: str, fast_path: FastPath) -> None:
    """Solve the models whose ``info.fast_path`` is ``name`` by the routes of
    ``fast_path`` (replacing an earlier registration of ``name``); a task it leaves
    ``None`` keeps the built-in route of ``name``, if any.  The routes follow the
    protocol of the module docstring."""
    if not isinstance(name, str) or not name:
        raise ParameterError(f"name must be a non-empty string, got {name!r}.")
    if not isinstance(fast_path, FastPath):
        raise ParameterError(
            f"fast_path must be a mfstein.ground.fast_paths.FastPath, got {fast_path!r}."
        )
    _REGISTERED[name] = fast_path


def unregister(name: str) -> FastPath | None:
    """Remove the run-time registration of ``name`` and return it (``None`` when there
    was none); the built-in table is unchanged."""
    return _REGISTERED.pop(name, None)


def registered(name: str) -> FastPath:
    """The run-time registration of ``name``, or an empty :class:`FastPath`."""
    return _REGISTERED.get(name, FastPath())


def takes_problem(f: Callable[..., Any], **keywords: Any) -> bool:
    """Whether ``f`` can be called with the prepared problem alone and ``keywords``
    (the protocol of the module docstring), rather than an older form such as
    ``f(model, params, ...)``; a callable without a signature to read is taken as
    written for the protocol.

    >>> takes_problem(lambda problem, *, N: None, N=1)
    True
    >>> takes_problem(lambda model, params, *, N: None, N=1)
    False
    """
    try:
        inspect.signature(f).bind(None, **keywords)
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def short_forms(package: str) -> dict[str, tuple[str, ...]]:
    """The entries ``{module: (attribute, ...)}`` the families' short forms
    (:attr:`FastPath.short_forms`) add to the lazy table
    (:func:`mfstein.ground.lazy.lazy_package`) of ``package``.

    >>> short_forms("numeric.exact")
    {'mfstein.families.supermarket.exact': ('solve_exact',)}
    """
    out: dict[str, tuple[str, ...]] = {}
    for entry in FAST_PATHS.values():
        for target, where in entry.short_forms:
            if target == package:
                module, _, attribute = where.partition(":")
                out[module] = (*out.get(module, ()), attribute)
    return out


def route(family: str | None, task: str) -> Any:
    """``family``'s route for ``task`` (one of :data:`TASKS`): the run-time
    registration's (:data:`REGISTERED`), else the built-in ``"module:attribute"``
    of :data:`FAST_PATHS`; ``None`` when the family has none (or no family is named)."""
    check_choice("task", task, TASKS)
    name = family or ""
    for table in (_REGISTERED, FAST_PATHS):
        entry = table.get(name)
        if entry is not None and getattr(entry, task) is not None:
            return getattr(entry, task)
    return None


def load(family: str | None, task: str) -> Any:
    """The object :func:`route` names, imported now (a registered object as it is), or
    ``None``."""
    where = route(family, task)
    if not isinstance(where, str):
        return where
    module, _, attribute = where.partition(":")
    return getattr(importlib.import_module(module), attribute)


def families(task: str) -> tuple[str, ...]:
    """The families with a route for ``task``: the built-in ones in table order, then
    those registered at run time."""
    names = dict.fromkeys([*FAST_PATHS, *_REGISTERED])
    return tuple(name for name in names if route(name, task) is not None)
