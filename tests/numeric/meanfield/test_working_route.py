"""The working-precision route reads the prepared problem (issue 31): the model-level
pieces (reduced model, ``q = C s0``, the stability scale) are the prepared problem's,
the route's own state (its accepted float64 point, the objects per precision) is one
frozen record, and order 2 after order 1 -- or a warm call -- makes no second record,
search or truncation rule."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import numeric
import numeric.meanfield.stationary as stationary
import numeric.meanfield.truncation as truncation
from derive.models import load_model
from derive.models.supermarket import supermarket
from numeric.meanfield import problem as pp
from numeric.meanfield.working_route import working_route
from numeric.prepared.problem import prepare_problem

SIR = {"gamma": "1", "rho": "0.5", "a": "0.1"}
#: A symmetric observable of exact entries on SIR's three coordinates.
M3 = [["2", "1/2", "0"], ["1/2", "1", "0"], ["0", "0", "1"]]


def _new(before: dict[str, int], kind: str) -> int:
    return pp.COUNTS[kind] - before.get(kind, 0)


def test_the_prepared_problem_holds_the_reduced_model_q_and_the_scale() -> None:
    """One reduced model per model, shared by two parameter points; ``q64`` is ``C s0``
    and ``jscale`` the largest ``|J_r|`` at the start, both checked against the
    working-precision kernels."""
    m = load_model("sir")
    one = prepare_problem(m, {**SIR, "beta": "2.2"})
    two = prepare_problem(m, {**SIR, "beta": "3.1"})
    assert one is not two and one.reduced is two.reduced
    assert one.reduced.red is one.reduction and one.reduction.laws  # SIR conserves s + i + r
    with mpmath.workdps(40):
        exact = [
            mpmath.fsum(
                mpmath.mpf(Fraction(c).numerator) / Fraction(c).denominator * v
                for c, v in zip(row, one.s0, strict=True)
            )
            for row in one.reduction.laws
        ]
        assert np.all(np.abs(one.q64 - np.array([float(v) for v in exact])) <= 1e-15)
        assert not one.q64.flags.writeable
        J = one.reduced.kmp.jac(list(one.s0), list(one.p30))
        T, F = one.reduced.Tmp, one.reduced.free
        Jr = [
            [mpmath.fsum(J[i, j] * T[j][a] for j in range(m.n)) for a in range(len(F))] for i in F
        ]
        largest = max(abs(v) for row in Jr for v in row)
    assert one.jscale > 0 and abs(one.jscale - float(largest)) <= 1e-13 * float(largest)


def test_the_route_record_is_frozen_and_reads_the_one_problem() -> None:
    m = load_model("sir")
    params = {**SIR, "beta": "2.6"}
    route = working_route(m, params, None, None)
    assert route.problem is prepare_problem(m, params)
    assert route.rm is route.problem.reduced and route.red is route.problem.reduction
    with pytest.raises(dataclasses.FrozenInstanceError):
        route.primary = np.zeros(2)  # type: ignore[misc]
    assert not route.primary.flags.writeable and isinstance(route.notes, tuple)
    # the accepted point is the fixed point the solution reports (to float64)
    sol = numeric.solve(m, params, dps=15)
    s = route.rm.full64(route.primary, route.problem.q64)
    assert np.max(np.abs(s - np.array([float(v) for v in sol.s_star]))) < 1e-12


def test_order_2_after_order_1_reuses_the_record_with_a_matrix_observable() -> None:
    """An observable given as a matrix keys the record too: order 2 after order 1
    makes no record and computes no order-1 object; its numbers equal those of
    order 2 asked first, from nothing kept."""
    m = load_model("sir")
    params = {**SIR, "beta": "3.25"}
    pp.forget()
    before = dict(pp.COUNTS)
    one = numeric.solve(m, params, dps=15, M=M3)
    assert _new(before, "prepared:general") == 1
    objects = _new(before, "objects:general")
    two = numeric.solve(m, params, dps=15, order=2, M=[list(row) for row in M3])
    assert _new(before, "prepared:general") == 1 and _new(before, "objects:general") == objects
    assert two.constant == one.constant and two.c2 is not None
    pp.forget()
    fresh = numeric.solve(m, params, dps=15, order=2, M=M3)
    assert _new(before, "prepared:general") == 2
    assert fresh.c2 == two.c2 and fresh.A == two.A and fresh.constant == one.constant


def test_a_truncated_model_warm_or_at_order_2_searches_nothing_again(monkeypatch) -> None:
    """The truncation rule is kept with the prepared problem and a restricted model is
    made once: order 1 again prepares nothing; order 2 after order 1 makes one record
    per order-2 solve (none for order 1's kept coordinates) and the rule is decided
    once; the numbers equal order 2 asked first."""
    decided: list[int] = []
    real_rule = truncation._negligible_for

    def rule(problem, *args, **kwargs):
        decided.append(problem.model.n)
        return real_rule(problem, *args, **kwargs)

    solves: list[int] = []
    real_second = stationary.second_order

    def second(model, *args, **kwargs):
        solves.append(model.n)
        return real_second(model, *args, **kwargs)

    monkeypatch.setattr(truncation, "_negligible_for", rule)
    monkeypatch.setattr(stationary, "second_order", second)
    m = supermarket(b=20)
    params = {"lam": "0.9"}
    pp.forget()
    one = numeric.solve(m, params, dps=12, route="general")
    assert one.truncated_at is not None and one.truncated_at < m.n and decided == [m.n]
    before = dict(pp.COUNTS)
    again = numeric.solve(m, params, dps=12, route="general")
    assert {k: _new(before, k) for k in pp.COUNTS if _new(before, k)} == {}
    assert again.constant == one.constant
    two = numeric.solve(m, params, dps=12, order=2, route="general")
    assert decided == [m.n] and solves  # the rule decided once, order 2 ran
    assert _new(before, "prepared:general") == len(solves)
    assert two.constant == one.constant
    pp.forget()
    fresh = numeric.solve(m, params, dps=12, order=2, route="general")
    assert fresh.c2 == two.c2 and fresh.A == two.A and decided == [m.n, m.n]


def test_an_observable_keys_the_inputs_by_its_exact_entries() -> None:
    """A matrix observable is keyed by each entry's type and value: equal entries give
    one key whatever the container of the rows; another value, or the same number as
    a float instead of text, another key; an object array by its entries (two arrays
    whose entries differ never share a key, whatever their addresses)."""
    from numeric.prepared.cache import inputs_key

    m = load_model("sir")
    key = inputs_key(m, {}, None, M3)
    assert key is not None and key == inputs_key(m, {}, None, [tuple(r) for r in M3])
    other = [list(r) for r in M3]
    other[2][2] = "2"
    assert inputs_key(m, {}, None, other) != key
    as_float = [list(r) for r in M3]
    as_float[1][1] = 1.0
    assert inputs_key(m, {}, None, as_float) != key
    a = np.array([[1, 0], [0, 1]], dtype=object)
    b = np.array([[1, 0], [0, 2]], dtype=object)
    assert inputs_key(m, {}, None, a) != inputs_key(m, {}, None, b)
    assert inputs_key(m, {}, None, a) == inputs_key(m, {}, None, a.copy())
    with mpmath.workdps(30):
        Mm = mpmath.matrix([[1, 0], [0, mpmath.mpf(1) / 3]])
        assert inputs_key(m, {}, None, Mm) == inputs_key(m, {}, None, Mm.copy())
    assert inputs_key(m, {}, None, object()) is None  # no key: not cached
