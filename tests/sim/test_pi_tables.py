"""The PI simulator's alias tables are built once per distinct capacity pmf (issue 23,
"work with a known size": ``pi`` with 10^6 identical servers spent 15 s per unit of
work tabulating the same pmf 10^6 times before any progress showed), and the
model's description (the checkpoint's configuration) converts each distinct pmf once."""

from __future__ import annotations

import numpy as np

import sim.pi as P
from derive.models.persistent_idle import make_model
from sim import pi_kernels as K

ARRIVALS = "0:.4,2:.2,4:.3,6:.1"


def _per_server(model):
    """The tables tabulated server by server (the reference)."""
    n, width = model.n, max(len(s.values) for s in model.services)
    val, thr = np.zeros((n, width), dtype=np.int64), np.ones((n, width))
    alias, k = np.zeros((n, width), dtype=np.int64), np.zeros(n, dtype=np.int64)
    for i, s in enumerate(model.services):
        m = len(s.values)
        thr[i, :m], alias[i, :m] = K.alias_table(s.probs)
        val[i, :m], k[i] = s.values, m
    return {"s_val": val, "s_thr": thr, "s_alias": alias, "s_k": k}


def test_mixed_servers_get_the_tables_of_their_own_pmf():
    model = make_model(ARRIVALS, ["1:1", "1:.5,2:.5", "1:.2,2:.3,3:.5", "1:1"])
    got, want = P._tables(model), _per_server(model)
    for key, table in want.items():
        assert got[key].dtype == table.dtype and np.array_equal(got[key], table), key


def test_identical_servers_are_tabulated_once(monkeypatch):
    model = make_model(ARRIVALS, "1:.5,2:.5", n=100_000)
    calls = []
    real = K.alias_table

    def counting(probs):
        calls.append(len(probs))
        return real(probs)

    monkeypatch.setattr(K, "alias_table", counting)
    got = P._tables(model)
    assert len(calls) == 2  # the batch pmf and the one capacity pmf, not 100,001
    first = _per_server(make_model(ARRIVALS, "1:.5,2:.5", n=1))
    for key, row in first.items():
        assert np.array_equal(got[key], np.repeat(row, model.n, axis=0)), key


def test_the_model_description_converts_each_distinct_pmf_once_with_the_same_json():
    import json

    for services, n in (("1:.5,2:.5", 1000), (["1:1", "1:.5,2:.5", "1:1"], None)):
        model = make_model(ARRIVALS, services, n)
        want = {**model.to_dict(), "services": [s.to_dict() for s in model.services]}
        assert json.dumps(model.to_dict()) == json.dumps(want)
