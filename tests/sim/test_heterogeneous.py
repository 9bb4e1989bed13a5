"""The per-object simulation of a heterogeneous population against its exact chain."""

from __future__ import annotations

import numpy as np
import pytest
from hetpop_models import three_state

import numeric.exact
import sim
from mfstein.ground.errors import ParameterError


def test_simulation_brackets_the_exact_law_and_repeats_with_its_seed():
    model = three_state(4)
    run = {"N": 4, "steps": 10_000, "reps": 4, "seed": 3, "batches": 5}
    r = sim.simulate(model, {}, **run)
    exact = numeric.exact.solve(model, {}, N=4)
    z = np.abs(r.mean - exact.mean) / r.ci95
    assert np.all(z < 5) and np.median(z) < 2  # 95% intervals: a gross miss is a bug
    assert np.allclose(r.mean.reshape(4, 3).sum(axis=1), 1)
    again = sim.simulate(model, {}, **run)
    assert np.array_equal(r.mean, again.mean)
    other = sim.simulate(model, {}, **dict(run, seed=4, steps=2_000))
    assert not np.array_equal(sim.simulate(model, {}, **dict(run, steps=2_000)).mean, other.mean)


def test_N_must_be_the_number_of_objects():
    with pytest.raises(ParameterError, match="N must be the number of objects K = 3"):
        sim.simulate(three_state(3), {}, N=4, steps=1000, reps=2)
