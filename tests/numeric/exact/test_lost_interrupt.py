"""A Ctrl-C that a library lost is raised again at the exact solve's next phase
boundary (issue 23, "work with a known size": some ``mfstein exact`` runs went on
to the end after SIGINT).  The ``mfstein`` command records each press
(:func:`mfstein.ground.signals.note`); the search pauses, the assembly's phases and every
Krylov iteration poll :func:`mfstein.ground.signals.check`."""

from __future__ import annotations

import signal

import pytest

import numeric.exact
from mfstein.ground import signals
from numeric.exact import general, lattice, solvers

ARGS = ("supermarket", {"b": 3, "lam": "0.9"})


@pytest.fixture
def no_stop(monkeypatch):
    """A clean record of signals for this test only."""
    monkeypatch.setattr(signals, "_received", [])


def _press_after(monkeypatch, module, name):
    """Record a Ctrl-C (as the command's handler does) once ``module.name`` returns,
    without raising: the ``KeyboardInterrupt`` was lost."""
    real = getattr(module, name)
    calls = []

    def pressed(*args, **kwargs):
        out = real(*args, **kwargs)
        signals.note(signal.SIGINT)
        calls.append(name)
        return out

    monkeypatch.setattr(module, name, pressed)
    return calls


def test_a_library_caller_is_never_interrupted_by_the_poll(no_stop):
    assert not signals.stop_requested()
    signals.check()  # nothing recorded: no exception
    assert numeric.exact.solve(*ARGS, N=6).states > 1


def test_a_lost_press_during_the_search_stops_it_at_its_next_pause(
    no_stop, monkeypatch, compiled_search
):
    monkeypatch.setattr(lattice, "EXPLORE_CHUNK", 7)
    calls = _press_after(monkeypatch, lattice, "explore")
    with pytest.raises(KeyboardInterrupt):
        numeric.exact.solve(*ARGS, N=12)
    assert calls == ["explore"]  # the first pause: no second chunk was searched


def test_a_lost_press_after_the_search_stops_before_the_class_analysis(
    no_stop, monkeypatch, compiled_search
):
    _press_after(monkeypatch, lattice, "reachable")
    analysed = _press_after(monkeypatch, general, "_closed_classes")
    with pytest.raises(KeyboardInterrupt):
        numeric.exact.solve(*ARGS, N=12)
    assert analysed == []


@pytest.mark.parametrize("method", ["bicgstab", "gmres"])
def test_a_lost_press_before_the_krylov_solve_stops_at_its_first_check(
    no_stop, monkeypatch, method
):
    _press_after(monkeypatch, solvers, "_preconditioner")
    with pytest.raises(KeyboardInterrupt):
        numeric.exact.solve(*ARGS, N=12, solver=method)
