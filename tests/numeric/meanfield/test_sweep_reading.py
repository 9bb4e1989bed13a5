"""The sweep's cheaper reading of its grid and its points (issue 34, stop 50): every
shortcut gives the numbers of the general computation it replaces -- the grid's
texts those of Fraction arithmetic, the one-parameter secant NumPy's, a
remembered range verdict the declaration's own, the rates handed over by the
fixed-point search the ones evaluated afresh."""

from __future__ import annotations

import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from derive.models import load_model
from derive.spec import Parameter
from mfstein.ground.errors import ParameterError
from mfstein.ground.numbers import decimal_text
from numeric import params as P
from numeric.meanfield import sweep_points
from numeric.meanfield.sweep import exact_value_text, parse_range


def _text_by_fractions(x: Fraction) -> str:
    """The text of ``x`` read back to check it (the rule :func:`exact_value_text` keeps)."""
    text = decimal_text(x)
    return text if Fraction(text) == x else f"{x.numerator}/{x.denominator}"


@pytest.mark.parametrize(
    "a,b,n",
    [
        ("0.5", "0.99", 1000),
        ("0.99", "0.2", 50),
        ("1/3", "2/7", 13),
        ("-5", "5", 11),
        ("1e-30", "3e30", 7),
        ("0.1", "1e-45", 5),
        ("1e35", "1.5e35", 3),
        ("123456789012345678901234567890.5", "0", 4),
    ],
)
def test_grid_values_are_those_of_fraction_arithmetic(a: str, b: str, n: int) -> None:
    """Decimals, ``p/q`` texts, more than 40 digits and scientific notation alike."""
    fa, fb = Fraction(a), Fraction(b)
    want = [_text_by_fractions(fa + (fb - fa) * Fraction(i, n - 1)) for i in range(n)]
    assert parse_range("x", f"{a}:{b}:{n}") == want


def test_exact_value_text_reads_back_exactly() -> None:
    """Random fractions with and without a terminating decimal, short and long."""
    rng = random.Random(50)
    for _ in range(3000):
        num = rng.randint(-(10 ** rng.randint(0, 50)), 10 ** rng.randint(0, 50))
        den = 2 ** rng.randint(0, 60) * 5 ** rng.randint(0, 60) * rng.choice([1, 1, 3, 7])
        x = Fraction(num, den)
        text = exact_value_text(x)
        assert text == _text_by_fractions(x) and Fraction(text) == x


@pytest.mark.parametrize("p64", [[0.5015], [0.6], [0.4], [0.501]])
def test_one_parameter_secant_is_numpys(p64: list[float]) -> None:
    """The Python-float path gives the array path's start, and the same refusal to
    extrapolate (behind the last point, or more than two steps ahead)."""
    rng = np.random.default_rng(0)
    s0, s1 = rng.random(10), rng.random(10)
    history = [(np.array([0.5]), s0), (np.array([0.5005]), s1)]
    p = np.array(p64)
    d = history[1][0] - history[0][0]
    t = float((p - history[1][0]) @ d) / float(d @ d)
    on_line = 0.0 < t <= 2.0
    want = s1 + t * (s1 - s0) if on_line else s1
    got = sweep_points.predict(history, p)
    assert np.array_equal(got, want) and (got is s1) == (not on_line)


def test_several_parameters_keep_the_array_path() -> None:
    """Off the line of the last two points: the last ``s*``, unchanged."""
    s0, s1 = np.zeros(3), np.ones(3)
    history = [(np.array([1.0, 2.0]), s0), (np.array([1.5, 2.0]), s1)]
    assert sweep_points.predict(history, np.array([2.0, 2.5])) is s1
    assert np.array_equal(sweep_points.predict(history, np.array([2.0, 2.0])), 2 * s1 - s0)


def test_a_remembered_range_verdict_is_per_declaration() -> None:
    """A value found in one declared range is checked again against another one,
    and a value outside is refused every time."""
    model = load_model("sir")
    with mpmath.workdps(30):
        P.read_values(model, {"beta": "0"})  # beta >= 0: in range, remembered
        with pytest.raises(ParameterError, match="gamma must be > 0"):
            P.read_values(model, {"gamma": "0"})  # the same text, another range
        for _ in range(2):
            with pytest.raises(ParameterError, match="gamma must be > 0"):
                P.read_values(model, {"gamma": "-1"})
    closed, opened = Parameter("x", low=0, low_inclusive=True), Parameter("x", low=0)
    value = mpmath.mpf(0)
    assert P._in_range(closed, "0", value) and P._in_range(closed, "0", value)
    assert not P._in_range(opened, "0", value)


def test_the_rates_handed_over_are_those_at_the_fixed_point() -> None:
    """Newton's steps from a neighbour end with the drift's test at the point they
    return: its rates are handed over, equal to the rates evaluated there."""
    import numeric
    from numeric.meanfield.problem import system64
    from numeric.meanfield.structure import fixed_point64
    from numeric.prepared.problem import prepare_problem

    for name, params in (
        ("sir", {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}),
        ("sir", {"beta": "2", "gamma": "1", "rho": "0.5", "a": "0.01"}),
    ):
        problem = prepare_problem(load_model(name), params)
        sysm = system64(problem)
        s = np.array(numeric.solve(name, params, precision="float64").s_star, dtype=float)
        evaluated: dict = {}
        got = fixed_point64(sysm, s * (1 + 1e-6), near=True, evaluated=evaluated)
        assert np.array_equal(evaluated["rates"], sysm.rates(got))
        evaluated.clear()  # a search from the start hands nothing over
        fixed_point64(sysm, np.array(problem.s64), evaluated=evaluated)
        assert evaluated == {}
