"""The expansion of E[g(S_N)] (numeric.meanfield.observables) against independent routes:
the solution's own s*, V, A, c, c2 for linear and quadratic g, and exact
finite-N chains (numeric.exact) by Richardson extrapolation over N, 2N, 4N."""

from __future__ import annotations

import mpmath
import pytest

from derive.models import load_model
from mfstein.ground.errors import ParameterError
from numeric import solve
from numeric.exact import solve as exact_solve
from numeric.meanfield.observables import expand, expect_exact

SM_PARAMS = {"lam": "0.7"}
SIR_PARAMS = {"beta": "2", "gamma": "1", "rho": "1", "a": "0.1"}


@pytest.fixture(scope="module")
def sm2():
    m = load_model("supermarket", b=2, d=2)
    return m, solve(m, SM_PARAMS, dps=20, order=2)


@pytest.fixture(scope="module")
def sm3():
    m = load_model("supermarket", b=3, d=2)
    return m, solve(m, {"lam": "0.8"}, dps=25, order=2)


@pytest.fixture(scope="module")
def sir():
    m = load_model("sir")
    return m, solve(m, SIR_PARAMS, dps=20, order=2)


def _close(a, b, digits):
    return abs(a - b) <= mpmath.mpf(10) ** (-digits) * max(abs(a), abs(b), 1)


def test_linear_observable_is_the_sum_of_s_star_V_A(sm3):
    m, sol = sm3
    e = expand(sol, m, "queue_length")
    with mpmath.workdps(30):
        assert _close(e.g0, mpmath.fsum(sol.s_star), 22)
        assert _close(e.g1, mpmath.fsum(sol.V), 22)
        assert _close(e.g2, mpmath.fsum(sol.A), 22)
    w = expand(sol, m, "2*s1 - s3/3")
    with mpmath.workdps(30):
        assert _close(w.g2, 2 * sol.A[0] - sol.A[2] / 3, 22)
        # lim N Var = a^T W a
        a = [2, 0, mpmath.mpf(-1) / 3]
        var = mpmath.fsum(a[i] * sol.W[i, j] * a[j] for i in range(3) for j in range(3))
        assert _close(w.variance, var, 22)
    assert min(e.digits.values()) >= 20


def test_quadratic_observable_is_c_and_c2(sm3):
    m, sol = sm3
    q = expand(sol, m, "quadratic")
    assert q.g2 is None and q.variance is None
    with mpmath.workdps(30):
        assert _close(q.g0, sol.constant, 22)
        assert _close(q.g1, sol.c2, 22)
    # a diagonal M as the sum of the per-coordinate quadratics (W_ii + B_ii / N)
    qd = expand(sol, m, ("quadratic", "diag:1,0,2"))
    with mpmath.workdps(30):
        assert _close(qd.g0, sol.W[0, 0] + 2 * sol.W[2, 2], 22)
        assert _close(qd.g1, sol.B[0, 0] + 2 * sol.B[2, 2], 22)


def test_second_moment_of_a_coordinate_from_W_and_B(sm3):
    """E[s1^2] = s1*^2 + (2 s1* V_1 + W_11)/N + (2 s1* A_1 + B_11)/N^2: the
    expansion of a square against the moment coefficients directly."""
    m, sol = sm3
    e = expand(sol, m, "s1**2")
    s, V, A = sol.s_star[0], sol.V[0], sol.A[0]
    with mpmath.workdps(30):
        assert _close(e.g1, 2 * s * V + sol.W[0, 0], 22)
        assert _close(e.g2, 2 * s * A + sol.B[0, 0], 22)


def _richardson(h):
    """Limit of h(N) = L + a/N + b/N^2 + O(1/N^3) from h(N), h(2N), h(4N)."""
    return (8 * h[2] - 6 * h[1] + h[0]) / 3


@pytest.mark.parametrize(
    ("case", "g", "Ns", "tol"),
    [
        ("sm2", "s1**2", (40, 80, 160), 2e-4),
        ("sm2", "s1*s2", (40, 80, 160), 2e-4),
        ("sm2", "s1**3 + s2", (40, 80, 160), 2e-4),
        ("sm2", "exp(s2)", (40, 80, 160), 2e-4),
        ("sir", "S*I", (100, 200, 400), 1e-3),
        ("sir", "I**2", (100, 200, 400), 1e-3),
    ],
)
def test_g1_g2_agree_with_exact_chains(case, g, Ns, tol, request):
    m, sol = request.getfixturevalue(case)
    params = SM_PARAMS if case == "sm2" else SIR_PARAMS
    e = expand(sol, m, g)
    g0, g1, g2 = float(e.g0), float(e.g1), float(e.g2)
    assert abs(g2) > 1e-2  # a non-trivial second-order term
    exact = [expect_exact(exact_solve(m, params, N=N), g, m).mean for N in Ns]
    h1 = [N * (x - g0) for N, x in zip(Ns, exact, strict=True)]
    h2 = [N * N * (x - g0 - g1 / N) for N, x in zip(Ns, exact, strict=True)]
    # h1 = g1 + g2/N + ...: remove two terms; h2 = g2 + O(1/N): remove two terms
    assert abs(_richardson(h1) - g1) <= tol * abs(g1) + tol * abs(g2) / Ns[0]
    assert abs(_richardson(h2) - g2) <= tol * abs(g2) * 10
    # and the order-2 value beats order 1 at every N
    for N, x in zip(Ns, exact, strict=True):
        assert abs(x - float(e.value(N, 2))) < abs(x - float(e.value(N, 1)))


def test_n_variance_converges_at_rate_one_over_N(sm2):
    m, sol = sm2
    e = expand(sol, m, "s1*s2")
    Ns = (40, 80, 160)
    v = [expect_exact(exact_solve(m, SM_PARAMS, N=N), "s1*s2", m).n_variance for N in Ns]
    lim = float(e.variance)
    err = [abs(x - lim) for x in v]
    # rate 1/N: the error halves with each doubling of N
    assert 1.8 < err[0] / err[1] < 2.2 and 1.8 < err[1] / err[2] < 2.2
    # removing the 1/N term leaves an error far below the 1/N one
    assert abs(2 * v[2] - v[1] - lim) < err[2] / 20


def test_exact_expect_matches_the_chain_statistics():
    m = load_model("supermarket", b=3, d=2)
    r = exact_solve(m, {"lam": "0.8"}, N=12)
    assert r.expect("queue_length").mean == pytest.approx(r.mean_jobs, rel=1e-12)
    assert r.expect("busy").mean == pytest.approx(r.mean[0], rel=1e-12)
    q = r.expect("quadratic")
    assert q.mean == pytest.approx(r.n_mse, rel=1e-12)
    from numeric.exact import solve_exact

    rs = solve_exact(12, "0.8", 3, 2)
    assert rs.expect("queue_length").mean == pytest.approx(rs.mean_jobs, rel=1e-12)
    assert rs.expect("blocking").mean == pytest.approx(rs.blocking, rel=1e-9)


def test_expansion_json_and_repr(sm3):
    m, sol = sm3
    e = sol.observable(m, "busy")
    d = e.to_dict()
    assert d["observable"] == "busy" and d["expression"] == "s1"
    assert isinstance(d["g0"], str) and mpmath.mpf(d["g0"]) == pytest.approx(float(e.g0))
    assert len(d["g0"].replace(".", "").lstrip("0")) >= e.digits["g0"] - 1
    assert "busy" in repr(e) and "<table>" in e._repr_html_()
    assert '"g2"' in e.to_json()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("s1 + x", "x, which is not a symbol"),
        ("s1 +* 2", "syntax error"),
        ("1/0", "not a finite real number"),
        ("s1.__class__", "may only hold"),
        ("__import__('os')", "may only hold"),
        ("", "non-empty"),
    ],
)
def test_bad_observables_are_one_sentence(sm3, text, words):
    m, sol = sm3
    with pytest.raises(ParameterError, match=words):
        expand(sol, m, text)


def test_observable_not_real_at_the_fixed_point(sm3):
    m, sol = sm3
    with pytest.raises(ParameterError, match="not a finite real number at the fixed point"):
        expand(sol, m, "log(s1 - 1)")


def test_parameters_in_an_observable(sm3):
    m, sol = sm3
    e = expand(sol, m, "lam*(1 - s3**2)")  # the accepted arrival rate
    with mpmath.workdps(30):
        assert _close(e.g0, mpmath.mpf("0.8") * (1 - sol.s_star[2] ** 2), 22)


def test_fast_path_and_general_route_agree_to_the_claimed_digits():
    """The supermarket's structure-aware solver and the general route compute s*, V
    and W independently; the expansions agree to the digits both claim."""
    m = load_model("supermarket", b=4, d=2)
    fast = solve(m, {"lam": "0.85"}, dps=25)
    general = solve(m, {"lam": "0.85"}, dps=25, route="general")
    for g in ("queue_length", "s1**2 + s2*s4", "exp(s3)"):
        a, b = expand(fast, m, g), expand(general, m, g)
        for k in ("g0", "g1", "variance"):
            digits = min(a.digits[k], b.digits[k])
            assert digits >= 20
            with mpmath.workdps(40):
                assert _close(getattr(a, k), getattr(b, k), digits - 1), (g, k)
