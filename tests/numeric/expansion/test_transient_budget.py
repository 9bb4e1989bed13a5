"""A transient that cannot finish ends in one sentence, never runs without end."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
from deadlines import deadline
from in_process import run_main

from derive.models import load_model
from mfstein.ground.errors import NumericalError, ParameterError

# the module (the package attribute numeric.transient is the function)
tr = importlib.import_module("numeric.expansion.transient")
routes = importlib.import_module("numeric.expansion.transient_routes")  # the integrators


def test_horizon_beyond_the_declared_limit_is_refused_before_work() -> None:
    model = load_model("supermarket", b=3)
    with pytest.raises(ParameterError, match="at most 1e\\+12"):
        tr.transient(model, {"lam": 0.9}, times=[0.0, 1e300], start=None)


def test_evaluation_budget_stops_an_integration_that_needs_more(monkeypatch) -> None:
    model = load_model("supermarket", b=3)
    times = np.linspace(0.0, 5.0, 6)
    full = tr.transient(model, {"lam": 0.9}, times=times, start=None)  # well inside the budget
    monkeypatch.setattr(routes, "MAX_RHS_EVALS", 20)
    with pytest.raises(NumericalError, match="more than 20 right-hand-side evaluations"):
        tr.transient(model, {"lam": 0.9}, times=times, start=None)
    assert np.all(np.isfinite(full.x))


def test_cli_refuses_an_absurd_horizon_in_one_line(capsys) -> None:
    """``mfstein transient`` run in this process (:func:`in_process.run_main`)."""
    argv = ["transient", "--model", "supermarket", "--param", "b=3", "--param", "lam=0.9"]
    r = run_main([*argv, "--t", "0:1e300:3"], Path.cwd(), capsys, timeout=120)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "at most 1e+12" in r.stderr


def test_dps_beyond_the_transient_limit_is_refused_before_work() -> None:
    import time

    from mfstein.ground.limits import TRANSIENT_MAX_DPS

    model = load_model("supermarket", b=3)
    for dps in (TRANSIENT_MAX_DPS + 1, 10_000):
        t0 = time.monotonic()
        message = rf"^dps must be an integer >= 5 and <= {TRANSIENT_MAX_DPS}, got {dps}\.$"
        with pytest.raises(ParameterError, match=message):
            tr.transient(model, {"lam": 0.9}, times=[0.0, 1.0], dps=dps)
        assert time.monotonic() - t0 < deadline(1.0)


SIR = {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}


def test_an_mpmath_transient_beyond_the_time_budget_is_refused_before_work() -> None:
    import time

    from mfstein.ground.limits import TIME_BUDGET_SECONDS, transient_taylor_seconds

    model = load_model("sir")
    tr.transient(model, SIR, times=[0.0, 0.1], start="0.75,0.25,0")  # kernels compiled
    # the estimate grows with each of its sizes
    base = transient_taylor_seconds(22, 50, 10.0, 1.5)
    for bigger in ((98, 50, 10.0, 1.5), (22, 60, 10.0, 1.5), (22, 50, 20.0, 1.5), (22, 50, 10, 3)):
        assert transient_taylor_seconds(*bigger) > base
    assert transient_taylor_seconds(22, 60, 100.0, 1.5) > TIME_BUDGET_SECONDS
    t0 = time.monotonic()
    with pytest.raises(ParameterError, match=r"would take about .* the limit is 10\.0 min"):
        tr.transient(model, SIR, times=[0.0, 100.0], start="0.75,0.25,0", order=2, dps=60)
    assert time.monotonic() - t0 < deadline(5.0)


def test_progress_bar_on_standard_error(capsys) -> None:
    model = load_model("sir")
    quiet = tr.transient(model, SIR, times=[0.0, 1.0, 2.0], start="0.75,0.25,0")
    assert capsys.readouterr().err == ""
    shown = tr.transient(model, SIR, times=[0.0, 1.0, 2.0], start="0.75,0.25,0", progress=True)
    err = capsys.readouterr().err
    assert "transient (LSODA)" in err and "t = " in err and "/2 " in err
    assert np.array_equal(quiet.x, shown.x) and np.array_equal(quiet.W, shown.W)
    tr.transient(model, SIR, times=[0.0, 0.5], start="0.75,0.25,0", dps=8, progress=True)
    err = capsys.readouterr().err
    assert "transient (mpmath, 18 digits)" in err and "transient (mpmath, 28 digits)" in err
