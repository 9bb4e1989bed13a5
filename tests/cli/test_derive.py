"""``mfstein derive``: JSON round trip, formats and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp
from deadlines import deadline

from derive import supermarket
from mfstein.cli import main
from mfstein.cli.derive import SHOW_NAMES, objects

ALL = ",".join(SHOW_NAMES)


def _same(parsed, expected) -> None:
    """Every string parses (plain sympify) to exactly the library's object."""
    if isinstance(expected, dict):
        assert set(parsed) == set(expected)
        for k in expected:
            _same(parsed[k], expected[k])
        return
    if isinstance(expected, sp.MatrixBase):
        # a vector is a flat list; a matrix a list of rows, also 1 x 1 (J at b = 1)
        if expected.shape[1] == 1 and not isinstance(parsed[0], list):
            assert len(parsed) == expected.shape[0]
            for p, e in zip(parsed, expected, strict=True):
                _same(p, e)
        else:
            assert len(parsed) == expected.shape[0]
            for i, row in enumerate(parsed):
                assert len(row) == expected.shape[1]
                for j, p in enumerate(row):
                    _same(p, expected[i, j])
        return
    if isinstance(expected, sp.NDimArray):
        _same(parsed, expected.tolist())
        return
    if isinstance(expected, list):
        assert len(parsed) == len(expected)
        for p, e in zip(parsed, expected, strict=True):
            _same(p, e)
        return
    assert isinstance(parsed, str)
    assert sp.sympify(parsed) == sp.sympify(expected), (parsed, expected)


def _run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("b", "extra", "show"),
    [
        (1, [], ALL),
        (2, [], ",".join(n for n in SHOW_NAMES if n != "closed-form")),
        (3, ["--d", "3", "--mu", "mu"], ",".join(n for n in SHOW_NAMES if n != "closed-form")),
        (2, ["--without-replacement"], "f,J,hessian,Q,ftilde,stein,generator"),
    ],
)
def test_json_round_trip(capsys, b, extra, show) -> None:
    code, out, err = _run(
        capsys, ["derive", "--b", str(b), *extra, "--show", show, "--format", "json"]
    )
    assert code == 0, err
    data = json.loads(out)
    names = show.split(",")
    assert list(data) == names
    d = int(extra[extra.index("--d") + 1]) if "--d" in extra else 2
    mu = "mu" if "--mu" in extra else 1
    model = supermarket(b, d, mu=mu, replacement="--without-replacement" not in extra)
    _same(data, objects(model, names))
    H = data["hessian"]
    assert len(H) == len(H[0]) == len(H[0][0]) == b
    assert [len(row) for row in data["J"]] == [b] * b  # rows, also at b = 1
    if "generator" in data:
        assert sp.sympify(data["generator"]["difference"]) == 0


def test_n_round_trips_as_a_symbol(capsys) -> None:
    code, out, _ = _run(
        capsys, ["derive", "--b", "1", "--without-replacement", "--show", "f", "--format", "json"]
    )
    assert code == 0
    (f1,) = json.loads(out)["f"]
    assert sp.Symbol("N") in sp.sympify(f1).free_symbols


@pytest.mark.parametrize("fmt", ["text", "latex"])
def test_text_and_latex_formats(capsys, fmt) -> None:
    code, out, _ = _run(capsys, ["derive", "--b", "1", "--show", ALL, "--format", fmt])
    assert code == 0
    for name in SHOW_NAMES:
        assert name in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--b", "0"], "--b must be an integer >= 1"),
        (["--b", "2.5"], "--b must be an integer >= 1"),
        (["--b", "two"], "--b must be an integer >= 1"),
        (["--b", "2", "--d", "0"], "--d must be an integer >= 1"),
        (["--b", "2", "--d", "1.5"], "--d must be an integer >= 1"),
        (["--b", "2", "--show", "f,nope"], "--show must be a comma-separated list"),
        (["--b", "2", "--mu", "-1"], "--mu must be a real number > 0"),
        (["--b", "3", "--show", "closed-form"], "closed-form needs --b 1 or 2"),
        (["--b", "2", "--d", "3", "--show", "closed-form"], "closed-form needs --b 1 or 2"),
    ],
)
def test_bad_input_one_sentence_exit_2(capsys, argv, needle) -> None:
    code, out, err = _run(capsys, ["derive", *argv])
    assert code == 2
    assert out == ""
    assert needle in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_bad_format_is_argparse_exit_2(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["derive", "--b", "2", "--format", "yaml"])
    assert exc.value.code == 2


def test_console_script_subprocess() -> None:
    exe = Path(sys.executable).with_name("mfstein")
    r = subprocess.run(
        [str(exe), "derive", "--b", "2", "--show", "J,kron", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=deadline(120),
        check=False,
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    _same(data, objects(supermarket(2), ["J", "kron"]))
    bad = subprocess.run(
        [str(exe), "derive", "--b", "-3"],
        capture_output=True,
        text=True,
        timeout=deadline(120),
        check=False,
    )
    assert bad.returncode == 2 and "--b must be an integer >= 1" in bad.stderr
    assert "Traceback" not in bad.stderr
