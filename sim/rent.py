"""Rent or buy a model's compiled event loop under ``engine="auto"`` (ski rental).

A run of the generic engine either pays numba's compilation of the model's own loop
once (*buy*: :func:`sim.loop_prices.compile_seconds` and the generation the cache
lacks, :mod:`sim.loop_prices`; at least :data:`sim.generic_kernels.MIN_COMPILE_SECONDS`)
or runs on the interpreted loop, compiled once for every model, at an extra cost per event (*rent*:
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
that a shell loop of CLI runs counts too.  A record is written atomically (its
rename: some 0.3-0.6 ms, 3% of a warm 2e5-event call), so a process writes a loop's
count on its first payment, then at most once every :data:`WRITE_SECONDS`, and at
exit.  Two processes paying at once may each write their own total, and a process
ended by a signal loses at most its last second's payments: a later buy, never a
wrong result.
"""

from __future__ import annotations

import atexit
import time

#: Events run on the interpreted loop in place of each compiled loop, in this process.
_SPENT: dict[str, int] = {}
#: When this process last wrote each loop's count (:func:`time.monotonic`).
_WRITTEN: dict[str, float] = {}
#: The loops whose count this process has not written since it last grew.
_UNWRITTEN: set[str] = set()
#: The least seconds between two writes of one loop's count by one process.
WRITE_SECONDS = 1.0
#: Whether :func:`flush` is registered to run at exit.
_AT_EXIT: list[bool] = []

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
    process and in the cache directory (skipped when it cannot be written): at once
    on the loop's first payment in this process and when :data:`WRITE_SECONDS` have
    passed since the last write, else at exit (:func:`flush`)."""
    if chain is None:
        return
    _SPENT[chain] = spent(chain) + int(events)
    now = time.monotonic()
    last = _WRITTEN.get(chain)
    if last is None or now - last >= WRITE_SECONDS:
        _write(chain, now)
        return
    if not _AT_EXIT:
        atexit.register(flush)
        _AT_EXIT.append(True)
    _UNWRITTEN.add(chain)


def flush() -> None:
    """Write every count this process has not written since it grew (at exit)."""
    now = time.monotonic()
    for chain in sorted(_UNWRITTEN):
        _write(chain, now)


def _write(chain: str, now: float) -> None:
    from mfstein.ground import records

    _UNWRITTEN.discard(chain)
    _WRITTEN[chain] = now
    records.save(_key(chain), {"chain": chain, "events": spent(chain)})
