"""Numbers for some of a model's parameters in its symbolic objects.

``mfstein derive --model X --param lam=0.9`` prints the drift, the Jacobian,
... with the given parameters replaced by the exact rationals they denote
(``0.9`` is ``9/10``); the parameters not given stay symbols.  The names are
checked against the model (one sentence naming the model's parameters), and a
value against the range its factory declared (:class:`derive.spec.Parameter`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy as sp

from mfstein.ground.arguments import did_you_mean
from mfstein.ground.errors import ParameterError

__all__ = ["parameter_values", "with_values"]


def parameter_values(model: Any, params: Mapping[str, Any]) -> dict[sp.Symbol, sp.Rational]:
    """``params`` (name -> number or decimal text) as exact SymPy rationals keyed by
    the model's parameter symbols; an unknown name or a value outside its declared
    range is one sentence (:class:`mfstein.ground.errors.ParameterError`)."""
    from mfstein.ground.numbers import parse_real

    symbols = {str(p): p for p in model.params}
    out: dict[sp.Symbol, sp.Rational] = {}
    for name, raw in params.items():
        if name not in symbols:
            hint = did_you_mean(name, list(symbols), quote=False)
            raise ParameterError(
                f"{name} is not a parameter of model {model.name}{hint}; its parameters are "
                f"{', '.join(symbols) or 'none'}."
            )
        value = parse_real(name, raw)
        declared = model.info.parameter(name) if model.info is not None else None
        if declared is not None and not declared.contains(value):
            raise ParameterError(f"{name} must be {declared.describe()}, got {raw!r}.")
        out[symbols[name]] = sp.Rational(value.numerator, value.denominator)
    return out


def with_values(model: Any, params: Mapping[str, Any]) -> Any:
    """``model`` with the parameters named in ``params`` replaced by their values
    (:func:`parameter_values`) in every rate; the others stay its parameters.
    Every object derived from the result (drift, Jacobian, Stein's equation, ...)
    carries the numbers."""
    from derive.model import Model, Transition

    values = parameter_values(model, params)
    if not values:
        return model
    transitions = [
        Transition(t.jump, sp.sympify(t.rate).xreplace(values), t.label) for t in model.transitions
    ]
    rest = [p for p in model.params if p not in values]
    return Model(model.name, model.states, rest, transitions, info=model.info)
