"""The exact truncated chain (numeric.pi.exact) against closed forms and the simulator.

Simulation and exact values are compared within three 95% half-widths (fixed
seeds, so each check is deterministic; 3 x CI95 is a ~1e-3 two-sided level per
comparison), the convention of the project's other simulation tests.
"""

from __future__ import annotations

import numpy as np
import pytest

from derive.models.persistent_idle import parse_pmf
from mfstein.ground.errors import NumericalError, ParameterError
from numeric.pi import exact as pi_exact
from numeric.pi.exact import solve_pi_exact
from sim.pi import simulate_pi

# n = 1, one job served per slot: Q(t) = [Q(t-1) + a(t) - 1]^+, recorded at the end
# of slot t.  With U = 1{Q(t-1) + a(t) = 0}: Q(t) = Q(t-1) + a(t) - 1 + U, so E U = 1 - E a,
# and Q(t)^2 = (Q(t-1) + a(t) - 1)^2 - U (on U = 1 the bracket is -1).  Taking stationary
# expectations with a(t) independent of Q(t-1):
#   0 = 2 E Q (E a - 1) + E a^2 - 2 E a + 1 - (1 - E a)  =>  E Q = (E a^2 - E a) / (2 (1 - E a)).
SINGLE = ["0:.6,1:.15,2:.1,4:.15", "0:.5,3:.2,1:.3"]


def _lindley_mean(arrivals: str) -> float:
    a = parse_pmf(arrivals, "arrivals")
    return (a.second_moment - a.mean) / (2 * (1 - a.mean))


@pytest.mark.parametrize("arrivals", SINGLE)
def test_single_server_unit_capacity_closed_form_exact(arrivals: str) -> None:
    e = solve_pi_exact(arrivals, "1:1")
    assert e.truncated_mass <= pi_exact.MASS_TOL
    assert e.residual <= pi_exact.RESIDUAL_TOL
    # the cap removes jobs only with the stated (tiny) truncated mass; at load 0.95 the
    # lost tail shifts E Q by about 1e-10 relative
    assert e.mean_total == pytest.approx(_lindley_mean(arrivals), rel=1e-9)
    # the cap was grown until the truncated mass is below tolerance, and is reported
    assert e.caps_tried[-1] == (e.cap, e.truncated_mass)
    # P(idle) = P(Q = 0); E U = 1 - E a gives P(Q(t-1) + a(t) = 0) = P(Q = 0) P(a = 0)
    a = parse_pmf(arrivals, "arrivals")
    assert e.p_idle[0] * a.prob(0) == pytest.approx(1 - a.mean, abs=1e-10)


def test_single_server_closed_form_simulation() -> None:
    arrivals = SINGLE[0]
    r = simulate_pi(arrivals, "1:1", slots=2_000_000, reps=4, seed=11, workers=1)
    exact = _lindley_mean(arrivals)
    assert abs(float(r.mean_total.mean) - exact) <= 3 * float(r.mean_total.ci95)
    assert float(r.mean_total.ci95) < 0.05 * exact  # the check is not vacuous


MODEL = dict(arrivals="0:.5,1:.2,3:.3", services=["1:1", "1:.5,2:.5"])


@pytest.mark.parametrize("policy", ["pi", "pi-split", "jiq", "jsq"])
def test_two_servers_exact_matches_simulation(policy: str) -> None:
    e = solve_pi_exact(**MODEL, policy=policy)
    r = simulate_pi(**MODEL, policy=policy, slots=2_000_000, reps=4, seed=5, workers=1)
    for name in ("mean_queue", "p_idle"):
        est, ex = getattr(r, name), getattr(e, name)
        assert np.all(np.abs(est.mean - ex) <= 3 * est.ci95), (name, est.mean, est.ci95, ex)
    for name in ("mean_total", "delay", "messages_per_slot", "messages_per_job"):
        est, ex = getattr(r, name), getattr(e, name)
        assert abs(float(est.mean) - ex) <= 3 * float(est.ci95) + 1e-15, (name, est, ex)


def test_pi_messages_identity_and_bound() -> None:
    """Tokens sent = tokens returned in steady state; under PI a token is returned only
    by a non-empty batch joining an idle LI: messages/slot = P(a > 0) P(I != {})."""
    e = solve_pi_exact(**MODEL, policy="pi")
    p_batch = 1 - parse_pmf(MODEL["arrivals"], "arrivals").prob(0)
    assert e.messages_per_slot == pytest.approx(p_batch * e.p_some_idle, rel=1e-9)
    assert e.messages_per_slot <= p_batch
    # PI-Split returns several tokens per split batch: more messages per batch than PI
    s = solve_pi_exact(**MODEL, policy="pi-split")
    assert s.messages_per_batch > e.messages_per_batch


def test_three_servers_exact_matches_simulation() -> None:
    model = dict(arrivals="0:.6,2:.4", services=["1:1", "1:.5,2:.5", "1:1"])
    e = solve_pi_exact(**model, policy="pi")
    assert e.states == 3 * (e.cap + 1) ** 3
    r = simulate_pi(**model, slots=1_000_000, reps=4, seed=2, workers=1)
    assert np.all(np.abs(r.mean_queue.mean - e.mean_queue) <= 3 * r.mean_queue.ci95)
    assert np.all(np.abs(r.p_idle.mean - e.p_idle) <= 3 * r.p_idle.ci95)


def test_residual_check_refuses(monkeypatch) -> None:
    with pytest.raises(NumericalError, match=r"residual \|\|pi \(P - I\)\|\|_1"):
        solve_pi_exact(**MODEL, residual_tol=1e-300)


def test_state_space_sized_before_allocating() -> None:
    with pytest.raises(ParameterError, match="max_states"):
        solve_pi_exact(**MODEL, max_states=100)
    with pytest.raises(ParameterError, match="n must be <= 3"):
        solve_pi_exact(MODEL["arrivals"], "1:1", n=4)
    with pytest.raises(ParameterError, match="load"):
        solve_pi_exact("0:.5,4:.5", "1:1", n=2)
