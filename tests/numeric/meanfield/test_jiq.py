"""Join-Idle-Queue (derive.models.jiq; Lu, Xie, Kliot, Geller, Larus and Greenberg,
"Join-Idle-Queue: a novel load balancing algorithm for dynamically scalable web
services") against routes independent of its expansion: exact finite-N chains
(numeric.exact) by Richardson extrapolation over N, 2N, 4N, and the flow balance
E[x_1] = lam (1 - E[(1 - r z_1) x_b]) that holds exactly at every N.

No number published by the scheme's authors is checked: their paper reports
JIQ-Random through plots and a large-system formula for an I-queue model that
differs from this chain (stale I-queue entries), and rmf_tool's stored data has
no JIQ model.
"""

from __future__ import annotations

import mpmath
import pytest

from derive.models import load_model
from mfstein.ground.errors import ParameterError
from numeric import solve
from numeric.exact import solve as exact_solve

OPTIONS = {"b": 3, "r": 2, "L": 3}
PARAMS = {"lam": "0.7"}
NS = (10, 20, 40)
GS = ["queue_length", "occupied", "queued", "x1*z1", "x2**2 + z1"]


@pytest.fixture(scope="module")
def jiq():
    m = load_model("jiq", **OPTIONS)
    sol = solve(m, PARAMS, dps=15, order=2, observables=GS)
    exact = {N: exact_solve(m, PARAMS, N=N) for N in NS}
    return m, sol, exact


def _richardson(h):
    """Limit of h(N) = L + c/N + d/N^2 + O(1/N^3) from h(N), h(2N), h(4N)."""
    return (8 * h[2] - 6 * h[1] + h[0]) / 3


@pytest.mark.parametrize("g", GS)
def test_g1_g2_agree_with_exact_chains_by_richardson(jiq, g):
    m, sol, exact = jiq
    e = sol.observables[g]
    assert min(e.digits.values()) >= 12
    g0, g1, g2 = float(e.g0), float(e.g1), float(e.g2)
    x = [exact[N].expect(g, m).mean for N in NS]
    h1 = [N * (v - g0) for N, v in zip(NS, x, strict=True)]
    h2 = [N * N * (v - g0 - g1 / N) for N, v in zip(NS, x, strict=True)]
    assert abs(_richardson(h1) - g1) < 2e-4 * max(abs(g1), 0.01)
    assert abs(_richardson(h2) - g2) < 3e-3 * max(abs(g2), 0.01)
    # the 1/N^2 value's error falls at rate 1/N^3 (about 8 per doubling)
    err = [abs(v - float(e.value(N, 2))) for N, v in zip(NS, x, strict=True)]
    assert err[0] / err[1] > 6.5 and err[1] / err[2] > 6.5, err


def test_flow_balance_holds_at_every_N_and_every_order(jiq):
    """Jobs in = jobs out: E[x_1] = lam (1 - E[(1 - r z_1) x_b]) exactly, so the
    expansion of x_1 + lam (1 - r z_1) x_b - lam vanishes term by term."""
    m, sol, exact = jiq
    g = "x1 + lam*(1 - 2*z1)*x3 - lam"
    for N in NS:
        assert abs(exact[N].expect(g, m).mean) < 1e-10
    e = sol.observable(m, g)
    for term in ("g0", "g1", "g2"):
        assert abs(getattr(e, term)) < mpmath.mpf(10) ** -13, term


def test_every_idle_server_is_listed_once(jiq):
    """The conservation law x_1 + z_1 + ... + z_L = 1 on every state of the chain."""
    m, sol, exact = jiq
    r = exact[10]
    assert r.expect("idle", m).mean == pytest.approx(r.expect("i_queue_length", m).mean / 2)
    total = r.expect("x1 + z1 + z2 + z3", m)
    assert total.mean == pytest.approx(1, abs=1e-12) and total.variance < 1e-20
    with mpmath.workdps(30):
        assert abs(sol.s_star[0] + mpmath.fsum(sol.s_star[3:]) - 1) < mpmath.mpf(10) ** -14


def test_fewer_dispatchers_queue_less():
    """At the same load, r = 4 servers per dispatcher pool the idle servers in fewer
    I-queues than r = 1 (a dispatcher per server): fewer jobs meet an empty I-queue,
    fewer wait (mean field) -- the direction of Lu et al.'s remark that JIQ works
    best with few dispatchers."""
    q = {}
    for r in (1, 4):
        sol = solve(
            load_model("jiq", b=3, r=r), PARAMS, dps=8, observables=["queued", "random_dispatch"]
        )
        q[r] = (sol.observables["queued"].g0, sol.observables["random_dispatch"].g0)
    assert 0 < q[4][0] < q[1][0] and 0 < q[4][1] < q[1][1]


def test_bad_options_are_one_sentence():
    with pytest.raises(ParameterError, match="L must be larger than r = 2"):
        load_model("jiq", b=3, r=2, L=2)
    with pytest.raises(ParameterError, match="r"):
        load_model("jiq", r=0)
