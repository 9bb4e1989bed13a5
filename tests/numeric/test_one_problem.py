"""One prepared problem (issue 31): a model as a researcher writes it goes through every
task, and the problem they all start from (numeric.prepared.problem) is prepared once
for its inputs, frozen, and keyed by the start's exact value."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import mpmath
import pytest
import sympy as sp

import mfstein as mf
import numeric
from derive import Model, Transition
from mfstein.ground.errors import ParameterError
from numeric.exact.prepared import prepare
from numeric.meanfield import problem as pp
from numeric.prepared.problem import prepare_problem

PARAMS = {"beta": "2", "gamma": "1", "a": "0.1"}
START = ["0.9", "0.1"]


def plain_model() -> Model:
    """Transitions only: states ``s``, ``i``, no reference point, no declared state space;
    the jumps conserve ``s + i`` (an infection from outside, ``a``, keeps the finite-N
    chain away from ``i = 0``)."""
    s, i = sp.symbols("s i")
    beta, gamma, a = sp.symbols("beta gamma a")
    infection = Transition((-1, 1), (beta * i + a) * s)
    recovery = Transition((1, -1), gamma * i)
    return Model("plain_si", (s, i), (beta, gamma, a), [infection, recovery])


def _new(before: dict[str, int], kind: str) -> int:
    return pp.COUNTS[kind] - before.get(kind, 0)


def test_every_task_reads_one_prepared_problem() -> None:
    """solve (default and float64), exact and certify on one model, parameter point and
    start: the base problem is prepared once; the finite-N chain's centre (solved from
    the lattice start ``9/10, 1/10``) is the same problem."""
    m = plain_model()
    pp.forget()
    before = dict(pp.COUNTS)
    one = numeric.solve(m, PARAMS, start=START, dps=15)
    assert _new(before, "prepared:problem") == 1
    f64 = numeric.solve(m, PARAMS, start=START, precision="float64")
    ex = mf.exact(m, PARAMS, N=10, start=START)
    cert = one.certify()
    assert _new(before, "prepared:problem") == 1
    # one parameter point, parsed once: by the base problem and by exact's preparation
    assert _new(before, "prepared:params") == 1
    assert prepare(m, 10, PARAMS).values == dict(prepare_problem(m, PARAMS, START).values)
    # the routes answer on the same invariant set s + i = 1, and agree where they must
    for s_star in (one.s_star, f64.s_star):
        assert abs(float(s_star[0] + s_star[1]) - 1) < 1e-12
    assert abs(float(one.s_star[1]) - float(f64.s_star[1])) < 1e-12
    assert abs(float(sum(ex.mean)) - 1) < 1e-12
    with mpmath.workdps(20):
        assert abs(mpmath.mpf(cert.constant.mid()) - one.constant) < mpmath.mpf(10) ** -12
    # certification reads the problem too: prepared afresh once nothing is kept
    pp.forget()
    again = one.certify()
    assert _new(before, "prepared:problem") == 2
    assert str(again.constant) == str(cert.constant)


@pytest.mark.slow
def test_the_simulation_and_the_transient_read_the_same_problem() -> None:
    """The generic simulator's start and centre, and the transient's start, come from
    the problem solve prepared (slow: the model's kernels are compiled)."""
    m = plain_model()
    pp.forget()
    before = dict(pp.COUNTS)
    numeric.solve(m, PARAMS, start=START, precision="float64")
    sim = mf.simulate(m, PARAMS, N=10, steps=4000, seed=3, start=START, reps=2, workers=1)
    tr = numeric.transient(m, PARAMS, start=START, times=[0, 1])
    numeric.solve(m, PARAMS, start=START, dps=15).certify()
    assert _new(before, "prepared:problem") == 1
    assert _new(before, "prepared:params") == 1  # solve, simulate, transient, certify
    assert tr.x[0].tolist() == [0.9, 0.1]
    d = sim.to_dict()
    assert abs(sum(d["mean"]) - 1) < 1e-9 and sum(d["start"]) == 10  # s + i = 1 kept


def test_the_problem_is_frozen_and_keyed_by_the_exact_start() -> None:
    m = plain_model()
    p = prepare_problem(m, PARAMS, START)
    assert prepare_problem(m, PARAMS, ["9/10", "1/10"]) is p
    assert prepare_problem(m, PARAMS, "0.9, 0.1") is p
    binary = prepare_problem(m, PARAMS, [0.7, 0.3])  # binary 0.7 is another number
    assert binary is not prepare_problem(m, PARAMS, ["0.7", "0.3"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.start = None  # type: ignore[misc]
    with pytest.raises(TypeError):
        p.values["beta"] = 3  # type: ignore[index]
    with pytest.raises(ValueError, match="read-only"):
        p.p64[0] = 1.0
    red = p.reduction
    assert red.laws == ((Fraction(1), Fraction(1)),) and red.free == (1,)
    with mpmath.workdps(30):
        assert p.s0 == (mpmath.mpf("0.9"), mpmath.mpf("0.1"))
    with mpmath.workdps(50):  # another precision: the exact inputs read there
        assert p.start_now() == [mpmath.mpf("0.9"), mpmath.mpf("0.1")]
        assert p.values_now()["a"] == mpmath.mpf("0.1")
    assert p.lattice_start() == [Fraction(9, 10), Fraction(1, 10)]
    assert p.start_exact == (Fraction(9, 10), Fraction(1, 10))
    assert prepare_problem(m, PARAMS).start_exact is None  # the model's own start


def _exact(v: object) -> Fraction:
    """A start entry's exact value (an mpf is ``man * 2**exp``)."""
    if isinstance(v, mpmath.mpf):
        return Fraction(int(v.man)) * Fraction(2) ** int(v.exp)
    return Fraction(v)  # type: ignore[arg-type]


def _mpf_pair() -> tuple[list, list]:
    """Two mpf starts equal to 20 digits, apart at 30 (made at 40 digits)."""
    with mpmath.workdps(40):
        low = mpmath.mpf("0.2")
        return [low, mpmath.mpf("0.1")], [low + mpmath.mpf(10) ** -25, mpmath.mpf("0.1")]


@pytest.mark.parametrize(
    "pair",
    [lambda: ([0.2, 0.1], ["0.2", "0.1"]), _mpf_pair],  # binary 0.2, 0.1 are not the decimals
    ids=["float-text", "mpf-mpf"],
)
def test_the_route_caches_key_a_start_by_its_exact_value(pair: Any) -> None:
    """The library reads a float at its exact binary value and text exactly, so starts
    that print alike but differ are other problems at 40 digits: each answer keeps the
    total ``s + i`` of its own start (the invariant the jumps conserve)."""
    m = plain_model()
    first, second = pair()
    with mpmath.workdps(40):
        totals = [sum(_exact(v) for v in st) for st in (first, second)]
    assert totals[0] != totals[1]
    answers = [numeric.solve(m, PARAMS, start=st, dps=40) for st in (first, second)]
    with mpmath.workdps(60):
        for ans, total in zip(answers, totals, strict=True):
            gap = ans.s_star[0] + ans.s_star[1] - mpmath.mpf(total.numerator) / total.denominator
            assert abs(gap) < mpmath.mpf(10) ** -38
        assert answers[0].s_star[1] != answers[1].s_star[1]


def test_the_problem_refuses_bad_input_in_one_sentence() -> None:
    m = plain_model()
    with pytest.raises(ParameterError, match=r"^delta is not a parameter of model plain_si"):
        prepare_problem(m, {**PARAMS, "delta": "1"}, START)
    with pytest.raises(ParameterError, match=r"^start must have 2 coordinates") as info:
        prepare_problem(m, PARAMS, ["0.9"])
    assert "\n" not in str(info.value)


def test_the_exact_placement_reads_the_prepared_start() -> None:
    """The finite-N lattice start is ``N s0`` of the prepared problem."""
    m = plain_model()
    placed = prepare(m, 10, PARAMS).place(START)
    assert placed.start.tolist() == [9, 1]
    assert placed.start_given


def test_certify_reads_the_fixed_reference_point_from_the_problem() -> None:
    """No start given: the conserved values come from the prepared problem's exact
    reading of the model's fixed reference point (SIR: 99/100, 1/100, 0), and the
    certificate is the one of that start given by hand."""
    from derive.models import load_model

    sir = load_model("sir")
    params = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
    ref = prepare_problem(sir, params).reference_exact
    assert ref == tuple(Fraction(int(v.p), int(v.q)) for v in sir.info.reference)
    assert prepare_problem(sir, params, ["0.99", "0.01", "0"]).reference_exact is None
    sol = numeric.solve(sir, params, dps=15)
    own = sol.certify()
    given = sol.certify(start=[str(v) for v in ref])
    assert str(own.constant) == str(given.constant)
    assert own.certified_digits >= 15


def test_the_float64_order2_reads_the_parameter_record() -> None:
    """The float64 order 2 at a family's own fixed point reads the kernels' parameter
    vector from the parameter record: read once for two calls, and equal to it."""
    import numpy as np

    from derive.models import load_model
    from numeric.meanfield.stationary import _base64
    from numeric.params import parameter_names
    from numeric.prepared.parameters import prepare_params

    sup = load_model("supermarket", b=4)
    pp.forget()
    before = dict(pp.COUNTS)
    base = _base64(sup, {"lam": "0.9"}, None)
    again = _base64(sup, {"lam": "0.9"}, None)
    assert _new(before, "prepared:params") == 1
    assert base.fast and np.array_equal(base.p, again.p)
    values = prepare_params(sup, {"lam": "0.9"}).values
    assert base.p.tolist() == [float(values[n]) for n in parameter_names(sup)]


SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}


def test_the_transient_reads_the_prepared_problem() -> None:
    """The transient's setup is made from the problem every route starts from: one
    setup for one problem (two spellings of one start share it), frozen, and its
    reference point is the problem's reading of the model's reference."""
    import numpy as np

    from derive.models import load_model
    from numeric.expansion.transient_setup import transient_setup

    m = load_model("sir")
    pp.forget()
    before = dict(pp.COUNTS)
    st = transient_setup(m, SIR, "0.75,0.25,0")
    assert st.problem is prepare_problem(m, SIR, "0.75,0.25,0")
    assert st.red is st.problem.reduction and st.n == 2
    assert transient_setup(m, SIR, ["3/4", "1/4", "0"]) is st
    assert _new(before, "prepared:transient") == 1
    assert st.s0_64.tolist() == [0.75, 0.25, 0.0] and st.q64.tolist() == [1.0]
    assert np.array_equal(st.ref64, prepare_problem(m, SIR).s64)  # numeric.solve's start
    with pytest.raises(dataclasses.FrozenInstanceError):
        st.q64 = None  # type: ignore[misc]
    one = numeric.transient(m, SIR, start="0.75,0.25,0", times=[0, 1, 2])
    two = numeric.transient(m, SIR, start=["3/4", "1/4", "0"], times=[0, 1, 2])
    assert np.array_equal(one.x, two.x) and np.array_equal(one.W, two.W)
    assert _new(before, "prepared:transient") == 1


def test_the_certifier_reads_the_laws_and_the_start_from_the_problem() -> None:
    """The certifier's inputs take the conservation laws and the exact start from the
    prepared problem; parameter balls, which no problem holds, are read by the
    certifier itself and give the same laws and conserved values."""
    from flint import arb

    from numeric.certified.enclosures import certifier_inputs

    m = plain_model()
    one = numeric.solve(m, PARAMS, start=START, dps=15)
    inputs = certifier_inputs(one, m, None, START, None, 15)
    assert inputs.red is prepare_problem(m, PARAMS, START).reduction
    assert inputs.q == (Fraction(1),)  # s + i at the exact start 9/10 + 1/10
    assert inputs.x0 == (one.s_star[1],)  # the free coordinate i
    balls = {name: arb(value) for name, value in PARAMS.items()}
    own = certifier_inputs(one, m, balls, START, None, 15)
    assert own.red == inputs.red and own.q == inputs.q
    with pytest.raises(ParameterError, match="start must fix the conserved values"):
        certifier_inputs(one, m, None, ["0.5", "0.1"], None, 15)
    with pytest.raises(dataclasses.FrozenInstanceError):
        inputs.q = ()  # type: ignore[misc]


def test_the_float64_order2_after_order1_reads_the_same_problem() -> None:
    """The float64 order 2 (:func:`numeric.second_order_float64`) after the float64
    order 1 on a plain model (transitions only, a conservation law, no reference point):
    no second problem, no second parameter reading, no route record of its own; its
    base is kept with the problem, so asking again searches nothing."""
    from numeric.meanfield.stationary import second_order_float64

    m = plain_model()
    pp.forget()
    before = dict(pp.COUNTS)
    one = numeric.solve(m, PARAMS, start=START, precision="float64")
    made = {k: _new(before, k) for k in ("prepared:problem", "prepared:params")}
    assert made == {"prepared:problem": 1, "prepared:params": 1}
    two = second_order_float64(m, PARAMS, start=START)
    again = second_order_float64(m, PARAMS, start=START)
    for kind in ("prepared:problem", "prepared:params"):
        assert _new(before, kind) == 1, kind
    assert _new(before, "prepared:general") == 0  # no working-precision record of its own
    from numeric.meanfield.stationary import base64_of

    problem = prepare_problem(m, PARAMS, START)
    base = base64_of(problem)
    assert base is base64_of(problem) and not base.J.flags.writeable
    assert two["c2"] == again["c2"] and two["A"].tolist() == again["A"].tolist()
    # the same fixed point as order 1 (s + i = 1 kept), and order 2 as numeric.solve's
    assert abs(float(one.s_star[1]) - float(two["s_star"][1])) < 1e-12
    assert abs(sum(two["s_star"]) - 1) < 1e-12
    full = numeric.solve(m, PARAMS, start=START, precision="float64", order=2)
    assert abs(float(full.c2) - two["c2"]) <= 1e-9 * abs(two["c2"])


def test_the_supermarket_fast_path_reads_the_prepared_problem() -> None:
    """numeric.solve reaching the supermarket's fast path builds its member from the
    prepared problem's values: one problem, one parameter reading, shared with the
    float64 route; the rates are the problem's values at the working precision."""
    from derive.models import load_model

    sup = load_model("supermarket", b=6)
    pp.forget()
    before = dict(pp.COUNTS)
    sol = numeric.solve(sup, {"lam": "0.9"}, dps=20)
    assert _new(before, "prepared:problem") == 1 and _new(before, "prepared:params") == 1
    numeric.solve(sup, {"lam": "0.9"}, precision="float64")
    assert _new(before, "prepared:problem") == 1 and _new(before, "prepared:params") == 1
    from mfstein.families.supermarket.solver import problem_member

    member, dps = problem_member(prepare_problem(sup, {"lam": "0.9"}), 20)
    with mpmath.workdps(40):
        assert dps == 20 and member.lam == mpmath.mpf("0.9") and member.mu == 1
    assert member.model is sup and sol.digits >= 20


def test_the_key_of_a_text_start_holds_no_fraction() -> None:
    """A warm call hashes the problem's key at every cache it reads: the exact start is
    kept in it as integer pairs (a fraction's hash is a modular inverse each time),
    and the same pairs for every spelling of one start."""
    m = plain_model()

    def leaves(key: object) -> list[object]:
        if isinstance(key, tuple):
            return [x for part in key for x in leaves(part)]
        return [key]

    keys = [prepare_problem(m, PARAMS, s).key for s in (START, ["9/10", "1/10"], "0.9, 0.1")]
    assert keys[0] == keys[1] == keys[2]
    assert not any(isinstance(v, Fraction) for v in leaves(keys[0]))
    assert any((9, 10) in t for t in _tuples(keys[0]))  # the start 9/10, 1/10


def _tuples(key: object) -> list[tuple]:
    """Every tuple nested in a key."""
    if not isinstance(key, tuple):
        return []
    return [key, *[t for part in key for t in _tuples(part)]]


@pytest.mark.parametrize("a", [0.1, "0.1", Fraction(1, 10)])
def test_the_parameter_record_reads_each_value_at_both_precisions(a: Any) -> None:
    """A parameter point read at ``dps + 20`` digits first keeps, at 30 digits, each
    value's own 30-digit reading: a float's exact binary value (the same number at
    both precisions), but the text ``"0.1"`` and the fraction 1/10 rounded to 30
    digits, not the 50-digit value; a value outside its range is refused either way;
    and the problem of the point from the default start has the point's key."""
    from derive.models import load_model
    from numeric.params import read_values
    from numeric.prepared.parameters import prepare_params
    from numeric.prepared.problem import problem_at

    model = load_model("sir")
    point = prepare_params(model, {**SIR, "a": a}, at=50)
    with mpmath.workdps(30):
        assert point.values == read_values(model, point.params)
        assert point.values["a"]._mpf_ == mpmath.mpf(a if type(a) is float else "0.1")._mpf_
    with mpmath.workdps(50):
        assert point.values_now() == read_values(model, point.params)
    assert (point.values["a"] == point.values_now()["a"]) == (type(a) is float)
    assert problem_at(point).key == point.key
    with pytest.raises(ParameterError, match="gamma must be"):
        prepare_params(model, {**SIR, "gamma": -1.0}, at=50)
