"""Prepared runs of the generic simulator kept on disk, for a fast first call.

Preparing a simulation of a model given by name (``simulate("sir", ...)``) builds
the model in SymPy, parses its parameters, solves its mean field at 20 digits
for the centre ``s*`` and places the start on the lattice: about 1 s of CPU in a
new process, for a record of a few hundred bytes (:class:`sim.generic.GenericSpec`
and the notes) that is the same every time.  This module keeps that record in
the cache directory (:func:`mfstein.ground.cache.cache_dir`, folder ``prepared``), so a
later process that asks for the same run -- same model name and factory
options, parameters, ``N``, start, truncation and engine, and the same source of
mfstein and of the libraries it uses -- reads the record and starts simulating
without SymPy or the mean-field solve.  Library models only: a model file may
import other files, which no key would cover.

Only runs that were prepared without error are kept (a refusal is never cached:
the input is checked afresh), and a key covers everything the record depends on:

* every value as given (``repr``; a value whose ``repr`` names an object's
  address is not cached);
* the SHA-256 of the source of mfstein's packages and the installed releases of
  SymPy, mpmath, NumPy, SciPy and numba (:func:`code_digest`).

The key, the digest of the code and the files are :mod:`mfstein.ground.records`'s,
shared with the exact solver's records (:mod:`numeric.exact.kept`).  Standard
library only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from mfstein.ground.records import call_key, code_digest, load, save
from numeric.prepared.cache import PreparedCache

__all__ = ["VERSION", "code_digest", "load", "run_key", "save", "simulator"]

S = TypeVar("S")

#: Format of a record (part of the key: a new format never reads an old file).
VERSION = 1


def run_key(
    model: str,
    params: Mapping[str, Any] | None,
    N: Any,
    start: Any,
    truncation: Any,
    engine: str,
) -> str | None:
    """The key of a prepared run of the library model named ``model``, ``None`` when it
    cannot be cached: a model file (``file.py:factory`` may import other files, which no
    key would cover) or a value without a stable ``repr``."""
    return call_key([VERSION], model, params, [N, start, truncation], [engine])


#: The most simulators :func:`simulator` keeps (the least recently used dropped first).
SIMULATORS = 64
#: The simulators made from records in this process: ``key -> (record, simulator)``
#: (emptied with the other prepared objects by :func:`numeric.prepared.cache.forget_all`).
_SIMULATORS: PreparedCache[tuple[dict, Any]] = PreparedCache("prepared:run-record", SIMULATORS)


def simulator(
    key: str | None,
    record: dict | None,
    build: Callable[[dict | None], S | None],
    usable: Callable[[S], bool],
) -> S | None:
    """``build(record)``, the simulator of the run ``key`` made from its ``record`` (as
    :func:`load` read it), once per process for a record of the same content while
    ``usable(simulator)`` (the generated modules it names still load): a warm call runs
    the very simulator (and spec) of the call before, whose arrays and compiled loop
    its units find by identity (:func:`sim.generic.by_spec`).  A record that differs
    from the one kept (rewritten since, or damaged: ``None``) is built afresh; a
    ``None`` built (an unusable record) is not kept."""
    hit = _SIMULATORS.peek(key)
    if hit is not None and record is not None and hit[0] == record and usable(hit[1]):
        return hit[1]
    made = build(record)
    if made is not None and record is not None:
        _SIMULATORS.put(key, (record, made))
    return made
