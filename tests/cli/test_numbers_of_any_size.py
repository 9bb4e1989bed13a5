"""Issue 23, numbers of any size: every integer or real option is read exactly and
checked against its declared limit before any work, in one sentence with exit 2.

The command lines run in-process through :func:`mfstein.cli.main` (a refusal
happens while the command line is parsed or before the first expensive step,
so each case takes milliseconds); the parser itself is checked against exact
integer arithmetic in ``test_parser_*``.
"""

from __future__ import annotations

import json
import shlex
from fractions import Fraction

import pytest

from mfstein.cli import main
from mfstein.ground import limits
from mfstein.ground.errors import ParameterError
from mfstein.ground.numbers import decimal_text, parse_diagonal, parse_integer, parse_real

SIM = "simulate --N 10 --lam 0.9 --b 3 --steps 1000 --reps 2 --workers 1 --no-progress"
TABLE = "table --gamma 0.1 --alpha 0.05 --N 10 --sim-steps 4000 --reps 2 --workers 1"
PI = "pi --arrivals 0:.5,1:.5 --service 1:1 --slots 100 --reps 2 --batches 2 --workers 1"
EXACT = "exact --N 4 --lam 0.5 --b 2"


def _run(command: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit status, standard output and standard error of one in-process run."""
    try:
        status = main(shlex.split(command))
    except SystemExit as exc:  # argparse's refusal (exit 2, one line)
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def _answer(command: str, capsys: pytest.CaptureFixture[str]) -> dict:
    """The JSON answer of a successful run, without its timing."""
    status, out, err = _run(command, capsys)
    assert status == 0, err
    answer = json.loads(out)
    answer.pop("seconds", None)
    return answer


def _with(base: str, option: str, value: str) -> str:
    words = shlex.split(base)
    if option in words:
        words[words.index(option) + 1] = value
    else:
        words += [option, value]
    return shlex.join(words)


HUGE = ["1e400", "10**5000"]
#: (command, option, the name the sentence must start with)
SIZED = [
    (SIM, "--N", "N"),
    (SIM, "--steps", "steps"),
    (SIM, "--reps", "reps"),
    (SIM, "--seed", "seed"),
    (SIM, "--batches", "batches"),
    (SIM, "--workers", "workers"),
    (TABLE, "--N", "N"),
    (TABLE, "--sim-steps", "sim-steps"),
    (TABLE, "--reps", "reps"),
    (PI, "--n", "n"),
    (PI, "--slots", "slots"),
    (PI, "--reps", "reps"),
    (PI, "--batches", "batches"),
    (EXACT, "--N", "N"),
    (EXACT, "--d", "d"),
]


@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize(("base", "option", "name"), SIZED)
def test_huge_integers_are_one_sentence(base, option, name, value, capsys) -> None:
    status, out, err = _run(_with(base, option, value), capsys)
    lines = err.strip().splitlines()
    assert status == 2 and out == ""
    assert len(lines) == 1, err
    assert f"{name} must be an integer >= " in lines[0] and "<= " in lines[0], err
    assert value in lines[0] and "Traceback" not in err


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        (f"{EXACT} --mu 1e-400", f"mu must be a real number >= {limits.FLOAT_MIN_RATE:g}"),
        (f"{EXACT} --memory-limit 1e400", "memory-limit must be a real number > 0"),
        (_with(EXACT, "--lam", "nan"), "lam must be a finite real number"),
        (_with(EXACT, "--lam", "1e400"), "lam must be a real number >= "),
        (_with(SIM, "--N", "1/2"), "N must be an integer >= 1"),
        (_with(SIM, "--N", "5.5"), "N must be an integer >= 1"),
        (_with(SIM, "--N", "-0"), "N must be an integer >= 1"),
        (_with(SIM, "--seed", "-1"), "seed must be an integer >= 0"),
        (_with(SIM, "--N", "inf"), "N must be an integer >= 1"),
        ("refined --lam 0.9 --N 10 --b 3 --M diag:1e400", "M entry must be a real number >="),
        ("bound --lam 0.9 --N 1e400 --b 3", "N must be an integer >= 1 and <= 1"),
        ("bound --lam 0.9 --N 10 --b 3 --dps 10**5000", "dps must be an integer >= 5"),
        ("tail --model jsq --n 3 --eps 0.2 --theta 1000", "theta must lie where"),
    ],
)
def test_out_of_range_values_name_the_option(command, fragment, capsys) -> None:
    status, out, err = _run(command, capsys)
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and len(lines) == 1, err
    assert fragment in lines[0], err


@pytest.mark.parametrize(
    "command",
    [
        f"{EXACT} --d 2 --model supermarket --param d=3",
        f"{EXACT} --d 3 --model supermarket --param d=3",
        "exact --N 4 --lam 0.5 --model supermarket --param b=2 --param lam=0.9",
        "exact --N 4 --gamma 0.5 --alpha 0.5 --model supermarket --param b=2 --param lam=0.9",
        "exact --N 4 --b 2 --model supermarket --param b=3 --param lam=0.9",
        "exact --N 4 --mu 2 --model supermarket --param b=2 --param lam=0.9 --param mu=1",
        f"{SIM} --d 2 --model supermarket --param d=3",
        "simulate --N 4 --lam 0.5 --model supermarket --param b=2 --param lam=0.9 --steps 100",
        "simulate --N 4 --lam 0.5 --model sir --steps 100",
    ],
)
def test_conflicting_flags_are_refused(command, capsys) -> None:
    status, out, err = _run(command, capsys)
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and len(lines) == 1, err
    assert "given twice" in lines[0] or "takes its parameters as --param" in lines[0], err


def test_a_fraction_rate_is_the_decimal_rate(capsys) -> None:
    """``exact --lam 1/2`` answers exactly what ``--lam 0.5`` answers (was an internal error)."""
    half = _answer(f"{_with(EXACT, '--lam', '1/2')} --json", capsys)
    assert half == _answer(f"{EXACT} --json", capsys)
    assert half["lam"] == "0.5"


def test_integral_spellings_are_the_same_integer(capsys) -> None:
    """``--N 4``, `` 4``, ``4.0``, ``4e0`` and ``2**2`` are one system."""
    first = _answer(f"{EXACT} --json", capsys)
    for n in [" 4", "4.0", "4e0", "2**2"]:
        assert _answer(f"{_with(EXACT, '--N', n)} --json", capsys) == first
    assert first["N"] == 4


# ----------------------------------------------------------------------------- the parser
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("12", 12),
        (" 12 ", 12),
        ("1_000", 1000),
        ("5.0", 5),
        ("1e6", 10**6),
        ("1E+16", 10**16),
        ("10**6", 10**6),
        ("3 ** 4", 81),
        ("-0", 0),
        ("0**0", 1),
        ("12345678901234567890", 12345678901234567890),
        ("1.5e3", 1500),
    ],
)
def test_parser_reads_integers_exactly(text, value) -> None:
    assert parse_integer("x", text, 0, 10**30) == value


@pytest.mark.parametrize(
    "text",
    [
        "1e400",
        "10**5000",
        "9" * 5000,
        "1/2",
        "5.5",
        "1e-400",
        "nan",
        "inf",
        "-inf",
        "",
        "0x10",
        "abc",
        "2**-1",
        "-1e400",
        "1e99999999999999999999",
    ],
)
def test_parser_refuses_in_one_sentence_without_building_giants(text) -> None:
    with pytest.raises(ParameterError, match=r"^x must be an integer >= 0 and <= 100, got '.*'\.$"):
        parse_integer("x", text, 0, 100)


def test_parser_limit_is_exact_at_the_boundary() -> None:
    top = limits.SIM_MAX_SEED
    assert parse_integer("seed", str(top), 0, top) == top
    assert parse_integer("seed", "2**128", 0, 2**128) == 2**128
    with pytest.raises(ParameterError):
        parse_integer("seed", str(top + 1), 0, top)
    with pytest.raises(ParameterError):
        parse_integer("N", "1e15", 1, 10**15 - 1)
    assert parse_integer("N", "1e15", 1, 10**15) == 10**15
    with pytest.raises(ParameterError):  # bools and floats are not integers in the API
        parse_integer("N", True, 0)
    with pytest.raises(ParameterError):
        parse_integer("N", 5.0, 0)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0.9", Fraction(9, 10)),
        ("1/2", Fraction(1, 2)),
        ("1e-3", Fraction(1, 1000)),
        ("-0", Fraction(0)),
        ("1e-400", Fraction(1, 10**400)),
        (" 2 / 3 ", Fraction(2, 3)),
    ],
)
def test_real_parser_is_exact(text, value) -> None:
    assert parse_real("r", text) == value


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1/0", "x", "1e2000", "0.9x", ""])
def test_real_parser_refuses_in_one_sentence(text) -> None:
    with pytest.raises(ParameterError, match=r"^r must be a "):
        parse_real("r", text)


def test_real_bounds_are_exact_and_open_or_closed() -> None:
    assert parse_real("lam", "1e6", 0, limits.MAX_LAM, low_open=True) == 10**6
    with pytest.raises(ParameterError, match=r"lam must be a real number > 0 and <= 1e\+06"):
        parse_real("lam", "1000000.0000000000000000001", 0, limits.MAX_LAM, low_open=True)
    with pytest.raises(ParameterError, match="> 0"):
        parse_real("lam", "0", 0, low_open=True)
    assert parse_real("alpha", "0", 0) == 0


def test_decimal_text_and_diagonal() -> None:
    assert decimal_text(Fraction(1, 2)) == "0.5"
    third = decimal_text(Fraction(1, 3))
    assert third.startswith("0.333") and len(third) == 42  # 40 significant digits
    assert parse_diagonal("M", "identity") is None
    assert parse_diagonal("M", "diag:1, 1/2,0") == [1, Fraction(1, 2), 0]
    for bad in ["diag:", "diag:1e400", "diag:nan", "full:1", "diag:1,x"]:
        with pytest.raises(ParameterError, match=r"^M"):
            parse_diagonal("M", bad)
