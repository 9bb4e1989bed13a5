"""The classes a new N's first exact call creates (issue 34): a dataclass's methods are
compiled from text when its class is made, some 0.3-2 ms per class in every new process,
so the modules of that call make dataclasses only of the public records a user reads
(:class:`numeric.exact.result.ExactResult`, whose fields :func:`dataclasses.fields`,
``replace`` and the API pages list, and :class:`numeric.exact.law_error.LawSystem`);
the internal records are plain classes with slots that keep the dataclasses' behaviour."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
from typing import Any

import pytest

#: The modules a new N's first exact call imports after :mod:`numeric.exact`
#: (``benchmarks/bench_exact_first_call.py``'s ``imports``; numba's are not ours).
ROUTE = (
    "mfstein.ground.display",
    "mfstein.ground.generated",
    "mfstein.ground.records",
    "mfstein.ground.result_tasks",
    "numeric.exact.fast_paths",
    "numeric.exact.general",
    "numeric.exact.kept",
    "numeric.exact.law_error",
    "numeric.exact.memory",
    "numeric.exact.pinned",
    "numeric.exact.prepared",
    "numeric.exact.result",
    "numeric.exact.small",
    "numeric.exact.space",
    "numeric.meanfield.result_tasks",
)
PUBLIC = {"numeric.exact.result.ExactResult", "numeric.exact.law_error.LawSystem"}


def test_the_first_exact_call_makes_dataclasses_only_of_public_records() -> None:
    made = set()
    for name in ROUTE:
        module = importlib.import_module(name)
        for key, obj in vars(module).items():
            if isinstance(obj, type) and obj.__module__ == name:
                if dataclasses.is_dataclass(obj):
                    made.add(f"{name}.{key}")
    assert made == PUBLIC


def test_the_plain_records_keep_the_dataclasses_behaviour() -> None:
    """Equality, ``repr``, read-only-ness and pickling as the dataclasses they were."""
    from mfstein.ground.result_tasks import ResultTasks
    from numeric.exact.space import Lattice, Reachable
    from numeric.meanfield.result_tasks import EXACT_TASKS

    a = Lattice(N=7, kind="orthant", upper=5, total=5, truncated=True)
    b = Lattice(7, "orthant", 5, 5, True, (), (), (), [])
    assert a == b and a.notes == [] and a.notes is not Lattice(7, "box", 7, 7, False).notes
    assert a != Lattice(N=7, kind="orthant", upper=6, total=5, truncated=True)
    assert repr(a) == (
        "Lattice(N=7, kind='orthant', upper=5, total=5, truncated=True, laws=(), free=(), "
        "values=(), notes=[])"
    )
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)
    assert pickle.loads(pickle.dumps(a)) == a and copy.deepcopy(a) == a

    r = Reachable(states=None, rates=None, target=None, exact_states=0)  # type: ignore[arg-type]
    assert r == r and r != copy.copy(r) and r.up_rates is None

    tasks = pickle.loads(pickle.dumps(EXACT_TASKS))
    assert tasks == EXACT_TASKS and hash(tasks) == hash(EXACT_TASKS)
    assert tasks.expect is EXACT_TASKS.expect and tasks.certify is None  # by reference
    assert tasks != ResultTasks() and ResultTasks() == ResultTasks()
    with pytest.raises(dataclasses.FrozenInstanceError):
        EXACT_TASKS.expect = None  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del EXACT_TASKS.expect
    assert repr(ResultTasks()) == "ResultTasks(certify=None, observable=None, expect=None)"


def _twin(cls: type) -> type:
    """A dataclass of ``cls``'s fields with the ``__init__`` the decorator generates."""
    fields = dataclasses.fields(cls)
    space: dict[str, Any] = {"__annotations__": {f.name: f.type for f in fields}}
    for f in fields:
        space[f.name] = dataclasses.field(
            default=f.default, default_factory=f.default_factory, init=f.init
        )
    frozen = cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    return dataclasses.dataclass(frozen=frozen)(type("Twin", (), space))


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_a_written_out_init_is_the_one_the_fields_generate(name: str) -> None:
    """:class:`ExactResult` and :class:`LawSystem` write out their ``__init__``
    (``init=False``): its parameters are those the dataclass would generate from the
    fields (names, order, annotations, defaults, ``<factory>`` where a new list or dict is
    made)."""
    import inspect

    module, _, key = name.rpartition(".")
    cls = getattr(importlib.import_module(module), key)

    def parameters(c: type) -> str:
        return str(inspect.signature(c).replace(return_annotation=inspect.Signature.empty))

    assert parameters(cls) == parameters(_twin(cls))


def test_an_exact_result_gets_new_lists_and_dicts_of_its_own() -> None:
    import numpy as np

    from numeric.exact.result import ExactResult

    fields = dataclasses.fields(ExactResult)
    twin = _twin(ExactResult)
    z = np.zeros(1)
    given = (z, z, z, z, z, 0.0, z, 1.0, "direct", 0)
    a, b = (ExactResult("m", 1, {}, 1, 1, 0.0, *given) for _ in range(2))
    for name in ("law_values", "notes", "family_fields", "observables", "_errors"):
        assert getattr(a, name) == getattr(twin("m", 1, {}, 1, 1, 0.0, *given), name)
        assert getattr(a, name) is not getattr(b, name), name
    assert list(vars(a)) == [f.name for f in fields]
    assert dataclasses.replace(a, notes=["x"]).notes == ["x"] and a.notes == []
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.notes = []  # type: ignore[misc]


def test_an_exact_result_compares_and_hashes_as_the_generated_methods_would() -> None:
    """:class:`ExactResult` writes out ``==`` and ``hash`` (``eq=False``: the generated
    text of 37 fields cost every new process some 0.3 ms to compile): the answers of a
    frozen dataclass of the same fields (``compare`` kept) with the generated ones."""
    import numpy as np

    from numeric.exact.result import ExactResult

    fields = dataclasses.fields(ExactResult)
    space: dict[str, Any] = {"__annotations__": {f.name: f.type for f in fields}}
    for f in fields:
        space[f.name] = dataclasses.field(
            default=f.default, default_factory=f.default_factory, init=f.init, compare=f.compare
        )
    twin = dataclasses.dataclass(frozen=True)(type("Twin", (), space))
    z = np.zeros(1)

    def both(model: str = "m", N: int = 1, pi: Any = z, source: Any = None) -> tuple[Any, Any]:
        given = (pi, z, z, z, z, 0.0, z, 1.0, "direct", 0)
        args = (model, N, {}, 1, 1, 0.0, *given)
        return ExactResult(*args, source_model=source), twin(*args, source_model=source)

    (a, ta), (b, tb) = both(), both(source="another model")  # source_model is not compared
    for x, tx in (both(), both("n"), both(N=2), both(source=1)):
        assert (a == x, a != x, x == b) == (ta == tx, ta != tx, tx == tb)
    assert a == b and a != both("n")[0] and a.__eq__(ta) is NotImplemented
    for x, tx in ((a, ta), (b, tb)):
        with pytest.raises(TypeError, match="unhashable type: 'dict'"):
            hash(tx)
        with pytest.raises(TypeError, match="unhashable type: 'dict'"):
            hash(x)
    c, tc = both(pi=np.zeros(2))  # equal entries, not the same array: NumPy refuses its truth
    for left, right in ((a, c), (ta, tc)):
        with pytest.raises(ValueError, match="truth value"):
            _ = left == right
