"""b = 1, 2 closed forms against a direct high-precision numeric solve."""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from derive import ParameterError
from derive.models.closed_forms import closed_form, equilibrium_closed_form, evaluate

DPS = 30
LAMBDAS = ["0.3", "0.7", "0.95", "0.999"]


def _numeric(lam: mpmath.mpf, b: int):
    """Equilibrium by findroot on eqs. (1a)-(1c), P by an mpmath Lyapunov solve,
    c = 2 sum_i P_ii f~_i(s*) -- written here independently of derive."""

    def f(*s):
        padded = [mpmath.mpf(1), *s, mpmath.mpf(0)]
        return [
            lam * (padded[k - 1] ** 2 - padded[k] ** 2) - (padded[k] - padded[k + 1])
            for k in range(1, b + 1)
        ]

    start = [lam ** (2**k - 1) for k in range(1, b + 1)]  # infinite-buffer s*_k
    s = mpmath.findroot(f, start) if b > 1 else [mpmath.findroot(lambda x: f(x)[0], start[0])]
    s = [s[i] for i in range(b)]
    padded = [mpmath.mpf(1), *s, mpmath.mpf(0)]
    J = mpmath.matrix(b, b)
    for k in range(1, b + 1):
        J[k - 1, k - 1] = -2 * lam * padded[k] - 1
        if k > 1:
            J[k - 1, k - 2] = 2 * lam * padded[k - 1]
        if k < b:
            J[k - 1, k] = 1
    # P J + J^T P = -I as b^2 linear equations in the entries of P
    A = mpmath.matrix(b * b, b * b)
    rhs = mpmath.matrix(b * b, 1)
    for i in range(b):
        for j in range(b):
            row = i * b + j
            rhs[row] = -1 if i == j else 0
            for k in range(b):
                A[row, i * b + k] += J[k, j]  # (P J)_ij
                A[row, k * b + j] += J[k, i]  # (J^T P)_ij
    v = mpmath.lu_solve(A, rhs)
    P = mpmath.matrix(b, b)
    for i in range(b):
        for j in range(b):
            P[i, j] = v[i * b + j]
    ft = [
        (lam * (padded[k - 1] ** 2 - padded[k] ** 2) + (padded[k] - padded[k + 1])) / 2
        for k in range(1, b + 1)
    ]
    c = 2 * sum(P[i, i] * ft[i] for i in range(b))
    return s, J, P, c


def _value(expr, lam_text: str) -> mpmath.mpf:
    z = evaluate(expr, lam_text, DPS + 5)
    # the b = 2 radicals pass through complex numbers (casus irreducibilis)
    assert abs(z.imag) < mpmath.mpf(10) ** (-DPS + 2)
    return z.real


@pytest.mark.parametrize("b", [1, 2])
def test_closed_forms_match_numeric_solution(b: int) -> None:
    cf = closed_form(b)
    with mpmath.workdps(DPS + 5):
        for lam_text in LAMBDAS:
            s, J, P, c = _numeric(mpmath.mpf(lam_text), b)
            tol = mpmath.mpf(10) ** (-DPS + 3)
            got = [_value(e, lam_text) for e in cf.s_star]
            assert all(abs(g - w) < tol for g, w in zip(got, s, strict=True))
            assert 0 < got[-1] <= got[0] < 1
            for i in range(b):
                for j in range(b):
                    assert abs(_value(cf.J[i, j], lam_text) - J[i, j]) < tol
                    assert abs(_value(cf.P[i, j], lam_text) - P[i, j]) < tol
            assert abs(_value(cf.c, lam_text) - c) < tol
            assert c > 0


def test_b2_closed_forms_print_and_parse_back() -> None:
    cf = closed_form(2)
    for e in [*cf.s_star, cf.c, cf.c_in_sstar, *cf.P_in_sstar]:
        assert sp.sympify(str(e)) == e


def test_b1_closed_form_is_the_quadratic_root() -> None:
    lam = sp.Symbol("lam")
    (s1,) = equilibrium_closed_form(1)
    assert sp.simplify(s1 - (sp.sqrt(1 + 4 * lam**2) - 1) / (2 * lam)) == 0
    cf = closed_form(1)
    assert sp.simplify(cf.c - s1 / sp.sqrt(1 + 4 * lam**2)) == 0


def test_closed_forms_refuse_b3() -> None:
    with pytest.raises(ParameterError, match="b must be 1 or 2"):
        equilibrium_closed_form(3)


@pytest.mark.parametrize("b", [1, 2])
def test_chosen_root_is_physical_on_a_dense_grid(b: int) -> None:
    # no branch switch of the radicals anywhere in (0, 1): on 40 values of lam the
    # closed form is real, ordered 0 < s*_b <= ... <= s*_1 < 1 and solves (1b)-(1c)
    s_star = equilibrium_closed_form(b)
    with mpmath.workdps(DPS):
        for n in range(1, 41):
            lam = mpmath.mpf(n) / 41
            z = [evaluate(e, lam, DPS) for e in s_star]
            assert all(abs(v.imag) < mpmath.mpf(10) ** (-DPS + 3) for v in z)
            s = [mpmath.mpf(1), *(v.real for v in z), mpmath.mpf(0)]
            assert 0 < s[b] and all(s[k] >= s[k + 1] for k in range(b)) and s[1] < 1
            for k in range(1, b + 1):
                res = lam * (s[k - 1] ** 2 - s[k] ** 2) - (s[k] - s[k + 1])
                assert abs(res) < mpmath.mpf(10) ** (-DPS + 3)
