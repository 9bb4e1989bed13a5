"""At large t the transient reaches the stationary expansion of ``numeric.solve``:
``x -> s*``, ``V``, ``W`` (order 1) and ``A``, ``B`` (order 2)."""

from __future__ import annotations

import numpy as np
import pytest

import numeric
from derive.models import load_model
from numeric.expansion.transient import transient


def _arr(m, b: int) -> np.ndarray:
    return np.array([[float(m[i, j]) for j in range(b)] for i in range(b)])


CASES = {
    # a conservation law (S + I + R = 1): the start fixes the conserved sum
    "sir": ("sir", {}, {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}, [0.75, 0.25, 0.0]),
    "supermarket-b2": ("supermarket", {"b": 2}, {"lam": "0.8"}, [0.5, 0.25]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_large_time_limit_is_the_stationary_expansion(case: str) -> None:
    name, options, params, start = CASES[case]
    model = load_model(name, **options)
    b = model.n
    res = transient(model, params, times=[0.0, 150.0], start=start, order=2)
    sol = numeric.solve(model, params, order=2, dps=20)
    s_star = np.array([float(v) for v in sol.s_star])
    assert np.allclose(res.x[0], start, atol=0)
    assert np.all(res.V[0] == 0) and np.all(res.W[0] == 0) and np.all(res.A[0] == 0)
    assert np.max(np.abs(res.x[-1] - s_star)) < 1e-9
    assert np.max(np.abs(res.V[-1] - np.array([float(v) for v in sol.V]))) < 1e-8
    assert np.max(np.abs(res.W[-1] - _arr(sol.W, b))) < 1e-8
    assert np.max(np.abs(res.A[-1] - np.array([float(v) for v in sol.A]))) < 1e-7
    assert np.max(np.abs(res.B[-1] - _arr(sol.B, b))) < 1e-7
    assert abs(np.trace(res.B[-1]) - float(sol.c2)) < 1e-7
    if name == "sir":  # the conserved sum: V, A and the rows of W, B sum to zero
        assert np.allclose(res.x.sum(axis=1), 1.0, atol=1e-12)
        assert np.max(np.abs(res.V.sum(axis=1))) < 1e-12
        assert np.max(np.abs(res.W.sum(axis=2))) < 1e-12
        assert np.max(np.abs(res.B.sum(axis=2))) < 1e-12
