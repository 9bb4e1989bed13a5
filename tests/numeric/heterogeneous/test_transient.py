"""The heterogeneous transient: its long-time limit, the density-model route, refusals."""

from __future__ import annotations

import numpy as np
import pytest
from hetpop_models import SIS, sis, three_state

import numeric
from mfstein.errors import ParameterError


def test_the_transient_tends_to_the_steady_state_and_keeps_each_object_a_law():
    model = sis(4)
    tr = numeric.transient(model, SIS, times=[0, 1, 60])
    st = numeric.solve(model, SIS, precision="float64")
    assert np.allclose(tr.x[-1], np.array(st.s_star, dtype=float), atol=1e-8)
    assert np.allclose(tr.V[-1], np.array(st.V, dtype=float), atol=1e-7)
    assert np.allclose(tr.W[-1], st.W, atol=1e-8)
    assert np.allclose(tr.x.reshape(3, 4, 2).sum(axis=2), 1, atol=1e-12)
    assert np.all(tr.V[0] == 0) and np.all(tr.W[0] == 0)  # a deterministic start


def test_a_random_start_has_the_bernoulli_covariance_at_time_0():
    model = sis(2)
    tr = numeric.transient(model, SIS, times=[0, 1], start=["0.5", "0.5", "0.25", "0.75"])
    assert tr.W[0][0, 0] == pytest.approx(0.25) and tr.W[0][2, 3] == pytest.approx(-0.1875)
    assert tr.W[0][0, 2] == 0  # independent objects


def test_order_2_and_a_bad_start_are_refused_in_one_sentence():
    for call in (
        lambda: numeric.transient(sis(2), SIS, times=[1], order=2),
        lambda: numeric.solve(sis(2), SIS, order=2),
        lambda: numeric.transient(sis(2), SIS, times=[1], start=["1", "0"]),
    ):
        with pytest.raises(ParameterError) as info:
            call()
        assert "\n" not in str(info.value) and str(info.value).endswith(".")


@pytest.mark.slow
def test_the_mpmath_route_through_the_density_model_agrees_with_float64():
    model = three_state(3)
    a = numeric.transient(model, {}, times=[0, 1, 2])
    b = numeric.transient(model, {}, times=[0, 1, 2], dps=15)
    assert b.digits >= 15
    for name in ("x", "V", "W"):
        assert np.allclose(getattr(a, name), getattr(b, name).astype(float), atol=1e-9)
