"""``mfstein solve --model ... --param ...`` end to end: the results in a subprocess, the
refusals in this process (:func:`in_process.run_main`) but the first, which stays a
process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mpmath
import pytest
from deadlines import deadline
from in_process import run_main

ROOT = Path(__file__).resolve().parents[2]
SIR = ["--param", "beta=3", "--param", "gamma=1", "--param", "rho=0.5", "--param", "a=0.1"]

BAD_FILE = """
import sympy as sp
from derive import Model, Transition

def number():
    return 42

def needs(x):
    return None

def broken():
    raise RuntimeError("oops")

def flat():
    x = sp.Symbol("x")
    return Model("flat", (x,), (), [Transition((1,), x**2), Transition((-1,), x**2)])

def cubic():
    # drift f = -x^3 (a zero arrival): the only fixed point, 0, has J = 0
    x = sp.Symbol("x")
    return Model("cubic", (x,), (), [Transition((1,), 0 * x), Transition((-1,), x**3)])
"""


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mfstein", *args],
        capture_output=True,
        text=True,
        timeout=deadline(300),
        cwd=cwd,
    )


def test_solve_json_sir() -> None:
    out = _run("solve", "--model", "sir", *SIR, "--dps", "25", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {"s_star", "V", "W", "constant", "digits"} <= set(data)
    assert data["digits"] == 25 and data["states"] == ["S", "I", "R"]
    with mpmath.workdps(40):
        s = [mpmath.mpf(x) for x in data["s_star"]]
        V = [mpmath.mpf(x) for x in data["V"]]
        W = [[mpmath.mpf(x) for x in row] for row in data["W"]]
        c = mpmath.mpf(data["constant"])
        assert abs(mpmath.fsum(s) - 1) < mpmath.mpf(10) ** -23
        assert abs(mpmath.fsum(V)) < mpmath.mpf(10) ** -23
        assert abs(mpmath.fsum(W[i][i] for i in range(3)) - c) < mpmath.mpf(10) ** -23 * c


def test_solve_user_file_and_text_output() -> None:
    out = _run(
        "solve",
        "--model",
        "examples/birth_death.py:birth_death",
        "--param",
        "cap=2",
        "--param",
        "lam=0.5",
    )
    assert out.returncode == 0, out.stderr
    assert "0.666666666667" in out.stdout and "correct digits" in out.stdout


#: the refusals; the first also runs as a process
BAD = [
    (["--model", "nosuchmodel"], "model must be one of"),
    (["--model", "missing.py:f"], "does not exist"),
    (["--model", "{bad}:nothere"], "does not define a factory"),
    (["--model", "{bad}:number"], "not a derive.Model"),
    (["--model", "{bad}:needs"], "has no default"),
    (["--model", "{bad}:broken"], "failed (RuntimeError: oops)"),
    (["--model", "{bad}:flat"], "not hyperbolic"),
    (["--model", "{bad}:cubic"], "not hyperbolic"),
    (["--model", "{bad}:cubic", "--start", "0.5"], "not hyperbolic"),
    (["--model", "sir", "--param", "beta=1"], "needs a value for"),
    (["--model", "sir", *SIR, "--param", "zz=1"], "zz is not a parameter"),
    (["--model", "sir", *SIR[:-1], "a=-1"], "a must be > 0"),
    (["--model", "sir", *SIR, "--start", "0.9,0.9,0.9"], "state space"),
    (["--model", "sir", *SIR, "--dps", "2"], "dps must be an integer >= 5"),
    (["--model", "sir", *SIR, "--param", "beta=4"], "given twice"),
    (["--model", "jsq_L", "--param", "alpha=2", "--param", "beta=1"], "alpha/beta"),
    (["--model", "supermarket", "--param", "b=0", "--param", "lam=0.5"], "b must be"),
]


@pytest.mark.parametrize(("args", "needle"), BAD)
def test_bad_input_is_one_sentence_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    as_process = args == BAD[0][0]
    bad = tmp_path / "bad.py"
    bad.write_text(BAD_FILE)
    args = [a.replace("{bad}", str(bad)) for a in args]
    if as_process:
        out = _run("solve", *args)
    else:
        out = run_main(["solve", *args], ROOT, capsys, timeout=300)
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert needle in lines[0], lines[0]
