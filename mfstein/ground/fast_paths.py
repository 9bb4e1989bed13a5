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

Nothing is imported until a task asks (:func:`load`), so this module -- data and
the standard library only -- is part of the ground that everything may import,
and the general code of each task (``numeric.meanfield``, ``numeric.exact``,
``sim.api``) finds a family here instead of naming it.  A route names a module
of its task's layer or below (``tests/test_fast_paths.py`` checks it): the
mean field and the exact chain load ``derive``/``numeric`` modules, the
simulation ``sim`` ones.  A user's family registers at run time with
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
    "SHORT_FORMS",
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


#: The tasks a fast path may serve: the fields of :class:`FastPath`.
TASKS: tuple[str, ...] = tuple(f.name for f in fields(FastPath))

#: The built-in fast paths, by the family's ``ModelInfo.fast_path`` name.
FAST_PATHS: Mapping[str, FastPath] = MappingProxyType(
    {
        # the power-of-d supermarket and its relabellings (JSQ(L), ...):
        # derive.models.supermarket.queue_model declares the name
        "supermarket": FastPath(
            mean_field="mfstein.families.supermarket.solver:solve_model",
            fixed_point="mfstein.families.supermarket.solver:shooting_point64",
            restriction="derive.models.supermarket:first_levels",
            exact="mfstein.families.supermarket.exact:supermarket_fast",
            simulation="mfstein.families.supermarket.fast_path:SupermarketFastPath",
            negligible_tail="mfstein.families.supermarket.tail:negligible_tail",
        ),
    }
)


#: The public short forms a family adds to a package's lazy table (family ->
#: package -> ``"module:attribute"``), so that the package itself names no family:
#: the supermarket's ``numeric.exact.solve_exact(N, lam, b, d)``.
SHORT_FORMS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "supermarket": MappingProxyType(
            {"numeric.exact": "mfstein.families.supermarket.exact:solve_exact"}
        )
    }
)


def short_forms(package: str) -> dict[str, tuple[str, ...]]:
    """The entries ``{module: (attribute, ...)}`` the families' short forms add to the
    lazy table (:func:`mfstein.ground.lazy.lazy_package`) of ``package``.

    >>> short_forms("numeric.exact")
    {'mfstein.families.supermarket.exact': ('solve_exact',)}
    """
    out: dict[str, tuple[str, ...]] = {}
    for forms in SHORT_FORMS.values():
        if package in forms:
            module, _, attribute = forms[package].partition(":")
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
