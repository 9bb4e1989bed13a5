"""The interpreted event loop (sim.table_loop, sim.interpreted) and its programs
(derive.rate_program): against SymPy, the exact chain and the compiled loop."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import sympy as sp

from derive import Model, Transition
from derive.models import load_model
from derive.rate_program import compile_programs, polynomial_forms
from mfstein.ground.errors import ParameterError
from sim.api import simulate

SIR = {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}
x, y, q = sp.symbols("x y q")

#: Every operation of the programs, with NaN, zero and out-of-domain arguments among
#: the points below.
EXPRESSIONS = [
    (q * x + 3 * y**2) / (1 + x),
    x ** sp.Rational(1, 3) + sp.sqrt(y) - 1 / sp.sqrt(1 + x),
    sp.exp(-q * x) * sp.log(1 + y) - x**-2,
    sp.Min(x, y, sp.Rational(1, 2)) + sp.Max(x, q) + sp.Abs(x - y) * sp.sign(x - y),
    sp.Heaviside(x - y) + 2 * sp.Heaviside(x - sp.Rational(1, 2), 1),
    sp.Piecewise((x, x > y), (y**2, sp.And(y >= q, sp.Not(x < 0))), (q, True)),
    sp.Piecewise((1, sp.Or(sp.Eq(x, y), sp.Ne(q, 2))), (0, True)),
    sp.sin(x) * sp.cos(y) + sp.tan(x) - sp.atan(y) + sp.sinh(x) - sp.cosh(y) + sp.tanh(q),
    sp.asin(x) + sp.acos(y) - x * sp.pi + sp.E * y,
    x**q,
    -x * y,
    sp.Integer(0),
]
POINTS = [(0.3, 0.2, 2.0), (0.5, 0.5, 1.5), (0.0, 1.0, 2.0), (0.9, 0.1, -0.25), (0.25, 0.0, 3.0)]


def _sympy_value(e, point) -> float:
    """SymPy's own value at ``point`` (NaN where it is not a real number)."""
    v = complex(sp.N(e.subs(dict(zip((x, y, q), point, strict=True))), 30))
    return v.real if v.imag == 0 and math.isfinite(v.real) else math.nan


def test_programs_evaluate_like_sympy():
    from sim.table_loop import evaluate

    prog = compile_programs(EXPRESSIONS, (x, y), (q,))
    code = np.asarray(prog.code, dtype=np.int64).reshape(-1, 2)
    ptr = np.asarray(prog.ptr, dtype=np.int64)
    consts = np.asarray(prog.consts, dtype=np.float64)
    stack = np.empty(prog.depth)
    for point in POINTS:
        s, p = np.array(point[:2]), np.array(point[2:])
        for i, e in enumerate(EXPRESSIONS):
            with np.errstate(all="ignore"):
                got = evaluate(code, ptr, consts, i, s, p, stack)
            want = _sympy_value(e, point)
            if math.isnan(want):
                assert not math.isfinite(got) or i == 1, (e, point, got)
            else:
                assert got == pytest.approx(want, rel=1e-13, abs=1e-13), (e, point)


def test_polynomial_forms_expand_the_rates_and_flag_the_others():
    forms = polynomial_forms([(q + 2 * x) * y, sp.Min(x, 1), q, 0 * x], (x, y))
    assert forms.flags == (True, False, True, True)
    terms = {
        forms.factors[forms.fac_ptr[m] : forms.fac_ptr[m + 1]]: forms.coefficients[m]
        for m in range(forms.ptr[0], forms.ptr[1])
    }
    assert terms == {((0, 1), (1, 1)): 2, ((1, 1),): q}
    assert forms.ptr[2] == forms.ptr[1] and forms.ptr[3] - forms.ptr[2] == 1


def test_what_the_interpreter_cannot_evaluate_is_one_sentence():
    for e, word in ((sp.gamma(x), "gamma"), (x + sp.Symbol("z"), "symbol z")):
        with pytest.raises(ParameterError, match=word) as err:
            compile_programs([e], (x,), ())
        assert str(err.value).count(". ") == 0 and "\n" not in str(err.value)


@pytest.fixture(scope="module")
def sir():
    return load_model("sir")


@pytest.fixture(scope="module")
def loop_compiled(sir):
    """The interpreted loop compiled (by a short run on it, compiling it when the
    session's cache lacks it): ``auto`` then weighs a model's loop against the events'
    extra alone (:func:`sim.loop_prices.interpreted_seconds` is nothing)."""
    from sim.loop_prices import interpreted_seconds

    simulate(sir, SIR, N=10, steps=100, reps=1, seed=1, workers=1, engine="interpreted")
    assert interpreted_seconds() == 0.0


def test_interpreted_sir_agrees_with_exact(sir):
    from numeric.exact.general import solve

    exact = solve(sir, SIR, N=20)
    r = simulate(sir, SIR, N=20, steps=3 * 10**5, reps=2, seed=3, workers=1, engine="interpreted")
    assert r.loop == "interpreted" and r.engine == "generic" and r.complete
    assert np.all(np.abs(r.mean.mean - exact.mean) <= 2 * r.mean.ci95)
    assert abs(float(r.n_mse.mean) - exact.n_mse) <= 2 * float(r.n_mse.ci95)
    assert np.all(np.abs(r.n_cov.mean - exact.n_cov) <= 2 * r.n_cov.ci95 + 1e-9)
    assert abs(r.mean.mean.sum() - 1) < 1e-12  # S + I + R = 1 on every path
    marg = r.marginal_pmf
    assert np.all(np.abs(marg.mean[1] - exact.marginal_pmf[1]) <= 2 * marg.ci95[1] + 1e-4)
    again = simulate(
        sir, SIR, N=20, steps=3 * 10**5, reps=2, seed=3, workers=1, engine="interpreted"
    )
    np.testing.assert_array_equal(again.mean.mean, r.mean.mean)  # the seed fixes the numbers
    out = json.loads(r.to_json())
    assert out["loop"] == "interpreted" and out["simulator"] == "generic"
    assert "interpreted loop" in repr(r)


def _queue(name: str = "queue") -> Model:
    """A queue with non-polynomial rates (Min, Piecewise, sqrt): arrivals slow down above
    half the capacity, c = 2 servers per unit of population."""
    n, lam = sp.symbols("n lam")
    arrive = lam * sp.Piecewise((1, n < sp.Rational(1, 2)), (sp.sqrt(1 - n) / 2, True))
    return Model(name, (n,), (lam,), [Transition((1,), arrive), Transition((-1,), sp.Min(n, 2))])


def test_non_polynomial_rates_and_observables_agree_with_exact():
    from numeric.exact.general import solve

    model = _queue()
    params = {"lam": "1.5"}
    g = "Min(n, 1/3)"
    exact = solve(model, params, N=20)
    r = simulate(
        model, params, N=20, steps=4 * 10**5, reps=2, seed=5, workers=1,
        engine="interpreted", observables=[g],
    )  # fmt: skip
    want = float(exact.expect(g, model).mean)
    est = r.observables[g]
    assert abs(float(est.mean) - want) <= 2 * float(est.ci95)
    assert abs(float(r.mean.mean[0]) - float(exact.mean[0])) <= 2 * float(r.mean.ci95[0])


def test_auto_runs_a_short_run_of_a_new_model_interpreted(sir, loop_compiled):
    model = _queue()
    r = simulate(model, {"lam": "0.3"}, N=10, steps=2 * 10**4, reps=1, workers=1)
    assert r.loop == "interpreted"
    with pytest.raises(ParameterError, match="engine"):
        simulate(model, {"lam": "0.3"}, N=10, steps=10, reps=1, engine="interpreter")


@pytest.mark.slow
def test_the_two_loops_agree(sir):
    kw = dict(N=100, steps=2 * 10**6, reps=4, seed=11, workers=1)
    a = simulate(sir, SIR, engine="interpreted", **kw)
    b = simulate(sir, SIR, engine="generic", **kw)
    assert (a.loop, b.loop) == ("interpreted", "compiled")
    both = np.hypot(a.mean.ci95, b.mean.ci95)
    assert np.all(np.abs(a.mean.mean - b.mean.mean) <= 2 * both)
    assert abs(float(a.n_mse.mean) - float(b.n_mse.mean)) <= 2 * float(
        np.hypot(a.n_mse.ci95, b.n_mse.ci95)
    )


def test_auto_weighs_the_run_against_compiling_the_models_loop(tmp_path, monkeypatch):
    from sim import loop_prices
    from sim.base import RunOptions
    from sim.generic import GenericSimulator
    from sim.generic_kernels import (
        MIN_COMPILE_SECONDS,
        chain_compiled,
        chain_module,
        chain_name,
        chain_never_compiled,
        compile_seconds,
    )
    from sim.interpreted import InterpretedSimulator, extra_seconds, model_tables, pick_loop

    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))  # nothing generated here
    # the interpreted loop and the helpers compiled or not (the session's cache): their
    # prices (sim.loop_prices, tests/sim/test_loop_prices.py) are left out here
    monkeypatch.setattr(loop_prices, "INTERPRETED_SECONDS", 0.0)
    monkeypatch.setattr(loop_prices, "HELPERS_SECONDS", 0.0)
    model = _queue("queue_auto")  # a model no other test loads
    per_event = extra_seconds(model_tables(model), 1)
    generate = loop_prices.generate_seconds(model)  # neither module is in the cache
    assert generate > 0
    floor = int((MIN_COMPILE_SECONDS + generate) / per_event)

    def pick(events: int):
        return pick_loop(model, [], RunOptions(steps=events, reps=1).checked())

    # never compiled: a run within the least compile time's limit is placed without
    # generating the model's loop
    assert chain_never_compiled(model)
    assert pick(10**4) == (InterpretedSimulator, floor) and floor >= 10**4
    assert not list(tmp_path.glob("simchain_*.py"))
    # a longer run weighs the loop's own compile time and the generation: generated now
    cls, limit = pick(floor + 1)
    seconds = compile_seconds(chain_module(model)[1])
    assert list(tmp_path.glob("simchain_*.py")) and not chain_never_compiled(model)
    # loaded to be priced, not compiled: a kept interpreted run stays kept (sim.api)
    assert not chain_compiled(chain_name(model))
    assert loop_prices.generate_seconds(model) == 0.0  # nothing left to generate
    assert (cls, limit) == (InterpretedSimulator, int((seconds + generate) / per_event))
    assert limit > floor
    # the same choice, its exact limit: the generation is paid now
    exact = int(seconds / per_event)
    assert pick(10**4) == (InterpretedSimulator, exact)
    assert pick(exact + 1) == (GenericSimulator, None)


def test_a_run_on_the_interpreted_loop_is_kept_for_a_new_process():
    from sim import prepared_runs
    from sim.interpreted import InterpretedSimulator

    run = dict(N=37, steps=2 * 10**4, reps=2, seed=2, workers=1, engine="interpreted")
    first = simulate("sir", SIR, **run)
    record = prepared_runs.load(prepared_runs.run_key("sir", SIR, 37, None, None, "interpreted"))
    assert record is not None and record["loop"] == "interpreted"
    kept = InterpretedSimulator.from_record(record, "sir", SIR)
    assert kept is not None and kept.spec.code and kept.spec.N == 37
    again = simulate("sir", SIR, **run)
    assert again.loop == "interpreted"
    np.testing.assert_array_equal(again.mean.mean, first.mean.mean)


def test_a_short_auto_run_of_a_new_model_prints_no_float64_code(
    tmp_path, monkeypatch, sir, loop_compiled
):
    from numeric.exact import space
    from numeric.invariants import reduction

    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))  # nothing generated here
    r = simulate(_queue("queue_short"), {"lam": "1.5"}, N=20, steps=2000, reps=1, workers=1)
    assert r.complete and r.loop == "interpreted"
    # neither the model's numba kernels nor its own event loop were printed
    assert not list(tmp_path.glob("kernels_numba_*.py"))
    assert not list(tmp_path.glob("simchain_*.py"))
    # the lattice's conservation laws, from the transitions, are the kernels' ones
    space._REDUCTIONS.pop(sir.key, None)
    got = space.make_lattice(sir, 50, None)
    want = reduction(sir, sir.kernels("numba").jumps)
    assert (got.laws, got.free) == (want.laws, want.free) and len(want.laws) == 1


def test_auto_leaves_the_interpreted_loop_once_the_models_loop_is_compiled(
    tmp_path, monkeypatch, loop_compiled
):
    """A short ``auto`` run of a model given by name is kept on the interpreted loop for
    later calls and processes (:mod:`sim.prepared_runs`); once the model's own loop is
    compiled (here by ``engine="generic"``), the kept choice is dropped and ``auto`` runs
    the compiled loop (it stayed interpreted, twice as slow per event, for good)."""
    from mfstein.ground import generated
    from sim import generic_kernels, prepared_runs
    from sim.generic_kernels import chain_compiled

    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))  # SIR's loop not compiled here
    # nor loaded in this process by an earlier test; and the modules this test generates
    # in its own cache directory are forgotten after it (later tests look for their
    # compiled code in the run's cache directory)
    name = generic_kernels.chain_name(load_model("sir"))
    chains = {k: v for k, v in generic_kernels._CHAINS.items() if k != name}
    monkeypatch.setattr(generic_kernels, "_CHAINS", chains)
    monkeypatch.setattr(generated, "_loaded", dict(generated._loaded))
    run = dict(N=29, steps=2 * 10**4, reps=1, seed=3, workers=1)
    first = simulate("sir", SIR, **run)
    assert first.loop == "interpreted"
    record = prepared_runs.load(prepared_runs.run_key("sir", SIR, 29, None, None, "auto"))
    assert record["loop"] == "interpreted" and record["chain"] == name
    assert not chain_compiled(name)
    assert simulate("sir", SIR, **run).loop == "interpreted"  # the kept choice
    assert simulate("sir", SIR, engine="generic", **run).loop == "compiled"
    assert chain_compiled(name)
    again = simulate("sir", SIR, **run)
    assert again.loop == "compiled"
    # the two loops draw the same chain from the same seed
    np.testing.assert_allclose(again.mean.mean, first.mean.mean, rtol=1e-12)
