"""A supermarket member of another buffer is built once per (model, buffer) and shared.

:func:`derive.models.supermarket.with_buffer` keeps the member it built by the
model's identity, so that what later layers keep by the member's identity -- its
prepared problem and float64 fixed point (:mod:`numeric.prepared`) -- serves the
next call: the float64 order 2 of a member whose tail is negligible
(:mod:`mfstein.families.supermarket.tail`) prepares the smaller member once, not at
every call (issue 31, the order-2 row of ``benchmarks/bench_order2_base.py``).
"""

from __future__ import annotations

import numpy as np

from derive.models import load_model
from derive.models.supermarket import supermarket, with_buffer
from numeric.meanfield.stationary import second_order_float64
from numeric.prepared.cache import COUNTS


def test_with_buffer_shares_one_member_per_model_and_buffer():
    model = load_model("supermarket", b=6, d=3)
    member = with_buffer(model, 4)
    assert with_buffer(model, 4) is member and member.n == 4
    assert with_buffer(model, 5) is not member and with_buffer(model, 5).n == 5
    # another model object (the same key) gets a member of its own, equal to the first
    twin = supermarket(6, 3)
    assert twin is not model and twin.key == model.key
    assert with_buffer(twin, 4) is not member and with_buffer(twin, 4).key == member.key


def test_the_order_2_of_a_negligible_tail_prepares_the_smaller_member_once():
    model, params = load_model("supermarket", b=10), {"lam": "0.61"}
    first = second_order_float64(model, params)
    assert first["truncated_at"] < 10  # the tail was cut: a smaller member was solved
    made = COUNTS["prepared:problem"]
    again = second_order_float64(model, params)
    assert COUNTS["prepared:problem"] == made  # neither problem prepared again
    for name in ("s_star", "V", "A", "W", "B"):
        assert np.array_equal(first[name], again[name])
    assert (first["c"], first["c2"]) == (again["c"], again["c2"])
