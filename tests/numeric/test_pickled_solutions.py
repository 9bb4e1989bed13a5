"""A solution at working precision pickles (for a Dask scheduler, a process pool, a
file) and comes back equal, digit for digit: mpmath's matrices, which ``pickle``
cannot find by name, are rebuilt from their entries
(:func:`numeric.precision.mp_matrix_from_entries`)."""

from __future__ import annotations

import dataclasses
import pickle

import mpmath
import sympy as sp

import numeric
from derive import Model, Transition

SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}


def _plain_sis() -> Model:
    """A model as a researcher writes it: states ``s``, ``i``, transitions only, ``s + i``
    conserved."""
    s, i = sp.symbols("s i")
    beta, gamma, eps = sp.symbols("beta gamma eps")
    return Model(
        "plain_sis",
        (s, i),
        (beta, gamma, eps),
        [Transition((-1, 1), (beta * i + eps) * s), Transition((1, -1), gamma * i)],
    )


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
    sol = numeric.solve(
        _plain_sis(), {"beta": "2", "gamma": "1", "eps": "1/10"}, start=["9/10", "1/10"],
        dps=30, order=2,
    )  # fmt: skip
    back = pickle.loads(pickle.dumps(sol))
    _same(sol, back)
    assert back.to_json() == sol.to_json()
