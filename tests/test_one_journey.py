"""One journey of a plain model through every task (issue 31): the model is prepared
once per distinct (params, start), and the exact chain and the simulator are centred
at the mean field's own fixed point.

The model is written as a researcher writes it: transitions only, two states ``s``
and ``i`` whose sum is conserved, no reference point, no fast path.  Order 1,
order 2, the transient, an observable, the certificate, the exact chain at ``N = 10``
and a short simulation at ``N = 50`` all run with the same parameters and start
(``N s0`` is on both lattices, so the chain's start in fractions is the start
itself); :data:`numeric.prepared.cache.COUNTS` counts the problems prepared.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

import mfstein as mf
from derive import Model, Transition
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
