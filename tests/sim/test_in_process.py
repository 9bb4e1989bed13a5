"""Simulation without per-call overhead (issue 34): a small run stays in this process
with the numbers a worker process gives for the same seed, and a second call reuses
what the first prepared and loaded (no mean-field solve, no compile, no cache load)."""

from __future__ import annotations

import pytest

import sim
from sim import runner

PARAMS = {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}
RUN = dict(N=40, steps=20_000, reps=2, batches=4, seed=5)


def _numbers(r) -> dict:
    out = r.to_dict()
    for k in ("events_per_second", "wall_seconds"):
        out.pop(k)
    return out


@pytest.fixture
def runs(monkeypatch) -> list[runner.RunOutput]:
    """Every :class:`sim.runner.RunOutput` of the test, in order."""
    seen: list[runner.RunOutput] = []
    real = runner.run

    def keep(*args, **kwargs):
        seen.append(real(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(runner, "run", keep)
    return seen


@pytest.mark.parametrize("workers", [1, 2])
def test_a_small_run_stays_in_process_with_a_worker_runs_numbers(runs, monkeypatch, workers):
    here = sim.simulate("sir", PARAMS, **RUN, workers=workers)
    assert runs[-1].in_process
    monkeypatch.setattr(runner, "INLINE_EVENTS", 0)  # every run is "large": worker processes
    there = sim.simulate("sir", PARAMS, **RUN, workers=workers)
    assert not runs[-1].in_process
    assert _numbers(here) == _numbers(there)
    other = sim.simulate("sir", PARAMS, **{**RUN, "seed": 6}, workers=workers)
    assert other.n_mse.mean != here.n_mse.mean


def test_the_supermarket_in_process_gives_a_worker_runs_numbers(runs, monkeypatch):
    args = dict(N=30, lam="0.9", b=10, steps=50_000, reps=2, batches=4, seed=3, workers=2)
    here = sim.simulate_supermarket(**args)
    assert runs[-1].in_process
    monkeypatch.setattr(runner, "INLINE_EVENTS", 0)
    there = sim.simulate_supermarket(**args)
    assert not runs[-1].in_process
    assert _numbers(here) == _numbers(there)


def test_a_second_call_neither_solves_nor_compiles_nor_loads_again(runs, monkeypatch):
    import numeric.prepared
    from derive.models import load_model
    from sim.generic_kernels import chain_module, event_loop

    solves = []
    real_mean_field = numeric.prepared.mean_field

    def counted(*args, **kwargs):
        solves.append(args)
        return real_mean_field(*args, **kwargs)

    monkeypatch.setattr(numeric.prepared, "mean_field", counted)
    run = {**RUN, "N": 41, "workers": 1}  # an N of this test only: prepared here
    first = sim.simulate("sir", PARAMS, **run)
    loop = event_loop(chain_module(load_model("sir"))[1])
    seen = (len(loop.overloads), loop.stats.cache_hits, loop.stats.cache_misses)
    second = sim.simulate("sir", PARAMS, **run)
    assert len(solves) == 1  # the mean field of the first call only
    assert (len(loop.overloads), loop.stats.cache_hits, loop.stats.cache_misses) == seen
    assert _numbers(first) == _numbers(second)
    sim.simulate("sir", {**PARAMS, "a": "0.2"}, **run)  # other parameters: prepared afresh
    assert len(solves) == 2
