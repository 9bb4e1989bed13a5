"""Issue 36, one parser for every option and parameter: each option a command takes
is read by its typed parser whatever the path (``9/10``, unicode digits, empty
list items alike everywhere), an option the chosen path does not use is refused
in one sentence naming it, and no input ends in an internal error.

Every command line runs in-process through :func:`mfstein.cli.main`; each refusal
happens while the command line is parsed or before any heavy work, so each case
takes milliseconds (the two accepted runs, ``exact`` on 10 states, a few seconds).
"""

from __future__ import annotations

import shlex

import pytest

from mfstein.cli import main

EXACT = "exact --N 4 --lam 0.5 --b 2"
SIM = "simulate --N 10 --lam 0.9 --b 3 --steps 1000 --reps 2 --workers 1 --no-progress"
SIR = "--model sir --param beta=2 --param gamma=1 --param rho=1 --param a=0.1"
TAIL = "tail --model mmn --n 10 --eps 0.1"


def _run(command: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit status, standard output and standard error of one in-process run."""
    try:
        status = main(shlex.split(command))
    except SystemExit as exc:  # argparse's own refusal (exit 2, one line)
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def _refused(command: str, capsys: pytest.CaptureFixture[str], *words: str) -> str:
    """Assert exit 2 and one error line naming every word; return the line."""
    status, out, err = _run(command, capsys)
    lines = err.strip().splitlines()
    assert status == 2, (command, status, err)
    assert out == "" and len(lines) == 1, (command, err)
    assert " error: " in lines[0] and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], (command, word, lines[0])
    return lines[0]


#: (command line, words the one error line must contain): a bad value of an
#: option is refused whatever path the command takes (the value is not used).
BAD_VALUES = [
    (f"{TAIL} --reps abc", ["reps", "'abc'"]),
    (f"{TAIL} --events abc", ["events", "'abc'"]),
    (f"{TAIL} --seed -1", ["seed", "'-1'"]),
    (f"{TAIL} --workers 1.5", ["workers", "'1.5'"]),
    (f"{TAIL} --x 1,,2", ["x", "empty item"]),
    ("tail --model mmn --n 99999999999999999999999 --eps 0.1", ["n must be", "<= 2147483647"]),
    ("tail --model mmn --n 10 --eps 1e-300", ["eps must be >= 1.2e-16"]),
    ("tail --model mmn --n 10 --eps ٠.1", ["eps must be a real number"]),
    (f"{EXACT} --truncation abc", ["truncation", "'abc'"]),
    (f"exact --N 4 {SIR} --truncation abc", ["truncation", "'abc'"]),
    (f"{SIM} --truncation abc", ["truncation", "'abc'"]),
    (f"{EXACT} --N ３", ["N must be an integer", "'３'"]),
    ("bound --lam 0.9 --N 10,,100", ["N must be", "no empty item", "'10,,100'"]),
    ("bound --lam 0.9 --N 10,", ["N must be", "no empty item"]),
    ("bound --lam 0.9 --N 10 --b x", ["b must be an integer from 1 to", "'auto'", "'x'"]),
    ("bound --lam 0.9 --N 10 --d abc", ["d must be an integer", "'abc'"]),
    ("bound --lam 0.9 --N 10 --dps 4", ["dps must be an integer >= 5", "'4'"]),
    ("lemmas --list --dps abc", ["dps must be an integer", "'abc'"]),
    ("lemmas --list --xi 2", ["xi must be a real number > 0 and < 1", "'2'"]),
    ("table --gamma 0.1 --alpha 0.5 --N 10 --b x", ["b must be an integer from 1 to 200", "'x'"]),
    (f"{EXACT.replace('--b 2', '')} --model supermarket --param b=3.5", ["--param b", "'3.5'"]),
    (f"{EXACT.replace('--b 2', '')} --model supermarket --param b=true", ["--param b", "'true'"]),
    ("derive --b 2 --show f --mu ٣", ["--mu must be a real number", "'٣'"]),
    ("derive --b 2 --show f,,J", ["--show must be", "'f,,J'"]),
    ("lemmas --N 10 --lam 0.9 --only lemma5,", ["--only", "no empty item"]),
    ("pi --arrivals 0:.5,,1:.5 --service 1:1", ["arrivals must be", "no empty item"]),
    ("pi --arrivals 0:.5,1e400:.5 --service 1:1", ["arrivals values must be integers", "1e400"]),
    ("transient --model sir --t 0:1:3 --order 2.5", ["order must be an integer", "'2.5'"]),
]


@pytest.mark.parametrize(("command", "words"), BAD_VALUES, ids=[c for c, _ in BAD_VALUES])
def test_a_bad_value_is_refused_on_every_path(
    command: str, words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    _refused(command, capsys, *words)


#: (command line, the option named): an option the chosen path would ignore.
UNUSED = [
    (f"{TAIL} --reps 3", "--reps is only used with --simulate"),
    (f"{TAIL} --events 1000", "--events is only used with --simulate"),
    (f"{TAIL} --checkpoint /nonexistent-dir-36/x.json", "--checkpoint is only used with"),
    (f"{EXACT} --truncation 2", "--truncation is only used with --model"),
    (f"{EXACT} --start 0.5,0.5", "--start is only used with --model"),
    (f"{EXACT} --param b=3", "--param is only used with --model"),
    (f"{SIM} --start 0.5,0.5,0.5", "--start is only used with --model"),
    (f"exact --N 4 {SIR} --d 3", "--d is only used by the supermarket model"),
    (f"exact --N 4 {SIR} --without-replacement", "--without-replacement is only used by"),
    (f"exact --N 4 {SIR} --alpha 1", "--alpha is only used by the supermarket model"),
    (f"{TAIL} --reps 8", "--reps is only used with --simulate"),  # the default, given
    (f"{TAIL} --seed 0", "--seed is only used with --simulate"),
    ("pi --arrivals 0:.5,1:.5 --service 1:1 --exact --slots 100", "--slots is only used by"),
    (f"table {SIR} --observable infected --N 10 --reps 2", "--reps is only used with --simulate"),
    ("table --gamma 0.1 --alpha 0.5 --N 10 --simulate", "--simulate is only used with --model"),
    ("lemmas --list --N 10", "--N is only used to check claims (without --list)"),
    (f"transient {SIR} --t 0:1:3 --N 10", "--N is only used with --plot"),
    (f"transient {SIR} --t 0:1:3 --dps 10 --integrator BDF", "--integrator is only used by"),
    (f"transient {SIR} --t 0:1:3 --dps 10 --method BDF", "--integrator is only used by"),
]


@pytest.mark.parametrize(("command", "sentence"), UNUSED, ids=[c for c, _ in UNUSED])
def test_an_option_the_path_does_not_use_is_refused(
    command: str, sentence: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _refused(command, capsys, sentence)
    assert line.endswith(".")


def test_nothing_is_written_for_a_refused_checkpoint(capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    _refused(f"{TAIL} --checkpoint /nonexistent-dir-36/x.json", capsys, "--checkpoint")
    assert not Path("/nonexistent-dir-36").exists()


def test_a_fraction_parameter_is_read_by_exact_as_by_solve(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--param lam=9/10`` (refused by ``exact`` before) gives the same chain as 0.9,
    and ``--param b=3.0`` is the integer 3, as for every integer option."""
    base = "exact --N 3 --model supermarket --json --param"
    status, fraction, err = _run(f"{base} lam=9/10 --param b=3.0", capsys)
    assert status == 0, err
    status, decimal, err = _run(f"{base} lam=0.9 --param b=3", capsys)
    assert status == 0, err
    import json

    a, b = json.loads(fraction), json.loads(decimal)
    assert a["lam"] == b["lam"] == "0.9" and a["b"] == b["b"] == 3
    assert a["n_mse"] == b["n_mse"]


def test_a_builtin_split_rule_is_refused_in_one_sentence(
    capsys: pytest.CaptureFixture[str],
) -> None:
    command = (
        "pi --arrivals 0:.5,1:.5 --service 1:1 --policy pi-split --split-rule os:system "
        "--slots 100 --reps 2 --batches 2 --workers 1"
    )
    _refused(command, capsys, "split-rule must name a Python function", "'os:system'")
