"""Prepared fast-path simulators of this process, found by one lookup (issue 31).

A warm :func:`sim.simulate` call -- the same model object, parameters, ``N``,
start, truncation, engine and policy as an earlier call of this process -- runs the
simulator that call prepared (:meth:`sim.base.Simulator.from_problem` and the
engine's ``_prepare``: the prepared problem, its finite-N model, the rate), instead
of building the keys of the problem, its start and its finite-N model again.  The
key is made once per call (:func:`run_key`) and looked up once (:func:`kept`).

Only fast-path simulators are kept (a model's registered ``simulation`` route,
:func:`sim.base.fast_simulator`): their run reads the simulator and never changes
it, and their choice does not depend on the run's options.  The generic engine's
choice of loop does (:func:`sim.interpreted.pick_loop`), and so it is prepared as
before.  The key holds the fast-path class registered at the time, so a route
registered later is chosen afresh.  The cache is a
:class:`numeric.prepared.cache.PreparedCache` (kind ``"prepared:simulation"``,
emptied by :func:`numeric.prepared.cache.forget_all`); a kept simulator holds its
model, so no other model reuses that model's identity in a key.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from numeric.prepared.cache import PreparedCache, inputs_key
from sim.base import Simulator, fast_simulator

#: Prepared fast-path simulators kept in this process (least recently used dropped
#: first).
SIMULATORS = 64
_KEPT: PreparedCache[Simulator] = PreparedCache("prepared:simulation", SIMULATORS)


def run_key(
    model: Any,
    params: Mapping[str, Any] | None,
    N: Any,
    start: Any,
    truncation: Any,
    engine: str,
    policy: str,
    observables: Any = (),
) -> Hashable | None:
    """The key of a call's prepared simulator: the inputs' key of the prepared problem
    (:func:`numeric.prepared.cache.inputs_key`: the model by identity and digest, each
    parameter by type and value, the start by its exact entries), ``N``, the
    truncation, the engine and policy asked for, and the model's fast-path class;
    ``None`` (not kept) for a call with ``observables`` (they run on the generic
    engine), a model with no fast path or an input with no key."""
    if observables or getattr(model, "key", None) is None or getattr(model, "info", None) is None:
        return None
    key = inputs_key(model, params or {}, start, None)
    if key is None:
        return None
    fast = fast_simulator(model)
    if fast is None:
        return None
    out = (key, type(N).__name__, N, truncation, engine, policy, fast)
    try:
        hash(out)
    except TypeError:
        return None
    return out


def kept(key: Hashable | None) -> Simulator | None:
    """The simulator kept for ``key`` (:func:`run_key`), else ``None``."""
    return _KEPT.peek(key)


def keep(key: Hashable | None, sim: Simulator) -> None:
    """Keep ``sim``, prepared for ``key``, when it is the model's fast-path simulator
    (the last element of ``key``)."""
    if key is not None and type(sim) is key[-1]:
        _KEPT.get(key, lambda: sim)
