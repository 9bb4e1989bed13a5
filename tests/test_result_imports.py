"""Results reach the routes through the tasks their entry attached, never by importing
them (issue 31).

A result offers methods that compute more from its own inputs -- ``solution.certify()``,
``solution.observable(model, g)``, ``exact_result.expect(g)`` -- and each is another
route's work.  The entry that built the result attaches a
:class:`mfstein.ground.result_tasks.ResultTasks` record (field ``tasks``), and the
method calls the record's function; the result's code imports no engine.

*Results*: every ``Presentable`` dataclass of the library (found with :mod:`ast`, as in
``tests/test_result_fields.py``); the imports inside each one's class body are read.
*Record modules* (:data:`RECORD_MODULES`) hold results and nothing else: every import
of theirs is read, at module level and inside functions.
*Engines*: every module of the library that is neither the ground (``mfstein.ground``),
nor a record module, nor one of :data:`READABLE` (how numbers print, a result's own
text, its own error estimate) -- the derivation (``derive``), the prepared problem
(``numeric.prepared``), the routes of ``numeric.meanfield``, ``numeric.expansion``,
``numeric.exact``, ``numeric.certified``, ..., and ``sim``'s loops and runner.
"""

from __future__ import annotations

import ast
import dataclasses
import pickle

import pytest
from test_layers import ROOT, imports
from test_result_fields import results

from mfstein.ground.errors import ParameterError

#: Modules that hold results only: all their imports are read.
RECORD_MODULES = (
    "numeric.meanfield.solution",
    "numeric.exact.result",
    "numeric.expansion.transient_result",
    "numeric.meanfield.sweep_result",
    "numeric.heterogeneous.result",
)

#: What a result may import beside the ground and the record modules, with the reason.
READABLE = {
    "numeric.precision": "how a number prints with the digits claimed for it",
    "derive.latex_print": "how a derived object prints in LaTeX (printing only, derives nothing)",
    "sim.figures": "the figure helpers a result's plot() draws with (matplotlib, the file check)",
    "numeric.meanfield.solution_text": "MeanFieldSolution.to_text's layout",
    "numeric.exact.text": "ExactResult.to_text's layout",
    "numeric.exact.law_error": "the law's own error estimate, from the Q^T kept with it",
    "numeric.expansion.transient_text": "TransientResult.to_text's layout",
    "numeric.heterogeneous.text": "the heterogeneous results' layout",
    "numeric.pi.text": "the Persistent-Idle results' layout",
    "sim.result_text": "SimulationResult.to_text's layout",
    "sim.stats": "an estimate and its confidence interval as printed",
    "sim.summary": "a run's status rows",
}

#: Engine imports of a result that remain, ``(result, engine) -> reason`` (a ratchet:
#: the test fails when a listed one is gone, so the list only shrinks).
KNOWN: dict[tuple[str, str], str] = {}

#: Engines the definition must classify as such (the routes the results used to import).
NAMED_ENGINES = (
    "numeric.certified.enclosures",
    "numeric.meanfield.observables",
    "numeric.meanfield.result_tasks",
    "numeric.meanfield.entry",
    "numeric.exact.general",
    "numeric.prepared.problem",
    "derive.model",
    "sim.runner",
)


def is_engine(module: str) -> bool:
    """A library module that is neither the ground, nor a record module, nor readable."""
    top = module.partition(".")[0]
    if top not in ("derive", "numeric", "sim", "mfstein"):
        return False
    if module == "mfstein.ground" or module.startswith("mfstein.ground."):
        return False
    return module not in RECORD_MODULES and module not in READABLE


def _file(module: str):
    path = ROOT.joinpath(*module.split("."))
    return (path / "__init__.py") if path.is_dir() else path.with_suffix(".py")


def engine_imports() -> set[tuple[str, str]]:
    """``(result or record module, engine)`` for every engine a result's code imports."""
    found = set()
    for module in RECORD_MODULES:
        for _, target, _ in imports(_file(module).read_text(), module):
            if is_engine(target):
                found.add((module, target))
    for c in results():
        tree = ast.parse((ROOT / c.path).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == c.name:
                package = c.path.endswith("__init__.py")
                for _, target, _ in imports(ast.unparse(node), c.module, package=package):
                    if is_engine(target):
                        found.add((f"{c.module}:{c.name}", target))
    return found


def test_the_definition_of_an_engine() -> None:
    assert all(is_engine(m) for m in NAMED_ENGINES)
    assert not any(is_engine(m) for m in (*RECORD_MODULES, *READABLE))
    assert not is_engine("mfstein.ground.result_tasks") and not is_engine("numpy")
    assert all(_file(m).is_file() for m in (*RECORD_MODULES, *READABLE, *NAMED_ENGINES))


def test_no_result_imports_an_engine() -> None:
    found = engine_imports()
    bad = [f"{r} imports {e}" for r, e in sorted(found) if (r, e) not in KNOWN]
    bad += [
        f"listed import gone (update KNOWN): {r} -> {e}" for r, e in KNOWN if (r, e) not in found
    ]
    assert not bad, "\n".join(bad)


def test_the_scan_reads_the_methods_of_the_results() -> None:
    """The results that compute more are among those read (a scan that missed them
    would pass for nothing)."""
    names = {f"{c.module}:{c.name}" for c in results()}
    assert {
        "numeric.meanfield.solution:MeanFieldSolution",
        "numeric.exact.result:ExactResult",
        "sim.base:SimulationResult",
        "numeric.certified.enclosures:CertifiedSolution",
    } <= names


# ------------------------------------------------------- the tasks a result carries
SIR = {"beta": "2", "gamma": "1", "rho": "0.5", "a": "0.1"}


@pytest.fixture(scope="module")
def solution():
    import numeric

    return numeric.solve("sir", SIR, dps=12)


@pytest.fixture(scope="module")
def exact():
    import numeric.exact

    return numeric.exact.solve("sir", SIR, N=6)


def test_the_tasks_are_no_field_of_the_json_nor_of_equality(solution, exact) -> None:
    for r in (solution, exact):
        assert r.tasks is not None
        assert "tasks" not in r.to_dict() and "tasks" not in repr(r)
        bare = dataclasses.replace(r, tasks=None)
        assert bare == r and bare.to_json() == r.to_json()


def test_a_result_runs_its_tasks_after_a_pickle_round_trip(exact) -> None:
    """(A float64 solution pickles as its values; a working-precision one holds
    ``mpmath.matrix`` objects, which do not pickle, with or without tasks.)"""
    import numeric

    solution = numeric.solve("sir", SIR, precision="float64")
    again = pickle.loads(pickle.dumps(solution))
    assert again.tasks == solution.tasks and again == solution
    assert again.certify(dps=12).interval() == solution.certify(dps=12).interval()
    model = solution.get_model()
    assert again.observable(model, "S").to_dict() == solution.observable(model, "S").to_dict()
    law = pickle.loads(pickle.dumps(exact))
    assert law.expect("S*I").to_dict() == exact.expect("S*I").to_dict()


def test_a_result_without_tasks_refuses_in_one_sentence(solution, exact) -> None:
    model = solution.get_model()
    cases = [
        (lambda: dataclasses.replace(solution, tasks=None).certify(), "certify"),
        (lambda: dataclasses.replace(solution, tasks=None).observable(model, "S"), "observable"),
        (lambda: dataclasses.replace(exact, tasks=None).expect("S"), "expect"),
    ]
    for call, name in cases:
        with pytest.raises(ParameterError) as caught:
            call()
        text = str(caught.value)
        assert f"carries no {name} task" in text and text.count(". ") == 0, text
