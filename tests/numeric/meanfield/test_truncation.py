"""The general route at working precision on the coordinates that matter
(:mod:`numeric.meanfield.truncation`): same digits as the whole model solved in full."""

from __future__ import annotations

from pathlib import Path

import mpmath

import numeric
from derive.models import load_model
from numeric.expansion.stationary import second_order
from numeric.precision import agreeing_digits

USER = str(Path(__file__).resolve().parents[3] / "benchmarks/models/supermarket_user.py")


def test_user_model_30_digits_on_the_kept_levels():
    m = load_model(f"{USER}:supermarket_user", b=60)
    r = numeric.solve(m, {"lam": "0.9"}, dps=30)
    fast = numeric.bound("0.9", 60, 2, dps=30)  # the supermarket's own tridiagonal route
    assert r.truncated_at is not None and r.truncated_at < 20 and "negligible" in r.note
    assert r.digits >= 30 and agreeing_digits(fast.constant, r.constant) >= 30
    with mpmath.workdps(40):
        for got, want, err in zip(r.V, fast.V, r.errors["V"], strict=True):
            assert abs(got - want) <= err + mpmath.mpf(10) ** -45


def test_order2_beyond_the_dense_limit():
    """b = 130 > 120 free coordinates is answered at order 2, and equals the
    order 2 of the 25-level model solved in full (its levels beyond 10 carry
    less than 1e-40 at lam = 0.9)."""
    m = load_model(f"{USER}:supermarket_user", b=130)
    r = numeric.solve(m, {"lam": "0.9"}, dps=20, order=2)
    full = second_order(load_model("supermarket", b=25), {"lam": "0.9"}, dps=20)
    assert r.digits2 >= 20 and agreeing_digits(full.c2, r.c2) >= 20
    assert len(r.A) == 130 and all(v == 0 for v in r.A[40:])
