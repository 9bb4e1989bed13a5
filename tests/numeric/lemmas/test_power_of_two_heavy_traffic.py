"""The core paper's claims against hand calculations for b = 1 and b = 2, and the paper's tables."""

from __future__ import annotations

import mpmath
import pytest

from numeric.lemmas import check

DPS = 30
TOL = mpmath.mpf(10) ** -25


@pytest.fixture(autouse=True)
def _precision():
    with mpmath.workdps(40):
        yield


def by_id(report):
    return {r.claim.id: r for r in report.results}


def close(a, b, tol=TOL):
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    return abs(a - b) <= tol * max(1, abs(b))


@pytest.fixture(scope="module")
def b1():
    """All claims at b = 1, lam = 0.9, N = 10, and the hand-derived closed forms."""
    rep = by_id(check(None, lam="0.9", N=[10], b=1, dps=DPS))
    with mpmath.workdps(40):
        lam = mpmath.mpf("0.9")
        # f_1 = lam (1 - s1^2) - s1 = 0  =>  s1 = (-1 + sqrt(1 + 4 lam^2)) / (2 lam)
        s1 = (-1 + mpmath.sqrt(1 + 4 * lam**2)) / (2 * lam)
        J = -2 * lam * s1 - 1
        P = 1 / (2 * abs(J))  # 2 P J = -1
        ft = (lam * (1 - s1**2) + s1) / 2  # = s1 at equilibrium
    return rep, dict(lam=lam, s1=s1, J=J, P=P, ft=ft, N=10)


def test_b1_equilibrium_and_ftilde(b1):
    rep, h = b1
    assert close(h["ft"], h["s1"])
    p = rep["lemma9.f1"].points[0]
    assert close(p.lhs, h["s1"]) and close(p.rhs, h["lam"] * (1 - h["lam"] ** 2))
    assert p.holds
    assert rep["equilibrium_identity"].points[0].holds


def test_b1_lemma5_is_a_tie(b1):
    # b = 1: P = 1/(2|J|) = 1/(2||J||): Lemma 5 holds with equality.
    rep, h = b1
    p = rep["lemma5"].points[0]
    assert close(p.lhs, h["P"]) and close(p.rhs, h["P"]) and p.holds
    q = rep["lemma5.norm_J"].points[0]
    assert close(q.lhs, abs(h["J"])) and close(q.rhs, abs(h["J"]))


def test_b1_lemma8_9_10(b1):
    rep, h = b1
    lam, N = h["lam"], h["N"]
    p8 = rep["lemma8"].points[0]  # Hess f_1 = -2 lam: ratio 2 lam
    assert close(p8.lhs, 2 * lam) and close(p8.rhs, 2 * mpmath.sqrt(2) * lam) and p8.holds
    p9 = rep["lemma9"].points[0]
    assert close(p9.lhs, 2 * h["P"] * h["ft"] / N)
    assert close(p9.rhs, lam * (1 - lam) / (9 * N))
    p10 = rep["lemma10"].points[0]
    assert close(p10.rhs, 2 * h["P"] / N)


def test_b1_lemma13_and_theorem1(b1):
    rep, h = b1
    assert close(rep["lemma13"].points[0].lhs, h["J"])
    assert close(rep["lemma13.kronecker"].points[0].lhs, 2 * abs(h["J"]))
    # Kronecker sum for b = 1 is 2J: printed expression 2 f~ / (2J) = s1 / J < 0.
    sign = rep["theorem1.sign"].points[0]
    assert close(sign.lhs, h["s1"] / h["J"]) and not sign.holds
    const = rep["theorem1.constant"].points[0]
    assert close(const.lhs, h["s1"] / abs(h["J"])) and const.holds
    eq6 = rep["theorem1.eq6"].points[0]
    assert close(eq6.lhs, h["s1"] / (h["J"] * h["N"])) and not eq6.holds
    assert rep["lemma4"].points[0].holds


def test_b1_skips_claims_needing_gamma_alpha(b1):
    rep, _ = b1
    for cid in ("lemma6", "spectral_gap", "remark2", "lemma12.r"):
        assert rep[cid].skipped and not rep[cid].points


def test_b2_hand_calculation():
    rep = by_id(check(None, gamma="0.1", alpha="0.05", N=[100], b=2, dps=DPS))
    with mpmath.workdps(40):
        lam = 1 - mpmath.mpf("0.1") / mpmath.mpf(100) ** mpmath.mpf("0.05")
        # s1 = lam (1 - s2^2), s2 = lam (s1^2 - s2^2): one equation in s2.
        s2 = mpmath.findroot(lambda x: lam * ((lam * (1 - x**2)) ** 2 - x**2) - x, 0.5)
        s1 = lam * (1 - s2**2)
        J11, J12, J21, J22 = -2 * lam * s1 - 1, mpmath.mpf(1), 2 * lam * s1, -2 * lam * s2 - 1
        # P J + J^T P = -I for symmetric P, written out entry by entry:
        A = mpmath.matrix([[2 * J11, 2 * J21, 0], [J12, J11 + J22, J21], [0, 2 * J12, 2 * J22]])
        p11, p12, p22 = mpmath.lu_solve(A, mpmath.matrix([-1, 0, -1]))
        f1, f2 = lam * (1 - s1**2), lam * (s1**2 - s2**2)
        tr, det = J11 + J22, J11 * J22 - J12 * J21
        mu_top = tr / 2 + mpmath.sqrt(tr**2 / 4 - det)
        trP, detP = p11 + p22, p11 * p22 - p12**2
        normP = trP / 2 + mpmath.sqrt(trP**2 / 4 - detP)
    assert close(rep["lemma5"].points[0].lhs, min(p11, p22))
    assert close(rep["lemma9.P11"].points[0].lhs, 2 * p11 * f1 / 100)
    assert close(rep["lemma9"].points[0].lhs, 2 * (p11 * f1 + p22 * f2) / 100)
    assert close(rep["lemma6"].points[0].lhs, normP)
    assert close(rep["lemma9.P_posdef"].points[0].lhs, trP - normP)  # the other eigenvalue
    assert close(
        rep["lemma6"].points[0].rhs, mpmath.mpf(100) ** (mpmath.mpf("0.1") + mpmath.mpf("3e-5"))
    )
    assert close(rep["spectral_gap"].points[0].lhs, abs(mu_top))
    assert close(rep["lemma13"].points[0].lhs, mu_top)
    assert close(rep["theorem1.sign"].points[0].lhs, -2 * (p11 * f1 + p22 * f2))
    assert close(rep["lemma8"].points[0].lhs, 2 * mpmath.sqrt(2) * lam)
    assert close(rep["remark2"].points[0].lhs, 2 * (p11 * f1 + p22 * f2) / 100)


def test_theorem1_printed_value_is_minus_the_papers_table():
    # Table 1 (gamma = 0.1, alpha = 0.05) prints the positive constant; the Kronecker
    # expression of Theorem 1 as printed (b = 8, solved as a 64 x 64 system) is its negative.
    rep = by_id(check(["theorem1.sign"], gamma="0.1", alpha="0.05", N=[10, 10000], b=8))
    r = rep["theorem1.sign"]
    assert "Kronecker system solved by banded elimination" in r.points[0].note
    assert [mpmath.nstr(p.lhs, 5) for p in r.points] == ["-3.1872", "-4.4049"]
    assert r.holds_from_N is None
    assert "-2 vec(F~)^T" in r.claim.corrected_statement


def test_kronecker_routes_agree(monkeypatch):
    # Theorem 1's expression: literal b^2 x b^2 system vs the Lyapunov-equation route
    # (quadrature) used above KRONECKER_MAX_B; neither uses numeric's P.
    from numeric.lemmas import power_of_two_heavy_traffic as core
    from numeric.lemmas.context import Context

    lam = mpmath.mpf("0.95")
    direct = core.kronecker_form(Context(lam=lam, N=10, b=4, dps=DPS))
    monkeypatch.setattr(core, "KRONECKER_MAX_B", 0)
    via_quad = core.kronecker_form(Context(lam=lam, N=10, b=4, dps=DPS))
    assert "banded" in direct[1] and "quadrature" in via_quad[1]
    assert close(direct[0], via_quad[0])
