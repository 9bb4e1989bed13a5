"""Issue 36: every documented form of an observable works in every back end (the
expansion's balls, the exact chain's arrays, the simulator's grids), a sum of
thousands of terms works, and what cannot be evaluated is refused at parse time
in one sentence."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from derive.models import load_model
from derive.observables import FUNCTIONS, MAX_TERM_OPERATORS, observable
from mfstein.ground.errors import ParameterError

SIR = {"beta": "2.5", "gamma": "1", "rho": "0.5", "a": "0.05"}
#: One observable per documented function (derive.observables.FUNCTIONS).
FORMS = {
    "sqrt": "sqrt(I) + S",
    "exp": "exp(I) + S",
    "log": "log(S + 1)",
    "Abs": "Abs(I - 0.2)",
    "abs": "abs(S - 0.5)",
    "Min": "Min(I, 0.2)",
    "Max": "Max(S, 0.25)",
}


def test_every_documented_function_has_a_form() -> None:
    assert set(FORMS) == set(FUNCTIONS)


@pytest.fixture(scope="module")
def solved():
    from numeric.exact import solve as exact_solve
    from numeric.meanfield.entry import solve

    model = load_model("sir")
    return model, solve(model, SIR, dps=12, order=2), exact_solve(model, SIR, N=8)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_documented_function_in_every_back_end(solved, name: str) -> None:
    """The expansion (derivatives to order four, on balls), the exact chain (float64
    and longdouble arrays) and the simulator's parse: no printer error."""
    from numeric.meanfield.observables import expand
    from sim.observables import prepare

    model, sol, chain = solved
    g = FORMS[name]
    e = expand(sol, model, g)
    assert e.g2 is not None and e.digits["g0"] >= 10
    x = chain.expect(g, model)
    X = np.asarray(chain.state_array, dtype=float) / 8
    S, I = X[:, 0], X[:, 1]
    direct = {
        "sqrt": np.sqrt(I) + S,
        "exp": np.exp(I) + S,
        "log": np.log(S + 1),
        "Abs": np.abs(I - 0.2),
        "abs": np.abs(S - 0.5),
        "Min": np.minimum(I, 0.2),
        "Max": np.maximum(S, 0.25),
    }[name]
    assert x.mean == pytest.approx(float(np.asarray(chain.pi) @ direct), rel=1e-13)
    assert x.digits == 10
    # the simulator compiles the same expression into its event loop
    assert prepare(model, g, SIR).expr == observable(model, g).expr


def test_every_form_compiled_into_the_simulator_is_the_tree_walk(solved) -> None:
    """The event loop's observe_into (printed code, sim.generic_kernels) against the
    tree walk of derive.observables.evaluate on every state of the exact chain."""
    from derive.observables import evaluate
    from sim.generic_kernels import chain_module

    model, _, chain = solved
    exprs = [observable(model, FORMS[k]).expr for k in sorted(FORMS)]
    _, mod = chain_module(model, exprs)
    assert mod.N_OBS == len(exprs)
    X = np.asarray(chain.state_array, dtype=float) / 8
    p = np.array([float(sp.Rational(SIR[str(q)])) for q in model.params])
    compiled = np.array([mod.observe_into(s.copy(), p, np.empty(len(exprs))) for s in X])
    walked = np.column_stack([evaluate(model, e, SIR)(X) for e in exprs])
    np.testing.assert_allclose(compiled, walked, rtol=1e-14, atol=1e-15)


def test_decimals_are_the_rationals_they_denote() -> None:
    model = load_model("sir")
    I = model.states[1]
    assert observable(model, "Min(I, 0.2)").expr == sp.Min(I, sp.Rational(1, 5))


def test_sum_of_3000_terms_works() -> None:
    """Python's parser recursed once per operator of the chain: a RecursionError."""
    from derive.observables import evaluate

    model = load_model("sir")
    terms = [(i % 7 + 1, i % 5, (i // 5) % 9) for i in range(3000)]
    text = "+".join(f"{c}*S**{p}*I**{q}" for c, p, q in terms)
    g = observable(model, text)
    s, i = 0.6, 0.3
    value = evaluate(model, g.expr, {}, "numpy")(np.array([[s, i, 0.1]]))[0]
    assert value == pytest.approx(math.fsum(c * s**p * i**q for c, p, q in terms), rel=1e-13)


def test_long_sum_with_signs_and_parentheses_splits_correctly() -> None:
    model = load_model("sir")
    S, I, R = model.states
    text = "-S*(I+R)**2 - 2e-1*I + (S-I)/2 - -R + 3**-1*S"
    expected = -S * (I + R) ** 2 - sp.Rational(1, 5) * I + (S - I) / 2 + R + S / 3
    assert sp.simplify(observable(model, text).expr - expected) == 0


def test_overlong_term_is_refused_with_its_limit() -> None:
    model = load_model("sir")
    text = "*".join(["S"] * (MAX_TERM_OPERATORS + 2))
    with pytest.raises(ParameterError, match=rf"more than {MAX_TERM_OPERATORS} operators"):
        observable(model, text)


def test_function_no_back_end_evaluates_is_refused_at_parse_time() -> None:
    model = load_model("sir")
    with pytest.raises(ParameterError, match=r"uses sin; an observable may only use"):
        observable(model, sp.sin(model.states[0]))


def test_kink_inside_the_error_box_costs_the_digits_not_a_crash(solved) -> None:
    """``|S - c|`` with ``c = S*`` to 30 digits: the kink lies within the error of
    ``s*`` at 12 digits, so the derivatives' balls straddle it (``sign`` is
    ``[-1, 1]``, ``DiracDelta`` unbounded): the terms that need them earn no digit."""
    from numeric.meanfield.observables import expand

    model, sol, _ = solved
    with mpmath.workdps(40):
        c = mpmath.nstr(sol.s_star[0], 30)
    e = expand(sol, model, f"Abs(S - {c})")
    assert e.digits["g1"] == 0 and e.digits["g2"] == 0 and e.text("g2") is None
    assert e.error("g0") < mpmath.mpf(10) ** -10
