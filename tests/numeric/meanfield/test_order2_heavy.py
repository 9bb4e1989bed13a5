"""Order 2 near heavy traffic on the truncated route (issue 36): it answers in
seconds, with a bounded number of order-2 solves, and its digits are those of
the whole model solved without truncation at twice the precision."""

from __future__ import annotations

import time

import mpmath
import pytest

import numeric
import numeric.meanfield.stationary as stationary
import numeric.meanfield.truncation as truncation
from derive.models.supermarket import supermarket
from mfstein.ground.errors import ParameterError
from mfstein.ground.limits import TIME_BUDGET_SECONDS, order2_seconds
from numeric.meanfield.truncation import FIRST_RINGS, MAX_RINGS, MIN_B


def test_truncated_order_2_matches_the_whole_model_at_twice_the_precision(monkeypatch) -> None:
    calls: list[int] = []
    real = stationary.second_order

    def counted(model, *args, **kwargs):
        calls.append(model.n)
        return real(model, *args, **kwargs)

    decided: list[int] = []
    real_negligible = truncation._negligible_for

    def negligible(problem, *args, **kwargs):
        decided.append(problem.model.n)
        return real_negligible(problem, *args, **kwargs)

    monkeypatch.setattr(stationary, "second_order", counted)
    monkeypatch.setattr(truncation, "_negligible_for", negligible)
    # 16 or more levels kept at order 2: before issue 36 each restricted model was
    # truncated again, growing its own rings inside every ring (minutes at dps 30)
    b, lam, dps = 20, "0.99", 12
    sol = numeric.solve(supermarket(b=b), {"lam": lam}, dps=dps, order=2)
    assert decided == [b], decided  # the kept set is chosen once, for the whole model
    assert max(calls) >= MIN_B, calls
    assert 1 <= len(calls) <= 1 + MAX_RINGS, calls
    assert all(k < b for k in calls), calls
    assert any("order 2:" in note for note in sol.notes)
    monkeypatch.undo()
    # independent route: the whole model with buffer MIN_B - 1 (never truncated) at
    # twice the precision; the levels above it hold less than 1e-140 at lam = 0.99
    whole = numeric.solve(supermarket(b=MIN_B - 1), {"lam": lam}, dps=2 * dps, order=2)
    assert sol.digits2 >= dps
    with mpmath.workdps(2 * dps):
        shown = mpmath.mpf(mpmath.nstr(sol.c2, sol.digits2))
        assert abs(shown - whole.c2) <= abs(whole.c2) * mpmath.mpf(10) ** (1 - sol.digits2)
        # norm-wise: an entry far below the largest carries the same absolute error
        # (the buffer MIN_B - 1 itself moves its last levels by ~1e-46)
        floor = max(abs(v) for v in whole.A) * mpmath.mpf(10) ** -dps
        for k in range(MIN_B - 1):
            assert abs(sol.A[k] - whole.A[k]) <= sol.errors["A"][k] + floor, k
    assert FIRST_RINGS >= 1


def test_an_order_2_expansion_past_the_time_budget_is_refused_before_any_work() -> None:
    assert order2_seconds(15, 6000) > TIME_BUDGET_SECONDS > order2_seconds(15, 30)
    start = time.process_time()
    with pytest.raises(ParameterError, match=r"order-2 expansion .* would take about"):
        numeric.solve(supermarket(b=15), {"lam": "0.9"}, dps=6000, order=2)
    assert time.process_time() - start < 5  # refused before the first-order work at dps 6000
