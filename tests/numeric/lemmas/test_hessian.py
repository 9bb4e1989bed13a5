"""Lemma 8's maximum ratio: exact vertex value against the quadratic forms and an optimiser."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from scipy.optimize import minimize

from derive import supermarket
from numeric.lemmas import max_quadratic_ratio


def _hessian(b: int, d: int, lam: str, s: list[str]):
    k = supermarket(b, d).kernels("mpmath")
    with mpmath.workdps(30):
        vals = k.hess_values([mpmath.mpf(v) for v in s], [mpmath.mpf(lam)])
    index = [tuple(r) for r in k.hess_index.tolist()]
    return k, index, vals


def _ratio(H: np.ndarray, x: np.ndarray) -> float:
    q = np.einsum("ijk,j,k->i", H, x, x)
    return float(np.linalg.norm(q) / (x @ x))


@pytest.mark.parametrize(("b", "d"), [(4, 2), (5, 3)])
def test_vertex_maximum_matches_optimiser(b, d):
    s = ["0.9", "0.7", "0.45", "0.2", "0.05"][:b]
    k, index, vals = _hessian(b, d, "0.93", s)
    best, arg = max_quadratic_ratio(index, vals, b)
    H = np.zeros((b, b, b))
    for (i, j, kk), v in zip(index, vals, strict=True):
        H[i, j, kk] = float(v)
    # the dense kernel agrees with the sparse values (same derive source)
    assert float(k.hess([mpmath.mpf(v) for v in s], [mpmath.mpf("0.93")])[b - 1][b - 1][b - 1]) == (
        pytest.approx(H[b - 1, b - 1, b - 1], rel=1e-14)
    )
    # attained at x = e_arg
    e = np.zeros(b)
    e[arg] = 1.0
    assert _ratio(H, e) == pytest.approx(float(best), rel=1e-14)
    # no x does better: multi-start local maximisation on the sphere (seeded)
    rng = np.random.default_rng(20261129)
    found = 0.0
    for _ in range(12):
        res = minimize(
            lambda x: -_ratio(H, x),
            rng.normal(size=b),
            method="Nelder-Mead",
            options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 4000},
        )
        found = max(found, -res.fun)
    assert found <= float(best) * (1 + 1e-12)
    assert found >= float(best) * (1 - 1e-6)


def test_core_paper_constant_is_attained_for_d2():
    lam = "0.95"
    _, index, vals = _hessian(3, 2, lam, ["0.9", "0.6", "0.3"])
    with mpmath.workdps(30):
        best, _ = max_quadratic_ratio(index, vals, 3)
        assert abs(best - 2 * mpmath.sqrt(2) * mpmath.mpf(lam)) < mpmath.mpf(10) ** -28


def test_non_diagonal_hessian_rejected():
    from mfstein.ground.errors import ParameterError

    with pytest.raises(ParameterError):
        max_quadratic_ratio([(0, 0, 1)], [mpmath.mpf(1)], 2)
