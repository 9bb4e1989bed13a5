"""Small exact chains without compiled code (issue 34, "Exact chains": a first call
within reach of a direct sparse solve).  :mod:`numeric.exact.small` searches the
lattice one layer at a time in NumPy and assembles ``Q^T`` with SciPy; the
compiled route (:func:`numeric.exact.lattice.explore`) stays for large chains.
Both routes are run here on the same chains and must give the same chain and the
same law."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from deadlines import deadline

from derive.models import as_model, load_model
from mfstein.ground import signals
from mfstein.ground.errors import ParameterError
from numeric.exact import small
from numeric.exact.general import Chain, _centre, _floats

PLAIN = Path(__file__).resolve().parents[2] / "plain_models"
SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}


def _queue():
    """M/M/infinity written the plain way: its chain lives on the unbounded orthant."""
    import sympy as sp

    from derive import Model, Transition

    x, lam = sp.symbols("x lam")
    return Model("queue", (x,), (lam,), [Transition((1,), lam), Transition((-1,), x)])


#: (model, parameters, N, start, truncation): a built-in epidemic, plain user models
#: (two free coordinates under a truncation that cuts nothing, a conserved cache, a
#: truncated orthant that blocks arrivals) and the supermarket's monotone space on the
#: general route
CHAINS = {
    "sir": ("sir", SIR, 30, None, None),
    "two_class": (f"{PLAIN / 'two_class.py'}:two_class", {"lam": "1.2", "mu1": "1", "mu2": "0.5"},
                  12, "0.1,0.1", "0.5"),
    "cache": (f"{PLAIN / 'cache.py'}:cache", {}, 10, "0.2,0.2", None),
    "queue": (_queue(), {"lam": "1.5"}, 10, "0.5", 2),
    "supermarket": ("supermarket", {"b": 3, "lam": "0.9"}, 14, None, None),
}  # fmt: skip


def _solved(name: str, compiled: bool):
    spec, params, N, start, truncation = CHAINS[name]
    model, params = as_model(spec, params)
    ch = Chain.setup(model, N, params, start, truncation, None)
    ch.compiled = compiled
    mf, _ = _centre(ch.placement)
    centre = ch.start.astype(np.float64) if mf is None else N * _floats(mf.s_star)
    reach, QT, _, exit_rate, r = ch._assemble(centre)
    pi = ch.solve(centre, "direct", 1e-12, False).pi
    return ch, reach, QT, exit_rate, r, pi


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_both_routes_give_the_same_chain_and_the_same_law(name):
    ch_np, reach_np, QT_np, q_np, r_np, pi_np = _solved(name, compiled=False)
    ch_c, reach_c, QT_c, q_c, r_c, pi_c = _solved(name, compiled=True)
    assert ch_np.compiled is False and ch_c.compiled is True  # each ran its own route
    # the same states in the same (breadth-first) order, the same pinned state
    assert np.array_equal(reach_np.states, reach_c.states)
    assert r_np == r_c
    assert reach_np.exact_states == reach_c.exact_states
    # the same generator: pattern, values, exit rates and up-rates
    assert np.array_equal(QT_np.indptr, QT_c.indptr)
    assert np.array_equal(QT_np.indices, QT_c.indices)
    scale = float(q_c.max())
    assert np.abs(QT_np.data - QT_c.data).max() <= 1e-14 * scale
    assert np.abs(q_np - q_c).max() <= 1e-14 * scale
    assert np.allclose(reach_np.up_rates, reach_c.up_rates, rtol=1e-14, atol=0.0)
    # and the law
    assert np.abs(pi_np - pi_c).max() <= 1e-12
    assert abs(pi_np.sum() - 1.0) < 1e-13


def test_the_layered_search_is_the_compiled_search_state_by_state():
    """The states are those of a breadth-first queue: each reachable state appears once,
    and each state's jumps lead to the states of the compiled search's targets."""
    _, reach, QT, _, _, _ = _solved("sir", compiled=False)
    S = reach.states.shape[0]
    assert S == 31 * 32 // 2  # S + I + R = 30: every point of the simplex is reached
    assert np.unique(reach.states, axis=0).shape[0] == S
    assert np.all(reach.states.sum(axis=1) == 30)
    # every column of Q^T sums to zero (a generator), read off the NumPy assembly
    assert np.abs(np.asarray(QT.sum(axis=0))).max() <= 1e-12 * abs(QT.diagonal()).max()


def test_a_kernel_that_does_not_vectorise_takes_the_compiled_route():
    """The tandem line's Min(x, 1) is a branch in the kernel's source: the NumPy route
    declines it and the chain is searched by the compiled route."""
    model = load_model(f"{PLAIN / 'tandem.py'}:tandem")
    if small.vector_rates(model) is not None:
        pytest.skip("this build prints Min without a branch")
    ch = Chain.setup(model, 6, {"lam": "0.5"}, "0.3,0.3", 4, None)
    ch.compiled = False
    reach = ch._assemble(ch.start.astype(np.float64))[0]
    assert ch.compiled is True
    assert reach.states.shape[0] > 1


def test_vectorised_rates_equal_the_kernel_point_by_point():
    model = load_model("sir")
    rates = small.vector_rates(model)
    assert rates is not None
    kern = model.kernels("numba")
    p = np.array([3.0, 1.0, 0.5, 0.1])
    pts = np.array([[7, 3, 2], [12, 0, 0], [0, 5, 7], [4, 4, 4]], dtype=np.int64)
    block = rates(pts, 12.0, p)
    for n, row in zip(pts, block, strict=True):
        assert np.allclose(row, kern.rates(n / 12, p), rtol=1e-15, atol=0.0)


@pytest.mark.parametrize("kind", ["monotone", "simplex", "box", "orthant"])
def test_the_status_of_a_block_is_the_compiled_searchs_point_by_point(kind):
    """:func:`numeric.exact.small._status` (coordinates read last to first) says of every
    candidate what the compiled search's ``_inside`` says of it: inside, above the upper
    bound at the first offending coordinate, or outside."""
    from numeric.exact.lattice import _inside
    from numeric.exact.space import KIND_CODES

    rng = np.random.default_rng(KIND_CODES[kind])
    code, upper, total = KIND_CODES[kind], 5, 7
    for b in (1, 2, 3, 4):
        cand = rng.integers(-2, 8, size=(60, 3, b)).astype(np.int64)
        got = small._status(cand, code, upper, total)
        flat = cand.reshape(-1, b)
        want = [_inside.py_func(flat, i, code, upper, total) for i in range(flat.shape[0])]
        assert got.reshape(-1).tolist() == want


def test_the_rows_needing_exact_rates_are_the_compiled_searchs():
    """:func:`numeric.exact.small._needs_exact` (column by column) marks the rows the
    compiled search recomputes exactly (its loop in :func:`numeric.exact.lattice.explore`,
    written out here): a nonzero rate that is not positive or at most ``1e-9`` of the
    row's largest absolute rate; on rows with NaN, infinite, negative and tiny rates."""
    rng = np.random.default_rng(7)
    for nt in (0, 1, 2, 3, 5):
        R = rng.standard_normal((80, nt)) * 10.0 ** rng.integers(-12, 3, size=(80, 1))
        for value, share in ((0.0, 0.2), (np.nan, 0.04), (np.inf, 0.04), (-np.inf, 0.02)):
            R[rng.random(R.shape) < share] = value
        tiny = rng.random(R.shape) < 0.2  # near 1e-9 of the row's largest, on both sides
        R[tiny] *= 10.0 ** rng.choice([-11.0, -9.5, -8.5, -7.0], size=int(tiny.sum()))
        want = []
        for row in R:
            m = 0.0
            for a in np.abs(row):
                m = a if a > m else m
            want.append(any(r != 0.0 and (not r > 0.0 or r <= 1e-9 * m) for r in row))
        assert small._needs_exact(R).tolist() == want
        assert 0 < sum(want) < len(want) or nt == 0


def _refusals(model, N, params, start, max_states=None) -> list[str]:
    """The sentence each route (NumPy's, then the compiled one) refuses the chain with."""
    words = []
    for compiled in (False, True):
        ch = Chain.setup(model, N, params, start, None, None)
        ch.max_states = max_states or ch.max_states
        ch.compiled = compiled
        with pytest.raises(ParameterError) as err:
            ch._assemble(ch.start.astype(np.float64))
        words.append(str(err.value))
    return words


def test_the_routes_refuse_a_jump_off_the_lattice_in_the_same_words():
    """Arrivals in pairs on a box whose rate vanishes only at the top: from ``n = N - 1``
    the pair leaves it."""
    import sympy as sp

    from derive import Model, Transition
    from derive.spec import ModelInfo, StateSpace

    x, lam = sp.symbols("x lam")
    model = Model(
        "pairs", (x,), (lam,), [Transition((2,), lam * (1 - x)), Transition((-1,), x)],
        info=ModelInfo(state_space=StateSpace("box")),
    )  # fmt: skip
    words = _refusals(model, 5, {"lam": "1"}, "0.2")
    assert words[0] == words[1]
    assert "leads out of the declared state space" in words[0]


def test_the_routes_refuse_too_many_states_in_the_same_words():
    model, params = as_model("sir", SIR)
    words = _refusals(model, 30, params, None, max_states=100)
    assert words[0] == words[1]
    assert "more than 100 states" in words[0]


def test_auto_picks_the_route_by_size_and_a_sweep_loads_the_compiled_one(monkeypatch):
    import sympy as sp

    from derive import Model, Transition

    x = sp.Symbol("x")  # a model no earlier solve of this process has compiled
    model = Model("never_solved", (x,), (), [Transition((1,), 3 - x), Transition((-1,), 7 * x)])
    assert small.prefer_compiled(model, small.SMALL_STATES + 1)
    monkeypatch.setattr(small, "_SEARCHES", [0])
    assert not small.prefer_compiled(model, small.SMALL_STATES)
    monkeypatch.setattr(small, "_SEARCHES", [small.COMPILED_AFTER])
    assert small.prefer_compiled(model, 10)


def test_a_lost_press_during_the_numpy_search_stops_it_at_the_next_layer(monkeypatch):
    import numeric.exact

    monkeypatch.setattr(signals, "_received", [])
    monkeypatch.setattr(small, "prefer_compiled", lambda model, bound: False)
    real, layers = small._layer, []

    def pressed(*args):
        out = real(*args)
        signals.note(signal.SIGINT)
        layers.append(1)
        return out

    monkeypatch.setattr(small, "_layer", pressed)
    with pytest.raises(KeyboardInterrupt):  # a model object: no kept record skips the search
        numeric.exact.solve(load_model("sir"), SIR, N=12)
    assert layers == [1]  # stopped before the second layer


CHILD = """
import json
import sys
import numeric.exact
from numeric.exact import lattice, rate_blocks

r = numeric.exact.solve("sir", {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}, N=40)
print(json.dumps({
    "states": r.states,
    "method": r.solver,
    "explore": len(lattice.explore.overloads),
    "rate_loops": len(rate_blocks._MODULES),
    "krylov": "numeric.exact.solvers" in sys.modules,
    "csgraph": "scipy.sparse.csgraph" in sys.modules,
}))
"""


def test_a_new_process_solves_a_small_chain_without_the_compiled_search():
    """A direct solve in a new process loads neither the compiled search and rate
    loops nor the iterative solvers' module (:mod:`numeric.exact.pinned` is enough),
    nor SciPy's graph routines (the queue and the closed class in NumPy)."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True, text=True, env=dict(os.environ), timeout=deadline(300), check=True,
    )  # fmt: skip
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"states": 41 * 42 // 2, "method": "direct", "explore": 0, "rate_loops": 0,
                   "krylov": False, "csgraph": False}  # fmt: skip


def test_a_solve_returns_a_frozen_record_of_the_law():
    """Chain.solve returns a SolvedChain (not a tuple): fields by name, frozen, and its
    residual is the one of its law on its states."""
    import copy
    import dataclasses
    import pickle

    from numeric.exact.general import SolvedChain

    spec, params, N, start, truncation = CHAINS["sir"]
    model, params = as_model(spec, params)
    ch = Chain.setup(model, N, params, start, truncation, None)
    mf, _ = _centre(ch.placement)
    solved = ch.solve(N * _floats(mf.s_star), "direct", 1e-12, False)
    assert isinstance(solved, SolvedChain)
    with pytest.raises(dataclasses.FrozenInstanceError):
        solved.pi = None
    assert solved.pi.shape == (solved.reach.states.shape[0],)
    assert solved.solver == "direct" and solved.iterations == 0
    assert solved.max_exit_rate == float(solved.exit_rate.max()) > 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        del solved.residual
    # compared by identity (its fields are arrays): a copy is another record
    assert solved == solved and solved != copy.copy(solved)
    assert ch != copy.copy(ch) and ch.last.reach != copy.copy(ch.last.reach)
    # a copy (and a pickle, which copies the same way) holds the same fields
    again = pickle.loads(pickle.dumps(solved))
    assert np.array_equal(again.pi, solved.pi) and again.residual == solved.residual
    assert (again.solver, again.iterations) == (solved.solver, solved.iterations)
    assert copy.copy(ch).placement is ch.placement and copy.copy(ch).last is ch.last
    assert ch.last.pi is solved.pi  # kept for a tighter solve of the same chain


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_the_one_pass_search_is_the_layered_search_bit_for_bit(name, monkeypatch):
    """:func:`numeric.exact.small.one_pass` (every lattice point's rates at once, then the
    breadth-first order of the jump graph) finds the states, rates and targets of the
    layered search, in the same order."""
    spec, params, N, start, truncation = CHAINS[name]
    model, params = as_model(spec, params)
    runs, passes = [], []
    real = small.one_pass
    monkeypatch.setattr(small, "one_pass", lambda *a: passes.append(real(*a)) or passes[-1])
    # one pass ordered by SciPy's graph routines, by the queue in Python, then layer by layer
    for points, loaded in (
        (small.ONE_PASS_POINTS, True),
        (small.ONE_PASS_POINTS, False),
        (0, True),
    ):
        monkeypatch.setattr(small, "ONE_PASS_POINTS", points)
        monkeypatch.setattr(small, "_graph_routines_loaded", lambda loaded=loaded: loaded)
        ch = Chain.setup(model, N, params, start, truncation, None)
        ch.compiled = False
        runs.append(ch._search())
    assert passes[0] is not None and passes[1] is not None and passes[2] is None  # as asked
    layered = runs[-1]
    for one in runs[:2]:
        for field in ("states", "rates", "target"):
            assert np.array_equal(getattr(one, field), getattr(layered, field)), field
        assert one.exact_states == layered.exact_states == 0
