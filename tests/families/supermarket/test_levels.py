"""The level truncation of the power-of-d family: ``s*_k = rho^(e_k)``,
``e_k = (d^k - 1)/(d - 1)``, written once (derive.models.supermarket) and used by
every layer."""

from __future__ import annotations

import mpmath
import pytest

from derive.models.supermarket import levels_above, levels_for, occupancy_exponent
from mfstein.families.supermarket.equilibrium import INF_MAX_LEVELS, equilibrium
from mfstein.families.supermarket.solver import auto_levels
from mfstein.ground.errors import ParameterError


def _count(rho: mpmath.mpf, d: int, digits: int) -> int:
    """Brute force: levels k >= 1 with rho^(e_k) >= 10^-digits, by direct powers at 60 digits."""
    with mpmath.workdps(60):
        k, s = 0, mpmath.mpf(1)
        while True:
            s = rho * s**d  # s_k = rho s_{k-1}^d, s_0 = 1
            if s < mpmath.mpf(10) ** -digits:
                return k
            k += 1


def test_exponent_is_the_telescoped_recursion():
    for d in (1, 2, 3, 5):
        e = 0
        for k in range(1, 12):
            e = 1 + d * e  # s_k = rho s_{k-1}^d
            assert occupancy_exponent(d, k) == e


@pytest.mark.parametrize("d", [1, 2, 3, 7])
@pytest.mark.parametrize("rho", ["0.5", "0.9", "0.999", "0.123", "0.999999"])
@pytest.mark.parametrize("digits", [3, 10, 31, 100])
def test_levels_above_counts_the_levels(rho, d, digits):
    with mpmath.workdps(60):
        r = mpmath.mpf(rho)
    if d == 1 and rho == "0.999999":
        pytest.skip("up to 2.3e8 levels: too many to count by brute force")
    assert levels_above(r, d, digits) == _count(r, d, digits)
    assert levels_for(r, d, digits) == _count(r, d, digits) + 2


def test_levels_above_near_one():
    # 1 - rho = 1e-25 does not round to rho = 1 (about 2.3e26 levels for d = 1)
    with mpmath.workdps(60):
        r = 1 - mpmath.mpf(10) ** -25
        expected = int(mpmath.floor(10 / -mpmath.log10(r)))
    assert levels_above(r, 1, 10) == expected
    assert levels_above(r, 2, 10) == _count(r, 2, 10)


def test_auto_levels_is_the_first_level_below():
    for lam, d, dps in (("0.9", 2, 30), ("0.5", 3, 20), ("0.99", 1, 10), ("0.999", 2, 50)):
        with mpmath.workdps(60):
            r = mpmath.mpf(lam)
        assert auto_levels(r, mpmath.mpf(1), d, dps) == _count(r, d, dps + 2) + 1


def test_infinite_buffer_at_the_level_limit():
    """A fixed point of exactly INF_MAX_LEVELS levels is computed, one more is refused
    (the count used to add one for d = 1, refusing 2000 levels as 2001)."""
    digits = 5 + 5  # equilibrium(dps=5) keeps the levels down to 10^-(dps + 5)
    for n, accepted in ((INF_MAX_LEVELS, True), (INF_MAX_LEVELS + 1, False)):
        with mpmath.workdps(30):
            lam = mpmath.nstr(mpmath.mpf(10) ** (-digits / (n + mpmath.mpf(1) / 2)), 15)
            assert _count(mpmath.mpf(lam), 1, digits) == n
        if accepted:
            s = equilibrium(lam, "inf", 1, dps=5)
            assert len(s) == n
            with mpmath.workdps(30):
                assert abs(s[-1] / mpmath.mpf(lam) ** n - 1) < mpmath.mpf(10) ** -12
        else:
            with pytest.raises(ParameterError, match=f"would need {n} levels"):
                equilibrium(lam, "inf", 1, dps=5)
