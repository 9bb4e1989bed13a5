"""Warm starts of the float64 route (issue 34): a warm call on a model declaring a
unique fixed point starts from the nearest fixed point found before, by Newton's
steps alone, and answers what a cold call answers within the claimed digits; a
model without the declaration (a bistable one) keeps the cold choice."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
import sympy as sp

import numeric
from derive.model import Model, Transition
from derive.models import load_model
from numeric.meanfield import problem as pp

ROOT = Path(__file__).resolve().parents[3]
USER = f"{ROOT / 'benchmarks/models/supermarket_user.py'}:supermarket_user"
sys.path.insert(0, str(ROOT / "tests"))
from plain_models.sis import sis  # noqa: E402
from plain_models.tandem import tandem  # noqa: E402


def _declared_unique(model: Model) -> Model:
    """``model`` declaring a unique fixed point (true of the models below: SIR and SIS
    with an outside infection, the tandem line, the supermarket with replacement)."""
    info = dataclasses.replace(model.info, unique_fixed_point=True)
    return Model(model.name, model.states, model.params, model.transitions, info=info)


def _agree(warm, cold) -> None:
    """``s*``, ``V`` and ``c`` of two answers agree within their claimed errors."""
    assert warm.digits == cold.digits
    for name, a, b in (("s_star", warm.s_star, cold.s_star), ("V", warm.V, cold.V)):
        for x, y, ex, ey in zip(a, b, warm.errors[name], cold.errors[name], strict=True):
            assert abs(float(x) - float(y)) <= float(ex) + float(ey), (name, x, y)
    c = float(cold.constant)
    assert abs(float(warm.constant) - c) <= 2 * 10.0 ** -cold.digits * abs(c)


def _sir() -> Model:
    return load_model("sir")


CASES = [
    ("supermarket", lambda: load_model(USER, b=10, unique=True), "lam", ["0.9", "0.8", "0.93"], {}),
    ("sir", lambda: _declared_unique(_sir()), "beta", ["3", "2.5", "4"],
     {"gamma": "1", "rho": "0.5", "a": "0.1"}),
    ("sis", lambda: _declared_unique(_with_param(sis())), "k", ["1", "1.2", "0.8"], {}),
    ("tandem", lambda: _declared_unique(tandem()), "lam", ["0.5", "0.6", "0.45"], {}),
]


def _with_param(model: Model) -> Model:
    """The SIS of tests/plain_models with its infection rate scaled by a parameter ``k``."""
    k = sp.Symbol("k")
    tr = [Transition(model.transitions[0].jump, k * model.transitions[0].rate),
          model.transitions[1]]
    return Model("sis-k", model.states, (k,), tr)


@pytest.mark.parametrize("name,make,param,values,rest", CASES, ids=[c[0] for c in CASES])
def test_warm_start_gives_the_cold_answer(name, make, param, values, rest):
    model = make()
    assert model.info.unique_fixed_point
    start = "0.3,0.3" if name == "tandem" else None
    cold = {}
    for v in values[1:]:
        pp.forget()
        cold[v] = numeric.solve(model, {**rest, param: v}, precision="float64", start=start)
    pp.forget()
    numeric.solve(model, {**rest, param: values[0]}, precision="float64", start=start)
    before = pp.COUNTS["warm_start"]
    for v in values[1:]:
        warm = numeric.solve(model, {**rest, param: v}, precision="float64", start=start)
        _agree(warm, cold[v])
    assert pp.COUNTS["warm_start"] == before + len(values) - 1  # each warm call used it


def test_warm_start_resolves_the_small_coordinates():
    """The supermarket's far tail (s_9 near 3e-50 at lam = 0.8) is resolved to its own
    size, as the search from the start resolves it, not left at the neighbour's
    distance (where Newton's steps relative to the largest coordinate stop: a tail of
    the wrong sign, -8e-37)."""
    model = load_model(USER, b=10, unique=True)
    pp.forget()
    cold = numeric.solve(model, {"lam": "0.8"}, precision="float64")
    pp.forget()
    numeric.solve(model, {"lam": "0.9"}, precision="float64")
    before = pp.COUNTS["warm_start"]
    warm = numeric.solve(model, {"lam": "0.8"}, precision="float64")
    assert pp.COUNTS["warm_start"] == before + 1
    assert all(float(v) >= 0 for v in warm.s_star)
    tail_w, tail_c = float(warm.s_star[8]), float(cold.s_star[8])
    # the cold tail is itself resolved to about 1e-10 of its size (its search stops
    # relative to the largest coordinate too): the two agree to 1e-8 of its size
    assert 1e-51 < tail_c < 1e-49 and abs(tail_w - tail_c) <= 1e-8 * tail_c


def test_no_warm_start_without_the_declaration():
    """The same supermarket without the declaration searches from its start each time."""
    model = load_model(USER, b=10)
    numeric.solve(model, {"lam": "0.9"}, precision="float64")
    before = pp.COUNTS["warm_start"]
    numeric.solve(model, {"lam": "0.85"}, precision="float64")
    assert pp.COUNTS["warm_start"] == before


def _bistable(unique: bool) -> Model:
    """Drift ``c + 3/2 x^2 - x^3 - 0.66 x``: at ``c = 0.08`` stable fixed points 0.2 and
    0.8 (0.5 unstable), at ``c = 0.2`` only the upper one; the origin's basin holds 0.2."""
    x, c = sp.symbols("x c")
    up = c + sp.Rational(3, 2) * x**2
    down = x**3 + sp.Rational(66, 100) * x
    model = Model("bistable", (x,), (c,), [Transition((1,), up), Transition((-1,), down)])
    return _declared_unique(model) if unique else model


def test_bistable_model_keeps_the_cold_choice():
    model = _bistable(unique=False)
    pp.forget()
    cold = numeric.solve(model, {"c": "0.08"}, precision="float64")
    assert abs(float(cold.s_star[0]) - 0.2) < 1e-12  # the origin's basin
    pp.forget()
    high = numeric.solve(model, {"c": "0.2"}, precision="float64")
    assert float(high.s_star[0]) > 0.8
    before = pp.COUNTS["warm_start"]
    warm = numeric.solve(model, {"c": "0.08"}, precision="float64")
    assert pp.COUNTS["warm_start"] == before
    assert float(warm.s_star[0]) == float(cold.s_star[0])
    # the check of the check: a (false) declaration would let Newton from the upper
    # point answer the upper fixed point, which is why the declaration is required
    wrong = _bistable(unique=True)
    numeric.solve(wrong, {"c": "0.2"}, precision="float64")
    upper = numeric.solve(wrong, {"c": "0.08"}, precision="float64")
    assert abs(float(upper.s_star[0]) - 0.8) < 1e-12


def test_library_sir_declares_its_unique_fixed_point_and_has_one() -> None:
    """The library SIR declares ``unique_fixed_point`` (derive/models/sir.py proves it);
    checked here by another route: on a grid of parameters (beta = 0 included) the
    fixed-point quadratic in ``I`` has exactly one root in ``[0, 1/k]``, and it is the
    float64 route's ``I*``."""
    import numpy as np

    model = _sir()
    assert model.info.unique_fixed_point
    for beta in ("0", "0.5", "3", "40"):
        for gamma, rho, a in (("1", "0.5", "0.1"), ("0.2", "3", "0.01"), ("5", "5", "2")):
            b, g, r, a_ = float(beta), float(gamma), float(rho), float(a)
            k = 1 + g / r
            roots = np.roots([-b * k, b - a_ * k - g, a_]) if b else np.array([a_ / (a_ * k + g)])
            inside = [x.real for x in roots if abs(x.imag) < 1e-12 and -1e-12 <= x.real <= 1 / k]
            assert len(inside) == 1, (beta, gamma, rho, a, roots)
            params = {"beta": beta, "gamma": gamma, "rho": rho, "a": a}
            sol = numeric.solve(model, params, precision="float64")
            assert abs(float(sol.s_star[1]) - inside[0]) <= 1e-9 * max(inside[0], 1e-300)
