"""Rent or buy under ``engine="auto"`` (:mod:`sim.rent`): the events run on the
interpreted loop in place of a model's compiled loop are counted, in the process and
in the cache directory, and the run that takes the count past the loop's compile
time runs compiled."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import sympy as sp

from derive import Model, Transition
from sim import generic_kernels, loop_prices, rent
from sim.api import simulate
from sim.interpreted import extra_seconds, model_tables

#: Events per run, and the runs the compile-time estimate below buys at.
EVENTS = 2000
RUNS = 3


def _queue(name: str) -> Model:
    """A birth-death queue (one coordinate, two polynomial rates: a loop numba compiles
    in about a second)."""
    n, lam = sp.symbols("n lam")
    return Model(name, (n,), (lam,), [Transition((1,), lam * (1 - n)), Transition((-1,), n)])


def _price(monkeypatch, model: Model) -> None:
    """Make the compile-time estimate of every loop not compiled yet (the estimate only:
    :func:`sim.generic_kernels.compile_seconds` and its floor) the extra of
    ``RUNS * EVENTS - 1`` events of ``model`` on the interpreted loop: ``RUNS - 1`` runs
    of ``EVENTS`` rent, the next one buys.  The other one-time prices
    (:mod:`sim.loop_prices`: the interpreted loop's compilation, the helpers', SymPy's
    generation) are estimated as nothing, so that the price is that one alone."""
    price = extra_seconds(model_tables(model), RUNS * EVENTS - 1) * (1 + 1e-9)
    estimate = generic_kernels.compile_seconds

    def compile_seconds(mod, unrolled=True):
        return None if estimate(mod, unrolled) is None else price

    monkeypatch.setattr(generic_kernels, "compile_seconds", compile_seconds)
    monkeypatch.setattr(generic_kernels, "MIN_COMPILE_SECONDS", price)
    for name in (
        "INTERPRETED_SECONDS", "HELPERS_SECONDS", "KERNELS_SECONDS",
        "KERNELS_SECONDS_PER_TRANSITION", "CHAIN_SECONDS_PER_TRANSITION",
    ):  # fmt: skip
        monkeypatch.setattr(loop_prices, name, 0.0)


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A cache directory of its own (no loop compiled, no rent kept) and no rent counted
    in this process."""
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(rent, "_SPENT", {})
    monkeypatch.setattr(rent, "_WRITTEN", {})
    monkeypatch.setattr(rent, "_UNWRITTEN", set())
    return tmp_path


def _pick(model: Model, events: int):
    from sim.base import RunOptions
    from sim.interpreted import pick_loop

    return pick_loop(model, [], RunOptions(steps=events, reps=1).checked())[0]


def test_auto_rents_until_the_extra_paid_reaches_the_compile_time(fresh, monkeypatch):
    from sim.generic import GenericSimulator
    from sim.interpreted import InterpretedSimulator

    model = _queue("queue_rent")  # a model no other test loads
    _price(monkeypatch, model)
    chain = generic_kernels.chain_name(model)
    run = dict(N=20, steps=EVENTS, reps=1, workers=1)
    for k in range(1, RUNS):  # each run alone, and the runs so far, cost less than buying
        assert simulate(model, {"lam": "0.5"}, seed=k, **run).loop == "interpreted"
        assert rent.spent(chain) == k * EVENTS
    assert _pick(model, EVENTS - 1) is InterpretedSimulator  # still within the price
    assert _pick(model, EVENTS) is GenericSimulator  # the run that reaches it buys
    # judged alone, as before the rent was counted, the same run would rent again
    monkeypatch.setattr(rent, "_SPENT", {})
    for path in fresh.glob("prepared/rent-*.json"):
        path.unlink()
    assert _pick(model, EVENTS) is InterpretedSimulator


def test_the_rent_is_kept_for_a_new_process(fresh, monkeypatch):
    """Each process (a shell loop of CLI runs) adds its payments to the count kept in
    the cache directory: at once on its first, at exit for those that came within
    :data:`sim.rent.WRITE_SECONDS` of a write."""

    def process(code: str) -> str:
        code = f"from sim import rent\n{code}"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    process("rent.pay('simchain_test_rent', 1234)")
    process("rent.pay('simchain_test_rent', 700); rent.pay('simchain_test_rent', 66)")
    assert json.loads(process("print(rent.spent('simchain_test_rent'))")) == 2000
    assert rent.spent("simchain_test_rent") == 2000  # this process reads it too
    # no write after the first, whatever the time between the calls (a loaded machine
    # may take more than WRITE_SECONDS between two lines)
    monkeypatch.setattr(rent, "WRITE_SECONDS", float("inf"))
    rent.pay("simchain_test_rent", 1)
    rent.pay("simchain_test_rent", 2)  # within WRITE_SECONDS: counted, written at exit
    assert rent.spent("simchain_test_rent") == 2003
    assert rent._UNWRITTEN == {"simchain_test_rent"}
    rent.flush()
    assert json.loads(process("print(rent.spent('simchain_test_rent'))")) == 2003
    assert rent.spent("simchain_other") == 0 and rent.spent(None) == 0


def test_a_kept_run_by_name_counts_its_rent(fresh, monkeypatch):
    """A model given by name is kept on the interpreted loop for later calls and
    processes (:mod:`sim.prepared_runs`); each kept run pays its rent, and the kept
    choice is dropped once the rent reaches the price (the run is chosen afresh)."""
    from derive.models import load_model
    from mfstein.ground import generated
    from sim.api import _kept_run
    from sim.base import RunOptions

    sir = load_model("sir")
    _price(monkeypatch, sir)
    chain = generic_kernels.chain_name(sir)
    # SIR's loop, loaded in this process by an earlier test, is not compiled here; the
    # modules this test generates in its cache directory are forgotten after it
    chains = {k: v for k, v in generic_kernels._CHAINS.items() if k != chain}
    monkeypatch.setattr(generic_kernels, "_CHAINS", chains)
    monkeypatch.setattr(generated, "_loaded", dict(generated._loaded))
    params = {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}
    run = dict(N=23, steps=EVENTS, reps=1, workers=1)
    opts = RunOptions(steps=EVENTS, reps=1).checked()
    for k in range(1, RUNS):
        assert simulate("sir", params, seed=k, **run).loop == "interpreted"
        assert rent.spent(chain) == k * EVENTS
        kept = _kept_run("sir", params, 23, None, None, "auto", "pod", (), opts)[1]
        assert (kept is None) == (k == RUNS - 1), k  # kept while the next run is within


@pytest.mark.slow
def test_the_run_that_reaches_the_price_runs_compiled(fresh, monkeypatch):
    """End to end (numba compiles the model's loop: seconds): the runs rent, the run
    that reaches the price runs compiled, and the runs after it too."""
    model = _queue("queue_rent_bought")  # a model no other test loads
    _price(monkeypatch, model)
    run = dict(N=20, steps=EVENTS, reps=1, workers=1)
    loops = [simulate(model, {"lam": "0.5"}, seed=k, **run).loop for k in range(RUNS + 1)]
    assert loops == ["interpreted"] * (RUNS - 1) + ["compiled"] * 2
