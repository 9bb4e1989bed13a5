"""``mfstein bound`` / ``mfstein refined``: table, JSON schema, bad input exit 2."""

from __future__ import annotations

import json

import mpmath
import pytest

from mfstein.cli import main


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bound", "--gamma", "0.1", "--alpha", "0.05", "--N", "10,100", "--dps", "12"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["N", "lam", "b", "constant", "bound", "digits"]
    row = out[1].split()
    assert row[0] == "10" and row[1].startswith("0.91087490618")
    assert row[3].startswith("3.18723976") and row[4].startswith("0.318723976")
    assert row[5] == "12"
    assert len({len(line) for line in out[:3]}) == 1  # aligned columns


def test_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bound", "--lam", "0.9", "--N", "10,20", "--b", "4", "--dps", "25", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"results"} and len(data["results"]) == 2
    keys = {"N", "lam", "b", "d", "dps", "constant", "bound", "digits", "methods", "s_star"}
    # ... and those of MeanFieldSolution.to_dict(), which the CLI prints since issue 22
    solution = {"model", "params", "states", "V", "W", "V_abs_error", "W_abs_error"}
    solution |= {"s_star_abs_error"}  # per-entry errors (issue 23)
    solution |= {"conservation", "other_fixed_points", "notes"}
    for r, n in zip(data["results"], (10, 20), strict=True):
        assert set(r) == keys | solution
        assert r["N"] == n and r["b"] == 4 and r["d"] == 2 and r["dps"] == 25
        for name in ("lam", "constant", "bound"):
            assert isinstance(r[name], str)
            assert len(r[name].replace(".", "").lstrip("0")) >= 25
        assert all(isinstance(v, str) for v in r["methods"].values())
        assert len(r["s_star"]) == 4 and all(isinstance(v, str) for v in r["s_star"])
        with mpmath.workdps(40):
            c, bnd = mpmath.mpf(r["constant"]), mpmath.mpf(r["bound"])
            # both strings are rounded to 25 significant digits: <= 1 unit in the 25th each
            assert abs(c / n - bnd) <= 2 * mpmath.mpf(10) ** -24 * bnd
        assert r["digits"] == 25


def test_refined_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["refined", "--lam", "0.9", "--N", "10", "--b", "3", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)["results"][0]
    assert len(r["V"]) == 3 and len(r["W"]) == 3 and len(r["W"][0]) == 3


@pytest.mark.parametrize(
    "argv",
    [
        ["bound", "--lam", "0", "--N", "10"],
        ["bound", "--lam", "0.5", "--N", "0"],
        ["bound", "--gamma", "1.5", "--alpha", "0.05", "--N", "10"],
        ["bound", "--gamma", "0.1", "--alpha", "-1", "--N", "10"],
        ["bound", "--lam", "0.5", "--N", "10", "--b", "0"],
        ["bound", "--lam", "0.5", "--N", "10", "--d", "0"],
        ["bound", "--lam", "0.5", "--N", "10", "--dps", "4"],
        ["bound", "--lam", "1.2", "--N", "10", "--b", "inf"],
        ["bound", "--lam", "0.5", "--gamma", "0.1", "--alpha", "0.1", "--N", "10"],
        ["refined", "--lam", "x", "--N", "10"],
    ],
)
def test_bad_input_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.endswith(".") and "Traceback" not in err


def test_refined_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["refined", "--lam", "0.9", "--N", "10", "--b", "3", "--dps", "20"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("N = 10, lam = 0.9")
    assert out[1].split() == ["k", "s*_k", "V_k", "s*_k", "+", "V_k/N", "W_kk"]
    assert [line.split()[0] for line in out[2:5]] == ["1", "2", "3"]


def test_the_commands_print_result_objects(capsys: pytest.CaptureFixture[str]) -> None:
    """``bound`` and ``refined`` print a table result's ``to_json()`` or ``to_text()``:
    the same text a library caller gets from the result (issue 31)."""
    import dataclasses

    from mfstein.families.supermarket.short_form import bound
    from mfstein.families.supermarket.size_tables import BoundTable, RefinedTable

    sol = bound("0.9", 3, 2, dps=20)
    table = BoundTable((10, 20), (sol, sol))
    assert main(["bound", "--lam", "0.9", "--N", "10,20", "--b", "3", "--dps", "20"]) == 0
    assert capsys.readouterr().out == table.to_text() + "\n"
    assert main(["bound", "--lam", "0.9", "--N", "10,20", "--b", "3", "--dps", "20", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(table.to_json())
    refined = RefinedTable((10,), (sol,))
    assert main(["refined", "--lam", "0.9", "--N", "10", "--b", "3", "--dps", "20"]) == 0
    assert capsys.readouterr().out == refined.to_text() + "\n"
    assert "N = 10" in repr(refined) and "N = 20" in repr(table)
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.sizes = (30,)
