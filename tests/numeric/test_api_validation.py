"""Bad input at the public boundary: ParameterError with one sentence."""

from __future__ import annotations

import mpmath
import pytest

from mfstein.errors import ParameterError
from numeric import bound, equilibrium, heavy_traffic_lambda


@pytest.mark.parametrize(
    ("call", "word"),
    [
        (lambda: bound("0", 3), "lam"),
        (lambda: bound("-1", 3), "lam"),
        (lambda: bound("0.5", 0), "b"),
        (lambda: bound("0.5", 3, 0), "d"),
        (lambda: bound("0.5", 3, dps=4), "dps"),
        (lambda: bound("1.0", "inf"), "lam"),
        (lambda: bound("1.5", "auto"), "lam"),
        (lambda: equilibrium("0.5", 3, replacement=False), "N"),
        (lambda: heavy_traffic_lambda("0", "0.05", 10), "gamma"),
        (lambda: heavy_traffic_lambda("1.5", "0.05", 10), "gamma"),
        (lambda: heavy_traffic_lambda("0.1", "-0.05", 10), "alpha"),
        (lambda: heavy_traffic_lambda("0.1", "0.05", 0), "N"),
        (lambda: bound("0.5", 3, M="diag:1,2,3,4"), "M"),
    ],
)
def test_parameter_errors(call, word: str) -> None:
    with pytest.raises(ParameterError) as exc:
        call()
    msg = str(exc.value)
    assert word in msg and msg.endswith(".") and "\n" not in msg


def test_heavy_traffic_lambda_is_exact_in_working_precision() -> None:
    lam = heavy_traffic_lambda("0.1", "0.05", 1000, dps=60)
    with mpmath.workdps(100):
        ref = 1 - mpmath.mpf(1) / 10 / mpmath.power(1000, mpmath.mpf(1) / 20)
        assert abs(lam - ref) <= mpmath.mpf(10) ** -59
        # a binary float for gamma would be off near the 17th digit
        assert abs(lam - (1 - mpmath.mpf(0.1) / mpmath.power(1000, mpmath.mpf(1) / 20))) > 1e-20


def test_finite_buffer_above_one_is_fine() -> None:
    sol = bound("1.3", 6, dps=20)
    assert all(x < 0 for x in sol.eigenvalues)
    assert sol.digits == 20


def test_arrival_rate_takes_exactly_one_form() -> None:
    import mpmath
    import pytest

    from mfstein.errors import ParameterError
    from numeric.precision import arrival_rate, heavy_traffic_lambda

    with mpmath.workdps(30):
        assert arrival_rate("0.9", None, None, 10, dps=30) == mpmath.mpf("0.9")
    assert arrival_rate(None, "0.1", "0.05", 100) == heavy_traffic_lambda("0.1", "0.05", 100)
    with pytest.raises(ParameterError, match="not both"):
        arrival_rate("0.9", None, "0.05", 10)
    with pytest.raises(ParameterError, match="both --gamma and --alpha"):
        arrival_rate(None, "0.1", None, 10)
