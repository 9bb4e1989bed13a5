"""The N-dependent (without-replacement) mean field: valid region, clean refusal, fallback."""

from __future__ import annotations

import mpmath
import pytest

import numeric
from derive import ParameterError, supermarket


def test_valid_fixed_point_is_a_root_of_the_n_dependent_drift() -> None:
    s = numeric.equilibrium("0.9", 4, 2, replacement=False, N=10, dps=30)
    k = supermarket(4, 2, replacement=False).kernels("mpmath")
    with mpmath.workdps(30):
        assert max(abs(v) for v in k.f(s, [mpmath.mpf("0.9"), mpmath.mpf(10)])) < 1e-25
    assert 1 > s[0] > s[1] > s[2] > s[3] > 0
    # the O(1/N) correction moves the fixed point away from the with-replacement one
    w = numeric.equilibrium("0.9", 4, 2, dps=30)
    assert 1e-4 < abs(s[0] - w[0]) < 0.1


def test_fixed_point_outside_the_state_space_is_refused_in_one_sentence() -> None:
    with pytest.raises(ParameterError, match=r"^b = 6 is too large .* N = 10: .*\.$"):
        numeric.bound("0.9", 6, 2, replacement=False, N=10)


def test_reference_point_falls_back_to_the_common_limit_with_a_note() -> None:
    s, note = numeric.reference_point("0.9", 6, 2, replacement=False, N=10)
    assert note is not None and "with-replacement fixed point" in note
    assert s == numeric.equilibrium("0.9", 6, 2)
    s2, note2 = numeric.reference_point("0.9", 4, 2, replacement=False, N=10)
    assert note2 is None
    assert s2 == numeric.equilibrium("0.9", 4, 2, replacement=False, N=10)
