"""The exact solver's first call in a new process (issue 34, "Exact chains"): what
the exact route prepares for a library model (the lattice, the start, the
parameters, the mean field's ``s*, V, W, c``) is kept on disk under the key of the
call (:mod:`numeric.exact.kept`), so a later process answers without SymPy; the
law is the one a direct sparse solve of the same generator gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse.linalg as spla
from deadlines import deadline

import numeric.exact
from numeric.exact.general import Chain
from numeric.exact.kept import KeptModel
from numeric.exact.solvers import normalise, pinned, residual

SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}

CHILD = """
import json, sys
import numeric.exact
r = numeric.exact.solve("sir", {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}, N=23)
print(json.dumps({"sympy": "sympy" in sys.modules, "mpmath": "mpmath" in sys.modules,
                  "dispatcher": "numba.core.dispatcher" in sys.modules,
                  "csgraph": "scipy.sparse.csgraph" in sys.modules,
                  "pi": r.pi.tolist(), "s_star": r.s_star.tolist(), "n_mse": r.n_mse}))
"""


def _per_state():
    """Bytes per state the exact route plans for SIR (3 coordinates, its transitions)."""
    from derive.models import load_model
    from numeric.exact.memory import bytes_per_state

    return bytes_per_state(3, int(load_model("sir").kernels("numba").jumps.shape[0]))


def _fields(r):
    return (r.states, r.residual, r.start, r.law_values, r.params, r.notes, r.solver)


def test_a_second_call_reads_the_kept_record_and_gives_the_same_numbers():
    first = numeric.exact.solve("sir", SIR, N=17)
    again = numeric.exact.solve("sir", SIR, N=17)
    assert isinstance(again.source_model, KeptModel)  # no model built the second time
    assert _fields(again) == _fields(first)
    for name in ("pi", "s_star", "V", "W", "mean", "n_bias", "n_cov", "up_rate", "n_mse"):
        assert np.array_equal(getattr(again, name), getattr(first, name)), name
    got, want = again.expect("I"), first.expect("I")  # the model, built on demand
    assert (got.mean, got.variance) == (want.mean, want.variance)


def test_a_new_process_answers_from_the_record_without_sympy():
    warm = numeric.exact.solve("sir", SIR, N=23)  # writes the record (or finds it)
    child = [sys.executable, "-c", CHILD]  # the same cache directory (the environment's)
    out = subprocess.run(child, capture_output=True, text=True, timeout=deadline(300), check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert not got["sympy"] and not got["mpmath"]
    assert not got["dispatcher"]  # the kernels' source ran as plain Python (load_plain)
    assert not got["csgraph"]  # no search: the generator kept beside the record
    assert np.array_equal(got["pi"], warm.pi)
    assert got["s_star"] == warm.s_star.tolist() and got["n_mse"] == warm.n_mse


def test_a_record_whose_kernel_module_is_gone_is_prepared_afresh(tmp_path):
    from mfstein.ground import records
    from numeric.exact.kept import call_key

    first = numeric.exact.solve("sir", SIR, N=19)
    key = call_key("sir", SIR, 19, None, None, None, route="auto")
    record = records.load(key)
    assert record is not None
    record["kernel"] = str(tmp_path / "kernels_numba_gone.py")
    records.save(key, record)
    again = numeric.exact.solve("sir", SIR, N=19)
    assert not isinstance(again.source_model, KeptModel)  # prepared from the model
    assert np.array_equal(again.pi, first.pi) and again.n_mse == first.n_mse
    healed = records.load(key)["kernel"]  # written afresh, naming the module that exists
    assert healed != record["kernel"] and os.path.isfile(healed)


def _against_spsolve(model, params, N, **kw):
    """The exact result and the law of ``spsolve`` on the same pinned generator."""
    from derive.models import as_model

    r = numeric.exact.solve(model, params, N=N, **kw)
    ch = Chain.setup(*as_model(model, params)[:1], N, params, kw.get("start"), None, None)
    _, QT, _, _, ref = ch._assemble(np.asarray(r.s_star, dtype=float) * N)
    rhs = np.zeros(QT.shape[0])
    rhs[ref] = 1.0
    pi = normalise(spla.spsolve(pinned(QT, ref).tocsc(), rhs))
    qmax = float(-QT.diagonal().min())
    return r, pi, residual(QT, pi) / qmax


def test_the_sir_law_is_spsolves_within_the_residual_tolerance():
    r, pi, rel = _against_spsolve("sir", SIR, 40)
    assert r.relative_residual <= r.tolerance and rel <= r.tolerance
    assert np.abs(r.pi - pi).sum() <= r.tolerance


def test_a_user_model_of_transitions_only_is_spsolves_law():
    import sympy as sp

    from derive import Model, Transition

    s, i, beta, gamma = sp.symbols("s i beta gamma")
    m = Model(
        "sis-user",
        (s, i),
        (beta, gamma),
        [Transition((-1, 1), beta * s * i + s / 10), Transition((1, -1), gamma * i)],
    )
    params = {"beta": "2", "gamma": "1"}
    r, pi, rel = _against_spsolve(m, params, 60, start=["0.9", "0.1"])
    assert r.states == 61 and set(r.state_array.sum(axis=1)) == {60}
    assert r.relative_residual <= r.tolerance and rel <= r.tolerance
    assert np.abs(r.pi - pi).sum() <= r.tolerance


def test_a_call_at_a_new_N_reads_the_record_of_another_N_and_gives_the_same_numbers():
    from derive.models import load_model

    numeric.exact.solve("sir", SIR, N=29)  # keeps the record of the call at any N
    got = numeric.exact.solve("sir", SIR, N=31)
    assert isinstance(got.source_model, KeptModel)  # no model built at N = 31
    want = numeric.exact.solve(load_model("sir"), SIR, N=31)  # an object: prepared afresh
    assert _fields(got) == _fields(want)
    for name in ("pi", "state_array", "s_star", "V", "W", "mean", "n_bias", "n_cov", "n_mse"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    from mfstein.ground import records
    from numeric.exact.kept import call_key

    key = call_key("sir", SIR, 31, None, None, None, route="auto")
    kept = records.load(key)
    assert kept["start"] == got.start  # the record at N = 31, kept after the solve
    arrays = records.load_arrays(key, kept["assembly"])
    assert np.array_equal(arrays["states"], got.state_array)  # with its generator


def test_a_record_of_another_N_serves_only_where_the_mean_field_cannot_move():
    from mfstein.ground import records
    from numeric.exact.kept import at_size, model_key

    numeric.exact.solve("sir", SIR, N=20)
    rec = records.load(model_key("sir", SIR, None, None, None, route="auto"))
    assert rec is not None and rec["any_n"]["unique_fixed_point"]  # SIR declares one
    at100 = at_size(rec, 100)  # N s0 = (99, 1, 0), the reference point
    assert at100["start"] == [99, 1, 0] and at100["lattice"]["values"] == ["100"]
    assert at100["lattice"]["upper"] == 100 and at100["mean_field"] == rec["mean_field"]
    # without the declaration, S + I + R = N is kept but n0 / N moves: prepared afresh
    at100["any_n"]["unique_fixed_point"] = False
    assert at_size(at100, 101) is None  # n0 = (100, 1, 0)
    assert at_size(at100, 200)["start"] == [198, 2, 0]  # the same n0 / N
    assert at_size({k: v for k, v in rec.items() if k != "any_n"}, 100) is None


def test_a_damaged_or_missing_kept_generator_is_searched_again_and_kept_again():
    from mfstein.ground import records
    from numeric.exact.kept import call_key

    first = numeric.exact.solve("sir", SIR, N=21)
    key = call_key("sir", SIR, 21, None, None, None, route="auto")
    digest = records.load(key)["assembly"]
    arrays = records.load_arrays(key, digest)
    assert arrays is not None and arrays["states"].shape == (first.states, 3)
    assert np.array_equal(arrays["states"], first.state_array)
    path = records._arrays_path(key)
    path.write_bytes(path.read_bytes()[:-10])  # damaged: its check no longer matches
    assert records.load_arrays(key, digest) is None
    again = numeric.exact.solve("sir", SIR, N=21)
    assert isinstance(again.source_model, KeptModel)  # the record served, the search ran
    assert _fields(again) == _fields(first)
    for name in ("pi", "state_array", "mean", "n_cov", "up_rate", "n_mse"):
        assert np.array_equal(getattr(again, name), getattr(first, name)), name
    healed = records.load(key)["assembly"]  # kept again with the record
    assert np.array_equal(records.load_arrays(key, healed)["states"], first.state_array)


def test_a_torn_kept_record_is_a_miss_and_is_kept_again():
    """A record left empty or torn (written without a flush to disk, then a crash of
    the system) is never read: the call is answered as at a new N (from the record
    of the call at any N), with the same numbers, and its record is written again."""
    from mfstein.ground import records
    from numeric.exact.kept import call_key

    first = numeric.exact.solve("sir", SIR, N=24)
    key = call_key("sir", SIR, 24, None, None, None, route="auto")
    path = records._path(key)
    whole = path.read_bytes()
    for torn in (b"", whole[: len(whole) // 2], whole[:-3], bytes(len(whole))):
        path.write_bytes(torn)
        assert records.load(key) is None
        again = numeric.exact.solve("sir", SIR, N=24)
        assert _fields(again) == _fields(first)
        for name in ("pi", "state_array", "s_star", "W", "mean", "n_cov", "n_mse"):
            assert np.array_equal(getattr(again, name), getattr(first, name)), name
        kept = records.load(key)  # written again, whole, with its generator
        assert kept is not None and kept["start"] == first.start
        arrays = records.load_arrays(key, kept["assembly"])
        assert np.array_equal(arrays["states"], first.state_array)


def test_a_kept_generator_larger_than_the_memory_limit_is_refused_as_before():
    from mfstein.ground.errors import ParameterError

    numeric.exact.solve("sir", SIR, N=22)  # keeps the generator of 276 states
    with pytest.raises(ParameterError, match="more than 100 states"):
        numeric.exact.solve("sir", SIR, N=22, memory_limit=100 * _per_state())


def test_a_kept_record_gives_the_parameters_in_the_order_of_the_call():
    """The record is written with its keys sorted; the result read from it lists the
    parameters as the call gave them, as the first call's result did (its JSON is the
    same whether the process found a record or not)."""
    given = {"rho": "0.5", "gamma": "1", "beta": "3", "a": "0.1"}  # not sorted
    first = numeric.exact.solve("sir", given, N=19)
    again = numeric.exact.solve("sir", given, N=19)
    assert isinstance(again.source_model, KeptModel)
    assert list(first.params) == list(given) == list(again.params)
    assert json.loads(again.to_json())["params"] == json.loads(first.to_json())["params"]
    assert list(json.loads(again.to_json())["params"]) == list(given)
    other = numeric.exact.solve("sir", dict(sorted(given.items())), N=19)  # the same record
    assert isinstance(other.source_model, KeptModel)
    assert list(other.params) == sorted(given)
