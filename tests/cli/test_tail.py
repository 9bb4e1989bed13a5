"""``mfstein tail``: results, and one-line errors with exit status 2, run in this process
(:func:`in_process.run_main`) but the first error, which stays a process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from deadlines import deadline
from in_process import run_main

PROBE = """
import sys
import mfstein.cli
try:
    mfstein.cli.main(sys.argv[1:])
except SystemExit:
    pass
print("LOADED:" + ",".join(m for m in ("sympy", "numba", "scipy") if m in sys.modules))
"""


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mfstein", "tail", *argv],
        capture_output=True,
        text=True,
        timeout=deadline(120),
    )


#: the refusals; the first also runs as a process
BAD = [
    ["--n", "3", "--eps", "1.5"],
    ["--n", "3", "--eps", "0"],
    ["--n", "0", "--eps", "0.1"],
    ["--n", "3", "--eps", "0.1", "--x", "1,-2"],
    ["--n", "60", "--eps", "0.1"],
    ["--model", "ssq", "--n", "2", "--arrival-pmf", "0.5,0.6", "--service-pmf", "0,1"],
    ["--model", "ssq", "--n", "2", "--arrival-pmf", "0,1", "--service-pmf", "0.5,0.5"],
    ["--model", "mmn", "--n", "3", "--eps", "0.1", "--simulate"],
    ["--model", "fifo", "--n", "3", "--eps", "0.1"],
]


@pytest.mark.parametrize("argv", BAD)
def test_bad_input_one_line_exit_2(argv, capsys):
    if argv == BAD[0]:
        out = _run(*argv)
    else:
        out = run_main(["tail", *argv], Path.cwd(), capsys, timeout=120)
    assert out.returncode == 2, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "Traceback" not in out.stderr
    assert lines[0].startswith("mfstein tail: error: ")


def test_json_results(capsys):
    """The JSON answers, run in this process (:func:`in_process.run_main`)."""
    argv = ["tail", "--model", "mmn", "--n", "4", "--alpha", "1.5", "--x", "1,3", "--json"]
    out = run_main(argv, Path.cwd(), capsys, timeout=120)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["eps"] == pytest.approx(4**-1.5)
    assert r["tail"][0] > r["tail"][1] > 0
    argv = ["tail", "--n", "2", "--eps", "0.2", "--x", "1", "--theta", "0.5", "--json"]
    out = run_main(argv, Path.cwd(), capsys, timeout=120)
    r = json.loads(out.stdout)
    assert r["level_decay"] == pytest.approx(0.8**2, rel=1e-10) and len(r["perp_mgf"]) == 1


def test_help_is_light():
    out = subprocess.run(
        [sys.executable, "-c", PROBE, "tail", "--help"],
        capture_output=True,
        text=True,
        timeout=deadline(60),
    )
    assert out.stdout.strip().splitlines()[-1] == "LOADED:"
