"""``numeric.sweep`` (issue 34): one call over a parameter grid whose every row is what
``numeric.solve`` answers at that point within the digits the row states, fixed
points continued from their neighbours, refusals per point, the result's curves,
JSON, CSV and plot, local processes and a Dask cluster; and a warm float64 solve
that runs no SymPy."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy as sp
from profiled import functions_called

import numeric
from derive import Model, Transition
from derive.models import load_model
from derive.spec import ModelInfo, Parameter, StateSpace
from mfstein.ground.errors import ParameterError

ROOT = Path(__file__).resolve().parents[3]
USER = f"{ROOT / 'benchmarks/models/supermarket_user.py'}:supermarket_user"
SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}


def _decay() -> Model:
    """``dx/dt = lam - (2 - lam) x``: the stable fixed point ``lam / (2 - lam)`` for
    ``lam < 2``; beyond, the decay rate is negative (no population process)."""
    x, lam = sp.symbols("x lam")
    return Model(
        "decay",
        (x,),
        (lam,),
        [Transition((1,), lam, "up"), Transition((-1,), (2 - lam) * x, "down")],
        info=ModelInfo(
            parameters=(Parameter("lam", low=0, high=4),), state_space=StateSpace("orthant")
        ),
    )


def _agrees(row, sol) -> None:
    """The row and the single solve agree on every digit both claim."""
    digits = min(row.digits, sol.digits)
    assert row.digits == sol.digits
    assert abs(mpmath.mpf(row.c) - sol.constant) <= 10 ** (1 - digits) * abs(sol.constant)
    err = max(float(max(sol.errors["s_star"])), 1e-300)
    assert (
        max(abs(float(a) - float(b)) for a, b in zip(row.s_star, sol.s_star, strict=True))
        <= 4 * err
    )


@pytest.fixture(scope="module")
def user_model():
    return load_model(USER, b=6)


def test_float64_rows_are_single_solves(user_model) -> None:
    res = numeric.sweep(user_model, {"lam": "0.5:0.98:4"}, precision="float64", order=2)
    assert [r.params["lam"] for r in res.rows] == ["0.5", "0.66", "0.82", "0.98"]  # exact
    for row in res.rows:
        sol = numeric.solve(user_model, {"lam": row.params["lam"]}, precision="float64", order=2)
        _agrees(row, sol)
        assert row.digits2 == sol.digits2
        d2 = row.digits2
        assert abs(mpmath.mpf(row.c2) - sol.c2) <= 10 ** (1 - d2) * abs(sol.c2)


def test_working_precision_rows_and_conservation_laws() -> None:
    """SIR (one conservation law) at 20 digits over beta: rows are single solves."""
    res = numeric.sweep("sir", {**SIR, "beta": [2, "2.5", 3]}, dps=20)
    assert res.precision == "20 digits" and not res.refused
    for row in res.rows:
        sol = numeric.solve("sir", {**SIR, "beta": row.params["beta"]}, dps=20)
        assert row.digits == sol.digits == 20
        assert row.to_dict()["c"] == sol.to_dict()["constant"][: len(row.to_dict()["c"])]


def test_continuation_on_an_invariant_set() -> None:
    """The float64 sweep of SIR continues along beta on the invariant set of the
    reference start; each row is the single solve's answer."""
    res = numeric.sweep("sir", {**SIR, "beta": "2:4:5"}, precision="float64")
    for row in res.rows:
        _agrees(row, numeric.solve("sir", {**SIR, "beta": row.params["beta"]}, precision="float64"))


def test_a_point_without_answer_is_refused_and_the_sweep_goes_on() -> None:
    res = numeric.sweep(_decay(), {"lam": ["0.5", "1", "3", "1.5"]}, precision="float64")
    assert [bool(r.refusal) for r in res.rows] == [False, False, True, False]
    for row in (res.rows[0], res.rows[1], res.rows[3]):
        lam = float(row.params["lam"])
        assert abs(row.s_star[0] - lam / (2 - lam)) <= 1e-12 * lam / (2 - lam)
    assert "decay" in res.rows[2].refusal and res.rows[2].to_dict()["refused"]
    assert np.isnan(res.curve("c")[2]) and len(res.refused) == 1


def test_curves_json_csv_and_plot(tmp_path: Path, user_model) -> None:
    res = numeric.sweep(user_model, {"lam": "0.6:0.9:4"}, precision="float64", observables=["x1"])
    assert np.allclose(res.curve("lam"), [0.6, 0.7, 0.8, 0.9])
    assert np.allclose(res.curve("x1"), res.curve("lam"))  # s*_1 = lam
    assert np.all(np.diff(res.curve("c")) > 0)
    data = json.loads(res.to_json())
    assert len(data["points"]) == 4 and data["points"][0]["observables"]["x1"]["g0"]
    assert 3 <= len(repr(res).splitlines()) <= 12
    path = res.to_csv(tmp_path / "s.csv")
    rows = list(csv.reader(path.open()))
    assert rows[0][:3] == ["lam", "c", "digits"] and len(rows) == 5
    assert rows[1][1] == data["points"][0]["c"]
    res.plot(tmp_path / "s.png")
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ParameterError, match="curve must be one of"):
        res.curve("nope")


def test_two_swept_parameters() -> None:
    grid = {**SIR, "beta": ["2.5", "3"], "gamma": "1:1.5:3"}
    res = numeric.sweep("sir", grid, precision="float64")
    assert [(r.params["beta"], r.params["gamma"]) for r in res.rows][:4] == [
        ("2.5", "1"),
        ("2.5", "1.25"),
        ("2.5", "1.5"),
        ("3", "1"),
    ]
    assert not res.refused


def test_workers_rebuild_a_named_model_with_its_options() -> None:
    """Two processes, each rebuilding the model from its name and ``b``: the same rows."""
    grid = {"b": 4, "lam": "0.5:0.9:6"}
    one = numeric.sweep(USER, grid, precision="float64")
    two = numeric.sweep(USER, grid, precision="float64", workers=2)
    assert two.workers == 2 and len(two.rows[0].s_star) == 4
    for a, b in zip(one.rows, two.rows, strict=True):
        assert a.params == b.params and a.digits == b.digits
        assert abs(a.c - b.c) <= 10 ** (1 - a.digits) * abs(a.c)


@pytest.mark.parametrize(
    "grid,kw,words",
    [
        ({"lam": "0.5:0.9:1"}, {}, "START:STOP:COUNT"),
        ({"lam": "0.5:0.5:3"}, {}, "START != STOP"),
        ({"lam": "0.9"}, {}, "at least one swept parameter"),
        ({"lam": "0.5:2:3"}, {}, "lam must be"),
        ({"lam": [], "b": 3}, {}, "at least one value"),
        ({"lam": "0.5:0.9:3", "b": "2:4:3"}, {}, "option of the factory"),
        ({"lam": "0.5:0.9:3"}, {"workers": 0}, "workers must be"),
        ({"lam": "0.5:0.9:3"}, {"precision": "half"}, "precision must be"),
        ({"lam": "0.5:0.9:3"}, {"order": 3}, "order must be 1 or 2"),
        ({"lam": "0.5:0.9:3"}, {"scheduler": "nope"}, "scheduler must be the address"),
        ({"lam": "0.5:0.9:3"}, {"observables": ["nope + 1"]}, "nope"),
    ],
)
def test_bad_input_is_one_sentence(grid, kw, words) -> None:
    model = USER if "b" in grid else load_model(USER, b=3)
    with pytest.raises(ParameterError, match=words) as info:
        numeric.sweep(model, grid, **kw)
    assert "\n" not in str(info.value)


def test_a_model_without_a_size_is_refused() -> None:
    """A family whose size follows from the precision (``b = inf``) cannot be swept."""
    with pytest.raises(ParameterError, match="fixed dimension"):
        numeric.sweep("jsq_L", {"b": "inf", "L": 2, "alpha": "0.5:0.9:3", "beta": 1})


def test_scheduler_without_dask_is_one_sentence(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # as if not installed
    with pytest.raises(ParameterError, match="install mfstein\\[dist\\]"):
        numeric.sweep(
            _decay(), {"lam": [0.5, 0.6]}, precision="float64", scheduler="tcp://127.0.0.1:1"
        )


def test_on_a_dask_cluster() -> None:
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cl:
        res = numeric.sweep(
            _decay(), {"lam": "0.2:0.8:4"}, precision="float64", scheduler=cl.scheduler_address
        )
    assert not res.refused and len(res.rows) == 4
    assert abs(res.rows[-1].s_star[0] - 0.8 / 1.2) <= 1e-12


def test_a_warm_float64_solve_runs_no_sympy(user_model) -> None:
    """Everything that depends only on the model is prepared once: a second solve at
    new parameters calls no function of SymPy (profiled)."""
    numeric.solve(user_model, {"lam": "0.9"}, precision="float64")
    sol, called = functions_called(
        lambda: numeric.solve(user_model, {"lam": "0.91"}, precision="float64")
    )
    assert sol.digits >= 10
    assert not [f for f in called if "/sympy/" in f]
