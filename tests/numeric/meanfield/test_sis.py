"""The SIS ("malware") model of Gast, Bortolussi and Tribastone, "Size expansions of
mean field approximation: transient and steady-state analysis" (derive.models.sis),
against two routes independent of mfstein's numeric solvers: the closed form derived
in its docstring, and the birth-death chain's product-form stationary law computed
at 40 digits (Richardson extrapolation over N, 2N, 4N).

No number published by the paper's authors is checked here: neither the paper's
text nor rmf_tool's stored data (examples, tests, misc/) holds this model.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from derive.models import load_model
from derive.models.sis import I, closed_form, exact_law, expansion, infection
from numeric import solve

CASES = [
    {"a": "0.1", "beta": "2", "gamma": "1"},  # endemic: most machines infected
    {"a": "0.05", "beta": "0.5", "gamma": "1.5"},  # below the contact threshold
]
OBSERVABLES = {"infected": I, "infection_rate": None, "I**3": I**3}


def _exact(value: str) -> sp.Rational:
    return sp.Rational(value)


def _closed(p):
    return closed_form(*(_exact(p[k]) for k in ("a", "beta", "gamma")))


def _g(name, p):
    if name == "infection_rate":
        return infection(I, _exact(p["a"]), _exact(p["beta"]))
    return OBSERVABLES[name]


@pytest.fixture(scope="module", params=range(len(CASES)))
def solved(request):
    p = CASES[request.param]
    sol = solve(load_model("sis"), p, dps=30, order=2, observables=list(OBSERVABLES))
    return p, sol


def _close(a, b, digits):
    with mpmath.workdps(50):
        a, b = mpmath.mpf(str(a)), mpmath.mpf(str(b))
        return abs(a - b) <= mpmath.mpf(10) ** (-digits) * max(abs(a), abs(b), 1)


def test_moment_coefficients_match_the_closed_form(solved):
    p, sol = solved
    cf = {k: sp.N(v, 40) for k, v in _closed(p).items()}
    assert _close(sol.s_star[0], cf["s_star"], 26)
    assert _close(sol.V[0], cf["V"], 26) and _close(sol.A[0], cf["A"], 24)
    assert _close(sol.W[0, 0], cf["W"], 26) and _close(sol.B[0, 0], cf["B"], 24)
    with mpmath.workdps(50):
        C = sol.free_map[0][0] ** 3 * sol.C[0][0][0]
    assert _close(C, cf["C"], 24)
    assert float(cf["V"]) < 0  # the finite system is less infected than its mean field


def test_observable_expansions_match_the_closed_form(solved):
    p, sol = solved
    cf = _closed(p)
    for name in OBSERVABLES:
        e = sol.observables[name]
        g0, g1, g2 = (sp.N(v, 40) for v in expansion(_g(name, p), cf))
        assert min(e.digits.values()) >= 24, (name, e.digits)
        assert _close(e.g0, g0, 25) and _close(e.g1, g1, 25) and _close(e.g2, g2, 23), name
        # lim N Var g = g'(x*)^2 W
        slope = sp.diff(_g(name, p), I).subs(I, cf["s_star"])
        assert _close(e.variance, sp.N(slope**2 * cf["W"], 40), 25), name
    # E[drift] = 0 in the steady state: E[infection rate] = gamma E[I] at every order
    rate, inf = sol.observables["infection_rate"], sol.observables["infected"]
    with mpmath.workdps(50):
        gamma = mpmath.mpf(p["gamma"])
        for term in ("g0", "g1", "g2"):
            assert _close(getattr(rate, term), gamma * getattr(inf, term), 25), term


def _moments(p, N, g):
    """E[g(S_N)] under the product-form law (40 digits)."""
    pi = exact_law(N, p["a"], p["beta"], p["gamma"], dps=40)
    fn = sp.lambdify(I, g, "mpmath")
    with mpmath.workdps(50):
        return mpmath.fsum(w * fn(mpmath.mpf(k) / N) for k, w in enumerate(pi))


def _richardson(h):
    """Limit of h(N) = L + c/N + d/N^2 + O(1/N^3) from h(N), h(2N), h(4N)."""
    return (8 * h[2] - 6 * h[1] + h[0]) / 3


@pytest.mark.parametrize("name", list(OBSERVABLES))
def test_g1_g2_agree_with_the_exact_chain_by_richardson(solved, name):
    p, sol = solved
    e = sol.observables[name]
    g = _g(name, p)
    Ns = (400, 800, 1600)
    with mpmath.workdps(50):
        exact = [_moments(p, N, g) for N in Ns]
        g0, g1, g2 = (mpmath.mpf(str(getattr(e, k))) for k in ("g0", "g1", "g2"))
        h1 = [N * (x - g0) for N, x in zip(Ns, exact, strict=True)]
        h2 = [N * N * (x - g0 - g1 / N) for N, x in zip(Ns, exact, strict=True)]
        # the remainders are O(1/N^3) and O(1/N) after removing two terms (rate 1/N^3)
        assert abs(_richardson(h1) - g1) < 1e-6 * max(abs(g1), 1)
        assert abs(_richardson(h2) - g2) < 1e-5 * max(abs(g2), 1)
        # without extrapolation the 1/N^2 value is off by O(1/N^3) only
        assert abs(exact[0] - (g0 + g1 / Ns[0] + g2 / Ns[0] ** 2)) < 20 / Ns[0] ** 3


def test_first_moment_identity_holds_exactly_at_every_N():
    """``f_1 E[y] + f_2 E[y^2]/2 = 0`` for all N (the k = 1 step of the derivation)."""
    p = CASES[0]
    cf = _closed(p)
    x = cf["s_star"]
    f1 = sp.N(-sp.sqrt((2 - sp.Rational(1, 10) - 1) ** 2 + 4 * sp.Rational(2, 10)), 45)
    f2 = -4
    for N in (3, 17, 100):
        with mpmath.workdps(50):
            ey = _moments(p, N, I - x)
            ey2 = _moments(p, N, (I - x) ** 2)
            assert abs(mpmath.mpf(str(f1)) * ey + f2 * ey2 / 2) < mpmath.mpf(10) ** -35


def test_library_exact_chain_matches_the_product_form():
    from numeric.exact import solve as exact_solve

    p = CASES[0]
    r = exact_solve(load_model("sis"), p, N=60)
    for name in ("infected", "infection_rate"):
        assert r.expect(name).mean == pytest.approx(float(_moments(p, 60, _g(name, p))), rel=1e-11)


def test_n_variance_converges_to_the_limit_at_rate_one_over_N(solved):
    """N Var g(S_N) of the exact chain -> g'(x*)^2 W, the error halving with each
    doubling of N (rate 1/N), and one Richardson step leaving far less."""
    p, sol = solved
    for name in ("infected", "I**3"):
        g = _g(name, p)
        lim = mpmath.mpf(str(sol.observables[name].variance))
        Ns = (400, 800, 1600)
        with mpmath.workdps(50):
            v = [N * (_moments(p, N, g**2) - _moments(p, N, g) ** 2) for N in Ns]
            err = [x - lim for x in v]
            assert 1.85 < err[0] / err[1] < 2.15 and 1.85 < err[1] / err[2] < 2.15, name
            assert abs(2 * v[2] - v[1] - lim) < abs(err[2]) / 10, name
