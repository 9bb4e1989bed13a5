"""The float64 route (``precision="float64"``) of any model: every digit it claims
holds against the 30-digit general route, on models with and without
conservation laws, with negligible coordinates dropped or not."""

from __future__ import annotations

from pathlib import Path

import mpmath
import pytest
from in_process import run_main

import numeric
from derive.models import load_model
from mfstein.ground.errors import ParameterError

ROOT = Path(__file__).resolve().parents[3]
USER = str(ROOT / "benchmarks/models/supermarket_user.py")

CASES = [
    ("sir", {}, {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}),
    ("bike_sharing", {}, {"lam": "1", "mu": "1", "s": "2.5"}),
    ("cache_random", {"n": 4, "m": 2}, {}),
    (f"{USER}:supermarket_user", {"b": 30}, {"lam": "0.9"}),
    ("examples/birth_death.py:birth_death", {"cap": 2}, {"lam": "0.5"}),
]


def _model(spec, opts, params):
    return load_model(spec, **opts), params


def _rel_err(a, b):
    return abs(mpmath.mpf(a) - b) / max(abs(b), mpmath.mpf(10) ** -300)


@pytest.mark.parametrize("spec,opts,params", CASES, ids=[c[0].split(":")[-1] for c in CASES])
def test_digits_hold_against_30_digits(spec, opts, params):
    m, params = _model(spec, opts, params)
    r64 = numeric.solve(m, params, precision="float64")
    ref = numeric.solve(m, params, dps=30, route="general")
    assert r64.digits >= 8, r64.notes
    assert _rel_err(r64.constant, ref.constant) <= mpmath.mpf(10) ** -r64.digits
    for name, got, want in (("s_star", r64.s_star, ref.s_star), ("V", r64.V, ref.V)):
        errs = r64.errors[name]
        for g, w, e in zip(got, want, errs, strict=True):
            assert abs(g - w) <= e, (name, g, w, e)
    b = m.n
    for i in range(b):
        for j in range(b):
            assert abs(r64.W[i, j] - ref.W[i, j]) <= r64.errors["W"][i * b + j]


def test_negligible_levels_dropped_and_reported():
    m = load_model(f"{USER}:supermarket_user", b=60)
    r = numeric.solve(m, {"lam": "0.9"}, precision="float64")
    fast = numeric.bound("0.9", 60, 2, dps=30)
    assert r.truncated_at is not None and r.truncated_at < 20
    assert _rel_err(r.constant, fast.constant) <= mpmath.mpf(10) ** -r.digits
    assert all(v == 0 for v in r.V[r.truncated_at :])


def test_order2_float64_against_30_digits():
    m = load_model(f"{USER}:supermarket_user", b=40)
    r = numeric.solve(m, {"lam": "0.9"}, precision="float64", order=2)
    ref = numeric.bound("0.9", 40, 2, dps=30, order=2)
    assert r.digits2 >= 8
    assert _rel_err(r.c2, ref.c2) <= mpmath.mpf(10) ** -r.digits2
    for g, w, e in zip(r.A, ref.A, r.errors["A"], strict=True):
        assert abs(g - w) <= e


def test_precision_checked():
    m = load_model("examples/birth_death.py:birth_death", cap=2)
    with pytest.raises(ParameterError, match="precision must be"):
        numeric.solve(m, {"lam": "0.5"}, precision="float32")


def test_cli_float64_json_and_bad_input(capsys):
    """``mfstein solve --float64``, run in this process (:func:`in_process.run_main`)."""
    import json

    base = ["solve", "--model", f"{USER}:supermarket_user"]
    argv = [*base, "--param", "b=50", "--param", "lam=0.9", "--float64", "--json"]
    out = run_main(argv, ROOT, capsys, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    fast = numeric.bound("0.9", 50, 2, dps=30)
    assert got["digits"] >= 8
    # printed rounded to the digits it claims (docs/design.md, "Printed digits"): off the
    # 30-digit value by the claim (10^-digits relative, held by the value itself in
    # test_digits_hold_against_30_digits) plus at most half a unit of its last digit
    printed = mpmath.mpf(got["constant"])
    half_unit = mpmath.mpf(10) ** (int(mpmath.floor(mpmath.log10(printed))) - got["digits"] + 1) / 2
    claim = mpmath.mpf(10) ** -got["digits"] * abs(fast.constant)
    assert abs(printed - fast.constant) <= half_unit + claim
    bad = run_main([*base, "--param", "b=50", "--param", "lam=1.5", "--float64"], ROOT, capsys, 120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "lam" in bad.stderr


def test_small_models_compile_nothing(monkeypatch):
    """A small model's first answer, 30 digits and float64 to order 2, asks numba for
    no generated kernel and no third-moment kernel (docs/design.md, "Compiling")."""
    from derive.model import Model
    from numeric.meanfield import stationary

    kernels = Model.kernels

    def no_numba(self, backend="numba", *args, **kwargs):
        assert backend != "numba", "a small model compiled numba kernels"
        return kernels(self, backend, *args, **kwargs)

    def no_compile():
        raise AssertionError("the third-moment kernel was compiled for a small model")

    monkeypatch.setattr(Model, "kernels", no_numba)
    monkeypatch.setattr(stationary, "_compiled_triangular", no_compile)
    m, params = _model(*CASES[0])
    r = numeric.solve(m, params, dps=30)
    r64 = numeric.solve(m, params, precision="float64", order=2)
    assert r.digits == 30 and r64.digits2 >= 8
    assert _rel_err(r64.constant, r.constant) < mpmath.mpf(10) ** -r64.digits


def test_accuracy_note_prints_the_agreement_of_the_two_traces_in_digits():
    """The note states how many digits ``tr(MW)`` and ``tr(PQ)`` share (not their
    difference, whose digits are round-off), the number the digits estimate reads."""
    from mfstein.ground.display import agreement_digits

    m = load_model(f"{USER}:supermarket_user", b=10)
    for lam in ("0.5", "0.9"):
        r = numeric.solve(m, {"lam": lam}, precision="float64")
        c_w, c_p = (float(r.routes[k]) for k in ("float64:covariance", "float64:stein"))
        n = agreement_digits(c_w, c_p)
        assert f"(tr(MW) and tr(PQ) agree to {n} digits)." in r.notes[0]
        assert r.digits <= n <= 15  # the estimate holds the claim below the agreement
        assert "tr(MW) - tr(PQ)" not in r.to_json()


def test_two_norm_of_a_symmetric_matrix_by_its_eigenvalues():
    """``||A||_2`` of the accuracy estimate: by the eigenvalues of a symmetric ``A``
    (``P`` of the Lyapunov equation), by the singular values otherwise; the two agree."""
    import numpy as np

    from numeric.meanfield.float64_point import _norm2

    rng = np.random.default_rng(3)
    for n in (1, 4, 10):
        A = rng.standard_normal((n, n))
        S = A @ A.T - 0.5 * np.eye(n)  # symmetric, possibly indefinite
        ref = float(np.linalg.norm(S, 2))
        assert abs(_norm2(S, symmetric=True) - ref) <= 1e-14 * ref
        assert _norm2(A, symmetric=False) == float(np.linalg.svd(A, compute_uv=False).max())
    assert _norm2(np.diag([-3.0, 2.0]), symmetric=True) == 3.0  # the largest |eigenvalue|


@pytest.mark.parametrize("start,expected", [("0.29", "0.2"), ("0.31", "1"), ("2", "1")])
def test_search_keeps_the_basin_of_the_start(start, expected):
    """Schloegl-like birth-death drift ``-(x - 0.2)(x - 0.3)(x - 1)``: stable points 0.2
    and 1, the unstable 0.3 between them; both routes' searches (pseudo-transient
    continuation first) end in the start's basin, the other point is reported."""
    import sympy as sp

    from derive.model import Model, Transition

    x = sp.Symbol("x")
    up = Transition((1,), sp.Rational(3, 2) * x**2 + sp.Rational(6, 100))
    down = Transition((-1,), x**3 + sp.Rational(56, 100) * x)
    m = Model("schloegl", (x,), (), [up, down])
    r = numeric.solve(m, {}, dps=20, start=[start])
    r64 = numeric.solve(m, {}, precision="float64", start=[start])
    with mpmath.workdps(30):
        assert abs(r.s_star[0] - mpmath.mpf(expected)) < 1e-18
    assert abs(float(r64.s_star[0]) - float(expected)) < 1e-12
    other = round(1.2 - float(expected), 9)
    assert [round(v[0], 9) for v in r.fixed_points] == [other]


ORDER2_CASES = [CASES[0], CASES[2], CASES[4]]


@pytest.mark.parametrize(
    "spec,opts,params", ORDER2_CASES, ids=[c[0].split(":")[-1] for c in ORDER2_CASES]
)
def test_order2_json_entries_hold_against_30_digits(spec, opts, params):
    """The float64 order 2 prints A and B with an absolute error (``to_dict``); every
    printed entry is within it of the 30-digit order-2 answer."""
    m, params = _model(spec, opts, params)
    d = numeric.solve(m, params, precision="float64", order=2).to_dict()
    ref = numeric.solve(m, params, dps=30, order=2, route="general")
    for name in ("A", "B"):
        err = mpmath.mpf(d[f"{name}_abs_error"])
        printed = d[name] if name == "A" else [x for row in d[name] for x in row]
        exact = getattr(ref, name)
        if isinstance(exact, mpmath.matrix):
            exact = [exact[i, j] for i in range(exact.rows) for j in range(exact.cols)]
        assert len(printed) == len(exact)
        worst = max(abs(mpmath.mpf(p) - e) for p, e in zip(printed, exact, strict=True))
        assert worst <= err, (name, worst, err)
