"""Issue 23: estimates that cannot be negative are never printed negative.

A simulated ``N Cov(S)`` whose variances come out negative (or a batch with no
thinned sample of the second moments) is withheld with one sentence saying the
run is too short; ``pi`` without any arrival is refused instead of printing
``nan``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from deadlines import deadline

from mfstein.ground.errors import ParameterError
from sim.stats import covariance

ROOT = Path(__file__).resolve().parents[2]


def _cli(argv: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ}
    env.pop("MFSTEIN_TRACEBACK", None)
    return subprocess.run([sys.executable, "-m", "mfstein", *argv], capture_output=True,
                          text=True, timeout=deadline(120), cwd=ROOT, env=env)


def test_covariance_is_withheld_when_a_variance_is_negative() -> None:
    good = np.array([[[1.0, 0.2], [0.2, 0.5]], [[1.2, 0.1], [0.1, 0.7]]])
    est, note = covariance(good, np.array([1.0, 2.0]))
    assert note is None and est.mean[0, 0] == pytest.approx(1.1)
    bad = good.copy()
    bad[:, 1, 1] = -0.3
    est, note = covariance(bad, np.array([1.0, 2.0]))
    assert np.isnan(est.mean).all() and "too short" in note and "-0.3" in note
    est, note = covariance(good, np.array([1.0, 0.0]))  # a batch without a thinned sample
    assert np.isnan(est.mean).all() and "1 of the batches" in note


def test_issue_example_supermarket_short_run_prints_no_negative_variance() -> None:
    """simulate --N 10 --lam 0.9 --b 3 --steps 300 --reps 2 printed -5.74, -2.92, -0.71."""
    proc = _cli(["simulate", "--N", "10", "--lam", "0.9", "--b", "3", "--steps", "300",
                 "--reps", "2", "--workers", "1"])
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("diag N Cov(S)"))
    assert "not reported" in line and "-" not in line.split("=", 1)[1]
    assert "N Cov(S) is not reported: the run is too short" in proc.stderr
    # JSON: null, not a negative number or NaN (which is not JSON)
    proc = _cli(["simulate", "--N", "10", "--lam", "0.9", "--b", "3", "--steps", "300",
                 "--reps", "2", "--workers", "1", "--json"])
    assert proc.returncode == 0 and "NaN" not in proc.stdout
    import json

    cov = json.loads(proc.stdout)["n_cov"]["mean"]
    assert all(v is None for row in cov for v in row)


def test_generic_simulator_short_run_withholds_and_long_run_matches_w() -> None:
    """A 1-state model printed N Var -1.14 against the exact 0.22 on a short run."""
    from derive.models import load_model
    from numeric.meanfield.entry import solve as solve_model
    from sim import simulate

    model = load_model(str(ROOT / "examples" / "birth_death.py") + ":birth_death", cap=1)
    short = simulate(model, {"lam": "0.5"}, N=10, steps=200, reps=2, seed=0, workers=1)
    assert np.isnan(short.n_cov.mean).all()
    assert any("too short" in w for w in short.warnings)
    long = simulate(model, {"lam": "0.5"}, N=10, steps=10**6, reps=2, seed=0, workers=1)
    w = float(solve_model(model, {"lam": "0.5"}, dps=10).W[0, 0])  # 2/9, the N -> oo limit
    est, half = float(long.n_cov.mean[0, 0]), float(long.n_cov.ci95[0, 0])
    assert est > 0 and abs(est - w) < 3 * half + 0.05 * w


def test_pi_without_arrivals_is_refused() -> None:
    """pi --arrivals 0:1 printed mean delay = nan ± nan and exited 0."""
    from derive.models.persistent_idle import make_model

    with pytest.raises(ParameterError, match="no job ever arrives"):
        make_model("0:1", "1:1", n=2)
    proc = _cli(["pi", "--arrivals", "0:1", "--service", "1:1", "--service", "1:1"])
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "nan" not in proc.stdout
