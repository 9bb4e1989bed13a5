"""The float64 route's prepared problem (issues 31, 34): built once from (model,
params, start, M), immutable, cached by its inputs; order 2 extends the order-1
answer; a warm call runs no SymPy; matrices are converted to mpmath on first read
and equal the eager conversion."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy

import numeric
from derive.models import load_model
from numeric.meanfield import problem as pp
from numeric.meanfield.float64_values import Float64Matrix, mpf64

USER = str(Path(__file__).resolve().parents[3] / "benchmarks/models/supermarket_user.py")
SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}


def _sympy_calls(fn) -> list[str]:
    """The SymPy functions called (at any depth) while ``fn()`` runs: a profile hook
    sees every Python call, so nothing of SymPy runs unseen."""
    here = Path(sympy.__file__).parent
    roots = (f"{here}/", f"{here.resolve()}/")  # as imported, and through any symlink
    seen: list[str] = []

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(roots):
            seen.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


def test_warm_order2_call_runs_no_sympy():
    """Order 2 too (order 1: tests/numeric/meanfield/test_sweep.py)."""
    order = 2
    m = load_model(f"{USER}:supermarket_user", b=4)
    numeric.solve(m, {"lam": "0.9"}, precision="float64", order=order)  # prepares the model
    # the hook sees SymPy when it runs (a check of the check)
    assert _sympy_calls(lambda: sympy.Symbol("x") + 1)
    calls = _sympy_calls(
        lambda: numeric.solve(m, {"lam": 0.8123}, precision="float64", order=order)
    )
    assert calls == [], calls[:5]


def test_order2_after_order1_reuses_the_order1_answer():
    m = load_model("sir")
    params = {**SIR, "beta": "3.25"}
    pp.forget()
    before = dict(pp.COUNTS)
    one = numeric.solve(m, params, precision="float64")
    mid = dict(pp.COUNTS)
    assert mid.get("prepared", 0) - before.get("prepared", 0) == 1
    assert mid.get("fixed_point", 0) - before.get("fixed_point", 0) == 1
    two = numeric.solve(m, params, precision="float64", order=2)
    after = dict(pp.COUNTS)
    assert after == mid  # no new preparation, no new fixed-point search
    assert two.c2 is not None and two.digits2 >= 8
    assert two.constant == one.constant and two.s_star == one.s_star
    # the same numbers as order 2 asked first, from nothing kept
    pp.forget()
    fresh = numeric.solve(m, params, precision="float64", order=2)
    assert fresh.c2 == two.c2 and fresh.A == two.A and fresh.constant == two.constant


def test_problem_is_immutable_and_cached_by_its_inputs():
    m = load_model("sir")
    pp.forget()
    a = pp.prepare(m, SIR)
    assert pp.prepare(m, dict(SIR)) is a  # same inputs: the same problem
    assert pp.prepare(m, {**SIR, "beta": "3.5"}) is not a
    # another model object with the same transitions (it may declare other ranges,
    # another reference point): another problem
    narrow = load_model("sir")
    assert narrow is not m and narrow.key == m.key and pp.prepare(narrow, SIR) is not a
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.p64 = np.zeros(4)  # type: ignore[misc]
    with pytest.raises(ValueError):
        a.s0[0] = 1.0
    with pytest.raises(TypeError):
        a.values["beta"] = 1  # type: ignore[index]
    assert a.reduction.laws  # SIR conserves its population: a law, reduced coordinates
    assert float(a.values["beta"]) == 3.0 and a.p64.tolist() == [3.0, 1.0, 0.5, 0.1]


def test_lazy_matrices_equal_the_eager_conversion():
    m = load_model("sir")
    sol = numeric.solve(m, SIR, precision="float64")
    for name in ("W", "P", "J", "Q"):
        lazy = getattr(sol, name)
        assert isinstance(lazy, Float64Matrix) and isinstance(lazy, mpmath.matrix)
        rows = lazy.tolist()
        eager = mpmath.matrix(rows)
        assert (lazy.rows, lazy.cols) == (m.n, m.n)
        assert all(lazy[i, j] == eager[i, j] for i in range(m.n) for j in range(m.n))
        twice = pickle.loads(pickle.dumps(lazy))
        assert twice.tolist() == rows
    W = sol.W
    other = copy.copy(W)
    other[0, 0] = 7  # a copy owns its entries
    assert W[0, 0] != 7 and other[0, 0] == 7
    A = np.array([[0.1, 0.0], [2.0**-60, -3.5]])
    M = Float64Matrix.dense(A, [0, 2], 3)
    assert M[2, 0] == mpf64(2.0**-60) and M[0, 0] == mpmath.mpf(0.1) and M[1, 1] == 0
    assert (M * 2)[2, 2] == -7  # mpmath arithmetic reads the converted entries
    with mpmath.workdps(5):  # exact whatever the working precision
        x, rounded = mpf64(0.1), mpmath.mpf(0.1)
    assert x == mpmath.mpf(0.1) and rounded != x
