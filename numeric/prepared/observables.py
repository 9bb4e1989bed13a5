"""The observables of a model, parsed once: each with its derivatives and the plans that
evaluate them without SymPy.

An observable ``g`` (:func:`derive.observables.observable`: a declared name, an
expression, a string, ``"quadratic"``) is parsed and checked against its model once per
``(model, g)`` (:func:`prepare_observable`, counted as ``COUNTS["prepared:observable"]``,
:mod:`numeric.prepared.cache`); what every task derives from it alone is made once and
kept with it (:class:`PreparedObservable`):

* its expression as text (the name of an expression and the ``expression`` of a result);
* the names of the parameters it reads (which values it needs);
* the plan of ``g`` itself (:func:`derive.evaluation.compile_plan`), evaluated on the
  states of an exact chain in float64 and ``longdouble``
  (:func:`numeric.meanfield.observables.expect_exact`);
* its derivative tensors ``g_i, g_ij, g_ijk, g_ijkl`` up to order four
  (:func:`derive.observables.derivatives`) and their plan, evaluated on balls at
  ``s*`` for the expansion ``E[g(S_N)] = g0 + g1/N + g2/N^2``
  (:mod:`numeric.meanfield.observable_bounds`).

A warm call of a task with observables therefore parses, differentiates and walks no
SymPy expression: the values of the parameters come from the prepared parameter point
(:mod:`numeric.prepared.parameters`) and the plans hold no SymPy object.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from numeric.prepared.cache import PreparedCache, memo

#: Prepared observables kept in this process (least recently used dropped first).
OBSERVABLES = 256
#: Highest derivative order formed (the expansion's ``g_ijkl``).
ORDER = 4

Index = tuple[int, ...]


@dataclass(frozen=True)
class DerivativePlan:
    """The derivative tensors of ``g`` at orders ``0 .. ORDER``: ``indices[k]`` the sorted
    index tuples of the non-zero ``k``-th derivatives (one per symmetric class, in the
    order of :func:`derive.observables.derivatives`), ``plan`` their expressions in that
    order (orders one after the other)."""

    indices: tuple[tuple[Index, ...], ...]
    plan: Any

    def split(self, values: list[Any]) -> list[dict[Index, Any]]:
        """``values`` (one per expression of :attr:`plan`) as one dict per order."""
        out, at = [], 0
        for level in self.indices:
            out.append(dict(zip(level, values[at : at + len(level)], strict=True)))
            at += len(level)
        return out


@dataclass(frozen=True)
class PreparedObservable:
    """One observable of one model, parsed and checked (module docstring)."""

    #: The :class:`derive.model.Model` it was parsed against.
    model: Any
    #: The parsed observable (:class:`derive.observables.Observable`).
    observable: Any
    _now: dict[Hashable, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def name(self) -> str:
        """The declared name, or the expression as text."""
        return self.observable.name

    @property
    def quadratic(self) -> bool:
        """Whether this is ``N E[(S - s*)^T M (S - s*)]``."""
        return self.observable.quadratic

    @property
    def text(self) -> str:
        """The expression as SymPy prints it (``str(expr)``)."""
        return self._memo("text", lambda: str(self.observable.expr))

    @property
    def used_params(self) -> tuple[str, ...]:
        """The names of the model's parameters ``g`` reads, in the model's order."""

        def make() -> tuple[str, ...]:
            present = self.observable.expr.free_symbols
            return tuple(p.name for p in self.model.params if p in present)

        return self._memo("used_params", make)

    @property
    def plan(self) -> Any:
        """The :class:`derive.evaluation.Plan` of ``g`` itself."""
        from derive.evaluation import compile_plan

        return self._memo("plan", lambda: compile_plan([self.observable.expr]))

    @property
    def derivatives(self) -> DerivativePlan:
        """``g`` and its derivatives up to order :data:`ORDER` with their plan."""
        return self.derivatives_to(ORDER)

    def derivatives_to(self, order: int) -> DerivativePlan:
        """``g`` and its derivatives up to ``order`` with their plan (the transient's
        ``g1`` needs order two)."""

        def make() -> DerivativePlan:
            from derive.evaluation import compile_plan
            from derive.observables import derivatives

            tensors = derivatives(self.model, self.observable.expr, order)
            exprs = [e for level in tensors for e in level.values()]
            indices = tuple(tuple(level) for level in tensors)
            return DerivativePlan(indices, compile_plan(exprs))

        return self._memo(("derivatives", order), make)

    def _memo(self, key: Hashable, make: Callable[[], Any]) -> Any:
        return memo(self._now, key, make)


_OBSERVABLES: PreparedCache[PreparedObservable] = PreparedCache("prepared:observable", OBSERVABLES)


def observable_form(g: Any) -> Hashable | None:
    """The key of ``g`` as given: its text stripped (a name, an expression or
    ``"quadratic"``), an expression by its value; ``None`` (not kept) for the quadratic
    observable with a matrix, a parsed observable and anything unhashable."""
    if isinstance(g, str):
        return ("text", g.strip())
    if isinstance(g, tuple) or type(g).__name__ == "Observable":
        return None
    try:
        hash(g)
    except TypeError:
        return None
    return ("value", type(g).__name__, g)


def prepare_observable(model: Any, g: Any) -> PreparedObservable:
    """The :class:`PreparedObservable` of ``g`` on ``model`` (from this process's cache
    when parsed before).  Raises :class:`mfstein.ground.errors.ParameterError` in one
    sentence for an observable the model cannot take
    (:func:`derive.observables.observable`)."""
    from derive.observables import observable

    if isinstance(g, PreparedObservable):
        return g
    form = observable_form(g)
    model_key = getattr(model, "key", None)
    key = None if form is None or model_key is None else (id(model), model_key, form)
    return _OBSERVABLES.get(key, lambda: PreparedObservable(model, observable(model, g)))
