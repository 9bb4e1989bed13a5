"""``mfstein table`` for the supermarket prints today's numbers: the deterministic
rows of the README's Table 1 block (lambda, simulated buffer, the bound, c + c2/N,
the exact value at N = 10) come out exactly as printed there, and the accuracy table
of the quadratic observable (``--model supermarket --observable quadratic`` with
``lam = 1 - 0.1/N**0.05``) reproduces the bound row. The simulation row is not
compared (the README's run has 2e8 events per N; here a short seeded run only
shows the row is there)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import mpmath
import pytest

from mfstein.cli import main

ROOT = Path(__file__).resolve().parents[2]
ROWS = ("lambda", "b (simulated)", "Asymptotic tight bound", "c + c2/N", "Exact")


def _readme_block() -> dict[str, list[str]]:
    """The README's printed table: row label -> cells (N = 10, 100, 1000, 10000;
    the exact row has one cell per N too, a dash where absent)."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```text\n(N E\|\|S - s\*\|\|\^2.*?)```", text, re.S).group(1)
    return _cells(block)


def _cells(text: str) -> dict[str, list[str]]:
    out = {}
    for line in text.splitlines():
        for label in ROWS:
            if line.startswith(label) and label not in out and not line.startswith(f"{label}:"):
                rest = line[len(label) :].strip()
                out[label] = re.split(r"\s{2,}", rest)
    return out


def _rounds_to(value: str, printed: str) -> bool:
    """``value`` rounded to the decimals of ``printed`` is ``printed``."""
    places = len(printed.split(".")[1]) if "." in printed else 0
    with mpmath.workdps(40):
        return abs(mpmath.mpf(value) - mpmath.mpf(printed)) <= mpmath.mpf(10) ** -places / 2


@pytest.fixture(scope="module")
def printed():
    return _readme_block()


def test_supermarket_table_prints_the_readme_numbers(printed, capsys):
    argv = ["table", "--gamma", "0.1", "--alpha", "0.05", "--N", "10,100"]
    argv += ["--sim-steps", "2e4", "--reps", "2", "--workers", "1", "--exact"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    got = _cells(out)
    assert set(printed) == set(ROWS)  # the README block has every row
    for label in ROWS:  # the README's first two columns, N = 10 and 100
        assert got[label] == printed[label][:2], (label, got[label], printed[label])
    assert out.splitlines()[0].startswith("N E||S - s*||^2, gamma = 0.1, alpha = 0.05, d = 2")
    assert any(line.startswith("Simulation") for line in out.splitlines())


def test_quadratic_accuracy_table_reproduces_the_bound_row(printed, capsys):
    argv = ["table", "--model", "supermarket", "--param", "b=12", "--param"]
    argv += ["lam=1 - 0.1/N**0.05", "--observable", "quadratic", "--N", "10,100", "--json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    bound = [cell.split()[0] for cell in printed["Asymptotic tight bound"][:2]]
    for row, text in zip(rows, bound, strict=True):
        assert _rounds_to(row["mean_field"], text), (row["mean_field"], text)
    # the 1/N term of the quadratic observable is c2: order 1 is the c + c2/N row
    c_c2 = printed["c + c2/N"][:2]
    for row, text in zip(rows, c_c2, strict=True):
        assert _rounds_to(row["order1"], text), (row["order1"], text)
