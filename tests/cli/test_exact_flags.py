"""``mfstein exact``: one value per quantity, never silently resolved (issue 23)."""

from __future__ import annotations

import pytest

from mfstein.cli import main


@pytest.mark.parametrize(
    ("argv", "pattern"),
    [
        (
            "--lam 0.5 --model supermarket --param lam=0.9 --param b=3",
            r"arrival rate is given twice \(--lam and --param lam",
        ),
        (
            "--gamma 0.5 --model supermarket --param lam=0.9 --param b=3",
            r"arrival rate is given twice \(--gamma and --param lam",
        ),
        ("--lam 0.5 --model sir --param gamma=1", r"--lam is the supermarket's arrival rate"),
        ("--b 3 --model supermarket --param b=4 --lam 0.5", r"b is given twice"),
        ("--d 3 --model supermarket --param d=2 --b 3 --lam 0.5", r"d is given twice"),
    ],
)
def test_conflicting_flags_are_one_sentence_exit_2(argv, pattern, capsys) -> None:
    assert main(["exact", "--N", "4", *argv.split()]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert __import__("re").search(pattern, err), err


def test_the_same_quantity_once_still_runs(capsys) -> None:
    assert main("exact --N 3 --model supermarket --param b=2 --param lam=0.9 --json".split()) == 0
    via_flag = capsys.readouterr().out
    assert main("exact --N 3 --model supermarket --b 2 --lam 0.9 --json".split()) == 0
    assert capsys.readouterr().out.split('"seconds"')[0] == via_flag.split('"seconds"')[0]
