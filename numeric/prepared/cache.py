"""The prepared problems of this process: one key of the inputs, one counter, one rule.

Every route prepares a model once for its inputs ``(model, params, start, M)``
and keeps what it made: the problem every route starts from
(:class:`numeric.prepared.problem.PreparedProblem`), the float64 problem
(:class:`numeric.meanfield.problem.Problem64`), the working-precision problem
(:class:`numeric.meanfield.general.MeanFieldProblem`, read by order 1, order 2
and certification) and the transient's setup
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
#: problems every route starts from, :mod:`numeric.prepared.problem`), ``"prepared"``
#: (float64 problems), ``"prepared:general"`` (working-precision problems),
#: ``"prepared:transient"`` (transient setups), ``"objects:general"`` (the
#: working-precision objects computed at one precision,
#: :meth:`numeric.meanfield.general.MeanFieldProblem.at`), ``"continued:general"``
#: (working-precision fixed points a sweep continued from a neighbour's,
#: :meth:`numeric.meanfield.general.MeanFieldProblem._continued`), ``"fixed_point"`` and
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
        return ("array", start.dtype.str, start.shape, start.tobytes())
    return tuple(_entry_key(v) for v in start)


def _entry_key(v: Any) -> Hashable:
    exact = getattr(v, "_mpf_", None)
    if exact is not None:
        return ("mpf", exact)
    hash(v)  # int, float, str, Fraction, NumPy and SymPy numbers hash by their value
    return (type(v).__name__, v)


def inputs_key(model: Any, params: Mapping[str, Any], start: Any, M: Any) -> Hashable | None:
    """The cache key of the inputs; ``None`` when one of them has no reliable key (an
    observable other than the identity or a name, a value that is not hashable, a
    family that is not a model yet).

    The model enters by identity as well as by its key (a digest of its
    transitions): what it declares besides them (parameter ranges, reference
    point, state space) shapes the problem too.  A cached problem holds its model,
    so the identity of a model in the cache is never reused by another one."""
    model_key = getattr(model, "key", None)  # a family (no key) is built, then refused
    if model_key is None or not (M is None or isinstance(M, str)):
        return None
    try:
        items = tuple((k, type(v).__name__, v) for k, v in params.items())
        key = (id(model), model_key, items, start_key(start), M)
        hash(key)
    except TypeError:
        return None
    return key


class PreparedCache(Generic[T]):
    """At most ``size`` prepared objects of one ``kind``, by the key of their inputs
    (least recently used dropped first); :data:`COUNTS` ``[kind]`` counts the ones
    built.  A cached object must hold its model (see :func:`inputs_key`)."""

    def __init__(self, kind: str, size: int) -> None:
        self.kind = kind
        self.size = size
        self.items: OrderedDict[Hashable, T] = OrderedDict()
        _CACHES.append(self)

    def get(self, key: Hashable | None, build: Callable[[], T], keep: bool = True) -> T:
        """The object of ``key``: kept from before, else ``build()`` (counted), kept
        when ``keep`` and the key is not ``None``."""
        hit = self.items.get(key) if key is not None else None
        if hit is not None:
            self.items.move_to_end(key)
            return hit
        made = build()
        COUNTS[self.kind] += 1
        if key is not None and keep:
            self.items[key] = made
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return made

    def clear(self) -> None:
        self.items.clear()


_CACHES: list[PreparedCache[Any]] = []


def forget_all() -> None:
    """Empty every cache of prepared objects of this process."""
    for cache in _CACHES:
        cache.clear()
