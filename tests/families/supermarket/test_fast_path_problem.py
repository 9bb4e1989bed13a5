"""The supermarket's mean-field fast path takes the problem ``numeric.solve`` prepared (issue 31).

``numeric.solve`` prepares one problem before any route
(:func:`numeric.meanfield.entry._solve_problem`); the family's fast path
(:func:`mfstein.families.supermarket.solver.solve_model`) is given that problem and reads its
values there, so a call checks the parameter names once, prepares at most one
parameter point and one problem per distinct input, and a warm call reads no
parameter value.  A solver registered in the old form ``f(model, params, *, dps, M)``
still works, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import pytest

import numeric
import numeric.params as params_module
import numeric.prepared.parameters as parameters_module
from derive.models import load_model
from mfstein.families.supermarket.solver import solve_model
from mfstein.ground.fast_paths import FastPath, register, unregister
from numeric.meanfield import fast_paths
from numeric.prepared.cache import COUNTS
from numeric.prepared.problem import prepare_problem


@pytest.fixture
def given():
    """The arguments the supermarket's fast path is called with (the real solver runs),
    registered at run time over the built-in route (its other tasks kept)."""
    calls: list[tuple] = []

    def recorded(*args, **kwargs):
        calls.append(args)
        return solve_model(*args, **kwargs)

    register("supermarket", FastPath(mean_field=recorded))
    yield calls
    unregister("supermarket")


@pytest.mark.parametrize("order", [1, 2])
def test_the_fast_path_is_given_the_problem_solve_prepared(given, order: int) -> None:
    model = load_model("supermarket", b=5)
    params = {"lam": "0.6875"}  # a point no other test prepared
    sol = numeric.solve(model, params, dps=15, order=order)
    assert [len(args) for args in given] == [1], given  # the problem alone
    assert given[0][0] is prepare_problem(model, params)  # the one numeric.solve prepared
    assert sol.inputs == params and sol.n == 5


def test_names_are_checked_once_and_a_warm_call_reads_no_value(monkeypatch) -> None:
    checks: list[dict] = []
    reads: list[str] = []
    real_check, real_read = parameters_module.check_names, params_module._read

    def check(model, params):
        checks.append(dict(params))
        return real_check(model, params)

    def read(name, raw):
        reads.append(name)
        return real_read(name, raw)

    monkeypatch.setattr(parameters_module, "check_names", check)
    monkeypatch.setattr(params_module, "_read", read)
    model = load_model("supermarket", b=5)
    params = {"lam": "0.59375"}  # a point no other test prepared
    before = COUNTS["prepared:params"], COUNTS["prepared:problem"]
    first = numeric.solve(model, params, dps=15)
    grown = COUNTS["prepared:params"] - before[0], COUNTS["prepared:problem"] - before[1]
    assert grown == (1, 1)  # one parameter point and one problem for this input
    assert checks == [params]  # by numeric.solve, not again by the fast path
    assert reads
    cold = len(reads)
    again = numeric.solve(model, dict(params), dps=15)
    warm = COUNTS["prepared:params"] - before[0], COUNTS["prepared:problem"] - before[1]
    assert warm == (1, 1)  # nothing prepared again
    assert len(checks) == 2 and len(reads) == cold, reads[cold:]  # the warm call read no value
    assert again == first


def test_a_solver_of_model_and_params_still_works_with_a_warning() -> None:
    seen: list[dict] = []

    def old_form(model, params, *, dps, M):
        seen.append(dict(params))
        with pytest.warns(DeprecationWarning, match="pass the prepared problem"):
            return solve_model(model, params, dps=dps, M=M)

    with pytest.warns(DeprecationWarning, match=r"f\(problem, \*, dps, M\)"):
        with pytest.warns(DeprecationWarning, match="register_fast_path is deprecated"):
            fast_paths.register_fast_path("supermarket", old_form)
    try:
        model = load_model("supermarket", b=5)
        old = numeric.solve(model, {"lam": "0.7"}, dps=15)
    finally:
        unregister("supermarket")
    assert seen == [{"lam": "0.7"}]
    assert old == numeric.solve(model, {"lam": "0.7"}, dps=15)  # the built-in route again
