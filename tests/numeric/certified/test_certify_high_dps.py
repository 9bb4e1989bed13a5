"""Certification above float64's exponent range (issue 36): ``--dps`` allows 10,000,
and the certified path's error arithmetic (Newton correction, box radii, digits)
is in Arb, so a correction or a relative radius below 1e-308 is not flushed to zero."""

from __future__ import annotations

import mpmath

import numeric
from derive.models.supermarket import supermarket
from numeric.certified.arb import sci, significant_digits, to_arb, working_precision


def test_significant_digits_and_sci_past_the_float64_range() -> None:
    with working_precision(3000):
        assert significant_digits(to_arb("c", "1")) == 10**6  # an exact point
        assert significant_digits(to_arb("c", "1") + zero_ball("1e-400")) == 399
        assert significant_digits(to_arb("c", "1") + zero_ball("1e-5")) == 4
        assert sci(to_arb("r", "1e-400"), 3).endswith("e-400")
        assert sci(to_arb("r", "2.5e-7"), 2) == "2.50e-07"


def zero_ball(radius: str):
    """The ball ``[0 +/- radius]``."""
    from flint import arb

    return arb(0, to_arb("r", radius))


def test_certify_at_400_digits_contains_the_value_at_twice_the_precision() -> None:
    model = supermarket(b=3)
    sol = numeric.solve(model, {"lam": "0.9"}, dps=400)
    cert = sol.certify(params={"lam": "0.9"})
    assert cert.certified_digits >= 400
    truth = numeric.solve(model, {"lam": "0.9"}, dps=800).constant
    with mpmath.workdps(820), working_precision(4000):
        assert cert.constant.contains(to_arb("c", truth))
