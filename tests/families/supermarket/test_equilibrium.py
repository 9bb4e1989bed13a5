"""Fixed point s*: drift residual, infinite-buffer and b = 1, 2 closed forms, heavy traffic."""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from derive import supermarket
from mfstein.families.supermarket.equilibrium import drift_residual, telescoped_residual
from mfstein.families.supermarket.member import supermarket_member
from mfstein.families.supermarket.solver import solve_supermarket
from numeric import equilibrium


@pytest.mark.parametrize("b", [1, 10, 100])
@pytest.mark.parametrize("lam", ["0.5", "0.99"])
def test_residual_with_derive_kernel(b: int, lam: str) -> None:
    s = equilibrium(lam, b, dps=50)
    with mpmath.workdps(60):
        assert (
            drift_residual(s, supermarket_member(b, 2, mpmath.mpf(lam), mpmath.mpf(1)))
            < mpmath.mpf(10) ** -45
        )


def test_residual_b1000_structure_aware() -> None:
    s = equilibrium("0.999", 1000, dps=50)
    assert len(s) == 1000
    with mpmath.workdps(60):
        assert telescoped_residual(s, mpmath.mpf("0.999"), 2) < mpmath.mpf(10) ** -45
        assert all(s[k] >= s[k + 1] > 0 for k in range(999))


@pytest.mark.slow
def test_residual_b1000_with_derive_kernel() -> None:
    s = equilibrium("0.999", 1000, dps=50)
    with mpmath.workdps(60):
        assert (
            drift_residual(s, supermarket_member(1000, 2, mpmath.mpf("0.999"), mpmath.mpf(1)))
            < mpmath.mpf(10) ** -45
        )


@pytest.mark.parametrize(("lam", "d"), [("0.9", 2), ("0.7", 3), ("0.2", 1)])
def test_large_buffer_tends_to_infinite_buffer_closed_form(lam: str, d: int) -> None:
    dps = 40
    tail = equilibrium(lam, "inf", d, dps=dps)
    # the finite-buffer fixed point differs from the infinite one by O(s_b) (d = 1) or less
    finite = equilibrium(lam, len(tail) + 25, d, dps=dps)
    with mpmath.workdps(dps + 10):
        rho = mpmath.mpf(lam)
        for k, v in enumerate(tail, start=1):
            e = (d**k - 1) // (d - 1) if d > 1 else k
            assert abs(v - rho**e) <= mpmath.mpf(10) ** -(dps + 5)
            assert abs(finite[k - 1] - v) <= mpmath.mpf(10) ** -dps


def test_heavy_traffic_is_stable_across_precisions() -> None:
    lam = "0.9999999"
    a = equilibrium(lam, 100, dps=40)
    b = equilibrium(lam, 100, dps=70)
    with mpmath.workdps(80):
        for x, y in zip(a, b, strict=True):
            assert abs(x - y) <= mpmath.mpf(10) ** -39 * y


@pytest.mark.parametrize("b", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_closed_forms_from_derive(b: int) -> None:
    from derive.models.closed_forms import closed_form

    cf = closed_form(b)
    lam = sp.Rational(37, 50)
    sol = solve_supermarket("0.74", b, dps=30)
    with mpmath.workdps(40):
        for k in range(b):
            exact = mpmath.mpmathify(sp.re(cf.s_star[k].subs("lam", lam).evalf(45)))
            assert abs(sol.s_star[k] - exact) <= mpmath.mpf(10) ** -29
        c = mpmath.mpmathify(sp.re(cf.c.subs("lam", lam).evalf(45)))
        assert abs(sol.constant - c) <= mpmath.mpf(10) ** -29 * c


def test_b1_closed_form_with_sympy_d1() -> None:
    # d = 1, b = 1: s = lam (1 - s)  =>  s = lam / (1 + lam); J = -(lam + 1), Q = 2 lam (1 - s)
    lam = sp.Rational(3, 10)
    s = lam / (1 + lam)
    J = -(lam + 1)
    c = -2 * lam * (1 - s) / (2 * J)  # P = -1/(2J), c = P Q
    sol = solve_supermarket("0.3", 1, 1, dps=30)
    with mpmath.workdps(40):
        assert abs(sol.s_star[0] - mpmath.mpf(sp.N(s, 45))) <= mpmath.mpf(10) ** -30
        assert abs(sol.constant - mpmath.mpf(sp.N(c, 45))) <= mpmath.mpf(10) ** -30


def test_without_replacement_matches_derive_kernel() -> None:
    s = equilibrium("0.9", 4, 2, dps=30, replacement=False, N=20)
    k = supermarket(4, 2, replacement=False).kernels("mpmath")
    with mpmath.workdps(40):
        assert max(abs(v) for v in k.f(s, [mpmath.mpf("0.9"), mpmath.mpf(20)])) < 1e-28
        ref = equilibrium("0.9", 4, 2, dps=30)
        assert abs(s[0] - ref[0]) > 1e-4  # the O(1/N) change is real


@pytest.mark.parametrize("b", [1, 2, 5, 9])
@pytest.mark.parametrize("dps", [45, 80])
def test_forward_shooting_converges_quadratically(monkeypatch, b: int, dps: int) -> None:
    """Newton from either side of s_b (a final level below y is a residual, not a
    failure): a few dozen shots, not the bit-by-bit bisection, and the drift of
    derive's kernel vanishes at the result."""
    import importlib

    eq = importlib.import_module("mfstein.families.supermarket.equilibrium")
    shots = []
    shoot = eq._shoot
    monkeypatch.setattr(eq, "_shoot", lambda *a: shots.append(1) or shoot(*a))
    with mpmath.workdps(dps):
        s = eq._shooting(mpmath.mpf("0.9109"), b, 2)
    assert len(shots) <= 30
    with mpmath.workdps(dps + 10):
        assert drift_residual(
            s, supermarket_member(b, 2, mpmath.mpf("0.9109"), mpmath.mpf(1))
        ) < mpmath.mpf(10) ** (-dps + 2)
