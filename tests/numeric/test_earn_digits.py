"""The one two-precision driver (numeric.precision.earn_digits) and the one digit
count (agreeing_digits) every working-precision route uses."""

from __future__ import annotations

import mpmath
import pytest

from mfstein.ground.errors import NumericalError
from numeric.precision import agreeing_digits, earn_digits, guard_ladder


def test_guard_ladder():
    assert guard_ladder(30) == [(40, 50), (90, 100), (140, 150)]
    assert guard_ladder(200, 15) == [(215, 235), (435, 455), (655, 675)]
    assert guard_ladder(30, attempts=2, raise_by=30) == [(40, 50), (70, 80)]


def test_agreeing_digits_numbers_and_vectors():
    with mpmath.workdps(50):
        x = mpmath.pi
        assert agreeing_digits(x, x * (1 + 3 * mpmath.mpf(10) ** -20)) == 19
        assert agreeing_digits(x, x) == 10**6
        assert agreeing_digits(mpmath.mpf(0), mpmath.mpf(0)) == 10**6
        # norm-wise: the small entry's relative disagreement counts at the largest's scale
        a = [mpmath.mpf(1), mpmath.mpf("1e-10")]
        b = [mpmath.mpf(1), mpmath.mpf("1e-10") * (1 + mpmath.mpf("3e-5"))]
        assert agreeing_digits(a, b) == 14
        assert agreeing_digits(a, b) == agreeing_digits([a[0], a[1]], [b[0], b[1]])
        assert agreeing_digits([x], [x + mpmath.mpf(10) ** -30]) == agreeing_digits(
            x, x + mpmath.mpf(10) ** -30
        )


def _rounded_pi(loss: int):
    """pi computed 'at wp digits' by a route that loses ``loss`` digits."""

    def at(wp: int) -> mpmath.mpf:
        with mpmath.workdps(wp + 20):
            return mpmath.pi + mpmath.mpf(10) ** (loss - wp) * mpmath.sqrt(2)

    return at


def test_earn_digits_raises_the_guard_until_the_precisions_agree():
    calls = []

    def low(wp):
        calls.append(("low", wp))
        return _rounded_pi(25)(wp)

    def high(wp):
        calls.append(("high", wp))
        return _rounded_pi(25)(wp)

    earned = earn_digits(30, guard_ladder(30), low, high, agreeing_digits, who="x", where="y")
    # 40 - 25 = 15 digits at the first pair, 90 - 25 = 65 at the second
    assert calls == [("low", 40), ("high", 50), ("low", 90), ("high", 100)]
    assert (earned.wp_low, earned.wp_high) == (90, 100)
    assert 64 <= earned.digits <= 66
    with mpmath.workdps(120):
        assert abs(earned.high - mpmath.pi) < mpmath.mpf(10) ** -70
        err = earned.errors([earned.high], [earned.low])[0]
        assert abs(earned.low - mpmath.pi) <= 2 * err  # the estimate covers the low run


def test_earn_digits_refuses_when_no_pair_agrees():
    with pytest.raises(NumericalError, match=r"^the routes agree on only \d+ of the 30 requested "
                       r"digits \(model m\); no result is reported\.$"):
        earn_digits(
            30,
            guard_ladder(30, attempts=2),
            _rounded_pi(200),
            _rounded_pi(200),
            agreeing_digits,
            who="the routes",
            where="model m",
        )
