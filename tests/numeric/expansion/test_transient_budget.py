"""A transient that cannot finish ends in one sentence, never runs without end."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pytest

from derive.models import load_model
from mfstein.errors import NumericalError, ParameterError

# the module (the package attribute numeric.transient is the function)
tr = importlib.import_module("numeric.expansion.transient")


def test_horizon_beyond_the_declared_limit_is_refused_before_work() -> None:
    model = load_model("supermarket", b=3)
    with pytest.raises(ParameterError, match="at most 1e\\+12"):
        tr.transient(model, {"lam": 0.9}, times=[0.0, 1e300], start=None)


def test_evaluation_budget_stops_an_integration_that_needs_more(monkeypatch) -> None:
    model = load_model("supermarket", b=3)
    times = np.linspace(0.0, 5.0, 6)
    full = tr.transient(model, {"lam": 0.9}, times=times, start=None)  # well inside the budget
    monkeypatch.setattr(tr, "MAX_RHS_EVALS", 20)
    with pytest.raises(NumericalError, match="more than 20 right-hand-side evaluations"):
        tr.transient(model, {"lam": 0.9}, times=times, start=None)
    assert np.all(np.isfinite(full.x))


def test_cli_refuses_an_absurd_horizon_in_one_line() -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "mfstein",
            "transient",
            "--model",
            "supermarket",
            "--param",
            "b=3",
            "--param",
            "lam=0.9",
            "--t",
            "0:1e300:3",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "at most 1e+12" in r.stderr


def test_dps_beyond_the_transient_limit_is_refused_before_work() -> None:
    import time

    from mfstein.limits import TRANSIENT_MAX_DPS

    model = load_model("supermarket", b=3)
    for dps in (TRANSIENT_MAX_DPS + 1, 10_000):
        t0 = time.monotonic()
        message = f"dps of transient must be at most {TRANSIENT_MAX_DPS}"
        with pytest.raises(ParameterError, match=message):
            tr.transient(model, {"lam": 0.9}, times=[0.0, 1.0], dps=dps)
        assert time.monotonic() - t0 < 1.0
