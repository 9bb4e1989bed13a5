"""Float64 fast path against the mpmath path; warning where ill-conditioned."""

from __future__ import annotations

import numpy as np
import pytest

from mfstein.families.supermarket.solver import solve_supermarket
from numeric import IllConditionedWarning, constant_float64


@pytest.mark.parametrize(("b", "d"), [(20, 2), (6, 3)])
def test_float64_matches_mpmath(b: int, d: int) -> None:
    lams = np.array([0.2, 0.9, 0.999, 0.9999])
    fast = constant_float64(lams, b, d)
    for lam, c in zip(lams, fast, strict=True):
        ref = solve_supermarket(repr(float(lam)), b, d, dps=20, routes=("shooting",)).constant
        assert abs(c - float(ref)) <= 1e-10 * float(ref), lam


def test_ill_conditioned_points_warn_and_escalate() -> None:
    lam = 1 - 1e-7
    with pytest.warns(IllConditionedWarning):
        c = constant_float64([0.5, lam], 20)
    ref = solve_supermarket(repr(lam), 20, dps=20, routes=("shooting",)).constant
    assert abs(c[1] - float(ref)) <= 1e-12 * float(ref)


def test_shape_and_bad_input() -> None:
    from mfstein.ground.errors import ParameterError

    out = constant_float64(np.full((2, 3), 0.7), 6, 3)
    assert out.shape == (2, 3)
    assert np.allclose(out, float(solve_supermarket("0.7", 6, 3, dps=20).constant), rtol=1e-12)
    with pytest.raises(ParameterError):
        constant_float64([0.5, -0.1], 3)
    with pytest.raises(ParameterError):
        constant_float64(0.5, 0)
