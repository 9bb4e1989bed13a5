"""A warm call with observables does no SymPy (issue 31): an observable is parsed,
differentiated and compiled once per (model, observable); a second call reads what was
made (:mod:`numeric.prepared.observables`) and gives the same values.

The calls into SymPy are counted by a profile hook (:func:`profiled.functions_called`,
which also keeps the garbage collector from closing an earlier test's SymPy generator
inside the counted call): every Python frame whose code lives in a file under ``/sympy/``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from profiled import functions_called
from test_one_journey import PARAMS, START, plain_sis

import mfstein as mf
from numeric.expansion.transient_observables import trajectories
from numeric.prepared.cache import COUNTS
from sim.accuracy import accuracy

#: One observable of the state alone and one that reads a parameter.
OBSERVABLES = ["i*i", "beta*s*i + eps*s"]
MODEL = plain_sis()


def sympy_calls(call: Callable[[], Any]) -> tuple[int, Any]:
    """The number of Python calls into SymPy made by ``call()``, and its value."""
    out, seen = functions_called(call)
    return sum("/sympy/" in f for f in seen), out


def observed(sol: Any) -> dict[str, Any]:
    return {name: e.to_dict() for name, e in sol.observables.items()}


ROUTES: dict[str, Callable[[], Any]] = {
    "solve": lambda: observed(mf.solve(MODEL, PARAMS, start=START, observables=OBSERVABLES)),
    "solve order 2": lambda: observed(
        mf.solve(MODEL, PARAMS, start=START, order=2, observables=OBSERVABLES)
    ),
    "solve float64": lambda: observed(
        mf.solve(MODEL, PARAMS, start=START, precision="float64", observables=OBSERVABLES)
    ),
    "transient": lambda: {
        k: v.to_dict()
        for k, v in trajectories(
            mf.transient(MODEL, PARAMS, times=[0.5, 1.0], start=START), MODEL, OBSERVABLES, PARAMS
        ).items()
    },
    "exact": lambda: [
        mf.exact(MODEL, PARAMS, N=10, start=START).expect(g, MODEL).to_dict() for g in OBSERVABLES
    ],
    "accuracy table": lambda: accuracy(
        MODEL, PARAMS, OBSERVABLES[1], [10, 20], start=START
    ).to_dict(),
}


@pytest.mark.parametrize("route", ROUTES)
def test_a_warm_call_with_observables_calls_no_sympy_and_gives_the_same_values(route):
    first = ROUTES[route]()  # parses, differentiates and compiles each observable
    prepared = COUNTS["prepared:observable"]
    calls, second = sympy_calls(ROUTES[route])
    assert calls == 0
    assert second == first
    assert COUNTS["prepared:observable"] == prepared  # nothing parsed again


def test_an_observable_is_prepared_once_per_model():
    """The same text on another model object (with the same transitions) is parsed
    against that model: what a model declares is its own."""
    from numeric.prepared.observables import prepare_observable

    first = prepare_observable(MODEL, " i*i ")
    assert prepare_observable(MODEL, "i*i") is first
    other = prepare_observable(plain_sis(), "i*i")
    assert other is not first and other.model is not MODEL
