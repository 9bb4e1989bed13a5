"""The heterogeneous transient: its long-time limit, the dps route, refusals."""

from __future__ import annotations

import numpy as np
import pytest
from hetpop_models import SIS, sis, three_state

import numeric
from mfstein.ground.errors import ParameterError


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
def test_the_dps_route_of_three_states_agrees_with_float64():
    model = three_state(3)
    a = numeric.transient(model, {}, times=[0, 1, 2])
    b = numeric.transient(model, {}, times=[0, 1, 2], dps=15)
    assert b.digits >= 15
    for name in ("x", "V", "W"):
        assert np.allclose(getattr(a, name), getattr(b, name).astype(float), atol=1e-9)


def _digits(a: np.ndarray, b: np.ndarray) -> int:
    """Significant digits (norm-wise, every time) on which two mpf arrays agree."""
    import mpmath

    from numeric.precision import agreeing_digits

    with mpmath.workdps(80):
        return min(agreeing_digits(list(a[k].flat), list(b[k].flat)) for k in range(len(a)))


def test_the_dps_route_agrees_with_float64_and_shows_its_stages():
    from mfstein.ground.progress import stages

    model = three_state(2)
    a = numeric.transient(model, {}, times=[0, 0.5, 1])
    with stages("transient", show=False) as seen:
        b = numeric.transient(model, {}, times=[0, 0.5, 1], dps=20)
    assert b.digits == 20 and b.integrator == "extrapolation" and "Gragg" in b.precision()
    assert any(s.startswith("30 digits, t = ") for s in seen)  # one stage per accepted step
    for name in ("x", "V", "W"):
        assert np.allclose(getattr(a, name), getattr(b, name).astype(float), atol=1e-9)
    assert np.all(b.V[0] == 0) and np.all(b.W[0] == 0)


def test_the_dps_route_against_an_independent_taylor_integration():
    """The fixed-point right-hand side and the extrapolation against mpmath's Taylor
    solver on the mpf functions of numeric.heterogeneous.algebra (a random start)."""
    import mpmath

    from numeric.heterogeneous import algebra as alg
    from numeric.heterogeneous.entry import rates
    from numeric.heterogeneous.transient import initial_covariance

    model, start = sis(2), ["0.5", "0.5", "0.25", "0.75"]
    b = numeric.transient(model, SIS, times=[0, 0.5], start=start, dps=20)
    with mpmath.workdps(30):
        R, _ = rates(model, SIS, float64=False)
        x0 = np.array([mpmath.mpf(v) for v in start], dtype=object)
        W0 = initial_covariance(np.array([float(v) for v in start]), 2, 2)

        def rhs(_t: object, z: list) -> list:
            x, v, W = (np.array(z[:4], dtype=object), np.array(z[4:8], dtype=object),
                       np.array(z[8:], dtype=object).reshape(4, 4))
            JW = alg.jacobian(R, x).dot(W)
            dW = JW + JW.T + alg.noise(R, x)
            dv = alg.jacobian(R, x).dot(v) + alg.second_order(R, x, W)
            return [*alg.drift(R, x), *dv, *dW.ravel()]

        z = mpmath.odefun(rhs, 0, [*x0, *[mpmath.mpf(0)] * 4, *[mpmath.mpf(w) for w in W0.flat]])(
            mpmath.mpf("0.5"))
        want = {"x": np.array(z[:4]), "V": 2 * np.array(z[4:8]), "W": np.array(z[8:])}
    for name in ("x", "V", "W"):
        assert _digits(getattr(b, name)[1:].reshape(1, -1), want[name].reshape(1, -1)) >= 20


@pytest.mark.slow
def test_the_dps_route_agrees_with_the_density_model_route_for_k_3():
    from derive.heterogeneous_population import as_density_model
    from numeric.expansion.transient import transient
    from numeric.heterogeneous.transient import expand_result

    model = sis(3)
    b = numeric.transient(model, SIS, times=[0, 1, 2], dps=30)
    tr = transient(as_density_model(model), SIS, times=[0, 1, 2], start=[1, 1, 1], dps=30)
    c = expand_result(tr, 3, 2, model.coordinate_names())
    assert b.digits == c.digits == 30
    for name in ("x", "V", "W"):
        assert _digits(getattr(b, name), getattr(c, name)) >= 29


@pytest.mark.slow
def test_fifty_heterogeneous_servers_at_30_digits():
    from derive.models.heterogeneous_servers import power_of_two_heterogeneous

    model = power_of_two_heterogeneous(K=50, b=2)
    a = numeric.transient(model, {"lam": "0.9"}, times=[0, 0.25])
    b = numeric.transient(model, {"lam": "0.9"}, times=[0, 0.25], dps=30)
    assert b.digits == 30 and b.x.shape == (2, 150) and b.W.shape == (2, 150, 150)
    for name in ("x", "V", "W"):
        assert np.allclose(getattr(a, name), getattr(b, name).astype(float), atol=1e-9)
    assert np.allclose(b.x[-1].reshape(50, 3).sum(axis=1).astype(float), 1, atol=1e-25)


def _servers(K: int, **kw: object) -> object:
    from derive.models.power_of_d_servers import power_of_d_heterogeneous

    return power_of_d_heterogeneous(K=K, **kw)


def test_averaged_moves_at_dps_against_an_independent_taylor_integration():
    """Averaged moves (JSQ(2) rates, functions of the averages) on fixed point against
    mpmath's Taylor solver on the mpf functions of numeric.heterogeneous.algebra."""
    import mpmath

    from numeric.heterogeneous import algebra as alg
    from numeric.heterogeneous.entry import rates
    from numeric.heterogeneous.transient import initial_covariance

    model, start, lam = _servers(2, b=1), ["0.5", "0.5", "0.25", "0.75"], {"lam": "0.7"}
    b = numeric.transient(model, lam, times=[0, 0.5], start=start, dps=20)
    assert b.digits == 20
    with mpmath.workdps(30):
        R, _ = rates(model, lam, float64=False)
        assert R.avg is not None and R.avg.size == 2
        x0 = np.array([mpmath.mpf(v) for v in start], dtype=object)
        W0 = initial_covariance(np.array([float(v) for v in start]), 2, 2)

        def rhs(_t: object, z: list) -> list:
            x, v, W = (np.array(z[:4], dtype=object), np.array(z[4:8], dtype=object),
                       np.array(z[8:], dtype=object).reshape(4, 4))
            J = alg.jacobian(R, x)
            JW = J.dot(W)
            dW = JW + JW.T + alg.noise(R, x)
            return [*alg.drift(R, x), *(J.dot(v) + alg.second_order(R, x, W)), *dW.ravel()]

        z = mpmath.odefun(rhs, 0, [*x0, *[mpmath.mpf(0)] * 4, *[mpmath.mpf(w) for w in W0.flat]])(
            mpmath.mpf("0.5"))
        want = {"x": np.array(z[:4]), "V": 2 * np.array(z[4:8]), "W": np.array(z[8:])}
    for name in ("x", "V", "W"):
        assert _digits(getattr(b, name)[1:].reshape(1, -1), want[name].reshape(1, -1)) >= 20
    assert np.any(b.V[1] != 0)  # the correction term is exercised


def test_averaged_moves_at_dps_agree_with_float64_for_k_3():
    model, lam = _servers(3, d=3), {"lam": "0.5"}
    a = numeric.transient(model, lam, times=[0, 0.5])
    b = numeric.transient(model, lam, times=[0, 0.5], dps=15)
    assert b.digits == 15 and b.integrator == "extrapolation"
    for name in ("x", "V", "W"):
        assert np.allclose(getattr(a, name), getattr(b, name).astype(float), rtol=0, atol=1e-10)


@pytest.mark.slow
def test_averaged_moves_at_dps_agree_with_the_density_model_route_for_k_3():
    """Sampling with replacement: quadratic rates in the means (with distinct sampling
    and K = 3 the mean field leaves the rates' domain, which the density route refuses)."""
    from derive.heterogeneous_population import as_density_model
    from numeric.expansion.transient import transient
    from numeric.heterogeneous.transient import expand_result

    model, lam = _servers(3, d=3, sampling="replacement"), {"lam": "0.5"}
    b = numeric.transient(model, lam, times=[0, 1, 2], dps=30)
    tr = transient(as_density_model(model), lam, times=[0, 1, 2], start=[1, 0] * 3, dps=30)
    c = expand_result(tr, 3, 3, model.coordinate_names())
    assert b.digits == c.digits == 30
    for name in ("x", "V", "W"):
        assert _digits(getattr(b, name), getattr(c, name)) >= 29


@pytest.mark.slow
@pytest.mark.parametrize("K", [4, 8])
def test_jsq3_servers_at_30_digits_agree_with_float64(K: int):
    model, lam = _servers(K, d=3), {"lam": "0.5"}
    a = numeric.transient(model, lam, times=[0, 1, 2])
    b = numeric.transient(model, lam, times=[0, 1, 2], dps=30)
    assert b.digits == 30 and b.W.shape == (3, 3 * K, 3 * K)
    for name in ("x", "V", "W"):
        assert np.allclose(getattr(a, name), getattr(b, name).astype(float), rtol=0, atol=1e-10)
    assert np.allclose(b.x[-1].reshape(K, 3).sum(axis=1).astype(float), 1, rtol=0, atol=1e-28)
