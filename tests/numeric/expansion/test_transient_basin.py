"""``transient`` says where the mean field goes: another basin, an unstable or
non-hyperbolic fixed point, unbounded growth, no limit (issue 23)."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
import sympy as sp

from derive.model import Model, Transition
from mfstein.ground.errors import StabilityWarning

tr = importlib.import_module("numeric.expansion.transient")

x = sp.Symbol("x")
a0, a1, a2, d1, d3 = sp.symbols("a0 a1 a2 d1 d3")
#: One compiled model for every case: drift f(x) = a0 + a1 x + a2 x^2 - d1 x - d3 x^3.
POLY = Model(
    "poly",
    (x,),
    (a0, a1, a2, d1, d3),
    [Transition((1,), a0 + a1 * x + a2 * x**2), Transition((-1,), d1 * x + d3 * x**3)],
)
#: Schlogl's model: f = -(x - 1)(x - 2)(x - 3), stable at 1 and 3, unstable at 2.
SCHLOGL = {"a0": 6, "a1": 0, "a2": 6, "d1": 11, "d3": 1}
#: f = 1/10 + 2 x^2 - x: stable at (1 - sqrt(1/5))/4, unstable at (1 + sqrt(1/5))/4,
#: and above it the mean field blows up in finite time.
BLOWUP = {"a0": "0.1", "a1": 0, "a2": 2, "d1": 1, "d3": 0}


def _roots(params: dict) -> list[float]:
    """Real zeros of the drift, from its coefficients (not from the code under test)."""
    p = {k: float(v) for k, v in params.items()}
    coeffs = [-p["d3"], p["a2"], p["a1"] - p["d1"], p["a0"]]
    while coeffs and coeffs[0] == 0:
        coeffs.pop(0)
    r = np.roots(coeffs)
    return sorted(float(v.real) for v in r if abs(v.imag) < 1e-12)


def _run(params: dict, start: str, t_end: float = 2.0):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = tr.transient(POLY, params, times=[0.0, t_end / 2, t_end], start=start)
    ours = [w for w in seen if issubclass(w.category, StabilityWarning)]
    assert [str(w.message) for w in ours] == ([res.warning] if res.warning else []), ours
    # the warning names the caller's line (this file), not a line of the library
    assert all(w.filename == __file__ for w in ours), [w.filename for w in ours]
    return res


def test_a_start_in_the_basin_of_s_star_is_silent() -> None:
    low, mid, high = _roots(SCHLOGL)
    res = _run(SCHLOGL, "1.5")
    assert res.warning is None and res.limit is not None
    assert abs(res.limit[0] - low) < 1e-9 and res.to_dict()["warning"] is None
    assert low < res.x[-1][0] < 1.5 < mid < high


def test_a_start_in_the_other_basin_says_so() -> None:
    low, _, high = _roots(SCHLOGL)
    res = _run(SCHLOGL, "2.5")
    assert res.warning is not None and "another basin" in res.warning
    assert abs(res.limit[0] - high) < 1e-9
    assert f"s* = ({low:.6g})" in res.warning and res.to_dict()["limit"] == [res.limit[0]]


def test_a_start_on_the_unstable_fixed_point_says_it_is_not_stable() -> None:
    _, mid, _ = _roots(SCHLOGL)
    res = _run(SCHLOGL, "2")
    assert abs(res.limit[0] - mid) < 1e-9 and "which is not stable" in res.warning


def test_the_only_fixed_point_unstable() -> None:
    growth = {"a0": 0, "a1": 1, "a2": 0, "d1": 0, "d3": 0}  # f = x
    sitting = _run(growth, "0")
    assert sitting.limit is not None and sitting.limit[0] == 0
    assert "not stable" in sitting.warning
    assert "real part 1, not below -1e-09 max|J_ij|" in sitting.warning
    leaving = _run(growth, "0.1")
    assert leaving.limit is None and "grows without bound" in leaving.warning
    assert "s* = (0), which is not stable" in leaving.warning


def test_the_only_fixed_point_non_hyperbolic() -> None:
    cubic = {"a0": 0, "a1": 0, "a2": 0, "d1": 0, "d3": 1}  # f = -x^3: x(t) ~ (2 t)^(-1/2)
    res = _run(cubic, "1")
    assert res.limit is None and "does not settle" in res.warning
    assert "not hyperbolic" in res.warning


def test_blow_up_beyond_the_last_time_and_the_stable_basin() -> None:
    stable, unstable = _roots(BLOWUP)
    above = _run(BLOWUP, "0.5", t_end=1.0)  # x(1) is finite; it blows up later
    assert np.isfinite(above.x[-1][0]) and above.x[-1][0] > 0.5
    assert above.limit is None and "grows without bound" in above.warning
    below = _run(BLOWUP, f"{unstable - 0.01}")
    assert below.warning is None and abs(below.limit[0] - stable) < 1e-9


@pytest.mark.parametrize("start", ["1.5", "2.5"])
def test_the_mpmath_route_checks_the_same(start: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StabilityWarning)
        res = tr.transient(POLY, SCHLOGL, times=[0.0, 0.5], start=start, order=0, dps=10)
    assert (res.warning is None) == (start == "1.5")
