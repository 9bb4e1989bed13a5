"""Rates with special functions NumPy lacks (``erf``, ``gamma``): the float64
lambdified forms evaluate them (they printed ``math.erf`` into a namespace
without ``math``: an internal NameError in ``solve`` and ``simulate``), and agree
with the mpmath forms."""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from derive import Model, Transition
from derive.backends import lambdify


def test_float64_and_mpmath_forms_agree_on_special_functions() -> None:
    x, a = sp.symbols("x a")
    exprs = [
        a * (1 + sp.erf(1 - x)),
        sp.gamma(x + a),
        sp.erfc(x) * sp.loggamma(2 + x),
        sp.besselj(0, x) * sp.exp(a),
    ]
    f64 = lambdify((x, a), exprs, "numpy")
    fmp = lambdify((x, a), exprs, "mpmath")
    with mpmath.workdps(30):
        for point in ((0.3, 1.2), (1.7, 0.4)):
            want = [float(v) for v in fmp(*map(mpmath.mpf, point))]
            assert np.allclose(f64(*point), want, rtol=1e-14, atol=0)
    # vectorised over points, as NumPy code is
    xs = np.array([0.3, 1.7])
    assert np.allclose(f64(xs, 1.2)[0], [f64(v, 1.2)[0] for v in xs], rtol=1e-15)


def test_numpy_code_takes_scipys_namespace_only_when_it_names_scipy() -> None:
    import subprocess
    import sys

    from derive.backends import _NumPyLambdaPrinter

    x, a = sp.symbols("x a")
    plain = [sp.exp(-a * x) * sp.sqrt(1 + x), sp.Piecewise((x, x > a), (a**2, True))]
    special = [a * sp.erf(x), sp.gamma(x + a)]
    for exprs, needs in ((plain, False), (special, True)):
        fn = lambdify((x, a), exprs, "numpy", cse=True)
        assert ("scipy" in fn.__globals__) is needs
        # the same code in SciPy's namespace (what every function had before): the same
        # bits
        both = sp.lambdify((x, a), exprs, modules=["numpy", "scipy"],
                           printer=_NumPyLambdaPrinter, dummify=True)  # fmt: skip
        for point in ((0.3, 1.2), (1.7, 0.4), (np.array([0.1, 2.5]), 0.9)):
            for got, want in zip(fn(*point), both(*point), strict=True):
                np.testing.assert_array_equal(got, want)
    code = (
        "import sys, sympy as sp\nfrom derive.backends import lambdify\nx = sp.Symbol('x')\n"
        "print(lambdify((x,), sp.exp(x) / (1 + x), 'numpy')(0.5), 'scipy.special' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "False"  # SciPy's special functions not imported


def test_min_and_max_of_several_arguments_evaluate_in_numpy() -> None:
    """SymPy prints ``Min``/``Max`` of several arguments as ``functools.reduce(numpy.
    minimum, ...)``: the name ``functools`` is in the namespace, without SciPy's."""
    x, y, z = sp.symbols("x y z")
    fn = lambdify((x, y, z), [sp.Min(x, y, z), sp.Max(x, 2 * y), sp.Min(x, 1)], "numpy")
    assert "scipy" not in fn.__globals__
    for point in ((1.0, 3.0, 0.5), (-2.0, 0.25, 4.0), (0.7, 0.7, 0.7)):
        a, b, c = point
        assert fn(*point) == [min(a, b, c), max(a, 2 * b), min(a, 1)]
    arrays = (np.array([1.0, -2.0]), np.array([3.0, 0.25]), np.array([0.5, 4.0]))
    np.testing.assert_array_equal(fn(*arrays)[0], np.minimum.reduce(arrays))


def test_a_model_with_an_erf_rate_solves_in_float64() -> None:
    import numeric

    x, a = sp.symbols("x a")
    model = Model(
        "erf_rate", [x], [a], [Transition((1,), a * (1 + sp.erf(1 - x))), Transition((-1,), x)]
    )
    sol = numeric.solve(model, {"a": 1}, precision="float64")
    # fixed point x* = 1 (erf(0) = 0); W = Q / (-2 J) with Q = 2, J = -1 - 2/sqrt(pi)
    assert abs(float(sol.s_star[0]) - 1) < 1e-12
    assert abs(float(sol.W[0, 0]) - 1 / (1 + 2 / np.sqrt(np.pi))) < 1e-12
