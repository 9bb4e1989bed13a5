"""derive.backends.lambdify for NumPy with the module ``numpy`` alone in its namespace
(no ``from numpy import *``, which imports NumPy's lazy submodules), and SymPy's full
``"numpy"`` namespace whenever a printed name would mean something else there."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import sympy as sp
from deadlines import deadline

from derive.backends import _reads_as_with_numpy, lambdify

x, y, q = sp.symbols("x y q")
#: Rates a researcher writes: powers, Min/Max (printed through functools.reduce),
#: Piecewise (numpy.select), Heaviside (NumPy's translation), exp/log/sqrt, Abs.
EXPRESSIONS = [
    q * x * y + 3 * y**2 / (1 + x),
    sp.Min(x, y, sp.Rational(1, 2)) + sp.Max(x, q),
    sp.Piecewise((x, x > y), (y**2, True)),
    sp.Heaviside(x - y) + x,
    sp.exp(-q * x) * sp.log(1 + y) + sp.sqrt(y),
    sp.Integer(0) * x + 2,
]
#: SymPy prints Abs as ``abs(...)``, which its ``from numpy import *`` binds to NumPy's:
#: bound so here too.
ABS = [sp.Abs(x - q) + y, sp.Min(sp.Abs(x), y)]
POINTS = np.array([[0.3, 0.2, 2.0], [0.5, 0.5, 1.5], [0.0, 1.0, 2.0], [0.9, 0.1, 0.25]])


def test_rates_run_on_numpy_alone_with_sympys_values():
    for e in EXPRESSIONS + ABS:
        fn = lambdify((x, y, q), e, "numpy")
        assert "f2py" not in fn.__globals__ and "numpy" in fn.__globals__  # no star import
        want = sp.lambdify((x, y, q), e, "numpy")
        assert fn.__globals__.get("abs") is want.__globals__["abs"] is np.abs
        for p in POINTS:
            got, ref = fn(*p), want(*p)
            assert np.array_equal(np.asarray(got), np.asarray(ref)), (e, p, got, ref)


def test_a_name_the_star_import_rebinds_keeps_sympys_namespace():
    """``max`` is a builtin and, after SymPy's ``from numpy import *``, NumPy's ``max``:
    code reading it must not run on the lighter namespace."""
    plain = eval("lambda a: numpy.exp(a) + I.imag", {"numpy": np, "I": 1j})
    assert _reads_as_with_numpy(plain)
    shadowed = eval("lambda a: max(a, 1.0)", {"numpy": np})  # max not bound as NumPy's
    assert not _reads_as_with_numpy(shadowed)
    # a printed name that only a star import binds
    assert not _reads_as_with_numpy(eval("lambda a: hypot(a, 1.0)", {"numpy": np}))
    nested = eval("lambda a: [sum(r) for r in a]", {"numpy": np})  # in a nested code object
    assert not _reads_as_with_numpy(nested)
    unknown = eval("lambda a: gamma(a)", {"numpy": np})  # bound only by a star import
    assert not _reads_as_with_numpy(unknown)


def test_a_lambdified_rate_imports_no_lazy_numpy_submodule():
    code = (
        "import sys, sympy as sp\n"
        "from derive.backends import lambdify\n"
        "x, y = sp.symbols('x y')\n"
        "f = lambdify((x, y), sp.Min(x, y) * sp.exp(-x) + sp.Piecewise((x, x > y), (y, True)),"
        " 'numpy')\n"
        "assert f(0.5, 0.25) > 0\n"
        "lazy = ('numpy.f2py', 'numpy.testing', 'numpy.fft')\n"
        "print(sorted(m for m in lazy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=deadline(120)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
