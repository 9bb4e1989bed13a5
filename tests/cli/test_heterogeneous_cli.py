"""The command line takes heterogeneous populations (issue 33): solve, exact,
simulate, transient and table give the Python entries' numbers, JSON that parses,
and bad input as one sentence with exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import numeric
import numeric.exact
from derive.models import load_model
from mfstein.cli import main
from numeric.heterogeneous.observables import observe

MODEL = ["--model", "power_of_d_heterogeneous", "--param", "K=4", "--param", "d=3",
         "--param", "speed_classes=1,2", "--param", "lam=0.5"]
PY = dict(K=4, d=3, speed_classes="1,2")
LAM = {"lam": "0.5"}


def _json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_solve_json_is_the_python_entry(capsys):
    out = _json(capsys, "solve", *MODEL, "--observable", "response_time", "--float64")
    sol = numeric.solve(load_model("power_of_d_heterogeneous", **PY), LAM, precision="float64",
                        observables=["response_time"])
    assert out["s_star"] == sol.to_dict()["s_star"] and out["V"] == sol.to_dict()["V"]
    got = out["observables"]["response_time"]["refined"]
    assert got == sol.observables["response_time"].refined


def test_solve_text_names_k_and_the_observable(capsys):
    assert main(["solve", *MODEL, "--observable", "utilisation", "--float64"]) == 0
    text = capsys.readouterr().out
    assert "K = 4 objects" in text and "utilisation = " in text and "K plays the role of N" in text


def test_exact_json_is_the_python_entry(capsys):
    out = _json(capsys, "exact", *MODEL, "--N", "4", "--observable", "jobs")
    model = load_model("power_of_d_heterogeneous", **PY)
    ex = numeric.exact.solve(model, LAM, N=4)
    assert out["mean"] == ex.to_dict()["mean"]  # printed as the Python result prints
    # printed down to the place 10^p >= 2 error: each within half a unit of the law's mean
    place = 10.0 ** np.ceil(np.log10(2 * out["errors"]["mean"]))
    assert np.abs(np.array(out["mean"]) - ex.mean).max() <= place / 2 * (1 + 1e-9)
    assert out["observables"]["jobs"]["value"] == observe(model, LAM, ex, ["jobs"])["jobs"].value


@pytest.mark.slow  # compiles the simulator's event loop on an empty cache (about 15 s)
def test_simulate_json_is_the_python_entry(capsys):
    import sim

    out = _json(capsys, "simulate", *MODEL, "--N", "4", "--steps", "20000", "--reps", "2",
                "--seed", "5", "--observable", "response_time")
    r = sim.simulate(load_model("power_of_d_heterogeneous", **PY), LAM, N=4, steps=20000,
                     reps=2, seed=5, observables=["response_time"])
    assert out["mean"] == r.to_dict()["mean"]  # as printed (docs/design.md, "Printed digits")
    assert out["observables"]["response_time"]["value"] == r.observables["response_time"].value


def test_a_file_factory_returning_a_population(tmp_path: Path, capsys):
    """--model file.py:factory whose factory returns a heterogeneous population."""
    path = tmp_path / "servers.py"
    path.write_text(
        "from derive.models.power_of_d_servers import power_of_d_heterogeneous\n"
        "def servers(K=4):\n"
        "    return power_of_d_heterogeneous(K=K, b=1, d=2, sampling='replacement')\n"
    )
    out = _json(capsys, "exact", "--model", f"{path}:servers", "--param", "lam=0.5", "--N", "4")
    assert out["K"] == 4 and len(out["mean"]) == 8


def test_table_rows_are_the_python_numbers(capsys):
    argv = ["table", "--model", "power_of_d_heterogeneous", "--param", "d=3", "--param",
            "speed_classes=1,2", "--param", "lam=0.5", "--N", "4,6", "--observable",
            "utilisation_class1", "--exact"]
    out = _json(capsys, *argv)
    assert out["N"] == "K" and [r["N"] for r in out["rows"]] == [4, 6]
    for row in out["rows"]:
        model = load_model("power_of_d_heterogeneous", **{**PY, "K": row["N"]})
        sol = numeric.solve(model, LAM, precision="float64", observables=["utilisation_class1"])
        assert row["order1"] == sol.observables["utilisation_class1"].refined
        ex = numeric.exact.solve(model, LAM, N=row["N"])
        exact = observe(model, LAM, ex, ["utilisation_class1"])["utilisation_class1"].value
        assert abs(float(row["exact"]) - exact) < 1e-9
        # the refined estimate is closer to the exact value than the mean field
        assert abs(float(row["order1"]) - exact) < abs(float(row["mean_field"]) - exact)
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "K (the number of objects) plays the role of N" in text
    # order 2 is refused for a population: the text table has no 1/K^2 column, and
    # every row has as many cells as the heading (the simulation's cell is one dash)
    head, *rows = text.splitlines()[1:4]
    assert "1/K^2" not in head and head.split()[:6] == ["K", "mean", "field", "+", "1/K", "exact"]
    assert all(len(r.split()) == 5 for r in rows), rows


def test_table_with_two_observables_is_each_one_alone(capsys):
    """``--observable`` repeated: one table per observable, each equal to its own run."""
    argv = ["table", "--model", "power_of_d_heterogeneous", "--param", "d=3", "--param",
            "speed_classes=1,2", "--param", "lam=0.5", "--N", "4", "--exact"]
    both = _json(capsys, *argv, "--observable", "response_time", "--observable", "jobs")
    assert both["observables"] == ["response_time", "jobs"]
    for table in both["tables"]:
        alone = _json(capsys, *argv, "--observable", table["observable"])
        assert table["rows"] == alone["rows"]
    assert main([*argv, "--observable", "jobs", "--observable", "jobs"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_transient_observable(capsys):
    out = _json(capsys, "transient", *MODEL, "--t", "0:1:2", "--observable", "jobs")
    res = numeric.transient(load_model("power_of_d_heterogeneous", **PY), LAM,
                            times=np.linspace(0, 1, 2))
    jobs = np.asarray(res.x, dtype=float).reshape(2, 4, 3) @ np.arange(3)
    assert np.allclose(out["observables"]["jobs"]["mean_field"], jobs.mean(axis=1), atol=1e-12)


@pytest.mark.parametrize(
    "argv,word",
    [
        (["solve", *MODEL, "--observable", "nope"], "not declared"),
        (["solve", *MODEL, "--M", "diag:1"], "--M is not available"),
        (["solve", *MODEL, "--order", "2"], "order must be 1"),
        (["exact", *MODEL, "--N", "5"], "N must be the number of objects K = 4"),
        (["table", "--model", "power_of_d_heterogeneous", "--param", "K=4", "--param",
          "lam=0.5", "--N", "4", "--observable", "jobs"], "K is given by --N"),
        (["table", "--model", "power_of_d_heterogeneous", "--param", "lam=0.5", "--N", "4",
          "--observable", "jobs", "--order", "2"], "order must be 1"),
    ],
)
def test_bad_input_is_one_sentence(argv, word, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert word in err and "\n" not in err
