"""The prepared problems of this process: one key of the inputs, one counter, one rule.

Every route prepares a model once for its inputs ``(model, params, start, M)``
and keeps what it made: the problem every route starts from
(:class:`numeric.prepared.problem.PreparedProblem`, which also keeps what the float64
route derives from it, :mod:`numeric.meanfield.problem`), the working-precision route's
record (:class:`numeric.meanfield.working_route.WorkingRoute`, read by order 1
and order 2) and the transient's setup
(:func:`numeric.expansion.transient.transient`).  The key of the inputs
(:func:`inputs_key`), the cache (:class:`PreparedCache`: least recently used
dropped first) and the counter of preparations (:data:`COUNTS`, by kind; the
tests read it) are written here once, so a warm call of any route prepares
nothing and a test can count that it did not.

This module imports only the standard library and NumPy.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar

import numpy as np

#: What this process prepared and searched, by kind: ``"prepared:problem"`` (the
#: problems every route starts from, :mod:`numeric.prepared.problem`; the float64
#: route's too), ``"prepared:general"`` (working-precision route records),
#: ``"prepared:transient"`` (transient setups), ``"objects:general"`` (the
#: working-precision objects computed at one precision,
#: :meth:`numeric.meanfield.working_route.WorkingRoute.at`), ``"continued:general"``
#: (working-precision fixed points a sweep continued from a neighbour's,
#: :func:`numeric.meanfield.working_route.make_route`), ``"fixed_point"`` and
#: ``"warm_start"`` (float64 fixed-point searches, :mod:`numeric.meanfield.problem`).
COUNTS: Counter[str] = Counter()

T = TypeVar("T")


def start_key(start: Any) -> Hashable:
    """A hashable key of a start as given, by the exact value and the type of each entry
    (``TypeError`` when it has none).

    The routes read a float at its exact binary value, text exactly and an mpf (or a
    SymPy float) as it is (:func:`numeric.precision.to_mpf`), so float ``0.1`` and
    ``"0.1"`` are other starts at high precision, and so are two mpf starts that
    print alike at 15 digits: each entry is keyed by its type and value (an mpf by
    its exact ``_mpf_``), never by its printed digits."""
    if start is None or isinstance(start, str):
        return start
    if isinstance(start, np.ndarray):
        return _array_key(start)
    return tuple(_entry_key(v) for v in start)


def _array_key(a: np.ndarray) -> Hashable:
    """A NumPy array by its bytes; one of Python objects by its entries (its bytes are
    addresses, which another array may reuse for other numbers)."""
    if a.dtype.hasobject:
        return ("objects", a.shape, tuple(_entry_key(v) for v in a.ravel().tolist()))
    return ("array", a.dtype.str, a.shape, a.tobytes())


def _entry_key(v: Any) -> Hashable:
    exact = getattr(v, "_mpf_", None)
    if exact is not None:
        return ("mpf", exact)
    hash(v)  # int, float, str, Fraction, NumPy and SymPy numbers hash by their value
    return (type(v).__name__, v)


def observable_key(M: Any) -> Hashable:
    """A hashable key of a quadratic observable as given: ``None`` or its name as is; a
    matrix (nested sequences, a NumPy array or an :class:`mpmath.matrix`) by the
    type and exact value of each entry, as :func:`start_key` keys a start
    (``TypeError`` for anything else)."""
    if M is None or isinstance(M, str):
        return M
    if isinstance(M, np.ndarray):
        return _array_key(M)
    if hasattr(M, "rows") and hasattr(M, "cols"):  # an mpmath matrix
        return ("matrix", tuple(_entry_key(M[i, j]) for i in range(M.rows) for j in range(M.cols)))
    if isinstance(M, list | tuple):
        return ("rows", tuple(tuple(_entry_key(v) for v in row) for row in M))
    raise TypeError(f"no key for an observable of type {type(M).__name__}")


def inputs_key(model: Any, params: Mapping[str, Any], start: Any, M: Any) -> Hashable | None:
    """The cache key of the inputs; ``None`` when one of them has no reliable key (an
    observable that is no name or matrix of plain entries, a value that is not
    hashable, a family that is not a model yet).

    The model enters by identity as well as by its key (a digest of its
    transitions): what it declares besides them (parameter ranges, reference
    point, state space) shapes the problem too.  A cached problem holds its model,
    so the identity of a model in the cache is never reused by another one."""
    model_key = getattr(model, "key", None)  # a family (no key) is built, then refused
    if model_key is None:
        return None
    try:
        items = tuple((k, type(v).__name__, v) for k, v in params.items())
        key = (id(model), model_key, items, start_key(start), observable_key(M))
        hash(key)
    except TypeError:
        return None
    return key


def memo(store: dict[Hashable, Any], key: Hashable, make: Callable[[], Any]) -> Any:
    """``store[key]``, made by ``make()`` on first use: what a prepared object derives
    from itself once and keeps (its own ``store``; ``None`` is never kept)."""
    hit = store.get(key)
    if hit is None:
        hit = store[key] = make()
    return hit


class PreparedCache(Generic[T]):
    """At most ``size`` prepared objects of one ``kind``, by the key of their inputs
    (least recently used dropped first); :data:`COUNTS` ``[kind]`` counts the ones
    built.  A cached object must hold its model (see :func:`inputs_key`)."""

    def __init__(self, kind: str, size: int) -> None:
        self.kind = kind
        self.size = size
        self.items: OrderedDict[Hashable, T] = OrderedDict()
        _CACHES.append(self)

    def peek(self, key: Hashable | None) -> T | None:
        """The object kept for ``key`` (now the most recently used), else ``None``:
        nothing is built."""
        hit = self.items.get(key) if key is not None else None
        if hit is not None:
            self.items.move_to_end(key)
        return hit

    def get(self, key: Hashable | None, build: Callable[[], T], keep: bool = True) -> T:
        """The object of ``key``: kept from before, else ``build()`` (counted), kept
        when ``keep`` and the key is not ``None``."""
        hit = self.peek(key)
        if hit is not None:
            return hit
        made = build()
        COUNTS[self.kind] += 1
        if keep:
            self.put(key, made)
        return made

    def put(self, key: Hashable | None, value: T) -> None:
        """Keep ``value`` for ``key`` (not for ``None``), in place of any kept before, as
        the most recently used."""
        if key is None:
            return
        self.items[key] = value
        self.items.move_to_end(key)
        while len(self.items) > self.size:
            self.items.popitem(last=False)

    def clear(self) -> None:
        self.items.clear()


_CACHES: list[PreparedCache[Any]] = []


def forget_all() -> None:
    """Empty every cache of prepared objects of this process."""
    for cache in _CACHES:
        cache.clear()
