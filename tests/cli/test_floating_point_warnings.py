"""NumPy's floating-point warnings never stand before an error line: a command that
fails prints its one error line alone; one that succeeds prints each such warning
once, after its answer."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from deadlines import deadline

WARNS = "divide by zero encountered in log"


@pytest.fixture(scope="module")
def noisy(tmp_path_factory) -> str:
    """A model file whose factory triggers NumPy's floating-point warning twice."""
    path = tmp_path_factory.mktemp("models") / "noisy.py"
    path.write_text(
        textwrap.dedent(
            """
            import numpy as np
            import sympy as sp
            from derive import Model, Transition

            def noisy():
                np.log(np.zeros(2))
                np.log(np.zeros(3))
                x, lam = sp.symbols("x lam")
                return Model("noisy", (x,), (lam,),
                             [Transition((1,), lam * (1 - x)), Transition((-1,), x)])
            """
        )
    )
    return f"{path}:noisy"


def _solve(model: str, lam: str) -> subprocess.CompletedProcess:
    argv = ["solve", "--model", model, "--param", f"lam={lam}", "--dps", "10"]
    return subprocess.run(
        [sys.executable, "-m", "mfstein", *argv],
        capture_output=True,
        text=True,
        timeout=deadline(600),
    )


def test_a_failing_command_prints_its_error_line_alone(noisy: str) -> None:
    r = _solve(noisy, "-1")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mfstein solve: error:"), r.stderr
    assert WARNS not in r.stderr


def test_a_succeeding_command_prints_each_warning_once_after_its_answer(noisy: str) -> None:
    r = _solve(noisy, "1")
    assert r.returncode == 0, r.stderr
    assert "c = 0.25" in r.stdout  # s* = 1/2, J = -2, Q = 1: c = W = Q / (-2 J)
    warned = [ln for ln in r.stderr.splitlines() if WARNS in ln]
    assert warned == [f"mfstein solve: warning: {WARNS}"]
    assert r.stderr.strip().splitlines()[-1] == warned[0]  # after everything else
