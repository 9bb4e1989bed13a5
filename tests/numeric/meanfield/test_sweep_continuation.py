"""The working-precision sweep continues each fixed point from its neighbour (issue 34):
Newton's steps from the neighbour's ``s*`` replace the global search when the point
they reach passes the search's checks, else the search runs as for a single solve;
the rows are the single solves' within the digits they state, in one process, in
local processes and on a Dask cluster."""

from __future__ import annotations

from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy as sp

import numeric
from derive import Model, Transition
from derive.models import load_model
from derive.spec import ModelInfo, Parameter, StateSpace
from numeric.meanfield.fixed_point import continuing
from numeric.meanfield.prepared_cache import COUNTS
from numeric.meanfield.sweep_result import SweepPoint

ROOT = Path(__file__).resolve().parents[3]
USER = f"{ROOT / 'benchmarks/models/supermarket_user.py'}:supermarket_user"


def _bistable() -> Model:
    """``dx/dt = lam - x (x - 1) (x - 2)``: for ``0 < lam < 2 / (3 sqrt 3)`` two stable
    fixed points (below 1 and above 2) around an unstable one; above, only the upper."""
    x, lam = sp.symbols("x lam")
    return Model(
        "bistable",
        (x,),
        (lam,),
        [Transition((1,), lam + 3 * x**2, "up"), Transition((-1,), x**3 + 2 * x, "down")],
        info=ModelInfo(
            parameters=(Parameter("lam", low=0, high=1),), state_space=StateSpace("orthant")
        ),
    )


def _same_within_digits(row: SweepPoint, sol) -> None:
    """The row prints what the single solve prints: ``c``, its digits, ``V`` and the
    errors; every entry of ``s*`` within the errors both state."""
    mine, single = row.to_dict(), SweepPoint.of_solution(row.params, sol).to_dict()
    for key in ("c", "digits", "V", "V_abs_error", "s_star_abs_error", "notes"):
        assert mine[key] == single[key], key
    with mpmath.workdps(sol.dps + 20):
        for a, b, e in zip(row.s_star, sol.s_star, sol.errors["s_star"], strict=True):
            assert abs(a - b) <= 2 * e


def test_each_point_after_the_first_is_continued_and_is_the_single_solve() -> None:
    model = load_model(USER, b=6)
    before = COUNTS["continued:general"]
    res = numeric.sweep(model, {"lam": "0.5:0.95:4"}, dps=20)
    assert COUNTS["continued:general"] - before == 3  # the first point is searched
    for row in res.rows:
        _same_within_digits(row, numeric.solve(model, {"lam": row.params["lam"]}, dps=20))


def test_a_guess_that_fails_the_checks_is_left_for_the_search() -> None:
    """Newton's steps from near the unstable fixed point reach it: refused by the
    stability check, so the search from the start answers, as a single solve does."""
    model = _bistable()
    single = numeric.solve(model, {"lam": "0.2"}, dps=15)
    assert single.s_star[0] < 1
    before = COUNTS["continued:general"]
    with continuing(model, np.array([1.1])):
        sol = numeric.solve(model, {"lam": "0.2"}, dps=15)
    assert COUNTS["continued:general"] == before
    assert sol.s_star == single.s_star and sol.digits == single.digits
    with continuing(model, np.array([2.1])):  # the upper stable point: accepted
        upper = numeric.solve(model, {"lam": "0.2"}, dps=15)
    assert COUNTS["continued:general"] == before + 1
    assert upper.s_star[0] > 2 and all(mpmath.re(v) < 0 for v in upper.eigenvalues)
    # a single solve afterwards does not read the continued problem
    assert numeric.solve(model, {"lam": "0.2"}, dps=15).s_star == single.s_star


def test_a_sweep_follows_the_branch_of_its_first_point() -> None:
    """Downwards from lam = 0.6 (one stable fixed point, above 2) the sweep stays on the
    upper branch where a single solve from the origin finds the lower one; upwards the
    rows are the single solves', jumping when the lower branch ends."""
    model = _bistable()
    down = numeric.sweep(model, {"lam": "0.6:0.1:6"}, dps=15)
    assert all(row.s_star[0] > 2 for row in down.rows)
    assert numeric.solve(model, {"lam": "0.1"}, dps=15).s_star[0] < 1
    up = numeric.sweep(model, {"lam": "0.1:0.6:6"}, dps=15)
    assert [row.s_star[0] > 2 for row in up.rows] == [False] * 3 + [True] * 3
    for row in up.rows:
        _same_within_digits(row, numeric.solve(model, {"lam": row.params["lam"]}, dps=15))


def test_local_processes_and_a_dask_cluster_give_the_same_rows() -> None:
    """Two local processes (each continuing along its half) and a Dask cluster whose
    one worker runs two threads (mpmath's precision is one per process: the pieces
    take turns): the rows of one process, printed the same."""
    grid = {"b": 4, "lam": "0.5:0.9:6"}
    one = numeric.sweep(USER, grid, dps=15)
    two = numeric.sweep(USER, grid, dps=15, workers=2)
    assert two.workers == 2
    printed = [r.to_dict() for r in one.rows]
    assert [r.to_dict() for r in two.rows] == printed
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cl:
        on_dask = numeric.sweep(USER, grid, dps=15, workers=2, scheduler=cl.scheduler_address)
    assert on_dask.workers == 2 and [r.to_dict() for r in on_dask.rows] == printed
