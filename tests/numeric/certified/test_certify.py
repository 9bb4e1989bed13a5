"""Certified enclosures (numeric.certify) as the referee of the float routes' ``digits``."""

from __future__ import annotations

import dataclasses
import random

import mpmath
import pytest
import sympy as sp

import numeric
from mfstein.ground.errors import NumericalError, ParameterError
from numeric.certified.arb import to_arb, working_precision
from numeric.certified.enclosures import heavy_traffic_ball


def _contains(ball, value) -> bool:
    """Whether the Arb ball contains the exact binary value of an mpf (or a decimal string)."""
    with working_precision(4000):
        return bool(ball.contains(to_arb("v", value)))


def _radius_ok(cs, dps: int) -> bool:
    with working_precision(cs.prec):
        return bool(cs.constant.rad() < to_arb("r", f"1e-{dps - 5}"))


# -- the Arb back end --------------------------------------------------------------
def test_arb_kernels_print_rationals_exactly_and_enclose_mpmath() -> None:
    from derive import supermarket
    from derive.kernels import kernels

    m = supermarket(3, 2, mu="1/3")
    src = kernels(m, "arb").source
    assert "(arb(1)/3)" in src and "from flint import arb, arb_mat" in src
    s = ["0.8", "0.5", "0.125"]
    with working_precision(300):
        f = kernels(m, "arb").f([to_arb("s", x) for x in s], [to_arb("lam", "0.3")])
    with mpmath.workdps(120):
        ref = kernels(m, "mpmath").f([mpmath.mpf(x) for x in s], [mpmath.mpf(3) / 10])
    with working_precision(400):
        for ball_, r in zip(f, ref, strict=True):
            assert ball_.rad() < 1e-85  # exact rationals: one rounding per operation
            assert abs(ball_ - to_arb("r", r)) < to_arb("t", "1e-85")


# -- the core paper's Tables 1 and 2 ----------------------------------------------------
TABLES = {  # gamma -> printed "Asymptotic Tight Bound" row, N = 10, 100, 1000, 10000
    "0.1": ("3.1872", "3.5499", "3.9542", "4.4049"),
    "0.01": ("28.8070", "32.2472", "36.1022", "40.4250"),
}


@pytest.mark.parametrize("gamma", sorted(TABLES))
def test_tables_1_and_2(gamma: str) -> None:
    dps = 20
    for N, printed in zip((10, 100, 1000, 10000), TABLES[gamma], strict=True):
        lam = numeric.heavy_traffic_lambda(gamma, "0.05", N, dps=60)
        sol = numeric.bound(lam, "auto", dps=dps)
        ref = numeric.bound(lam, sol.n, 2, dps=dps + 20)  # the float routes, high precision
        cs = sol.certify(params={"lam": heavy_traffic_ball(gamma, "0.05", N)})
        assert _contains(cs.constant, ref.constant), (gamma, N)
        assert _radius_ok(cs, dps)
        assert cs.certified_digits >= dps
        assert cs.decide(sol.constant, sol.digits) == "proved"
        # the printed table entry is the certified value rounded to its decimals
        decimals = len(printed.split(".")[1])
        with working_precision(cs.prec):
            half = to_arb("h", f"0.5e-{decimals}")
            assert bool(abs(cs.constant - to_arb("p", printed)) < half)


# -- closed forms for b = 1, 2 -------------------------------------------------------------
@pytest.mark.parametrize("b", [1, 2])
def test_closed_forms(b: int) -> None:
    from derive.models.closed_forms import closed_form

    cf = closed_form(b)
    for lam in ("0.9", "0.5"):
        exact = sp.N(cf.c.subs(sp.Symbol("lam"), sp.Rational(lam)), 80)
        sol = numeric.bound(lam, b, 2, dps=30)
        cs = sol.certify(params={"lam": lam})
        assert _contains(cs.constant, str(sp.re(exact))), (b, lam)
        assert _radius_ok(cs, 30)


# -- six more points, d = 2, 3, 4 -----------------------------------------------------------
MORE = [
    ("0.7", 3, 2),
    ("0.95", 12, 2),
    ("0.8", 5, 3),
    ("0.97", 9, 3),
    ("0.6", 4, 4),
    ("0.99", 7, 4),
]


@pytest.mark.parametrize("lam,b,d", MORE)
def test_more_points(lam: str, b: int, d: int) -> None:
    dps = 30
    sol = numeric.bound(lam, b, d, dps=dps)
    ref = numeric.bound(lam, b, d, dps=dps + 20)
    cs = sol.certify(params={"lam": lam})
    assert _contains(cs.constant, ref.constant)
    assert _radius_ok(cs, dps)
    # s*, V and the diagonal of W agree with the high-precision float values to within
    # the latter's accuracy (their truncated tail levels are padded with exact zeros)
    with working_precision(cs.prec):
        tol = to_arb("t", f"1e-{dps + 10}")
        for k in range(b):
            for ball_, value in ((cs.s_star[k], ref.s_star[k]), (cs.V[k], ref.V[k])):
                assert abs(ball_ - to_arb("v", value)) < tol
            assert abs(cs.W[k, k] - to_arb("w", ref.W[k, k])) < tol
            assert cs.s_star[k].rad() < 1e-40 and cs.V[k].rad() < 1e-35
    assert set(cs.routes) == {"stein", "covariance"}


def test_truncated_solution_is_certified_on_all_levels() -> None:
    sol = numeric.bound("0.9", 40, 2, dps=30)
    assert sol.truncated_at is not None and sol.truncated_at < 40
    cs = sol.certify(params={"lam": "0.9"})
    assert cs.n == 40 and cs.P.nrows() == 40
    assert cs.decide(sol.constant, sol.digits) == "proved"
    assert any("truncated" in n for n in cs.notes)


# -- refusals --------------------------------------------------------------------------------
def test_perturbed_fixed_point_is_refused_by_krawczyk() -> None:
    sol = numeric.bound("0.9", 6, 2, dps=30)
    with mpmath.workdps(60):
        s_star = list(sol.s_star)
        s_star[2] = s_star[2] * (1 + mpmath.mpf(10) ** -12)
    sol = dataclasses.replace(sol, s_star=s_star)
    with pytest.raises(NumericalError, match="Krawczyk"):
        sol.certify(params={"lam": "0.9"})


def test_wrong_parameter_is_refused() -> None:
    sol = numeric.bound("0.9", 4, 2, dps=30)
    with pytest.raises(NumericalError, match="Krawczyk"):
        sol.certify(params={"lam": "0.9000001"})


def test_bad_input() -> None:
    sol = numeric.bound("0.9", 4, 2, dps=20)
    with pytest.raises(ParameterError, match="params"):
        sol.certify(params={"mu": "1"})
    sol = dataclasses.replace(sol, source_model=None)  # built by hand: it carries no model
    with pytest.raises(ParameterError, match="model must be given"):
        sol.certify()


# -- the referee: every digits claim on a random grid ---------------------------------------------
def test_digits_claims_on_a_random_grid() -> None:
    rng = random.Random(20240514)
    for _ in range(30):
        lam = f"{rng.uniform(0.3, 0.99):.6f}"
        b = rng.randint(1, 8)
        d = rng.randint(1, 4)
        sol = numeric.bound(lam, b, d, dps=15)
        cs = sol.certify(params={"lam": lam})
        assert cs.decide(sol.constant, sol.digits) == "proved", (lam, b, d)
        with mpmath.workdps(40):  # the value rounded to its claimed digits is consistent too
            rounded = mpmath.mpf(mpmath.nstr(sol.constant, sol.digits))
        assert cs.decide(rounded, sol.digits - 1) == "proved", (lam, b, d)


# -- models with conservation laws and other families --
def test_sir_with_a_conservation_law() -> None:
    from derive.models.sir import sir

    m = sir()
    params = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
    sol = numeric.solve(m, params, dps=30)
    ref = numeric.solve(m, params, dps=50)
    cs = sol.certify(params=params)
    assert sol.conservation and cs.conservation == sol.conservation
    assert _contains(cs.constant, ref.constant) and _radius_ok(cs, 30)
    with working_precision(cs.prec):
        assert (cs.s_star[0] + cs.s_star[1] + cs.s_star[2]).contains(1)  # S + I + R = 1
        assert (cs.V[0] + cs.V[1] + cs.V[2]).contains(0)  # V lives on the invariant plane
    for i in range(3):
        assert _contains(cs.s_star[i], ref.s_star[i]) and _contains(cs.V[i], ref.V[i])
    assert cs.decide(sol.constant, sol.digits) == "proved"


def test_jsq_solution_carries_its_model() -> None:
    from derive.models.jsq import jsq_L

    sol = numeric.solve(jsq_L(3, 6), {"alpha": "0.8", "beta": "1"}, dps=25)
    cs = sol.certify(params={"alpha": "0.8", "beta": "1"})
    assert cs.model == "jsq_L" and cs.decide(sol.constant, sol.digits) == "proved"


def test_arb_printer_functions_and_floats_are_balls() -> None:
    from flint import arb

    from derive.backends import ArbPrinter

    x, y = sp.symbols("x y")
    e = sp.Float(-0.75) * x + sp.sqrt(y) + sp.exp(x) + sp.log(y) + sp.pi + x ** sp.Rational(3, 2)
    text = ArbPrinter().doprint(e)
    assert "math." not in text and "arb((3, -2))" in text  # 0.75 = 3 * 2^-2, exactly
    with working_precision(200):
        value = eval(text, {"arb": arb, "x": arb(2), "y": arb(4)})
        ref = sp.N(e.subs({x: 2, y: 4}), 70)
        assert value.contains(to_arb("r", str(ref))) or abs(value - to_arb("r", str(ref))) < 1e-55
