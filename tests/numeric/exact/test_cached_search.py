"""The exact solver's compiled code is cached per model (issue 34, "Exact chains"):
a new process with a warm cache loads the search, the assembly and the model's
rate loop from disk instead of compiling them (the search took the model's
kernel as an argument and was compiled anew in every process: ~3 s of one core
before the first state of SIR at N = 100)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
from deadlines import deadline

import numeric.exact
from numeric.exact import lattice
from numeric.exact.rate_blocks import rate_module, rates_of

SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}

CHILD = """
import json
import numeric.exact
from derive.models import load_model
from numeric.exact import lattice, small
from numeric.exact.rate_blocks import rate_module

small.SMALL_STATES = 0  # the compiled route, which small chains otherwise skip
r = numeric.exact.solve("sir", {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}, N=12)
block = rate_module(load_model("sir")).rates_block
print(json.dumps({
    "states": r.states,
    "misses": [sum(f.stats.cache_misses.values()) for f in (lattice.explore, block)],
    "hits": [sum(f.stats.cache_hits.values()) for f in (lattice.explore, block)],
}))
"""


def test_a_new_process_loads_the_search_and_the_rate_loop_from_the_cache(compiled_search):
    warm = numeric.exact.solve("sir", SIR, N=12)  # compiles (or loads) them in the cache
    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=deadline(300),
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["states"] == warm.states
    assert got["misses"] == [0, 0]  # nothing compiled in the new process
    assert all(h >= 1 for h in got["hits"])


def test_the_rate_loop_equals_the_kernel_state_by_state():
    from derive.models import load_model

    model = load_model("sir")
    kern = model.kernels("numba")
    p = np.array([3.0, 1.0, 0.5, 0.1])
    states = np.array([[7, 3, 2], [12, 0, 0], [0, 5, 7]], dtype=np.int64)
    R, bad = rates_of(model, states, 12, p, 3)
    assert bad == -1
    for n, row in zip(states, R, strict=True):
        assert np.array_equal(row, kern.rates(n / 12, p))
    assert rate_module(model) is rate_module(model)  # one module per model and process
    assert lattice.explore.stats is not None
