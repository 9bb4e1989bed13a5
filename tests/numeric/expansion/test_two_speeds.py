"""Power-of-d with two server speeds (derive.models.heterogeneous)."""

from __future__ import annotations

import pytest

from derive.models import load_model
from numeric import solve
from numeric.exact import solve as exact_solve

# rmf_tool tests/output_tests/d_choice.pickle, dChoiceModel(K=5, rho=0.9, d=2): the
# mean queue length's terms (sum pi, sum V, sum A); see test_published.py.
RMF_TOOL_TWO_CHOICE_09 = (2.334047363794634, 0.9665599944449451, -48.28526630192876)


@pytest.mark.parametrize("gamma", ["0.3", "0.5"])
def test_equal_speeds_reduce_to_the_two_choice_model(gamma):
    """With mu1 = mu2 the total occupancy is the two-choice model's, whatever the
    split into classes: its expansion is rmf_tool's."""
    m = load_model("power_of_d_two_speeds", b=5, d=2)
    sol = solve(m, {"lam": "0.9", "mu1": "1", "mu2": "1", "gamma": gamma}, dps=20, order=2)
    e = sol.observable(m, "queue_length")
    ref = RMF_TOOL_TWO_CHOICE_09
    assert float(e.g0) == pytest.approx(ref[0], rel=1e-13)
    assert float(e.g1) == pytest.approx(ref[1], rel=1e-12)
    assert float(e.g2) == pytest.approx(ref[2], rel=1e-5)
    # and the classes are used in proportion: each class is equally busy
    b1 = sol.observable(m, "busy_class1")
    b2 = sol.observable(m, "busy_class2")
    assert float(b1.g1) == pytest.approx(float(b2.g1), rel=1e-15)
    assert float(b1.g2) == pytest.approx(float(b2.g2), rel=1e-15)


PARAMS = {"lam": "0.7", "mu1": "1.5", "mu2": "0.5", "gamma": "0.5"}


def test_two_speeds_against_exact_chains():
    m = load_model("power_of_d_two_speeds", b=2, d=2)
    sol = solve(m, PARAMS, dps=20, order=2)
    for N in (20, 40):
        r = exact_solve(m, PARAMS, N=N)
        for g in ("queue_length", "busy_class2", "jobs_class1"):
            e = sol.observable(m, g)
            x = r.expect(g, m).mean
            err1 = abs(x - float(e.value(N, 1)))
            err2 = abs(x - float(e.value(N, 2)))
            assert err2 < err1, (g, N, err1, err2)
    # the slow class is busier: the fast class takes the work it can
    assert sol.observable(m, "busy_class2").g0 > sol.observable(m, "busy_class1").g0


@pytest.mark.slow
def test_two_speeds_g2_by_richardson():
    m = load_model("power_of_d_two_speeds", b=2, d=2)
    sol = solve(m, PARAMS, dps=20, order=2)
    Ns = (20, 40, 80)
    chains = [exact_solve(m, PARAMS, N=N) for N in Ns]
    for g in ("queue_length", "busy_class2"):
        e = sol.observable(m, g)
        h = [
            N * N * (r.expect(g, m).mean - float(e.g0) - float(e.g1) / N)
            for N, r in zip(Ns, chains, strict=True)
        ]
        assert (8 * h[2] - 6 * h[1] + h[0]) / 3 == pytest.approx(float(e.g2), rel=3e-3)
