"""Observables on the result types: ``numeric.solve(..., observables=[...])`` and
``sim.simulate(..., observables=[...])`` carry them in their ``to_dict``/``to_json``
and summaries; bad ones are refused in one sentence before any work."""

from __future__ import annotations

import json

import mpmath
import numpy as np
import pytest

from derive.models import load_model
from mfstein.ground.errors import ParameterError
from numeric import solve
from sim import simulate


@pytest.fixture(scope="module")
def sm3():
    m = load_model("supermarket", b=3, d=2)
    sol = solve(m, {"lam": "0.8"}, dps=25, order=2, observables=["queue_length", "s1*s2"])
    return m, sol


def test_solve_carries_the_expansions_of_the_requested_observables(sm3):
    _, sol = sm3
    assert list(sol.observables) == ["queue_length", "s1*s2"]
    q = sol.observables["queue_length"]
    with mpmath.workdps(35):  # a linear g: the sums of s*, V and A of the same solution
        for term, vec in (("g0", sol.s_star), ("g1", sol.V), ("g2", sol.A)):
            assert abs(getattr(q, term) - mpmath.fsum(vec)) < mpmath.mpf(10) ** -22
    # E[s1 s2] = s1* s2* + (s1* V2 + s2* V1 + W12)/N + ...: the 1/N term from V and W
    p = sol.observables["s1*s2"]
    s, V = sol.s_star, sol.V
    with mpmath.workdps(35):
        g1 = s[0] * V[1] + s[1] * V[0] + sol.W[0, 1]
        assert abs(p.g1 - g1) < mpmath.mpf(10) ** -22


def test_solution_json_and_summary_hold_the_observables(sm3):
    m, sol = sm3
    d = json.loads(sol.to_json())
    assert list(d["observables"]) == ["queue_length", "s1*s2"]
    for name, entry in d["observables"].items():
        e = sol.observables[name]
        for term in ("g0", "g1", "g2", "variance"):
            text = entry[term]
            assert isinstance(text, str)  # decimal strings, every printed digit claimed
            with mpmath.workdps(40):
                err = abs(mpmath.mpf(text) - getattr(e, term))
                assert err <= abs(getattr(e, term)) * mpmath.mpf(10) ** (1 - e.digits[term])
    text = repr(sol)
    assert "observables" in text and "queue_length: " in text and "/N^2" in text
    assert len(text.splitlines()) <= 12
    # without observables the key is absent (the JSON of mfstein solve unchanged)
    assert "observables" not in solve(m, {"lam": "0.8"}, dps=15).to_dict()


@pytest.mark.parametrize(
    ("observables", "words"),
    [
        (["s1 + q"], "q, which is not a symbol"),
        (["s1 +"], "syntax error"),
        (["busy", "busy"], "busy is repeated"),
        (42, "must be a list"),
    ],
)
def test_bad_observables_are_refused_before_solving(observables, words):
    with pytest.raises(ParameterError, match=words):
        solve("supermarket", {"b": 3, "lam": "0.8"}, dps=15, observables=observables)


def test_solve_takes_one_observable_as_a_string_and_a_truncated_family():
    sol = solve("jsq_L", {"L": 2, "alpha": "0.7", "beta": "1"}, dps=15, observables="queue_length")
    assert list(sol.observables) == ["queue_length"]
    with mpmath.workdps(30):
        assert abs(sol.observables["queue_length"].g0 - mpmath.fsum(sol.s_star)) < 1e-14


def test_simulation_result_json_holds_the_observables():
    m = load_model("supermarket", b=3, d=2)
    r = simulate(m, {"lam": "0.8"}, N=10, steps=50_000, reps=2, seed=5, workers=1,
                 observables=["queue_length", "busy"])  # fmt: skip
    d = json.loads(r.to_json())
    assert list(d["observables"]) == ["queue_length", "busy"]
    for name, est in r.observables.items():  # printed as estimates print (2-digit CI)
        assert d["observables"][name] == est.to_dict()
    # the same run's own statistics: E[queue length] = mean jobs, E[s1] = mean s1 (the
    # values held; the print keeps only the digits each interval allows)
    queue, busy = (float(r.observables[k].mean) for k in ("queue_length", "busy"))
    assert queue == pytest.approx(float(np.sum(r.mean.mean)), rel=1e-12)
    assert busy == pytest.approx(float(r.mean.mean[0]), rel=1e-12)
    assert "E[busy]" in repr(r)
    plain = simulate(m, {"lam": "0.8"}, N=10, steps=20_000, reps=1, seed=5, workers=1)
    assert "observables" not in plain.to_dict()


def test_float64_route_gives_g2_where_it_needs_no_third_moment():
    """The float64 route carries A and B but not C: g2 of a g with third derivatives
    is absent with a note; the others agree with the SIS closed form to their digits."""
    import sympy as sp

    from derive.models.sis import I, closed_form, expansion

    p = {"a": "0.1", "beta": "2", "gamma": "1"}
    sol = solve("sis", p, precision="float64", order=2, observables=["infected", "I**2", "I**3"])
    cf = closed_form(sp.Rational(1, 10), 2, 1)
    for name, g in (("infected", I), ("I**2", I**2)):
        e = sol.observables[name]
        for term, exact in zip(("g0", "g1", "g2"), expansion(g, cf), strict=True):
            digits = e.digits[term]
            assert digits >= 10
            rel = abs(float(getattr(e, term)) / float(sp.N(exact, 20)) - 1)
            assert rel < 10.0 ** (1 - digits), (name, term, rel, digits)
    cubic = sol.observables["I**3"]
    assert cubic.g2 is None and "third moment C" in cubic.notes[0]
    assert cubic.to_dict()["g2"] is None and cubic.g1 is not None
