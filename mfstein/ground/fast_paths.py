"""The one table of fast paths: which model family each task solves its own way.

A model family declares a name in ``ModelInfo.fast_path``; the entry of that name
in :data:`FAST_PATHS` says where each task finds the family's structure-aware
route, as ``"module:attribute"`` text:

``mean_field``   ``f(problem, *, dps, M) -> MeanFieldSolution``, the family's solution of
                 the problem ``numeric.solve`` prepared (its values read there)
``fixed_point``  ``g(problem) -> array | None``, the family's float64 fixed point of the
                 prepared problem (its values read there, not from the parameters again)
``restriction``  ``r(model, kept) -> Model | None``, the member of the family on the
                 coordinates ``kept`` (the others zero), or ``None``
``exact``        ``f(model, params, *, N, method, tol, memory_limit, progress)
                 -> ExactResult | None`` (``numeric.exact.solve``)
``simulation``   a :class:`sim.base.Simulator` subclass (``sim.simulate``)
``negligible_tail``  ``t(model, params) -> Model | None``, the family member on
                 fewer coordinates that gives the same float64 order-2 numbers
                 (the others negligible at the fixed point), or ``None``
``short_forms``  the public names the family adds to a package's lazy table, as
                 ``(package, "module:attribute")`` pairs (:func:`short_forms`): the
                 supermarket's ``numeric.bound``, ``numeric.exact.solve_exact``,
                 ``sim.simulate_supermarket``, ...; the package itself names no family

Nothing is imported until a task asks (:func:`load`), so this module -- data and
the standard library only -- is part of the ground that everything may import,
and the general code of each task (``numeric.meanfield``, ``numeric.exact``,
``sim.api``) finds a family here instead of naming it.  The entry is the whole
registration of a family: its routes and short forms name modules of the
family's own package ``mfstein.families.<family>`` (the layer above ``sim``,
which no general module imports; ``tests/test_fast_paths.py`` checks it), but
for the restriction to fewer coordinates, which is the model's definition in
``derive``.  A user's family registers at run time with
``numeric.register_fast_path``, ``numeric.exact.register_fast_path`` or
``sim.base.register_simulator``, which each task consults first.

>>> FAST_PATHS["supermarket"].exact
'mfstein.families.supermarket.exact:supermarket_fast'
>>> route("supermarket", "simulation")
'mfstein.families.supermarket.fast_path:SupermarketFastPath'
>>> route("sir", "exact") is None and route(None, "exact") is None
True
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from mfstein.ground.errors import check_choice

__all__ = [
    "FAST_PATHS",
    "TASKS",
    "FastPath",
    "families",
    "load",
    "route",
    "short_forms",
]


@dataclass(frozen=True)
class FastPath:
    """Where each task finds one family's own route (``"module:attribute"``;
    ``None``: the task runs its general route for the family)."""

    mean_field: str | None = None
    fixed_point: str | None = None
    restriction: str | None = None
    exact: str | None = None
    simulation: str | None = None
    negligible_tail: str | None = None
    #: The public short forms: ``(package, "module:attribute")`` pairs, each added to
    #: the package's lazy table under the attribute's name (:func:`short_forms`).
    short_forms: tuple[tuple[str, str], ...] = ()


#: The tasks a fast path may serve: the routes of :class:`FastPath`.
TASKS: tuple[str, ...] = tuple(f.name for f in fields(FastPath) if f.name != "short_forms")

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
        ),
    }
)


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


def route(family: str | None, task: str) -> str | None:
    """The ``"module:attribute"`` of ``family``'s route for ``task`` (one of
    :data:`TASKS`), or ``None`` when the family has none (or no family is named)."""
    check_choice("task", task, TASKS)
    entry = FAST_PATHS.get(family or "")
    return None if entry is None else getattr(entry, task)


def load(family: str | None, task: str) -> Any:
    """The object :func:`route` names, imported now, or ``None``."""
    where = route(family, task)
    if where is None:
        return None
    module, _, attribute = where.partition(":")
    return getattr(importlib.import_module(module), attribute)


def families(task: str) -> tuple[str, ...]:
    """The families with a built-in route for ``task``, in table order."""
    return tuple(name for name in FAST_PATHS if route(name, task) is not None)
