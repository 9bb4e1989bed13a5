"""The command line prints results, it does not build its own JSON (issue 31).

For each JSON form below, what ``mfstein ... --json`` prints is the ``to_json()`` of
the result the Python API returns for the same inputs (one line, the one style of
:func:`mfstein.ground.streams.write_json`).  Only a wall time (``seconds``) may differ
between two runs; it is left out of the comparison and nothing else is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from mfstein.cli import main

ROOT = Path(__file__).resolve().parents[2]
BD_FILE = f"{ROOT}/examples/birth_death.py:birth_death"
SIR = {"beta": "2", "gamma": "1", "rho": "0.5", "a": "0.1"}
SIR_ARGS = [a for k, v in SIR.items() for a in ("--param", f"{k}={v}")]
#: Keys that hold a wall time: two runs of the same computation differ there only.
TIMES = {"seconds"}


def _solve(**kw) -> Callable[[], object]:
    import numeric

    return lambda: numeric.solve("sir", SIR, M="identity", **kw)  # --M's default


def _certified() -> object:
    import numeric

    return numeric.solve("sir", SIR, dps=12, M="identity").certify()


def _exact_short() -> object:
    from numeric.exact import solve_exact

    return solve_exact(3, "0.9", 2, 2)


def _exact_model() -> object:
    import numeric.exact

    return numeric.exact.solve(BD_FILE, {"lam": "0.5"}, N=4)


def _exact_observed() -> object:
    import dataclasses

    r = _exact_model()
    return dataclasses.replace(r, observables={"x": r.expect("x")})


def _transient() -> object:
    import numeric

    return numeric.transient(BD_FILE, {"lam": "0.5"}, times=[0.0, 0.5, 1.0])


def _size_table(kind: str) -> Callable[[], object]:
    def compute() -> object:
        from numeric.supermarket.short_form import bound
        from numeric.supermarket.size_tables import BoundTable, RefinedTable

        sol = bound("0.9", 3, 2, dps=12)
        if kind == "bound":
            return BoundTable((10, 20), (sol, sol))
        return RefinedTable((10,), (sol,))

    return compute


#: name -> (argv, the same computation through the Python API)
CASES: dict[str, tuple[list[str], Callable[[], object]]] = {
    "solve": (["solve", "--model", "sir", *SIR_ARGS, "--dps", "12"], _solve(dps=12)),
    "solve --float64": (
        ["solve", "--model", "sir", *SIR_ARGS, "--float64"],
        _solve(precision="float64"),
    ),
    "solve --certify": (
        ["solve", "--model", "sir", *SIR_ARGS, "--dps", "12", "--certify"],
        _certified,
    ),
    "exact (short form)": (["exact", "--N", "3", "--lam", "0.9", "--b", "2"], _exact_short),
    "exact --model": (
        ["exact", "--model", BD_FILE, "--param", "lam=0.5", "--N", "4"],
        _exact_model,
    ),
    "exact --observable": (
        ["exact", "--model", BD_FILE, "--param", "lam=0.5", "--N", "4", "--observable", "x"],
        _exact_observed,
    ),
    "transient": (
        ["transient", "--model", BD_FILE, "--param", "lam=0.5", "--t", "0:1:3"],
        _transient,
    ),
    "bound": (
        ["bound", "--lam", "0.9", "--b", "3", "--N", "10,20", "--dps", "12"],
        _size_table("bound"),
    ),
    "refined": (
        ["refined", "--lam", "0.9", "--b", "3", "--N", "10", "--dps", "12"],
        _size_table("refined"),
    ),
}


def _without_times(data: dict) -> dict:
    return {k: v for k, v in data.items() if k not in TIMES}


@pytest.mark.parametrize("name", list(CASES))
def test_the_printed_json_is_the_results_to_json(name: str, capsys) -> None:
    from numeric.meanfield.problem import forget

    argv, compute = CASES[name]
    # Both from the same empty process state: a float64 solve of a model with a unique
    # fixed point (SIR) starts from the nearest point this process found before
    # (numeric.meanfield.problem, "Warm start"), which moves its last bits; this test
    # is about what is printed, not about the history of the worker it runs in.
    forget()
    capsys.readouterr()
    status = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    forget()
    result = compute()
    expected = result.to_json(indent=None) + "\n"
    if TIMES & json.loads(out).keys():
        assert _without_times(json.loads(out)) == _without_times(json.loads(expected))
    else:
        assert out == expected
