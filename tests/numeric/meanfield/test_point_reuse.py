"""What one step of the float64 point hands to the next is what the next would compute.

The drift handed over by the fixed-point search, the values a sweep's point takes
from the memos of :mod:`numeric.params`, and the bias taken on every row without a
selection are each compared with the computation they replace, bit for bit.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from derive.models import load_model
from mfstein.ground.errors import ParameterError
from numeric import params as P
from numeric.prepared.parameters import PREC


def _system(name: str, params: dict, **kw):
    from numeric.meanfield.problem import system64
    from numeric.prepared.problem import prepare_problem

    problem = prepare_problem(load_model(name, **kw), params)
    return problem, system64(problem)


def test_the_drift_handed_over_is_the_drift_at_the_point() -> None:
    """Without a conservation law the search hands over ``L^T beta`` at the point it
    returns, equal to the drift evaluated there; with laws it hands over none."""
    import numeric
    from numeric.meanfield.structure import fixed_point64

    for lam in ("0.5", "0.9", "0.99"):
        params = {"lam": lam}
        problem, sysm = _system("supermarket", params, b=8)
        assert not sysm.red.laws
        s = np.array(numeric.solve(problem.model, params, precision="float64").s_star, float)
        evaluated: dict = {}
        got = fixed_point64(sysm, s * (1 + 1e-7), near=True, evaluated=evaluated)
        assert np.array_equal(evaluated["f"], sysm.f(got))
        assert np.array_equal(evaluated["f"], sysm.LT_times(sysm.rates(got)))
    _, sysm = _system("sir", {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"})
    sir = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
    s = np.array(numeric.solve("sir", sir, precision="float64").s_star, dtype=float)
    evaluated = {}
    fixed_point64(sysm, s * (1 + 1e-7), near=True, evaluated=evaluated)
    assert "rates" in evaluated and "f" not in evaluated  # a law: the free part only


def test_values_read_before_are_read_values() -> None:
    """The memo-only reading gives :func:`numeric.params.read_values`'s values (the
    same objects) once they were read at that precision, and ``None`` for a value not
    read there, a refused value or a value of another kind."""
    model = load_model("sir")
    given = {"beta": "2.75", "gamma": "1.25", "rho": "0.5", "a": "0.0125"}
    with mpmath.workdps(30):
        assert mpmath.mp.prec == PREC
        read = P.read_values(model, given)
    known = P.values_read(model, given, PREC)
    assert known == read and list(known) == list(read)
    assert all(known[k] is read[k] for k in read)
    assert P.values_read(model, given, PREC + 1) is None  # not read at that precision
    assert P.values_read(model, {**given, "beta": "2.7500001"}, PREC) is None
    exact = {**given, "beta": Fraction(11, 4)}  # not a memoised kind
    assert P.values_read(model, exact, PREC) is None
    refused = {**given, "gamma": "-1.5"}
    for _ in range(2):
        with mpmath.workdps(30), pytest.raises(ParameterError, match="gamma must be > 0"):
            P.read_values(model, refused)
        assert P.values_read(model, refused, PREC) is None


def test_a_sweep_point_reads_its_values_as_a_solve_does() -> None:
    """The parameter level of a sweep's point (values from the memos) equals the one
    prepared afresh after the memos are emptied."""
    import numeric
    from numeric.prepared import parameters

    model = load_model("supermarket", b=6)
    res = numeric.sweep(model, {"lam": "0.3:0.9:4"}, precision="float64", progress=False)
    rows = {r.params["lam"]: r for r in res.rows}
    kept = {lam: parameters.prepare_params(model, {"lam": lam}).values for lam in rows}
    P._READ.clear()
    P._IN_RANGE.clear()
    parameters._POINTS.clear()
    for lam, values in kept.items():
        fresh = parameters.prepare_params(model, {"lam": lam}).values
        assert dict(fresh) == dict(values)


def test_the_bias_on_every_row_is_the_selected_one() -> None:
    """With every coordinate kept, ``V`` from ``W`` and ``h`` as they are equals ``V``
    from the rows and columns selected into zeros (the general path)."""
    from numeric.meanfield.float64_point import bias
    from numeric.meanfield.problem import order1

    for lam in ("0.3", "0.8"):
        problem, sysm = _system("supermarket", {"lam": lam}, b=5)
        pt = order1(problem)
        blk = pt.block
        b = sysm.red.b
        assert len(blk.R) == b and len(blk.K) == b and not blk.dropped
        V, W_R = bias(sysm, pt.s, blk)
        W = np.zeros((b, b))
        R = np.asarray(blk.R, dtype=np.intp)
        W[R[:, None], R] = W_R
        (i, j, k), weight = sysm.hess_layout
        h = np.bincount(i, weights=sysm.hess_values(pt.s) * weight * W[j, k], minlength=b)
        VK = np.linalg.solve(blk.JK, -h[blk.K])
        assert np.array_equal(V, blk.TK @ VK)
