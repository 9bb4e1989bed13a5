"""Bad input at the public boundary: ParameterError with one sentence."""

from __future__ import annotations

import mpmath
import pytest

from mfstein.ground.errors import ParameterError
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

    from mfstein.ground.errors import ParameterError
    from numeric.precision import arrival_rate, heavy_traffic_lambda

    with mpmath.workdps(30):
        assert arrival_rate("0.9", None, None, 10, dps=30) == mpmath.mpf("0.9")
    assert arrival_rate(None, "0.1", "0.05", 100) == heavy_traffic_lambda("0.1", "0.05", 100)
    with pytest.raises(ParameterError, match="not both"):
        arrival_rate("0.9", None, "0.05", 10)
    with pytest.raises(ParameterError, match="both --gamma and --alpha"):
        arrival_rate(None, "0.1", None, 10)


# --- issue 36: one parser for every parameter (NumPy scalars, fractions, unicode) ---


def test_numpy_scalars_are_numbers_at_their_exact_value() -> None:
    """``np.float32(0.9)`` is its binary value 7549747/2**23 on every route (not the
    decimal 0.9), ``np.int64(3)`` the integer 3; both as the plain Python values."""
    from fractions import Fraction

    import numpy as np

    import numeric
    from derive.models import load_model

    model = load_model("supermarket", b=3)
    f32 = numeric.solve(model, {"lam": np.float32(0.9)}, dps=20)
    exact = numeric.solve(model, {"lam": Fraction(7549747, 2**23)}, dps=20)
    decimal = numeric.solve(model, {"lam": "0.9"}, dps=20)
    assert Fraction(np.float32(0.9).item()) == Fraction(7549747, 2**23)
    assert f32.constant == exact.constant != decimal.constant
    by_name = numeric.solve("supermarket", {"lam": "0.9", "b": np.int64(3)}, dps=20)
    assert by_name.constant == decimal.constant


def test_numpy_scalars_in_to_mpf_and_the_exact_chain() -> None:
    import numpy as np

    import mfstein
    from numeric.precision import to_mpf

    with mpmath.workdps(30):
        assert to_mpf("lam", np.float32(0.9)) == mpmath.mpf(7549747) / 2**23
        assert to_mpf("lam", np.int64(3)) == 3
        assert to_mpf("lam", "9/10") == mpmath.mpf("0.9")
    frac = mfstein.exact("supermarket", {"lam": "9/10", "b": 2}, N=3)
    dec = mfstein.exact("supermarket", {"lam": "0.9", "b": np.int64(2)}, N=3)
    assert frac.n_mse == dec.n_mse and frac.lam == dec.lam == "0.9"


def test_a_float_is_read_as_its_exact_value_at_every_precision() -> None:
    """The short way for floats (at 53 bits or more) gives the exact fraction's reading:
    the same mpf, bit for bit; below 53 bits the fraction is rounded as before."""
    import random
    from fractions import Fraction

    from numeric.precision import to_mpf

    def by_fraction(x: float) -> mpmath.mpf:
        q = Fraction(x)
        prec = mpmath.mp.prec
        return mpmath.mpf(mpmath.libmp.from_rational(q.numerator, q.denominator, prec, "n"))

    rng = random.Random(3)
    values = [0.0, -0.0, 0.9, -2.5, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]
    values += [rng.uniform(-1e3, 1e3) * 10.0 ** rng.randint(-300, 300) for _ in range(300)]
    for dps in (5, 15, 16, 30, 50):
        with mpmath.workdps(dps):
            for x in values:
                got, want = to_mpf("lam", x), by_fraction(x)
                assert got._mpf_ == want._mpf_ and type(got) is type(want)
    with mpmath.workdps(5):  # 20 bits: 0.9 is rounded, not exact
        assert to_mpf("lam", 0.9)._mpf_ != mpmath.libmp.from_float(0.9)
    with pytest.raises(ParameterError, match=r"^lam must be a finite real number"):
        to_mpf("lam", float("inf"))


@pytest.mark.parametrize("value", ["٠.9", "０.9", "0.9x", True, float("nan"), "1e2000"])
def test_a_bad_parameter_value_is_one_sentence(value: object) -> None:
    import numpy as np

    from numeric.precision import to_mpf

    for v in (value, np.bool_(True)) if value is True else (value,):
        with pytest.raises(ParameterError) as exc:
            to_mpf("lam", v)
        msg = str(exc.value)
        assert msg.startswith("lam must be") and msg.endswith(".") and "\n" not in msg


@pytest.mark.parametrize(
    ("keywords", "word"),
    [({"replacement": "no"}, "replacement"), ({"truncate": "x"}, "truncate")],
)
def test_a_flag_must_be_a_bool(keywords: dict, word: str) -> None:
    with pytest.raises(ParameterError, match=f"^{word} must be True or False, got "):
        bound("0.9", 3, **keywords)


def test_a_huge_N_of_the_exact_chain_is_one_sentence() -> None:
    import mfstein

    params = {"beta": 2, "gamma": 1, "rho": 1, "a": "0.1"}
    with pytest.raises(ParameterError, match=r"^N must be an integer >= 1 and <= "):
        mfstein.exact("sir", params, N=10**30)
