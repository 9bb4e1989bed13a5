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
from numeric.meanfield import fast_paths
from numeric.meanfield.stationary import second_order_float64


@pytest.fixture
def registered():
    calls = []

    def fixed_point(model, params):
        calls.append(params)
        lam = float(params["lam"])
        return np.array([lam * 2 / (1 + lam)])

    def solver(model, params, *, dps, M):  # the first-order route is not under test
        raise AssertionError("not used")

    fast_paths.register_fast_path("bd-closed-form", solver, fixed_point=fixed_point)
    yield calls
    fast_paths.FAST_PATHS.pop("bd-closed-form")
    fast_paths.FAST_FIXED_POINTS.pop("bd-closed-form")


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
