"""Every ``--json`` is one strict JSON document on an honest standard output (issue 36).

Each command's JSON form (every ``--show`` of ``derive``, every mode of the
others, at cheap parameters) prints exactly one document, one line, with no
``NaN`` or ``Infinity`` token -- a value that is not finite is ``null`` and named
in a note; a ``print()`` in a model file goes to standard error; a closed
standard output is an error (status 1, one line) and a reader that goes away
ends the command quietly with status 141.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from deadlines import deadline

from mfstein.cli import main
from mfstein.cli.derive import SHOW_NAMES
from mfstein.ground.display import dumps

ROOT = Path(__file__).resolve().parents[2]
EXE = str(Path(sys.executable).with_name("mfstein"))
BD = ["--model", f"{ROOT}/examples/birth_death.py:birth_death", "--param", "lam=0.5"]
SM = ["--model", "supermarket", "--param", "b=2", "--param", "lam=0.9"]
SIR = ["--model", "sir", "--param", "beta=2", "--param", "gamma=1", "--param", "rho=0.5"]
SIR += ["--param", "a=0.1"]
QUIET = ["--workers", "1", "--no-progress"]
#: A queue whose fixed point (lam = 1: x = 1) lies on the kink of its departure rate:
#: the exact chain is solved, s*, V and c are NaN in the result.
KINK = """
import sympy as sp
from derive import Model, Transition
from derive.spec import ModelInfo, StateSpace

def factory():
    print("hello from the factory")
    x, lam = sp.symbols("x lam")
    return Model("queue", (x,), (lam,), [Transition((1,), lam),
                 Transition((-1,), sp.Max(x, 2*x - 1))],
                 info=ModelInfo(state_space=StateSpace("orthant"),
                                reference=(sp.Rational(1, 2),)))

print("hello from the import")
"""

#: One command line per command and mode (``{kink}``: the model file above).
FORMS = {
    "derive every --show": ["derive", "--b", "1", "--show", ",".join(SHOW_NAMES), "--json"],
    "derive --format json": ["derive", "--b", "2", "--show", "f", "--format", "json"],
    "bound": ["bound", "--lam", "0.9", "--N", "10,20", "--b", "2", "--dps", "15", "--json"],
    "bound --certify": ["bound", "--lam", "0.9", "--N", "10", "--b", "2", "--certify", "--json"],
    "refined --order 2": ["refined", "--lam", "0.9", "--N", "10", "--b", "2", "--order", "2"],
    "solve --certify": ["solve", *SM, "--dps", "15", "--certify", "--json"],
    "solve --float64": ["solve", *SM, "--float64", "--json"],
    "transient": ["transient", *BD, "--t", "0:1:3", "--json"],
    "transient --dps": ["transient", *BD, "--t", "0:1:2", "--dps", "8", "--json"],
    "exact": ["exact", "--N", "3", "--lam", "0.9", "--b", "2", "--json"],
    "exact kink": ["exact", "--N", "4", "--truncation", "3", "--model", "{kink}", "--json"],
    "lemmas --list": ["lemmas", "--list", "--json"],
    "lemmas": ["lemmas", "--N", "10", "--lam", "0.9", "--b", "2", "--only", "lemma5", "--json"],
    "lemmas --certify": ["lemmas", "--N", "10", "--lam", "0.9", "--b", "2", "--only", "lemma5"],
    "simulate": ["simulate", "--N", "5", "--lam", "0.9", "--b", "2", "--steps", "2000", *QUIET],
    "table --model": ["table", *BD, "--observable", "x", "--N", "10", "--exact", "--json"],
    "tail mmn": ["tail", "--model", "mmn", "--n", "2", "--eps", "0.5", "--json"],
    "tail ssq": ["tail", "--model", "ssq", "--n", "2", "--eps", "0.5", "--json"],
    "tail jsq": ["tail", "--n", "2", "--eps", "0.5", "--theta", "0.5", "--json"],
    # (pi's simulation, numba-compiled like simulate's, is left to the probes: issue36_json)
    "pi --exact": ["pi", "--arrivals", "0:.5,1:.5", "--service", "1:1", "--exact", "--json"],
}
FORMS["refined --order 2"].append("--json")
FORMS["lemmas --certify"] += ["--certify", "--json"]
FORMS["simulate"] += ["--reps", "2", "--json"]
FORMS["exact kink"] += ["--param", "lam=1"]


def _no_constant(name: str) -> float:
    raise ValueError(f"the JSON token {name} is not JSON")


def strict_document(text: str) -> object:
    """The one JSON document ``text`` holds (one line), refusing NaN and Infinity."""
    assert text.endswith("\n") and text.count("\n") == 1, text[:300]
    return json.loads(text, parse_constant=_no_constant)  # a second document: "Extra data"


@pytest.mark.parametrize("name", list(FORMS))
def test_every_json_form_prints_one_strict_document(name: str, tmp_path: Path, capsys) -> None:
    (tmp_path / "kink.py").write_text(KINK)
    argv = [a.replace("{kink}", f"{tmp_path}/kink.py:factory") for a in FORMS[name]]
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 0, err
    data = strict_document(out)
    assert isinstance(data, dict) and data
    if name == "exact kink":  # NaN in the result: null, named in a note
        assert data["constant"] is None and data["s_star"] == [None]
        assert "not finite, written as null" in data["notes"][-1]
        assert "constant (NaN)" in data["notes"][-1]
        assert err.count("hello from the import") >= 1 and "hello from the factory" in err
    if name == "lemmas --list":
        assert "lemma5" in [c["id"] for c in data["claims"]]


def test_the_writer_maps_every_non_finite_float_to_null_with_a_note() -> None:
    data = {"a": [1.5, math.nan, math.inf], "b": -math.inf, "c": {"d": [(math.nan,)]}}
    text = dumps(data, indent=None)
    parsed = json.loads(text, parse_constant=_no_constant)
    assert parsed["a"] == [1.5, None, None] and parsed["b"] is None
    assert parsed["c"] == {"d": [[None]]}
    (note,) = parsed["notes"]
    assert "a[] (2 Infinity or NaN)" in note and "b (-Infinity)" in note
    assert "c.d[][] (1 NaN)" in note
    assert data["a"][1] != data["a"][1]  # the result itself is left as it was
    assert "notes" not in json.loads(dumps({"x": 1.0}))  # nothing to say: no note


def _run(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [EXE, *argv], cwd=ROOT, stderr=subprocess.PIPE, text=True, timeout=deadline(120), **kwargs
    )


def test_a_closed_standard_output_is_an_error() -> None:
    proc = _run(["lemmas", "--list", "--json"], preexec_fn=lambda: os.close(1))  # >&-
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mfstein lemmas: error: standard output")


def test_a_reader_that_went_away_ends_the_command_quietly_with_141() -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte (| head -c0)
    try:
        proc = _run(["lemmas", "--list", "--json"], stdout=write)
    finally:
        os.close(write)
    assert proc.returncode == 141 and proc.stderr == ""
