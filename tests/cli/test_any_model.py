"""``mfstein exact --model`` and ``mfstein simulate --model``: results, and bad input
as one sentence with exit status 2 (one refusal and the simulation as processes, the
others in this process: tests/in_process.py)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap

import pytest
from deadlines import deadline
from in_process import run_main

SIR = ["--param", "beta=3", "--param", "gamma=1", "--param", "rho=0.5", "--param", "a=0.1"]


def _start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "mfstein", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="module")
def immigration(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "immigration.py"
    path.write_text(
        textwrap.dedent(
            """
            import sympy as sp
            from derive import Model, Transition
            from derive.spec import ModelInfo, Parameter, StateSpace

            def immigration():
                x, lam, mu = sp.symbols("x lam mu")
                return Model("immigration-death", (x,), (lam, mu),
                    [Transition((1,), lam, "arrival"), Transition((-1,), mu * x, "death")],
                    info=ModelInfo(parameters=(Parameter("lam", low=0), Parameter("mu", low=0)),
                                   state_space=StateSpace("orthant")))
            """
        )
    )
    return f"{path}:immigration"


#: the refusal that also runs as a process
AS_PROCESS = "range"


def test_bad_input_is_one_sentence_and_exit_2(immigration, tmp_path, capsys):
    cases = {
        "range": (["exact", "--model", "sir", *SIR[:-1], "a=-1", "--N", "5"], "a must be > 0"),
        "unknown": (["exact", "--model", "sir", *SIR, "--param", "z=1", "--N", "5"], "z is not"),
        "start": (
            ["exact", "--model", "sir", *SIR, "--N", "5", "--start", "0.7,0.6,0"],
            "state space",
        ),
        "N below d": (
            "exact --model supermarket --param b=3 --param lam=0.5 "
            "--param replacement=false --N 1".split(),
            "N must be an integer >= 2",
        ),
        "infinite buffers": (
            ["exact", "--model", "jsq_L", "--param", "alpha=0.5", "--param", "beta=1", "--N", "4"],
            "unbounded state space",
        ),
        "unbounded orthant beyond the memory limit": (
            ["exact", "--model", immigration, "--param", "lam=0.5", "--param", "mu=1", "--N", "4",
             "--memory-limit", "1e-6"],
            "needs a truncation at n_k <= ",
        ),
        "mu": (
            "exact --model supermarket --b 3 --lam 0.9 --mu 0 --N 4".split(),
            "mu must be a real number >= 1e-06",
        ),
        "simulate range": (
            ["simulate", "--model", "sir", *SIR[:-1], "a=0", "--N", "5", "--steps", "1000"],
            "a must be > 0",
        ),
    }
    process = _start(cases[AS_PROCESS][0])
    results = {}
    for name, (args, _) in cases.items():
        if name != AS_PROCESS:
            done = run_main(args, tmp_path, capsys, timeout=60)
            results[name] = (done.returncode, done.stdout, done.stderr)
    out, err = process.communicate(timeout=deadline(120))
    results[AS_PROCESS] = (process.returncode, out, err)
    for name, (status, out, err) in results.items():
        assert status == 2, (name, err)
        assert "Traceback" not in err and out == "", name
        lines = err.strip().splitlines()
        assert len(lines) == 1 and cases[name][1] in lines[0], (name, err)


def test_exact_and_simulate_with_a_model(tmp_path, capsys):
    """``simulate --model`` as a process; the two ``exact`` runs in this process, one
    after the other, so that the second loads the kernels the first compiled (as two
    processes started together, both compiled them)."""
    sim = _start(
        ["simulate", "--model", "sir", *SIR, *"--N 20 --steps 40000 --reps 1 --json".split()]
    )
    results = {}
    for name, args in (
        ("mu", "exact --model supermarket --b 3 --lam 1.8 --mu 2 --N 6 --json".split()),
        ("today", ["exact", "--b", "3", "--lam", "0.9", "--N", "6", "--json"]),
    ):
        done = run_main(args, tmp_path, capsys, timeout=120)
        assert done.returncode == 0, (name, done.stderr)
        results[name] = json.loads(done.stdout)
    out, err = sim.communicate(timeout=deadline(120))
    assert sim.returncode == 0, err
    results["sim"] = json.loads(out)
    assert abs(results["mu"]["n_mse"] - results["today"]["n_mse"]) < 1e-10
    assert results["mu"]["states"] == results["today"]["states"] == 84
    s = results["sim"]
    assert s["simulator"] == "generic" and s["complete"]
    for key in ("mean", "mean_ci95", "n_mse", "n_bias", "n_cov", "events_per_second"):
        assert key in s
    # the occupancies sum to 1; each is printed down to its interval's second digit
    # (docs/design.md, "Printed digits"), so the printed sum is off by their roundings
    rounding = sum(10.0 ** (math.floor(math.log10(h)) - 1) / 2 for h in s["mean_ci95"] if h)
    assert abs(sum(s["mean"]) - 1) <= rounding + 1e-12
