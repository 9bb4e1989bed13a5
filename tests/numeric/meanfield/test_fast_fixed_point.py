"""A user's model can register its own fixed point with its fast path.

The birth-death model of ``examples/birth_death.py`` has ``x* = lam cap/(1 + lam)``;
registered as a fast-path fixed point it replaces the general ODE search in the
float64 order 2, and both give the same A, B and c2.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from derive import Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace
from mfstein.ground.fast_paths import FastPath, register, unregister
from numeric.meanfield import fast_paths
from numeric.meanfield.stationary import second_order_float64


def _solver(problem, *, dps, M):  # the first-order route is not under test
    raise AssertionError("not used")


@pytest.fixture
def registered():
    """The closed form registered as ``g(problem)``: it reads the prepared problem's
    values (parsed once, at 30 digits) and records the problems it was given."""
    calls = []

    def fixed_point(problem):
        calls.append(problem)
        lam = float(problem.values["lam"])
        return np.array([lam * 2 / (1 + lam)])

    register("bd-closed-form", FastPath(mean_field=_solver, fixed_point=fixed_point))
    yield calls
    unregister("bd-closed-form")


def birth_death(fast_path=None):
    """``examples/birth_death.py`` with cap = 2, optionally naming a fast path."""
    x, lam = sp.symbols("x lam")
    return Model(
        "birth-death",
        (x,),
        (lam,),
        [Transition((1,), lam * (2 - x), "birth"), Transition((-1,), x, "death")],
        info=ModelInfo(
            parameters=(Parameter("lam", low=0),),
            state_space=StateSpace("orthant"),
            fast_path=fast_path,
        ),
    )


def test_registered_fixed_point_replaces_the_search(registered):
    general = second_order_float64(birth_death(), {"lam": "0.5"})
    fast = second_order_float64(birth_death("bd-closed-form"), {"lam": "0.5"})
    assert registered, "the registered fixed point was not used"
    for key in ("s_star", "V", "A", "W", "B"):
        np.testing.assert_allclose(fast[key], general[key], rtol=1e-9, atol=1e-12)
    assert fast["c2"] == pytest.approx(general["c2"], rel=1e-9)


def test_the_registered_fixed_point_is_given_the_prepared_problem(registered):
    from numeric.prepared.cache import COUNTS
    from numeric.prepared.problem import prepare_problem

    model = birth_death("bd-closed-form")
    problem = prepare_problem(model, {"lam": "0.5"})
    before = COUNTS["prepared:problem"]
    second_order_float64(model, {"lam": "0.5"})
    assert registered and all(p is problem for p in registered)  # the one problem
    assert COUNTS["prepared:problem"] == before  # nothing prepared again


def test_a_fixed_point_of_model_and_params_still_works_with_a_warning():
    seen = []

    def old_form(model, params):
        seen.append(dict(params))
        lam = float(params["lam"])
        return np.array([lam * 2 / (1 + lam)])

    with pytest.warns(DeprecationWarning, match="g\\(problem\\)"):
        with pytest.warns(DeprecationWarning, match="register_fast_path is deprecated"):
            fast_paths.register_fast_path("bd-old-form", _solver, fixed_point=old_form)
    try:
        old = second_order_float64(birth_death("bd-old-form"), {"lam": "0.25"})
    finally:
        unregister("bd-old-form")
    assert seen == [{"lam": "0.25"}]
    general = second_order_float64(birth_death(), {"lam": "0.25"})
    np.testing.assert_allclose(old["s_star"], general["s_star"], rtol=1e-9, atol=1e-12)
