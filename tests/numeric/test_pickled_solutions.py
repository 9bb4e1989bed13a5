"""A solution at working precision pickles (for a Dask scheduler, a process pool, a
file) and comes back equal, digit for digit: mpmath's matrices, which ``pickle``
cannot find by name, are rebuilt from their entries
(:func:`numeric.precision.mp_matrix_from_entries`)."""

from __future__ import annotations

import dataclasses
import pickle

import mpmath
from test_one_journey import PARAMS, START, plain_sis

import numeric

SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}


def _same(a, b) -> None:
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, mpmath.matrix):
            assert isinstance(y, mpmath.matrix) and (x.rows, x.cols) == (y.rows, y.cols), f.name
            pairs = [(x[i, j], y[i, j]) for i in range(x.rows) for j in range(x.cols)]
            assert all(u == v and type(u) is type(v) for u, v in pairs), f.name  # exact
        elif f.compare:
            assert x == y, f.name


def test_a_working_precision_solution_pickles_and_comes_back_digit_for_digit():
    sol = numeric.solve("sir", SIR, dps=40)
    assert any(isinstance(getattr(sol, f.name), mpmath.matrix) for f in dataclasses.fields(sol))
    back = pickle.loads(pickle.dumps(sol))
    _same(sol, back)
    assert back.to_json() == sol.to_json()
    assert back.certify().to_json() == sol.certify().to_json()  # the tasks come back too


def test_a_plain_models_order_2_solution_pickles():
    sol = numeric.solve(plain_sis(), PARAMS, start=START, dps=30, order=2)
    back = pickle.loads(pickle.dumps(sol))
    _same(sol, back)
    assert back.to_json() == sol.to_json()
