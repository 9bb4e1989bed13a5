"""The reachable-state search hands control back to Python every
``EXPLORE_CHUNK`` states (issue 23, "work with a known size": compiled code does
not see Ctrl-C, so a search of millions of states ignored it for minutes) and
resumes where it stopped: the chain and its law do not depend on the chunk."""

from __future__ import annotations

import numpy as np

import numeric.exact
from numeric.exact import lattice


def test_a_paused_search_resumes_to_the_same_chain(monkeypatch, compiled_search):
    whole = numeric.exact.solve("supermarket", {"b": 3, "lam": "0.9"}, N=12)
    statuses: list[int] = []
    explore = lattice.explore

    def counting(*args):
        out = explore(*args)
        statuses.append(int(out[0]))
        return out

    monkeypatch.setattr(lattice, "explore", counting)
    monkeypatch.setattr(lattice, "EXPLORE_CHUNK", 7)
    chunked = numeric.exact.solve("supermarket", {"b": 3, "lam": "0.9"}, N=12)
    assert whole.states > 7 * 10  # so the search paused many times
    assert statuses.count(lattice.PAUSED) == (whole.states - 1) // 7  # every 7 states
    assert statuses[-1] == lattice.DONE
    assert chunked.states == whole.states
    assert np.array_equal(np.asarray(chunked.pi), np.asarray(whole.pi))
    assert chunked.n_mse == whole.n_mse
