"""``mfstein transient``: JSON, plot, and bad input (exit 2, one line on standard
error, no traceback).  The JSON-and-plot run is a real process; the others call the
same entry point in this process (tests/in_process.py)."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from deadlines import deadline
from in_process import run_main

SIR = [
    "--model",
    "sir",
    "--param",
    "beta=3",
    "--param",
    "gamma=1",
    "--param",
    "rho=0.5",
    "--param",
    "a=0.1",
]


def _run(capsys, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``mfstein transient argv`` in this process."""
    return run_main(["transient", *argv], cwd or Path.cwd(), capsys, timeout=120)


def _process(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``mfstein transient argv`` as a process."""
    return subprocess.run(
        [sys.executable, "-m", "mfstein", "transient", *argv],
        capture_output=True,
        text=True,
        timeout=deadline(120),
        cwd=cwd,
        env=os.environ.copy(),
    )


def test_json_and_plot(tmp_path: Path) -> None:
    plot = tmp_path / "mean.png"
    out = _process(
        *SIR,
        "--start",
        "0.75,0.25,0",
        "--t",
        "0:4:5",
        "--order",
        "2",
        "--json",
        "--plot",
        str(plot),
        "--N",
        "50",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["states"] == ["S", "I", "R"] and data["route"] == "float64"
    assert data["times"] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert len(data["x"]) == 5 and len(data["W"][0]) == 3 and len(data["B"][4][2]) == 3
    assert data["x"][0] == [0.75, 0.25, 0.0] and data["A"][0] == [0.0, 0.0, 0.0]
    assert abs(sum(data["x"][3]) - 1) < 1e-12
    assert plot.is_file() and plot.read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mean.png"]  # nothing temporary


def test_plot_through_a_dangling_symbolic_link(tmp_path: Path, capsys) -> None:
    """The link stays a link and its target receives the plot (issue 23); nothing
    temporary is left beside either."""
    (tmp_path / "store").mkdir()
    link = tmp_path / "mean.png"
    link.symlink_to(tmp_path / "store" / "real.png")
    argv = ["--start", "0.75,0.25,0", "--t", "0:1:3", "--plot", str(link), "--N", "50"]
    out = _run(capsys, *SIR, *argv)
    assert out.returncode == 0, out.stderr
    assert link.is_symlink() and (tmp_path / "store" / "real.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mean.png", "store"]
    assert [p.name for p in (tmp_path / "store").iterdir()] == ["real.png"]


def test_json_mpmath_numbers_are_strings(capsys) -> None:
    out = _run(capsys, *SIR, "--start", "0.75,0.25,0", "--t", "0:1:2", "--dps", "12", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["route"] == "mpmath" and data["digits"] == 12
    assert isinstance(data["V"][1][0], str) and len(data["V"][1][0].lstrip("-0.")) >= 11


def test_float64_is_chosen_as_in_solve_and_sweep(capsys) -> None:
    """``--float64`` (as in ``solve`` and ``sweep``) names the float64 route, the
    default without ``--dps``: the same numbers; with ``--dps`` it is refused."""
    argv = [*SIR, "--start", "0.75,0.25,0", "--t", "0:1:3", "--json"]
    default, named = _run(capsys, *argv), _run(capsys, *argv, "--float64")
    assert default.returncode == named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["route"] == "float64"
    assert json.loads(named.stdout) == json.loads(default.stdout)
    from mfstein.cli import main

    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:  # argparse's own refusal (exit 2, one line)
        main(["transient", *argv, "--float64", "--dps", "12"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "not allowed with argument" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ([*SIR, "--start", "0.9,0.2,0", "--t", "0:1:3"], "state space"),
        ([*SIR, "--start", "0.5,0.5", "--t", "0:1:3"], "must have 3 coordinates"),
        ([*SIR, "--t", "0:1"], "--t must look like"),
        ([*SIR, "--t", "2:1:5"], "--t must look like"),
        ([*SIR, "--t", "0:1:x"], "--t must look like"),
        (["--model", "nosuch", "--t", "0:1:3"], "model must be one of"),
        ([*SIR, "--param", "zeta=1", "--t", "0:1:3"], "zeta is not"),
        ([*SIR, "--t", "0:1:3", "--order", "3"], "order must be an integer >= 0 and <= 2"),
        ([*SIR, "--t", "0:1:3", "--N", "10"], "--N is only used with --plot"),
        ([*SIR, "--t", "0:1:3", "--plot", "/nonexistent-dir/x.png", "--N", "10"], "does not exist"),
        ([*SIR, "--t", "0:1:3", "--plot", "x.txt", "--N", "10"], "--plot must end in"),
        ([*SIR, "--t", "0:1:3", "--plot", "x.png"], "--plot needs --N"),
    ],
)
def test_bad_input_exits_2_with_one_line(argv: list[str], words: str, capsys) -> None:
    out = _run(capsys, *argv)
    assert out.returncode == 2, (out.returncode, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_unwritable_plot_directory(tmp_path: Path, capsys) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        out = _run(capsys, *SIR, "--t", "0:1:3", "--plot", str(locked / "x.png"), "--N", "10")
    finally:
        locked.chmod(0o700)
    assert out.returncode == 2 and "not writable" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_unwritable_plot_path_even_for_root(tmp_path: Path, capsys) -> None:
    """/proc refuses new files to everyone; a directory is not a file name."""
    for target, words in (("/proc/mfstein-x.png", "not writable"), (str(tmp_path), "directory")):
        out = _run(capsys, *SIR, "--t", "0:1:3", "--plot", target, "--N", "10")
        assert out.returncode == 2 and words in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


BISTABLE = '''
import sympy as sp
from derive.model import Model, Transition


def bistable():
    """Drift 1/10 + a x^2 - x: for a = 2 a stable point near 0.138, an unstable one
    near 0.362, and no fixed point above it (the mean field blows up in finite time)."""
    x, a = sp.Symbol("x"), sp.Symbol("a")
    return Model(
        "bistable", (x,), (a,),
        [Transition((1,), sp.Rational(1, 10) + a * x**2), Transition((-1,), x)],
    )
'''


def test_a_start_outside_every_basin_is_one_sentence(tmp_path: Path, capsys) -> None:
    (tmp_path / "bistable.py").write_text(BISTABLE)
    model = ["--model", f"{tmp_path / 'bistable.py'}:bistable", "--param", "a=2"]
    below = _run(capsys, *model, "--start", "0.3", "--t", "0:5:6", "--json")
    assert below.returncode == 0 and below.stderr == "", below.stderr
    assert json.loads(below.stdout)["warning"] is None
    x = [float(row[0]) for row in json.loads(below.stdout)["x"]]
    stable = (1 - 0.2**0.5) / 4
    # below the unstable point the mean field falls towards the stable one
    assert all(a > b > stable for a, b in itertools.pairwise(x)), x
    above = _run(capsys, *model, "--start", "0.5", "--t", "0:5:6")
    assert above.returncode == 1
    err = above.stderr.strip().splitlines()
    assert len(err) == 1 and "grows without bound" in err[0], above.stderr


def test_a_start_that_leaves_the_basin_later_is_one_warning(tmp_path: Path, capsys) -> None:
    """x(1) is finite, so the numbers are printed; beyond t = 1 the mean field blows
    up, which one warning line says (status 0)."""
    (tmp_path / "bistable.py").write_text(BISTABLE)
    model = ["--model", f"{tmp_path / 'bistable.py'}:bistable", "--param", "a=2"]
    out = _run(capsys, *model, "--start", "0.5", "--t", "0:1:3")
    assert out.returncode == 0 and "x[x]" in out.stdout, out.stderr
    err = out.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mfstein transient: warning: "), out.stderr
    assert "grows without bound" in err[0] and "beyond t = 1" in err[0]
    assert "tends to the fixed point" not in out.stdout  # it tends to none
    ok = _run(capsys, *model, "--start", "0.3", "--t", "0:1:3")
    stable = (1 - 0.2**0.5) / 4
    assert ok.returncode == 0 and ok.stderr == "", ok.stderr
    # printed down to its stated error (one more Newton step, the drift's rounding)
    shown = re.search(r"x\(t\) tends to the fixed point \(([^)]*)\)", ok.stdout).group(1)
    digits = len(shown.split(".")[1])
    assert digits >= 10 and abs(float(shown) - stable) <= 10.0**-digits, shown
