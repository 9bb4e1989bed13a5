"""The tasks the routes hand to the results they build
(:class:`mfstein.ground.result_tasks.ResultTasks`).

:data:`SOLUTION_TASKS` goes with every :class:`~numeric.meanfield.solution.MeanFieldSolution`
an entry returns (``numeric.solve``, the float64 route, the supermarket's short form):
``certify`` is :func:`numeric.certified.enclosures.certify_float_solution` (rigorous
enclosures of the constant ``c = tr(M W)`` of the core paper's Theorem 1 at the
solution's own parameters, start and ``M``), ``observable`` is
:func:`numeric.meanfield.observables.expand` (``E[g(S_N)] = g0 + g1/N + g2/N^2``).
:data:`EXACT_TASKS` goes with every :class:`~numeric.exact.result.ExactResult`:
``expect`` is :func:`numeric.meanfield.observables.expect_exact`.

The records hold the module-level functions below, which import their route when
called: building a result costs no import, and a pickled result unpickles with its
tasks.  This module is the one place where a result's methods meet the routes
(``tests/test_result_imports.py``: the record modules import none).
"""

from __future__ import annotations

from typing import Any

from mfstein.ground.result_tasks import ResultTasks


def certify(solution: Any, **options: Any) -> Any:
    """:func:`numeric.certified.enclosures.certify_float_solution` of ``solution``."""
    from numeric.certified.enclosures import certify_float_solution

    return certify_float_solution(solution, **options)


def observable(solution: Any, model: Any, g: Any, params: Any = None) -> Any:
    """:func:`numeric.meanfield.observables.expand` of ``g`` at ``solution``."""
    from numeric.meanfield.observables import expand

    return expand(solution, model, g, params)


def expect(result: Any, g: Any, model: Any = None) -> Any:
    """:func:`numeric.meanfield.observables.expect_exact` of ``g`` under ``result``'s law."""
    from numeric.meanfield.observables import expect_exact

    return expect_exact(result, g, model)


#: The tasks of a mean-field solution.
SOLUTION_TASKS = ResultTasks(certify=certify, observable=observable)

#: The tasks of an exact chain's result.
EXACT_TASKS = ResultTasks(expect=expect)
