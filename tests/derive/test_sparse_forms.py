"""derive.sparse: lists that repeat a few rate forms are evaluated form by form, and
agree with the one-function lambdified route and with SymPy itself."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from derive.models import load_model
from derive.sparse import FORMS_MIN, _by_forms, _repeats, sparse_rates

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "models"))
from supermarket_user import supermarket_user


@pytest.mark.parametrize("what", ["rates", "grad", "hess"])
def test_forms_agree_with_one_lambdified_function_and_sympy(what) -> None:
    model = supermarket_user(40)
    sr = sparse_rates(model)
    groups = sr._forms[what]
    n = len(sr._exprs[what])
    assert n >= FORMS_MIN and _repeats(groups)  # 3 to 6 forms for 79 to 158 entries
    rng = np.random.default_rng(1)
    s = np.sort(rng.uniform(0.01, 0.99, model.n))[::-1]
    p = np.array([0.87])
    by_forms = sr.evaluator(what)(s, p)
    whole = np.array(
        sp.lambdify(sr._symbols, sr._exprs[what], modules="numpy")(*s, *p), dtype=float
    ).reshape(n)
    np.testing.assert_allclose(by_forms, whole, rtol=1e-14, atol=1e-15)
    # and against SymPy at a few entries, exactly in rationals
    point = {x: sp.Rational(float(v)) for x, v in zip(model.states, s, strict=True)}
    point[model.params[0]] = sp.Rational(0.87)
    for m in (0, n // 2, n - 1):
        exact = float(sr._exprs[what][m].xreplace(point))
        assert by_forms[m] == pytest.approx(exact, rel=1e-14, abs=1e-15), m


def test_forms_are_used_only_where_forms_repeat() -> None:
    assert not _repeats(sparse_rates(load_model("sir"))._forms["rates"])  # 3 rates
    assert _repeats(sparse_rates(supermarket_user(40))._forms["rates"])


def test_a_form_without_states_and_a_constant_broadcast() -> None:
    x = sp.Symbol("x")
    c = sp.Symbol("c")
    groups = sparse_rates(supermarket_user(40))._forms["rates"]
    g = groups[0]
    # one form applied to its instances gives an array of their values, and a
    # state-free form (a parameter) fills every one of its positions
    const = type(g)(c * 2, (), np.array([0, 2]), np.zeros((2, 0), dtype=np.int64))
    lin = type(g)(3 * x, (x,), np.array([1]), np.array([[1]]))
    fn = _by_forms([const, lin], 3, (c,))
    np.testing.assert_array_equal(fn(np.array([0.5, 0.25]), np.array([1.5])), [3.0, 0.75, 3.0])


def test_common_subexpressions_never_read_as_absent_states() -> None:
    """States named ``x0, x1, ...`` absent from a list (bike sharing's Hessians are
    constant in the states) are not SymPy's cse temporaries: the one-function route
    gives SymPy's values (it returned the states' values in their place)."""
    from derive.backends import lambdify

    model = load_model("bike_sharing", K=4)
    sr = sparse_rates(model)
    rng = np.random.default_rng(2)
    s, p = rng.uniform(0.1, 0.9, model.n), np.array([1.0, 1.3, 2.5])
    point = {**dict(zip(model.states, s, strict=True)), **dict(zip(model.params, p, strict=True))}
    for what in ("rates", "grad", "hess"):
        exprs = sr._exprs[what]
        want = [float(e.xreplace(point)) for e in exprs]
        np.testing.assert_allclose(sr.evaluator(what)(s, p), want, rtol=1e-14, atol=1e-15)
    x0, y = sp.symbols("x0 y")
    fn = lambdify((x0, y), [2 * y + 1, (2 * y + 1) ** 2], "numpy", cse=True)
    assert fn(5.0, 1.0) == [3.0, 9.0]
