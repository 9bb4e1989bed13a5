"""One journey of a plain model through every task (issue 31): the model is prepared
once per distinct (params, start), and the exact chain and the simulator are centred
at the mean field's own fixed point.

The model is written as a researcher writes it: transitions only, two states ``s``
and ``i`` whose sum is conserved, no reference point, no fast path.  Order 1,
order 2, the transient, an observable, the certificate, the exact chain at ``N = 10``
and a short simulation at ``N = 50`` all run with the same parameters and start
(``N s0`` is on both lattices, so the chain's start in fractions is the start
itself); :data:`numeric.prepared.cache.COUNTS` counts the problems prepared.

A library model's exact chain read back from its record (:mod:`numeric.exact.kept`,
in this process and in a new one) reaches the problem its call prepared, and the
supermarket's fast fixed point reads the problem the float64 route prepared.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import sympy as sp
from deadlines import deadline

import mfstein as mf
import numeric.exact
from derive import Model, Transition
from numeric.exact import kept
from numeric.exact.general import Chain
from numeric.meanfield.problem import forget
from numeric.prepared.cache import COUNTS
from numeric.prepared.problem import prepare_problem
from sim.generic import GenericSimulator

PARAMS = {"beta": "2", "gamma": "1", "eps": "1/10"}
START = ["9/10", "1/10"]


def plain_sis() -> Model:
    """SIS with a small infection from outside: ``s -> i`` at ``(beta i + eps) s``,
    ``i -> s`` at ``gamma i``; ``s + i`` is conserved (it is the start's)."""
    s, i = sp.symbols("s i")
    beta, gamma, eps = sp.symbols("beta gamma eps")
    return Model(
        "plain_sis",
        (s, i),
        (beta, gamma, eps),
        [Transition((-1, 1), (beta * i + eps) * s), Transition((1, -1), gamma * i)],
    )


def test_every_route_reads_one_prepared_problem_and_one_centre():
    model = plain_sis()
    forget()  # whichever test of this worker ran before
    before = COUNTS["prepared:problem"]
    first = mf.solve(model, PARAMS, start=START)
    second = mf.solve(model, PARAMS, start=START, order=2)
    mf.transient(model, PARAMS, times=[0.5, 1.0], start=START)
    observed = mf.solve(model, PARAMS, start=START, observables=["i*i"])
    certified = mf.certify(model, PARAMS, start=START)
    chain = mf.exact(model, PARAMS, N=10, start=START)
    run = mf.simulate(model, PARAMS, N=50, start=START, steps=2_000, reps=1, seed=3, workers=1)
    # one (params, start): one problem, whichever route and however the start is written
    assert COUNTS["prepared:problem"] - before == 1
    s_star = np.array([float(v) for v in first.s_star])
    assert np.array_equal([float(v) for v in second.s_star], s_star)
    assert np.array_equal([float(v) for v in observed.s_star], s_star)
    assert certified is not None
    assert np.array_equal(np.asarray(chain.s_star, dtype=float), s_star)
    assert np.array_equal(np.asarray(run.s_star, dtype=float), s_star)


def test_the_chain_and_the_simulator_are_placed_from_the_prepared_problem():
    """The chain's placement and the simulator's centre hold the problem the mean field
    solves (the same object), and the simulator is placed by the chain's own steps."""
    model = plain_sis()
    problem = prepare_problem(model, PARAMS, START)
    before = COUNTS["prepared:problem"]
    placed = Chain.setup(model, 10, PARAMS, START, None, None).placement
    assert placed.problem is problem
    sim = GenericSimulator(model, 40, PARAMS, start=START)  # an N of this test only
    assert sim.placement.problem is problem
    assert sim.placement.lattice == sim.lattice
    assert COUNTS["prepared:problem"] == before  # nothing prepared again
    centre, note = placed.mean_field()
    assert note is None
    assert list(sim.spec.s_star) == [float(v) for v in centre.s_star]
    assert centre.start == problem.start


SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
#: An N of these tests only: the first call prepares the chain and keeps its record.
KEPT_N = 26

CHILD = f"""
import json
import numeric.exact
from numeric.exact import kept
from numeric.exact.general import Chain
from numeric.prepared.cache import COUNTS

r = numeric.exact.solve("sir", {SIR!r}, N={KEPT_N})
keys = kept.keys("sir", {SIR!r}, {KEPT_N}, None, None, None, route="auto")
chain = Chain(*kept.load(keys, "sir", {SIR!r}, {KEPT_N}, None)[0])
rates = chain.exact(chain.start, {KEPT_N})  # the evaluator of ambiguous intensities
problem = chain.placement.prepared_problem()
print(json.dumps({{"kept": type(r.source_model).__name__, "rates": [float(v) for v in rates],
                  "problems": COUNTS["prepared:problem"], "points": COUNTS["prepared:params"],
                  "same": problem is r.source_model.problem()}}))
"""


def _kept_chain(N):
    """The chain the exact route builds from the record of the SIR call at ``N``."""
    found = kept.load(kept.keys("sir", SIR, N, None, None, None, route="auto"), "sir", SIR, N, None)
    assert found is not None, "no record kept"
    return Chain(*found[0])


def test_a_kept_exact_chain_reaches_the_problem_its_call_prepared(tmp_path, monkeypatch):
    """The second call at the same N is read from the record; its chain's exact rates
    and its problem are the ones the first call prepared: nothing is prepared again,
    in this process; a new process prepares the call's problem once."""
    from derive.models import load_model

    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))  # no record of this call yet
    before = dict(COUNTS)
    first = numeric.exact.solve("sir", SIR, N=KEPT_N)
    assert not isinstance(first.source_model, kept.KeptModel)  # prepared afresh
    made = {k: COUNTS[k] - before.get(k, 0) for k in ("prepared:problem", "prepared:params")}
    again = numeric.exact.solve("sir", SIR, N=KEPT_N)
    assert isinstance(again.source_model, kept.KeptModel)  # read from the record
    chain = _kept_chain(KEPT_N)
    rates = chain.exact(chain.start, KEPT_N)  # the evaluator of ambiguous intensities
    assert {k: COUNTS[k] - before.get(k, 0) for k in made} == made  # nothing prepared again
    problem = chain.placement.prepared_problem()
    assert problem is again.source_model.problem()  # one problem, however reached
    assert problem.model is first.source_model and problem.start is None
    assert {k: COUNTS[k] - before.get(k, 0) for k in made} == made
    afresh = Chain.setup(load_model("sir"), KEPT_N, SIR, None, None, None)
    assert rates == afresh.exact(afresh.start, KEPT_N)
    child = [sys.executable, "-c", CHILD]  # the same cache directory (the environment's)
    out = subprocess.run(child, capture_output=True, text=True, timeout=deadline(300), check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["kept"] == "KeptModel" and got["same"]
    assert got["problems"] == 1 and got["points"] == 1  # the call's problem, once
    assert got["rates"] == [float(v) for v in rates]


def test_the_supermarket_fast_fixed_point_reads_the_prepared_problem():
    """``numeric.solve`` in float64 and at working precision and the float64 order 2
    of :mod:`numeric.meanfield.stationary` prepare one problem per model and
    parameters, and the supermarket's fast fixed point is handed that problem (its
    rates read there, not parsed from the parameters again)."""
    from derive.models import load_model
    from mfstein.families.supermarket.solver import shooting_point64
    from mfstein.ground.fast_paths import FastPath, register, unregister
    from numeric.meanfield.stationary import second_order_float64

    given = []

    def shooting(*args):  # the family's own fixed point, its arguments recorded
        given.append(args)
        return shooting_point64(*args)

    register("supermarket", FastPath(fixed_point=shooting))  # consulted before the table
    try:
        for b in (5, 8):
            model = load_model("supermarket", b=b)
            before = COUNTS["prepared:problem"]
            mf.solve(model, {"lam": "0.95"}, order=2, precision="float64")
            mf.solve(model, {"lam": "0.95"}, order=2)
            base = second_order_float64(model, {"lam": "0.95"})
            assert COUNTS["prepared:problem"] - before == 1
            problem = prepare_problem(model, {"lam": "0.95"})
            assert given == [(problem,)]
            assert np.array_equal(base["s_star"], shooting_point64(problem))
            given.clear()
    finally:
        unregister("supermarket")


def test_an_exact_chain_prepares_one_problem_that_its_centre_and_a_later_solve_reuse():
    """``numeric.exact.solve`` of a plain model (no start: the lattice point nearest the
    simplex's centre, which ``N = 40`` reads exactly) prepares its problem once -- the
    chain and its mean-field centre read the same one -- with the numbers of a centre
    solved from the start ``n0 / N`` on a problem of its own (the route before), and a
    later ``numeric.solve`` at those parameters reuses it."""
    from numeric.exact.prepared import mean_field

    model = plain_sis()  # a new model: nothing of it prepared yet
    before = dict(COUNTS)
    r = numeric.exact.solve(model, PARAMS, N=40)
    made = {k: COUNTS[k] - before.get(k, 0) for k in ("prepared:problem", "prepared:params")}
    assert made == {"prepared:problem": 1, "prepared:params": 1}
    before = dict(COUNTS)
    sol = mf.solve(model, PARAMS, dps=20)
    assert COUNTS["prepared:problem"] - before.get("prepared:problem", 0) == 0
    assert r.s_star.tolist() == [float(v) for v in sol.s_star]
    own, _ = mean_field(model, PARAMS, np.asarray(r.start), 40, True, False)  # own problem
    assert r.s_star.tolist() == [float(v) for v in own.s_star]
    assert float(r.constant) == float(own.constant)


def test_a_simulation_prepares_one_problem_that_a_later_solve_reuses():
    """``sim.simulate`` of a plain model (no start, no reference point: the simplex's
    centre ``(1/2, 1/2)``, which ``N = 50`` puts on the lattice) prepares its problem
    once -- the simulator and its mean-field centre read the same one -- and a later
    ``numeric.solve`` of the model at those parameters reuses it, with the working
    route its centre solved."""
    model = plain_sis()  # a new model: nothing of it prepared yet
    before = dict(COUNTS)
    run = mf.simulate(model, PARAMS, N=50, steps=2_000, reps=1, seed=3, workers=1)
    made = {k: COUNTS[k] - before.get(k, 0) for k in ("prepared:problem", "prepared:params")}
    assert made == {"prepared:problem": 1, "prepared:params": 1}
    before = dict(COUNTS)
    sol = mf.solve(model, PARAMS, dps=20)
    again = {k: COUNTS[k] - before.get(k, 0) for k in ("prepared:problem", "prepared:general")}
    assert again == {"prepared:problem": 0, "prepared:general": 0}
    assert run.s_star == [float(v) for v in sol.s_star]
