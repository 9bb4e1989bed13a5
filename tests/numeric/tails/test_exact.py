"""Exact laws against independent routes and against each other (stochastic order)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mfstein.ground.errors import NumericalError, ParameterError
from numeric.tails import mm1_law, mmn_law, solve_jsq, solve_qbd, solve_ssq
from numeric.tails.report import exact_tails
from numeric.tails.ssq import binomial_pmfs


@pytest.mark.parametrize(("n", "eps"), [(1, 0.3), (4, 0.1), (20, 0.05), (200, 0.02)])
def test_mmn_against_birth_death_and_erlang_c(refs, n, eps):
    lam = n * (1 - eps)
    kmax = n + int(60 / eps)
    pi = refs["birth_death"](lambda k: lam, lambda k: min(k, n), kmax)
    law = mmn_law(n, eps)
    k = np.arange(kmax + 1)
    np.testing.assert_allclose(law.pmf(k), pi, rtol=1e-9, atol=1e-300)
    # textbook Erlang C by its sum formula, computed in log space
    a = lam
    logs = [j * math.log(a) - math.lgamma(j + 1) for j in range(n)]
    last = n * math.log(a) - math.lgamma(n + 1) - math.log(1 - a / n)
    top = max([*logs, last])
    C = math.exp(last - top) / (sum(math.exp(v - top) for v in logs) + math.exp(last - top))
    assert law.survival(n - 1) == pytest.approx(C, rel=1e-11)
    # mean number in system: a + C rho / (1 - rho)
    assert law.mean() == pytest.approx(a + C * (1 - eps) / eps, rel=1e-11)


@pytest.mark.parametrize(("n", "eps"), [(2, 0.2), (3, 0.1), (4, 0.3)])
def test_stochastic_order_mm1_mmn_jsq(n, eps):
    k = np.arange(-1, int(40 / eps))
    s1, sn = mm1_law(n, eps).survival(k), mmn_law(n, eps).survival(k)
    sj = solve_jsq(n, eps).law.survival(k)
    assert np.all(s1 <= sn + 1e-12)
    assert np.all(sn <= sj + 1e-12)
    assert np.any(sj > sn + 1e-3)  # strict somewhere: JSQ idles servers M/M/n would use


def test_jsq_n1_is_mm1():
    sol = solve_jsq(1, 0.15)
    k = np.arange(300)
    np.testing.assert_allclose(sol.law.pmf(k), 0.15 * 0.85**k, rtol=1e-11)
    assert sol.level_decay == pytest.approx(0.85, rel=1e-12)
    assert sol.boundary_mass == 0 and sol.perp_second_moment() == 0


@pytest.mark.parametrize(("n", "eps"), [(2, 0.05), (3, 0.2), (4, 0.15)])
def test_jsq_level_decay_is_rho_to_the_n(n, eps):
    # level = min queue, n jobs per level: sp(R) = rho^n; qbar itself decays by rho per job
    sol = solve_jsq(n, eps)
    assert sol.level_decay == pytest.approx((1 - eps) ** n, rel=1e-10)
    k = np.arange(sol.law.K, sol.law.K + 30)
    np.testing.assert_allclose(sol.law.pmf(k + 1) / sol.law.pmf(k), 1 - eps, rtol=1e-12)


@pytest.mark.parametrize(("n", "eps", "qmax"), [(2, 0.25, 120), (3, 0.4, 30)])
def test_jsq_qbd_against_untruncated_chain(refs, n, eps, qmax):
    ref = refs["jsq"](n, eps, qmax)
    sol = solve_jsq(n, eps, thetas=[0.5, 1.0])
    k = np.arange(len(ref["pmf"]) - 5 * n)
    np.testing.assert_allclose(sol.law.pmf(k), ref["pmf"][k], atol=1e-8)
    assert sol.perp_second_moment() == pytest.approx(ref["perp2"], rel=1e-6)
    mgf = [ref["pi"] @ np.exp(t * ref["perp"]) for t in (0.5, 1.0)]
    np.testing.assert_allclose(sol.perp_mgf([0.5, 1.0]), mgf, rtol=1e-5)
    assert sol.boundary_mass <= 1e-7 and sol.truncation_change <= 1e-5


def test_ssq_bernoulli_is_geometric():
    p, q = 0.3, 0.6
    sol = solve_ssq([1 - p, p], [1 - q, q])
    r = p * (1 - q) / (q * (1 - p))
    k = np.arange(60)
    np.testing.assert_allclose(sol.law.pmf(k), (1 - r) * r**k, rtol=1e-12)
    assert sol.cramer_root == pytest.approx(r, rel=1e-13)


@pytest.mark.parametrize(("n", "eps"), [(3, 0.2), (6, 0.05), (12, 0.1)])
def test_ssq_roots_against_truncated_solve(refs, n, eps):
    a, s = binomial_pmfs(n, eps)
    sol = solve_ssq(a, s)
    K = int(40 / sol.cramer_exponent) + 4 * n
    pi = refs["ssq"](a, s, K)
    k = np.arange(K // 2)
    np.testing.assert_allclose(sol.law.pmf(k), pi[k], rtol=1e-8, atol=1e-14)
    # Cramér: E exp(gamma (a - s)) = 1, checked from the pmfs directly
    g = sol.cramer_exponent
    ma = a @ np.exp(g * np.arange(a.size))
    ms = s @ np.exp(-g * np.arange(s.size))
    assert ma * ms == pytest.approx(1.0, rel=1e-12)
    assert sol.law.decay == pytest.approx(math.exp(-g), rel=1e-12)


def test_report_distance_and_tails_consistent():
    r = exact_tails("mmn", 5, 0.1, [0.0, 1.0, 2.5])
    law = mmn_law(5, 0.1)
    k = np.arange(0, 20000)
    s = law.survival(k)
    xk = 0.1 * k
    brute = max(np.abs(s - np.exp(-xk)).max(), np.abs(s - np.exp(-(xk + 0.1))).max())
    assert r.sup_distance == pytest.approx(brute, rel=1e-12)
    assert r.tail == pytest.approx(list(law.survival(np.array([0, 10, 25]))), rel=1e-12)


def test_failed_checks_raise():
    # transient (up rate 2 > down rate 1): G is not stochastic, the solver must refuse
    with pytest.raises(NumericalError, match="G 1"):
        solve_qbd(np.array([[2.0]]), np.array([[-3.0]]), np.array([[1.0]]), np.array([[-2.0]]))
    with pytest.raises(ParameterError, match="eps"):
        solve_jsq(3, 1.0)
    with pytest.raises(ParameterError, match="n must"):
        solve_jsq(40, 0.1)
    with pytest.raises(ParameterError, match="stability"):
        solve_ssq([0.2, 0.8], [0.5, 0.5])


def test_jsq_progress_bar_shows_each_spread_and_changes_no_number(capsys) -> None:
    """Issue 23, work with a known size: the exact JSQ solve (up to a minute near its
    phase cap) draws one bar step per spread tried; the law is the same without it."""
    quiet = solve_jsq(4, 0.3)
    assert capsys.readouterr().err == ""
    shown = solve_jsq(4, 0.3, progress=True)
    err = capsys.readouterr().err
    assert "JSQ QBD" in err and f"D = {shown.D}" in err and "spread" in err
    assert shown.D == quiet.D and shown.boundary_mass == quiet.boundary_mass
    assert shown.level_decay == quiet.level_decay
