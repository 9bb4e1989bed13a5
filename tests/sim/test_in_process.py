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


def test_the_short_form_reuses_its_first_calls_simulator(monkeypatch):
    """``simulate_supermarket`` names its model (one object per process), so a second
    call with other seeds finds the simulator the first prepared: no model built, no
    simulator prepared again (a fresh model object each call missed every time)."""
    from sim import warm_runs

    made = []
    real = warm_runs.keep

    def counted(key, simulator):
        made.append(key)
        real(key, simulator)

    monkeypatch.setattr(warm_runs, "keep", counted)
    args = dict(N=37, lam="0.85", b=6, steps=2_000, reps=1, batches=4, workers=1)
    first = sim.simulate_supermarket(**args, seed=1)
    again = sim.simulate_supermarket(**args, seed=1)
    sim.simulate_supermarket(**args, seed=2)
    assert len(made) == 1  # prepared by the first call only
    assert _numbers(first) == _numbers(again)
    sim.simulate_supermarket(**{**args, "b": 7}, seed=1)  # another model: prepared afresh
    assert len(made) == 2


def test_a_second_call_neither_solves_nor_compiles_nor_loads_again(runs, monkeypatch):
    import numeric.exact.prepared
    from derive.models import load_model
    from sim.generic_kernels import chain_module, event_loop

    solves = []
    real_mean_field = numeric.exact.prepared.mean_field

    def counted(*args, **kwargs):
        solves.append(args)
        return real_mean_field(*args, **kwargs)

    monkeypatch.setattr(numeric.exact.prepared, "mean_field", counted)
    model = load_model("sir")  # a model object: prepared in this process, not read from disk
    run = {**RUN, "N": 41, "workers": 1}  # an N of this test only: prepared here
    first = sim.simulate(model, PARAMS, **run)
    loop = event_loop(chain_module(model)[1])
    seen = (len(loop.overloads), loop.stats.cache_hits, loop.stats.cache_misses)
    second = sim.simulate(model, PARAMS, **run)
    assert len(solves) == 1  # the mean field of the first call only
    assert (len(loop.overloads), loop.stats.cache_hits, loop.stats.cache_misses) == seen
    assert _numbers(first) == _numbers(second)
    sim.simulate(model, {**PARAMS, "a": "0.2"}, **run)  # other parameters: prepared afresh
    assert len(solves) == 2


def test_a_new_process_simulates_a_prepared_run_without_sympy():
    """The run prepared here is read back by a new process (same numbers), which then
    imports neither SymPy, mpmath nor the mean-field solver, and neither
    ``scipy.linalg`` (numba's BLAS check, :mod:`mfstein.ground.jit`) nor
    ``scipy.special`` (the kept t quantile, :func:`sim.stats.t_quantile`), nor tqdm
    (no progress bar asked for), nor multiprocessing (one worker runs in this process,
    :func:`sim.runner._executor`)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from deadlines import deadline

    run = {**RUN, "N": 43, "workers": 1}
    here = sim.simulate("sir", PARAMS, **run)
    script = (
        "import json, sys\nimport sim\n"
        f"r = sim.simulate('sir', {PARAMS!r}, **{run!r})\n"
        "d = r.to_dict(); d.pop('events_per_second'); d.pop('wall_seconds')\n"
        "heavy = ('sympy', 'mpmath', 'numeric.meanfield', 'scipy.linalg', 'scipy.special',\n"
        "         'tqdm', 'multiprocessing')\n"
        "print(json.dumps([d, [m for m in heavy if m in sys.modules]]))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=root,
        timeout=deadline(120),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    there, imported = json.loads(done.stdout)
    assert imported == []
    assert there == json.loads(json.dumps(_numbers(here)))


def test_a_damaged_prepared_run_is_prepared_afresh():
    from mfstein.ground import cache
    from sim import prepared_runs

    run = {**RUN, "N": 44, "workers": 1}
    first = sim.simulate("sir", PARAMS, **run)
    key = prepared_runs.run_key("sir", PARAMS, 44, None, None, "auto")
    path = cache.cache_dir() / "prepared" / f"{key}.json"
    intact = path.read_text()
    path.write_text(intact.replace('"N": 44', '"N": 45'))  # the digest no longer matches
    assert prepared_runs.load(key) is None
    assert _numbers(sim.simulate("sir", PARAMS, **run)) == _numbers(first)
    assert path.read_text() == intact  # written afresh


def test_the_key_of_a_prepared_run_covers_its_inputs(tmp_path):
    from sim.prepared_runs import run_key

    base = run_key("sir", PARAMS, 40, None, None, "auto")
    assert base == run_key("sir", dict(reversed(PARAMS.items())), 40, None, None, "auto")
    others = [
        run_key("sir", {**PARAMS, "a": "0.2"}, 40, None, None, "auto"),
        run_key("sir", PARAMS, 41, None, None, "auto"),
        run_key("sir", PARAMS, 40, [0.5, 0.5, 0], None, "auto"),
        run_key("sir", PARAMS, 40, None, None, "generic"),
    ]
    assert len({base, *others}) == 5
    model = tmp_path / "m.py"
    model.write_text("# one\n")
    assert run_key(f"{model}:f", {}, 40, None, None, "auto") is None  # may import files
    assert run_key("sir", {"a": object()}, 40, None, None, "auto") is None


@pytest.mark.parametrize("engine", ["generic", "interpreted"])
def test_a_warm_call_runs_its_units_and_nothing_more(monkeypatch, engine):
    """A warm call of a run prepared by name runs the very simulator of the call before
    (made from the run's record, unchanged) and only its own units: one ``advance`` per
    warm-up and batch, no unit of no event to load a loop that is loaded, and no future
    (the units of an in-process run are called directly); the numbers are the first
    call's."""
    import concurrent.futures

    from sim import api

    run = {**RUN, "N": 46, "reps": 2, "workers": 1, "engine": engine}
    first = sim.simulate("sir", PARAMS, **run)  # prepares the run and saves its record
    sim.simulate("sir", PARAMS, **run)  # the simulator made from the record
    opts = sim.base.RunOptions(**{k: run[k] for k in ("steps", "reps", "batches")}).checked()
    _, kept = api._kept_run("sir", PARAMS, 46, None, None, engine, "pod", (), opts)
    assert kept is not None
    assert api._kept_run("sir", PARAMS, 46, None, None, engine, "pod", (), opts)[1] is kept
    units, futures = [], []
    real_advance = type(kept)._advance

    def counted(spec, state, steps):
        units.append(steps)
        return real_advance(spec, state, steps)

    class Counted(concurrent.futures.Future):
        def __init__(self) -> None:
            futures.append(self)
            super().__init__()

    monkeypatch.setattr(type(kept), "_advance", staticmethod(counted))
    monkeypatch.setattr(concurrent.futures, "Future", Counted)
    second = sim.simulate("sir", PARAMS, **run)
    assert len(units) == run["reps"] * (run["batches"] + 1) and 0 not in units
    assert futures == []
    assert _numbers(second) == _numbers(first)


def test_a_simulator_is_made_again_from_a_changed_record_or_unusable_modules():
    """:func:`sim.prepared_runs.simulator` hands back the simulator it made while the record
    read is the same and the simulator still usable; another record (rewritten, or
    damaged: ``None``) or unusable modules make it again; an unusable record's ``None``
    is not kept; :func:`numeric.prepared.cache.forget_all` forgets them."""
    from types import SimpleNamespace

    from numeric.prepared.cache import forget_all
    from sim.prepared_runs import simulator

    made = []

    def build(record):
        made.append(None if record is None or record.get("bad") else SimpleNamespace(ok=True))
        return made[-1]

    key = "test-calls54-" + "0" * 40
    first = simulator(key, {"spec": [1, 2]}, build, lambda s: s.ok)
    assert simulator(key, {"spec": [1, 2]}, build, lambda s: s.ok) is first
    assert len(made) == 1
    other = simulator(key, {"spec": [1, 3]}, build, lambda s: s.ok)
    assert other is not first and len(made) == 2
    other.ok = False  # say, its chain module damaged and no longer held
    assert simulator(key, {"spec": [1, 3]}, build, lambda s: s.ok) is not other
    assert simulator(key, None, build, lambda s: s.ok) is None
    assert simulator(key, {"bad": 1}, build, lambda s: s.ok) is None
    assert simulator(key, {"bad": 1}, build, lambda s: s.ok) is None and len(made) == 6
    kept = simulator(key, {"spec": [1, 4]}, build, lambda s: s.ok)
    assert simulator(key, {"spec": [1, 4]}, build, lambda s: s.ok) is kept
    forget_all()  # with every prepared object of the process (a benchmark's fresh start)
    assert simulator(key, {"spec": [1, 4]}, build, lambda s: s.ok) is not kept
