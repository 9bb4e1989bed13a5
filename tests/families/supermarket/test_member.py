"""The supermarket fast path carries the model it was given (issue 21)."""

from __future__ import annotations

import mpmath
from mpmath import mpf

import numeric
from derive.models.jsq import jsq_L
from derive.models.supermarket import supermarket
from mfstein.families.supermarket.member import Member, supermarket_member


def test_parameter_vector_follows_the_models_params() -> None:
    lam, mu = mpf("0.9"), mpf(2)
    assert Member(jsq_L(3, 5), lam, mu).params() == [lam, mu]
    assert Member(supermarket(5, 2, mu=2), lam, mu).params() == [lam]
    assert Member(supermarket(5, 2, mu="mu"), lam, mu).params() == [lam, mu]
    without = Member(supermarket(5, 2, replacement=False), lam, mpf(1), 40)
    assert without.params() == [lam, mpf(40)]


def test_truncated_head_is_the_same_member_with_fewer_levels() -> None:
    member = supermarket_member(30, 2, mpf("0.9"), mpf(1))
    assert member.head(30) is member.model
    assert member.head(7).key == supermarket(7, 2).key
    jsq = Member(jsq_L(2, 9), mpf("0.9"), mpf(1))
    assert jsq.head(4).key == jsq_L(2, 4).key and jsq.head(4).name == "jsq_L"


def test_jsq_with_unit_service_gives_the_supermarkets_numbers() -> None:
    """JSQ(L) with beta = 1 is solved on its own kernels; every stated digit is the
    supermarket's (only noise far below 10^-dps may differ)."""
    sol = numeric.solve(jsq_L(2, 6), {"alpha": "0.9", "beta": "1"}, dps=25)
    ref = numeric.bound("0.9", 6, 2, dps=25)
    assert sol.model == "jsq_L" and sol.digits == ref.digits == 25
    assert mpmath.nstr(sol.constant, 25) == mpmath.nstr(ref.constant, 25)
    for a, b in zip(sol.s_star, ref.s_star, strict=True):
        assert mpmath.nstr(a, 25) == mpmath.nstr(b, 25)
