"""Stein's equation, the Lyapunov system and Lemma 7, symbolically."""

from __future__ import annotations

import pytest
import sympy as sp

from derive import N, stein, supermarket
from derive.chain_operator import generator_apply, lemma7_difference, quadratic_test_function


@pytest.mark.parametrize("M", [None, "symbolic"])
@pytest.mark.parametrize("b", [1, 2, 3])
def test_quadratic_g_solves_stein_iff_lyapunov(b: int, M) -> None:
    check = stein.stein_lyapunov_check(supermarket(b), M)
    assert check.identity == 0
    assert check.coefficient_gap.is_zero_matrix
    assert check.symmetric
    assert check.holds


def test_stein_residual_vanishes_once_p_solves_lyapunov() -> None:
    m = supermarket(2)
    P = stein.solve_lyapunov(m)
    eq = stein.stein_equation(m, g=stein.stein_solution(m, P))
    assert sp.cancel(eq.lhs - eq.rhs) == 0
    # and a P that does not solve it leaves a non-zero residual
    wrong = P + sp.Matrix([[1, 0], [0, 0]])
    eq = stein.stein_equation(m, g=stein.stein_solution(m, wrong))
    assert sp.cancel(eq.lhs - eq.rhs) != 0


@pytest.mark.parametrize("b", [1, 2])
def test_kronecker_solution_equals_lyapunov_solution(b: int) -> None:
    m = supermarket(b)
    P_lyap = stein.solve_lyapunov(m)
    P_kron = stein.solve_kronecker(m)
    assert (P_lyap - P_kron).applyfunc(sp.cancel).is_zero_matrix
    # and it satisfies the un-vectorised equation
    assert stein.lyapunov_residual(m, P=P_kron).applyfunc(sp.cancel).is_zero_matrix


def test_kronecker_matrix_applies_to_vec_p_like_the_lyapunov_map() -> None:
    m = supermarket(3)
    ks = stein.kronecker_system(m)
    P = stein.p_matrix(3)
    J = stein.jacobian_at_equilibrium(m)
    assert ks.matrix.shape == (9, 9)
    assert (ks.matrix * ks.unknowns - (P * J + J.T * P).vec()).applyfunc(sp.expand).is_zero_matrix
    assert ks.rhs == -sp.eye(3).vec()


def test_p_symbols_are_symmetric_and_round_trip() -> None:
    P = stein.p_matrix(12)
    assert P == P.T
    assert sp.sympify(str(P[10, 2])) == P[2, 10] == sp.Symbol("P_3_11")


def test_dominant_term_is_two_trace_p_ftilde_over_n() -> None:
    m = supermarket(3)
    P = stein.p_matrix(3)
    F = sp.diag(*stein.ftilde_at_equilibrium(m))
    assert sp.expand(stein.dominant_term(m) - 2 * (P * F).trace() / N) == 0


def test_equilibrium_equations_are_1a_to_1c() -> None:
    m = supermarket(3)
    lam = sp.Symbol("lam")
    s1, s2, s3 = stein.sstar_symbols(3)
    eqs = stein.equilibrium_equations(m)
    paper = [
        lam * (1 - s1**2) - (s1 - s2),
        lam * (s1**2 - s2**2) - (s2 - s3),
        lam * (s2**2 - s3**2) - s3,
    ]
    for e, p in zip(eqs, paper, strict=True):
        assert sp.expand(e.lhs - p) == 0 and e.rhs == 0


def test_weight_matrix_rejects_non_symmetric() -> None:
    from derive import ParameterError

    with pytest.raises(ParameterError, match="symmetric"):
        stein.weight_matrix(2, [[1, 2], [0, 1]])


@pytest.mark.parametrize("replacement", [True, False])
@pytest.mark.parametrize("b", [1, 2, 3, 4])
def test_lemma7_difference_is_zero(b: int, replacement: bool) -> None:
    assert lemma7_difference(supermarket(b, 2, replacement=replacement)) == 0


def test_lemma7_difference_d3_symbolic_mu() -> None:
    assert lemma7_difference(supermarket(3, 3, mu="mu")) == 0


def test_lemma7_detects_a_non_quadratic_g() -> None:
    # the identity is exact only for quadratics: a cubic leaves an O(1/N^2) gap
    m = supermarket(2)
    g = m.states[0] ** 3
    assert lemma7_difference(m, g) != 0


def test_generator_is_exact_sum_over_transitions() -> None:
    m = supermarket(1)
    (s1,) = m.states
    lam = sp.Symbol("lam")
    g = quadratic_test_function(m)
    up = g.subs(s1, s1 + 1 / N) - g
    down = g.subs(s1, s1 - 1 / N) - g
    direct = N * lam * (1 - s1**2) * up + N * s1 * down
    assert sp.expand(generator_apply(m, g) - direct) == 0
