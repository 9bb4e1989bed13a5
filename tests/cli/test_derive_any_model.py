"""``mfstein derive --model``: any model's symbolic objects as text, LaTeX, Python
and JSON, parameter values put in, and bad input as one sentence with exit 2
(subprocess, as a user runs it)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import sympy as sp
from deadlines import deadline

PLAIN = """
import sympy as sp
from derive import Model, Transition

def sirs():
    s, i, r = sp.symbols("s i r")
    beta, gamma, nu = sp.symbols("beta gamma nu")
    return Model("sirs", (s, i, r), (beta, gamma, nu),
        [Transition((-1, 1, 0), beta * s * i * sp.exp(-i)),
         Transition((0, -1, 1), gamma * i), Transition((1, 0, -1), nu * r)])

def names():
    x = sp.Symbol("x")
    I, E, pi = sp.symbols("I E pi")
    return Model("names", (x,), (I, E, pi),
        [Transition((1,), I * (1 - x)), Transition((-1,), E * x + pi * x**2)])
"""


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("models") / "plain.py"
    path.write_text(textwrap.dedent(PLAIN))
    return str(path)


def _mfstein(*argv: str) -> subprocess.CompletedProcess:
    """``mfstein derive ARGV`` in its own process, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "mfstein", "derive", *argv],
        capture_output=True,
        text=True,
        timeout=deadline(120),
        check=False,
    )


def _sirs_drift(beta: object) -> sp.Matrix:
    """The SIRS drift written out by hand: the independent route."""
    s, i, r, gamma, nu = sp.symbols("s i r gamma nu")
    inf = beta * s * i * sp.exp(-i)
    return sp.Matrix([-inf + nu * r, inf - gamma * i, gamma * i - nu * r])


def test_json_and_python_rebuild_the_objects_with_the_values_put_in(plain) -> None:
    args = ["--model", f"{plain}:sirs", "--param", "beta=0.5", "--show", "f", "--show", "J"]
    js = _mfstein(*args, "--json")
    assert js.returncode == 0, js.stderr
    data = json.loads(js.stdout)
    f = _sirs_drift(sp.Rational(1, 2))
    s, i, r = sp.symbols("s i r")
    assert [sp.sympify(e) for e in data["f"]] == list(f)
    J = f.jacobian([s, i, r])
    assert all(
        sp.simplify(sp.sympify(data["J"][a][b]) - J[a, b]) == 0 for a in range(3) for b in range(3)
    )
    py = _mfstein(*args, "--format", "python")
    assert py.returncode == 0, py.stderr
    scope: dict = {}
    exec(py.stdout, scope)  # the printed program rebuilds the objects
    assert sp.simplify(scope["f"] - f) == sp.zeros(3, 1)
    assert sp.simplify(scope["J"] - J) == sp.zeros(3, 3)


def _in_process(capsys, *argv: str) -> tuple[int, str, str]:
    from mfstein.cli import main

    code = main(["derive", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_latex_and_text_of_sympy_names(capsys, plain) -> None:
    code, tex, _ = _in_process(
        capsys, "--model", f"{plain}:names", "--show", "f,H", "--format", "latex"
    )
    assert code == 0
    assert "% f" in tex and "% hessian" in tex and "\\pi" in tex
    code, js, _ = _in_process(capsys, "--model", f"{plain}:names", "--show", "H", "--json")
    assert sp.sympify(json.loads(js)["hessian"][0][0][0]) == -2 * sp.Symbol("pi")
    code, lib, _ = _in_process(
        capsys, "--model", "sis", "--param", "gamma=1", "--show", "stein,lyapunov"
    )
    assert code == 0 and "lyapunov:" in lib and "gamma" not in lib


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--model", "sis", "--b", "2"], "--b is only used by the supermarket's short form"),
        (["--show", "J"], "b is required without --model"),
        (["--model", "sis", "--param", "zeta=1"], "zeta is not a parameter of model sis"),
        (["--model", "sis", "--param", "gamma=-1"], "gamma must be > 0"),
        (["--model", "sis", "--show", "closed-form"], "--show closed-form is the supermarket's"),
        (["--model", "sis", "--show", "J,nope"], "--show must be a comma-separated list"),
        (["--b", "2", "--param", "lam=1"], "--param is only used with --model"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(capsys, argv, words) -> None:
    code, out, err = _in_process(capsys, *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], err
