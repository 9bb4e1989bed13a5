"""Rent or buy a model's compiled event loop under ``engine="auto"`` (ski rental).

A run of the generic engine either pays numba's compilation of the model's own loop
once (*buy*: :func:`sim.generic_kernels.compile_seconds`, at least
:data:`sim.generic_kernels.MIN_COMPILE_SECONDS`) or runs on the interpreted loop,
compiled once for every model, at an extra cost per event (*rent*:
:func:`sim.interpreted.extra_seconds`).  Judged run by run, a researcher calling
``simulate`` a thousand times on short runs would rent for good: each run alone costs
less extra than the compilation, their sum passes it after a few hundred calls.

So the extra already paid is counted per compiled loop (its chain module's name,
:func:`sim.generic_kernels.chain_name`), and :func:`sim.interpreted.pick_loop` buys
once the extra paid plus this run's reaches the compile time.  That is the classic
ski rental: with rent ``r`` per event and price ``C``, the rent paid before buying is
below ``C``, so the total never exceeds ``2 C`` when buying was right in hindsight, and
is the least possible (all rent) otherwise: at most about twice the best choice made
knowing the future calls.

The extra of one loop is the same per event (:func:`sim.interpreted.extra_seconds` of
the model's tables), so the count is kept in events: the extra seconds are the events
times that constant.  It is kept in this process and in the cache directory
(folder ``prepared``, one small record per loop: :mod:`mfstein.ground.records`), so
that a shell loop of CLI runs counts too.  Two processes paying at once may each
write their own total (one run's events lost): a later buy, never a wrong result.
"""

from __future__ import annotations

#: Events run on the interpreted loop in place of each compiled loop, in this process.
_SPENT: dict[str, int] = {}

#: Format of a rent record (part of its key).
VERSION = 1


def _key(chain: str) -> str:
    from mfstein.ground.records import parts_key

    return "rent-" + parts_key(["rent", VERSION, chain])


def spent(chain: str | None) -> int:
    """The events ``engine="auto"`` has run on the interpreted loop in place of the
    compiled loop ``chain`` (its chain module's name): in this process or, kept in the
    cache directory, in an earlier one (the larger of the two); ``0`` for ``None``."""
    if chain is None:
        return 0
    from mfstein.ground import records

    kept = records.load(_key(chain))
    events = kept.get("events") if isinstance(kept, dict) else None
    on_disk = events if isinstance(events, int) and events >= 0 else 0
    return max(_SPENT.get(chain, 0), on_disk)


def pay(chain: str | None, events: int) -> None:
    """Count ``events`` more run on the interpreted loop in place of ``chain``, in this
    process and in the cache directory (skipped when it cannot be written)."""
    if chain is None:
        return
    from mfstein.ground import records

    total = spent(chain) + int(events)
    _SPENT[chain] = total
    records.save(_key(chain), {"chain": chain, "events": total})
