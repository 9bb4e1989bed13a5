"""J(s) and the Hessian against the core paper's printed formulas, generalised to d."""

from __future__ import annotations

import pytest
import sympy as sp

from derive import LAM, supermarket


def _padded(m):
    return (sp.Integer(1), *m.states, sp.Integer(0))


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("b", range(1, 7))
def test_jacobian_is_papers_tridiagonal_matrix(b: int, d: int) -> None:
    # Theorem 1 / Section 6.2: J_{k,k-1} = lam d s_{k-1}^{d-1},
    # J_kk = -lam d s_k^{d-1} - 1, J_{k,k+1} = 1, zero elsewhere.
    m = supermarket(b, d)
    s = _padded(m)
    J = m.jacobian
    for i in range(b):
        for j in range(b):
            k = i + 1
            if j == i - 1:
                expected = LAM * d * s[k - 1] ** (d - 1)
            elif j == i:
                expected = -LAM * d * s[k] ** (d - 1) - 1
            elif j == i + 1:
                expected = sp.Integer(1)
            else:
                expected = sp.Integer(0)
            assert sp.expand(J[i, j] - expected) == 0, (b, d, i, j)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("b", range(1, 7))
def test_hessian_is_section_6_3_formula(b: int, d: int) -> None:
    # Section 6.3 (d = 2): d2 f_i / ds_j ds_k = -2 lam if j = k = i, 2 lam if
    # j = k = i - 1, else 0; for general d the entries are -lam d (d-1) s_i^{d-2}
    # and lam d (d-1) s_{i-1}^{d-2}.
    m = supermarket(b, d)
    states = m.states
    H = m.hessian
    assert H.shape == (b, b, b)
    for i in range(b):
        for j in range(b):
            for k in range(b):
                if j == k == i:
                    expected = -LAM * d * (d - 1) * states[i] ** (d - 2)
                elif j == k == i - 1:
                    expected = LAM * d * (d - 1) * states[i - 1] ** (d - 2)
                else:
                    expected = sp.Integer(0)
                assert sp.expand(H[i, j, k] - expected) == 0, (b, d, i, j, k)


def test_diffusion_is_twice_diag_ftilde() -> None:
    m = supermarket(4, 2)
    s = _padded(m)
    for i in range(4):
        k = i + 1
        paper = sp.Rational(1, 2) * (LAM * (s[k - 1] ** 2 - s[k] ** 2) + (s[k] - s[k + 1]))
        assert sp.expand(m.ftilde[i] - paper) == 0
    assert (m.diffusion - 2 * sp.diag(*m.ftilde)).applyfunc(sp.expand).is_zero_matrix


def test_sparse_derivatives_equal_sympy_diff() -> None:
    """J and the Hessian (term-wise monomial derivatives) against SymPy's diff of the
    whole drift, for models whose rates are not plain powers (d = 3, sampling
    without replacement, SIRS)."""
    from derive.models import load_model

    models = [supermarket(5, 3), supermarket(4, 2, replacement=False), load_model("sir")]
    for m in models:
        f, x = m.drift, m.states
        for i in range(m.n):
            for j in range(m.n):
                ref = sp.diff(f[i], x[j])
                assert sp.expand(m.jacobian[i, j] - ref) == 0
                for k in range(m.n):
                    assert sp.expand(m.hessian[i, j, k] - sp.diff(ref, x[k])) == 0
