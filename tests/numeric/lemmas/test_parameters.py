"""Lemma 12's conditions (21)-(22) and the remark after it, exactly."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mfstein.ground.errors import ParameterError
from numeric.lemmas import lemma12_parameters, xi_supremum


def conditions_hold(alpha: Fraction, xi: Fraction, r: int, eps: Fraction) -> bool:
    """(21) and (22) typed straight from the paper."""
    c21 = 3 * (1 + alpha + xi) < r * (1 - 18 * alpha - 27 * xi)
    c21 = c21 and (1 - 18 * alpha - 27 * xi) > 0
    c22 = Fraction(2 * r) * (1 + 3 * alpha + 3 * xi) / 3 < eps
    c22 = c22 and eps < r * (1 - 4 * alpha - 7 * xi) - 1 - alpha - xi
    return c21 and c22


def test_remark_after_lemma12_limit_xi_to_zero():
    # "for alpha = 0.05, r needs to be at least 32 and epsilon can be 24.54"
    p = lemma12_parameters("0.05", 0)
    assert p.r_bound == Fraction(63, 2)  # 3 * 1.05 / 0.1
    assert p.r_min == 32
    assert p.eps_low < Fraction("24.54") < p.eps_high
    assert (p.eps_low, p.eps_high) == (Fraction(2 * 32) * Fraction(23, 20) / 3, Fraction(491, 20))
    assert p.feasible
    # 31 is not enough: (21) fails for r = 31 and the interval (22) at r = 31 is empty.
    assert not 31 > p.r_bound
    low31 = Fraction(62) * Fraction(23, 20) / 3
    high31 = 31 * Fraction(4, 5) - Fraction(21, 20)
    assert low31 > high31


def test_remark_xi_supremum_is_exact_boundary():
    sup = xi_supremum("0.05", 32, "24.54")
    assert sup == Fraction(1, 22500)
    a, e = Fraction(1, 20), Fraction("24.54")
    assert conditions_hold(a, Fraction(0), 32, e)
    assert conditions_hold(a, sup * Fraction(999, 1000), 32, e)
    assert not conditions_hold(a, sup, 32, e)
    assert not conditions_hold(a, sup * Fraction(1001, 1000), 32, e)


def test_least_r_for_given_xi_by_brute_force():
    a, x = Fraction(1, 20), Fraction(1, 10000)
    p = lemma12_parameters(a, x)
    brute = next(r for r in range(1, 10_000) if 3 * (1 + a + x) < r * (1 - 18 * a - 27 * x))
    assert p.r_min == brute == 33


def test_infeasible_when_denominator_not_positive():
    p = lemma12_parameters("0.05", "0.01")  # 1 - 0.9 - 0.27 < 0
    assert p.r_min is None and not p.feasible


@settings(max_examples=80, deadline=None)
@given(
    a=st.fractions(min_value=0, max_value=Fraction(1, 18)),
    x=st.fractions(min_value=0, max_value=Fraction(1, 100)),
    r=st.integers(min_value=1, max_value=500),
)
def test_condition_21_is_exactly_nonemptiness_of_22(a, x, r):
    low = Fraction(2 * r) * (1 + 3 * a + 3 * x) / 3
    high = r * (1 - 4 * a - 7 * x) - 1 - a - x
    den = 1 - 18 * a - 27 * x
    # multiplying out (22): low < high  <=>  r (1 - 18a - 27x) > 3 (1 + a + x), i.e. (21)
    assert (low < high) == (3 * (1 + a + x) < r * den)


def test_bad_input():
    with pytest.raises(ParameterError):
        lemma12_parameters("abc")
    with pytest.raises(ParameterError):
        lemma12_parameters("0.05", "-1")
