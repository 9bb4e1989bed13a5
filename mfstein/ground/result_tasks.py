"""The tasks a result runs on its own inputs, handed to it by the entry that built it.

A result (:class:`numeric.meanfield.solution.MeanFieldSolution`,
:class:`numeric.exact.result.ExactResult`) offers methods that compute more from the
inputs it was computed with: ``solution.certify()`` (Arb enclosures of the same
constant), ``solution.observable(model, g)`` (the expansion of ``E[g(S_N)]``),
``result.expect(g)`` (``E[g(S_N)]`` under the exact law).  Each is another route's
work.  The result does not import that route: the entry that built the result (the
one that holds the prepared problem and knows the routes) attaches a
:class:`ResultTasks` record, and the method calls ``task(self, "certify", ...)(self, ...)``.
So a record module imports only the ground and its own display code
(``tests/test_result_imports.py``), and the routes point one way, down to the
records they fill.

The record is no field of the result's JSON, takes no part in its equality, and
pickles by reference (its members are module-level functions), so an unpickled
result runs its tasks as before.  A result built by hand carries none:
:func:`task` then refuses in one sentence, naming the call to make instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mfstein.ground.exceptions import ParameterError
from mfstein.ground.read_only import ReadOnly


class ResultTasks(ReadOnly):
    """What a result may ask of the routes, each ``None`` when the result has no such
    task (the callables are module-level functions: the record pickles by reference).

    Read-only (an assignment raises :class:`dataclasses.FrozenInstanceError`, as the frozen
    dataclass it was), equal when its tasks are, and pickled as the call that makes it.  A
    plain class with slots: a dataclass costs every new process some 0.8 ms to create (its
    methods compiled from text), and this record is made by the first call of every route.
    """

    __slots__ = ("certify", "expect", "observable")

    #: ``certify(solution, **options) -> CertifiedSolution``: the solution's rigorous
    #: enclosures (:func:`numeric.certified.enclosures.certify_float_solution`).
    certify: Callable[..., Any] | None
    #: ``observable(solution, model, g, params) -> ObservableExpansion``: the expansion
    #: of ``E[g(S_N)]`` (:func:`numeric.meanfield.observables.expand`).
    observable: Callable[..., Any] | None
    #: ``expect(result, g, model) -> ExactExpectation``: ``E[g(S_N)]`` and
    #: ``Var g(S_N)`` under an exact law (:func:`numeric.meanfield.observables.expect_exact`).
    expect: Callable[..., Any] | None

    def __init__(
        self,
        certify: Callable[..., Any] | None = None,
        observable: Callable[..., Any] | None = None,
        expect: Callable[..., Any] | None = None,
    ) -> None:
        put = object.__setattr__
        put(self, "certify", certify)
        put(self, "observable", observable)
        put(self, "expect", expect)

    def _tasks(self) -> tuple[Any, ...]:
        return (self.certify, self.observable, self.expect)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._tasks() == other._tasks()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._tasks())

    def __repr__(self) -> str:
        c, o, e = self._tasks()
        return f"ResultTasks(certify={c!r}, observable={o!r}, expect={e!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ResultTasks, self._tasks())


def task(result: Any, name: str, instead: str) -> Callable[..., Any]:
    """The task ``name`` of ``result``'s :class:`ResultTasks` (its field ``tasks``);
    one sentence when the result carries none (built by hand, not by a task entry),
    naming the call to make ``instead``."""
    found = getattr(getattr(result, "tasks", None), name, None)
    if found is None:
        raise ParameterError(
            f"this {type(result).__name__} was not built by a task entry and carries no "
            f"{name} task; call {instead} instead."
        )
    return found
