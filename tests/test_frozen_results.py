"""Every task's result is frozen and model-neutral (issue 31).

(a) Assigning a field of a result raises :class:`dataclasses.FrozenInstanceError`:
checked on a real instance of each task's result (a cheap run of a plain SIS model
and of a small heterogeneous population), and on the class of every other result
the library defines (the ``Presentable`` dataclasses :mod:`tests.test_result_fields`
finds with :mod:`ast`).

(b) The results of the general tasks have no field named for the supermarket family
(its arrival rate, choices, sampling and dispatch policy): a family's quantities sit
in the result's ``family_fields`` record and are read through properties.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any

import pytest
from hetpop_models import SIS as HET_PARAMS
from hetpop_models import sis as het_sis
from test_one_journey import PARAMS, START, plain_sis
from test_result_fields import results

import mfstein as mf
import numeric
from derive.models import load_model

#: The fields only the supermarket family defines.
SUPERMARKET_NAMES = frozenset({"lam", "lam_text", "d", "replacement", "policy"})

#: ``module:Class`` of the results of the general tasks (any model).
GENERAL_RESULTS = (
    "numeric.meanfield.solution:MeanFieldSolution",
    "numeric.meanfield.stationary:SecondOrder",
    "numeric.meanfield.observables:ObservableExpansion",
    "numeric.meanfield.observables:ExactExpectation",
    "numeric.meanfield.sweep_result:SweepResult",
    "numeric.expansion.transient_result:TransientResult",
    "numeric.certified.enclosures:CertifiedSolution",
    "numeric.exact.result:ExactResult",
    "sim.base:SimulationResult",
    "sim.accuracy:AccuracyTable",
    "numeric.heterogeneous.result:HeterogeneousSolution",
    "numeric.heterogeneous.result:HeterogeneousExact",
    "numeric.expansion.transient_heterogeneous:HeterogeneousTransient",
    "sim.heterogeneous:HeterogeneousSimulation",
)


def _class(key: str) -> type:
    module, _, name = key.partition(":")
    return getattr(importlib.import_module(module), name)


def _sweep_with(**options: Any) -> Any:
    sir = {"beta": ["2", "3"], "gamma": "1", "rho": "0.5", "a": "0.1"}
    return numeric.sweep("sir", sir, precision="float64", **options)


def _sweep() -> Any:
    return _sweep_with()


def _simulate() -> Any:
    return mf.simulate(plain_sis(), PARAMS, N=50, start=START, steps=2_000, reps=1, seed=3,
                       workers=1)  # fmt: skip


#: A cheap real instance of each task's result.
INSTANCES: dict[str, Callable[[], Any]] = {
    "MeanFieldSolution": lambda: mf.solve(plain_sis(), PARAMS, start=START),
    "SecondOrder": lambda: numeric.second_order(plain_sis(), PARAMS, start=START, dps=20),
    "ObservableExpansion": lambda: mf.solve(
        plain_sis(), PARAMS, start=START, observables=["i*i"]
    ).observables["i*i"],
    "ExactExpectation": lambda: mf.exact(plain_sis(), PARAMS, N=10, start=START).expect("i*i"),
    "SweepResult": _sweep,
    "TransientResult": lambda: mf.transient(plain_sis(), PARAMS, times=[0.5], start=START),
    "CertifiedSolution": lambda: mf.certify(plain_sis(), PARAMS, start=START),
    "ExactResult": lambda: mf.exact(plain_sis(), PARAMS, N=10, start=START),
    "SimulationResult": _simulate,
    "HeterogeneousSolution": lambda: numeric.solve(het_sis(4), HET_PARAMS, precision="float64"),
    "HeterogeneousExact": lambda: numeric.exact.solve(het_sis(4), HET_PARAMS, N=4),
    "HeterogeneousTransient": lambda: numeric.transient(het_sis(2), HET_PARAMS, times=[1], dps=10),
    "HeterogeneousSimulation": lambda: mf.simulate(
        het_sis(4), HET_PARAMS, N=4, steps=2_000, reps=2, seed=3, workers=1
    ),
}


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_assigning_a_field_of_a_real_result_raises(name: str) -> None:
    result = INSTANCES[name]()
    assert type(result).__name__ == name
    for f in dataclasses.fields(result):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(result, f.name, getattr(result, f.name))


def test_every_result_class_is_frozen() -> None:
    """Every ``Presentable`` dataclass of the library, and the general results not
    shown (``SecondOrder``), are frozen dataclasses."""
    classes = [_class(f"{c.module}:{c.name}") for c in results()]
    classes += [_class(k) for k in GENERAL_RESULTS]
    loose = sorted({c.__qualname__ for c in classes if not c.__dataclass_params__.frozen})
    assert not loose, f"mutable results: {loose}"


@pytest.mark.parametrize("key", GENERAL_RESULTS)
def test_general_results_have_no_supermarket_fields(key: str) -> None:
    names = {f.name for f in dataclasses.fields(_class(key))}
    assert not names & SUPERMARKET_NAMES, (key, sorted(names & SUPERMARKET_NAMES))


@pytest.mark.parametrize("key", GENERAL_RESULTS)
def test_general_results_begin_with_the_model_neutral_inputs(key: str) -> None:
    """A general result that names its model does so in its first fields (the
    model-neutral inputs come first)."""
    names = [f.name for f in dataclasses.fields(_class(key))]
    if "model" in names:
        assert names.index("model") < 3, (key, names[:4])


def test_results_carry_the_inputs_of_their_task() -> None:
    """The start of a task that takes one, and ``M`` of a task that takes one, are on
    its result (exact chains and simulations take no ``M``: their results have none)."""
    M = [[2, 0], [0, 1]]
    transient = mf.transient(plain_sis(), PARAMS, times=[0.5], start=START)
    solution = mf.solve(plain_sis(), PARAMS, start=START, M=M)
    certified = solution.certify()
    swept = _sweep_with(M=[[1, 0, 0], [0, 2, 0], [0, 0, 1]])
    assert (transient.model, transient.params, transient.start) == ("plain_sis", PARAMS, START)
    assert (certified.start, solution.start, solution.M) == (START, START, M)
    assert swept.M == [[1, 0, 0], [0, 2, 0], [0, 0, 1]]
    for key in ("numeric.exact.result:ExactResult", "sim.base:SimulationResult"):
        assert "M" not in {f.name for f in dataclasses.fields(_class(key))}


def test_the_supermarket_reads_its_fields_from_its_family_record() -> None:
    """The supermarket's exact and simulated results keep ``lam``, ``d`` (and the rest)
    in ``family_fields``, read through properties; a plain model's record is empty."""
    exact = numeric.exact.solve_exact(4, "0.9", 3, 2)
    model = load_model("supermarket", b=3, d=2)
    run = mf.simulate(model, {"lam": "0.9"}, N=20, steps=2_000, reps=1, seed=3, workers=1)
    assert exact.family_fields == {"lam": "0.9", "d": 2, "replacement": True}
    assert (exact.lam, exact.d, exact.replacement) == ("0.9", 2, True)
    assert run.family_fields["lam_text"] == run.lam_text == "0.9" and run.d == 2
    assert run.policy == run.family_fields["policy"] and run.replacement is not None
    plain = mf.exact(plain_sis(), PARAMS, N=10, start=START)
    assert plain.family_fields == {} and plain.lam is None and plain.d is None
    with pytest.raises(AttributeError):
        exact.lam = "0.8"  # a read-only property


def test_a_sweep_carries_its_params_and_start_and_solves_from_that_start() -> None:
    """``numeric.sweep(..., start=)``: each row is what :func:`numeric.solve` answers
    from that start (``s + i`` conserved at 4/5, not 1), and the result carries the
    start as given and the parameters as swept; the JSON adds ``"start"`` last."""
    start = ["3/5", "1/5"]
    grid = {**PARAMS, "beta": ["2", "3"]}
    swept = numeric.sweep(plain_sis(), grid, precision="float64", start=start)
    assert swept.start == start and swept.params == {**PARAMS, "beta": ["2", "3"]}
    for row, beta in zip(swept.rows, ("2", "3"), strict=True):
        one = mf.solve(plain_sis(), {**PARAMS, "beta": beta}, start=start, precision="float64")
        assert row.c == float(one.constant) and row.s_star == tuple(float(x) for x in one.s_star)
        assert abs(sum(row.s_star) - 0.8) < 1e-12
    own = numeric.sweep(plain_sis(), grid, precision="float64")
    assert own.start is None and own.rows[0].c != swept.rows[0].c
    data = swept.to_dict()
    assert list(data)[-1] == "start" and data["start"] == start and own.to_dict()["start"] is None


def test_an_accuracy_table_carries_its_params_and_start() -> None:
    """``AccuracyTable.params`` and ``.start`` are the inputs as given; the table's
    JSON keeps its documented keys (``tests/cli/test_model_table.py``)."""
    from sim.accuracy import accuracy

    start = ["3/5", "1/5"]
    table = accuracy(plain_sis(), PARAMS, "i", [10], start=start, order=1, exact=False)
    own = accuracy(plain_sis(), PARAMS, "i", [10], order=1, exact=False)
    assert (table.params, table.start) == (PARAMS, start)
    assert (own.params, own.start) == (PARAMS, None)
    assert table.rows[0]["order1"] != own.rows[0]["order1"]  # the start was used
    assert set(table.to_dict()) == {"model", "observable", "rows"}
