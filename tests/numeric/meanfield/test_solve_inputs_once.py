"""``numeric.solve`` reads its inputs once, through the prepared problem (issue 31).

The refusals come in one order whatever the route -- parameter names, parameter
values and ranges, ``order``, ``observables``, ``start``, ``M`` -- each in one
sentence; a warm call with the same inputs reads no parameter value again.
"""

from __future__ import annotations

import pytest

import numeric
import numeric.params as params_module
from derive.models import load_model
from mfstein.ground.errors import ParameterError

GOOD = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
# every input wrong at once; the refusals peel off in this order
WRONG = [
    ("params", {"betta": "3", "beta": "-1", "gamma": "1", "rho": "0.5", "a": "0.1"}),
    ("params", {**GOOD, "beta": "-1"}),
    ("order", 3),
    ("observables", "zz + S"),
    ("start", [1, 2]),
    ("M", "bogus"),
]
SENTENCES = [
    r"^betta is not a parameter of model sir \(did you mean beta\?\); its parameters are ",
    r"^beta must be >= 0, got '-1'\.$",
    r"^order must be 1 or 2, got 3\.$",
    r"^observable 'zz \+ S' uses zz, which is not a symbol of model sir ",
    r"^start must have 3 coordinates \(one per state of model sir\), got 2\.$",
    r"^M must be 'identity' or 'diag:a,b,\.\.\.', got 'bogus'\.$",
]


@pytest.mark.parametrize("precision", ["dps", "float64"])
def test_the_refusals_come_in_one_order_on_every_route(precision: str) -> None:
    model = load_model("sir")
    for first in range(len(WRONG)):
        kwargs = {"params": dict(GOOD)}
        for key, value in WRONG[first:]:
            if key == "params" and WRONG.index((key, value)) > first:
                continue  # the names are right from here: only the first wrong params
            kwargs[key] = value
        params = kwargs.pop("params")
        with pytest.raises(ParameterError, match=SENTENCES[first]):
            numeric.solve(model, params, dps=10, precision=precision, **kwargs)


@pytest.mark.parametrize("precision", ["dps", "float64"])
def test_a_warm_solve_reads_no_parameter_value_again(monkeypatch, precision: str) -> None:
    reads: list[str] = []
    real = params_module._read

    def counted(name, raw):
        reads.append(name)
        return real(name, raw)

    monkeypatch.setattr(params_module, "_read", counted)
    from derive.models.sir import sir

    model = sir()  # an object of its own (load_model("sir") is one object per process)
    params = {**GOOD, "a": "0.125"}  # a point no other test prepared
    first = numeric.solve(model, params, dps=12, precision=precision)
    assert reads  # the values were read (at dps + 20 digits and at 30)
    cold = len(reads)
    again = numeric.solve(model, dict(params), dps=12, precision=precision)
    assert len(reads) == cold, reads[cold:]  # the warm call read none of them again
    assert again.constant == first.constant


@pytest.mark.parametrize(
    ("name", "options", "params", "start"),
    [
        ("sir", {}, GOOD, None),
        ("sir", {}, GOOD, ["0.9", "0.1", "0"]),
        ("supermarket", {"b": 5}, {"lam": "0.7"}, None),  # the family's fast path
    ],
)
def test_solve_prepared_is_solve_on_the_prepared_problem(name, options, params, start) -> None:
    """The finite-N chain's centre (:func:`numeric.meanfield.entry.solve_prepared`) and
    ``numeric.solve`` take one path: the same solution, inputs included."""
    from numeric.meanfield.entry import solve_prepared
    from numeric.prepared.problem import prepare_problem

    model = load_model(name, **options)
    one = solve_prepared(prepare_problem(model, params, start), dps=15)
    other = numeric.solve(model, params, dps=15, start=start)
    assert one == other and one.to_dict() == other.to_dict()
    assert one.inputs == params and one.start == start and one.M is None
