"""Issue 23: the Python entries refuse bad arguments in one sentence naming the argument.

``numeric.solve``, ``numeric.exact.solve``, ``numeric.transient``,
``numeric.certify``/``MeanFieldSolution.certify`` and ``sim.simulate`` check their
arguments before any work (:mod:`mfstein.ground.arguments`); a misspelt keyword is a
``TypeError`` (as Python's own) naming the nearest valid keyword.  Malformed
models are refused where they are built (tests/validation/test_population_process.py).
"""

from __future__ import annotations

import inspect
import pathlib

import pytest
import sympy as sp

import numeric
import numeric.exact
import sim
from derive import Model, Transition
from mfstein.ground.arguments import check_keywords, check_path, check_start, unknown_keyword
from mfstein.ground.errors import ParameterError
from numeric.certified.enclosures import certify_float_solution

x, lam = sp.symbols("x lam")
MODEL = Model("birth_death", (x,), (lam,), [Transition((1,), lam * (1 - x)), Transition((-1,), x)])
OK = {"lam": "0.5"}


def _one_sentence(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and text.endswith("."), text
    return text


CASES = [
    # (entry, args, kwargs, exception, words in the sentence)
    (numeric.solve, (None,), {}, ParameterError, "model must be a derive.Model"),
    (numeric.solve, ("0.9",), {}, ParameterError, "model must be one of"),
    (numeric.solve, (MODEL, [0.9]), {}, ParameterError, "params must be a mapping"),
    (numeric.solve, (MODEL, "0.9"), {}, ParameterError, "params must be a mapping"),
    (numeric.solve, (MODEL, OK), {"dsp": 20}, TypeError, "'dsp' (did you mean 'dps'?)"),
    (numeric.solve, (MODEL, OK), {"start": 3}, ParameterError, "start must be a sequence"),
    (
        numeric.solve,
        (MODEL, {"lamb": "0.5"}),
        {},
        ParameterError,
        "lamb is not a parameter of model birth_death (did you mean lam?); its parameters are lam.",
    ),
    (numeric.exact.solve, (MODEL, "0.5"), {"N": 5}, ParameterError, "params must be a mapping"),
    (numeric.exact.solve, (MODEL, OK), {"N": 5, "rout": "x"}, TypeError, "did you mean 'route'"),
    (numeric.exact.solve, (MODEL, OK), {"N": 5, "start": 0.5}, ParameterError, "start must be"),
    (numeric.transient, (MODEL, OK), {"times": [1], "strat": [0.5]}, TypeError, "mean 'start'"),
    (numeric.transient, (MODEL, OK), {"times": [1], "start": {"x": 1}}, ParameterError, "start"),
    (sim.simulate, (MODEL,), {"params": [0.9], "N": 10}, ParameterError, "params must be a"),
    (sim.simulate, (MODEL, OK), {"N": 10, "checkpoint": 3}, ParameterError, "checkpoint must"),
    (sim.simulate, (MODEL, OK), {"N": 10, "checkpoint": b"c"}, ParameterError, "checkpoint"),
    (sim.simulate, (MODEL, OK), {"N": 10, "stpes": 10}, TypeError, "did you mean 'steps'"),
    (sim.simulate, (MODEL, OK), {"N": 10, "start": 1}, ParameterError, "start must be"),
    (numeric.certify, (None,), {}, ParameterError, "model must be a derive.Model"),
    (numeric.certify, (MODEL, [1]), {}, ParameterError, "params must be a mapping"),
    (numeric.certify, (MODEL, OK), {"dsp": 20}, TypeError, "did you mean 'dps'"),
    (certify_float_solution, (None,), {}, ParameterError, "solution must be a numeric."),
    (certify_float_solution, ("0.9",), {}, ParameterError, "got str"),
]


@pytest.mark.parametrize(
    ("entry", "args", "kwargs", "error", "words"),
    CASES,
    ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)],
)
def test_entries_refuse_bad_arguments_in_one_sentence(entry, args, kwargs, error, words):
    with pytest.raises(error) as exc:
        entry(*args, **kwargs)
    assert words in _one_sentence(exc)


@pytest.mark.parametrize(
    "entry",
    [
        numeric.solve,
        numeric.exact.solve,
        numeric.transient,
        numeric.certify,
        certify_float_solution,
        sim.simulate,
    ],
)
def test_checked_entries_keep_their_signature_and_docstring(entry):
    sig = inspect.signature(entry)
    assert "params" in sig.parameters or "solution" in sig.parameters
    assert entry.__doc__ and entry.__wrapped__.__name__ == entry.__name__


def test_the_keyword_sentence_names_the_nearest_keyword_or_lists_all():
    assert unknown_keyword("f", "dsp", ["dps", "order"]) == (
        "f() got an unexpected keyword argument 'dsp' (did you mean 'dps'?); "
        "its keywords are dps, order."
    )
    assert "did you mean" not in unknown_keyword("f", "zzz", ["dps", "order"])

    @check_keywords
    def f(a, *, dps=1):
        return a + dps

    assert f(1, dps=2) == 3  # valid keywords pass through
    with pytest.raises(TypeError, match="did you mean 'dps'"):
        f(1, dsp=2)

    @check_keywords
    def g(**kw):
        return kw

    assert g(anything=1) == {"anything": 1}  # an entry taking any keyword is left alone


def test_paths_and_starts_that_are_allowed_pass():
    for ok in (None, "ck.json", pathlib.Path("ck.json")):
        check_path("checkpoint", ok)
    with pytest.raises(ParameterError, match="non-empty"):
        check_path("checkpoint", "")
    for ok in (None, "reference", [0.5], (0.5,), iter([0.5])):
        check_start(ok)
