"""Lambdified rates of plain arithmetic run on Python floats: the same numbers as on
NumPy float64 scalars, and NumPy's answer wherever Python would raise or go complex."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from derive.lambda_values import flat, plain_arithmetic

x, y, p = sp.symbols("x y p")


def _numpy_scalars(raw, s, q) -> np.ndarray:
    """What ``flat`` computed before: the function on NumPy float64 scalars."""
    return np.array(raw(*s, *q), dtype=float)


@pytest.mark.parametrize("cse", [False, True])
def test_plain_rates_give_numpys_numbers_bit_for_bit(cse: bool) -> None:
    exprs = [
        p * (x**2 - y**2),
        x - y,
        x**3 / (1 + y) + 2,
        x ** sp.Rational(3, 2) * p,  # a negative x: complex in Python, NaN in NumPy
        1 / x,  # x = 0: ZeroDivisionError in Python, inf in NumPy
        (x * 1e200) ** 3,  # OverflowError in Python, inf in NumPy
        -x + p / 7,
        sp.Integer(1),
    ]
    raw = sp.lambdify((x, y, p), exprs, "numpy", cse=cse)
    assert plain_arithmetic(raw)
    fn = flat(raw, len(exprs))
    rng = np.random.default_rng(3)
    points = [rng.standard_normal(2) * np.exp(rng.normal(0, 5, 2)) for _ in range(300)]
    points += [np.array([0.0, 1.0]), np.array([-0.5, 2.0]), np.array([-0.0, -1.0])]
    for s in points:
        q = np.array([rng.random() * 3])
        with np.errstate(all="ignore"):
            got, want = fn(s, q), _numpy_scalars(raw, s, q)
        assert np.array_equal(got, want, equal_nan=True), (s, got, want)


def test_functions_and_comparisons_are_not_plain() -> None:
    assert not plain_arithmetic(sp.lambdify((x, p), [sp.exp(x) * p], "numpy"))
    assert not plain_arithmetic(sp.lambdify((x, p), [sp.Max(x, p)], "numpy"))
    assert not plain_arithmetic(sp.lambdify((x, p), [sp.Mod(x, p)], "numpy"))
    assert not plain_arithmetic(lambda a, b: [a % b])
    assert not plain_arithmetic(lambda a, b: [a // b])
    assert plain_arithmetic(lambda a, b: [a * b - a / b, -(a**b)])


def test_plain_rates_of_other_inputs_are_computed_as_before() -> None:
    raw = sp.lambdify((x, p), [x**2 * p, x - p], "numpy")
    fn = flat(raw, 2)
    for s, q in (([1.5], [2.0]), (np.array([1, 2])[:1], np.array([3]))):
        assert np.array_equal(fn(s, q), np.array(raw(*s, *q), dtype=float))


def test_plain_values_of_every_python_kind_are_float64() -> None:
    """Ints alone, ints among floats and an int beyond int64 give NumPy's float64
    conversion of the list (``dtype=float``)."""
    raws = [
        lambda a, b: [1, -2, 3],
        lambda a, b: [a * b, 1, -1],
        lambda a, b: [a, 2**70, b],
        lambda a, b: [2**70, 3, -(2**70)],
    ]
    for raw in raws:
        assert plain_arithmetic(raw)
        got = flat(raw, 3)(np.array([0.5]), np.array([3.0]))
        want = np.array(raw(0.5, 3.0), dtype=float)
        assert got.dtype == np.float64 and np.array_equal(got, want), (got, want)
