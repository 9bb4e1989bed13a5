"""Declared observables of a heterogeneous population: ratios of affine functionals.

An observable of the ``K x S`` occupation ``X`` (``X[k*S + s] = 1`` when object
``k`` is in ``s``) is ``n(X) / d(X)`` with ``n`` and ``d`` affine
(``c . X + c0``, ``d = 1`` for a plain mean).  What is reported is the ratio of
the *expectations*, ``E[n(X)] / E[d(X)]``: with ``d = 1`` the mean of ``n``, and
with ``d`` a throughput it is Little's law (mean response time = mean number of
jobs / rate of accepted jobs).  Coefficients are SymPy numbers or expressions in
the model's parameters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sympy as sp

from mfstein.ground.errors import ParameterError


@dataclass(frozen=True)
class Affine:
    """``sum coefficients[i] X[i] + constant`` on the flat ``K*S`` coordinates
    (``coefficients``: ``(i, c)`` pairs, nonzero only)."""

    #: The nonzero coefficients, ``(i, c)`` pairs of a flat index of ``X`` (``k*S + s``) and a
    #: SymPy expression.
    coefficients: tuple[tuple[int, sp.Expr], ...]
    #: The constant term (a SymPy expression).
    constant: sp.Expr = sp.S.Zero


@dataclass(frozen=True)
class HeterogeneousObservable:
    """``E[numerator(X)] / E[denominator(X)]`` (``denominator`` ``None``: the mean of
    the numerator); ``doc`` says what it is in one phrase."""

    #: The observable's name.
    name: str
    #: The affine numerator ``n(X)``.
    numerator: Affine
    #: The affine denominator ``d(X)``; ``None`` for the mean of the numerator.
    denominator: Affine | None = None
    #: What the observable is, in one phrase.
    doc: str = ""


def affine(terms: Mapping[int, object] | Sequence[tuple[int, object]], constant: object = 0
           ) -> Affine:
    """An :class:`Affine` from ``{flat index: coefficient}`` (zero coefficients dropped)."""
    items = terms.items() if isinstance(terms, Mapping) else terms
    out: dict[int, sp.Expr] = {}
    for i, c in items:
        value = sp.sympify(c)
        out[int(i)] = out.get(int(i), sp.Integer(0)) + value
    kept = tuple((i, c) for i, c in sorted(out.items()) if c != 0)
    return Affine(kept, sp.sympify(constant))


def check_observables(observables: Sequence[HeterogeneousObservable], n: int,
                      params: Sequence[str]) -> tuple[HeterogeneousObservable, ...]:
    """Refuse, in one sentence, an observable whose index is outside ``0..n-1``, whose
    coefficients use a name that is not a parameter, or a name given twice."""
    seen: set[str] = set()
    for g in observables:
        if not isinstance(g, HeterogeneousObservable):
            raise ParameterError(
                f"observables must be HeterogeneousObservable objects, got {type(g).__name__}."
            )
        if g.name in seen:
            raise ParameterError(f"observable {g.name} is declared twice.")
        seen.add(g.name)
        for part in (g.numerator, g.denominator):
            if part is None:
                continue
            for i, c in part.coefficients:
                if not 0 <= i < n:
                    raise ParameterError(
                        f"observable {g.name} uses coordinate {i}, outside 0..{n - 1} (K*S - 1)."
                    )
                unknown = sorted(str(s) for s in sp.sympify(c).free_symbols
                                 if str(s) not in params)
                if unknown:
                    raise ParameterError(
                        f"observable {g.name} uses {', '.join(unknown)}, which is not a "
                        "parameter of the model."
                    )
    return tuple(observables)
