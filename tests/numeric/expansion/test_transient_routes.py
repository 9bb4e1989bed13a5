"""The float64 route (SciPy solve_ivp) against the mpmath route (Taylor series
at two working precisions), and the API's refusals."""

from __future__ import annotations

import numpy as np
import pytest

from derive.models import load_model
from mfstein.ground.errors import ParameterError
from numeric.expansion.transient import transient

SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
TIMES = [0.0, 0.5, 2.0, 5.0]


def test_float64_and_mpmath_agree() -> None:
    model = load_model("sir")
    mp = transient(model, SIR, times=TIMES, start="0.75,0.25,0", order=1, dps=15)
    assert mp.route == "mpmath" and mp.digits == 15
    for method in ("auto", "BDF"):
        fl = transient(
            model,
            SIR,
            times=TIMES,
            start="0.75,0.25,0",
            order=1,
            rtol=1e-12,
            atol=1e-14,
            integrator=method,
        )
        for name in ("x", "V", "W"):
            a = getattr(fl, name)
            b = getattr(mp, name).astype(float)
            assert a.shape == b.shape
            assert np.max(np.abs(a - b)) < 1e-10, (method, name, np.max(np.abs(a - b)))


def test_order0_routes_agree_on_a_model_without_laws() -> None:
    model = load_model("supermarket", b=2)
    mp = transient(model, {"lam": "0.8"}, times=TIMES, start=[0.5, 0.25], order=0, dps=20)
    fl = transient(
        model, {"lam": "0.8"}, times=TIMES, start=[0.5, 0.25], order=0, rtol=1e-12, atol=1e-14
    )
    assert mp.V is None and fl.V is None
    assert np.max(np.abs(fl.x - mp.x.astype(float))) < 1e-10


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"order": 3}, "order must be 0, 1 or 2"),
        ({"dps": 2}, "dps must be an integer >= 5"),
        ({"times": [1.0, 0.5]}, "non-decreasing"),
        ({"times": [-1.0]}, ">= 0"),
        ({"start": [0.5, 0.6, 0.1]}, "state space"),
        ({"start": [0.5, 0.5]}, "must have 3 coordinates"),
        ({"integrator": "Euler"}, "integrator must be one of"),
        ({"precision": "double"}, "precision must be .dps. or .float64."),
        ({"params": {**SIR, "zeta": "1"}}, "zeta is not a parameter"),
    ],
)
def test_bad_input_is_refused(kwargs: dict, words: str) -> None:
    args = {"params": SIR, "start": [0.75, 0.25, 0.0], "times": [1.0]}
    args.update(kwargs)
    model = load_model("sir")
    with pytest.raises(ParameterError, match=words):
        transient(
            model, args.pop("params"), times=args.pop("times"), start=args.pop("start"), **args
        )


def test_mpmath_route_refuses_large_models() -> None:
    model = load_model("supermarket", b=8)
    with pytest.raises(ParameterError, match="at most 6 free coordinates"):
        transient(model, {"lam": "0.5"}, times=[1.0], start=None, dps=15)
    with pytest.raises(ParameterError, match="of order 2 handles at most 3 free coordinates"):
        transient(
            load_model("supermarket", b=4), {"lam": "0.5"}, times=[1.0], start=None, order=2, dps=15
        )
