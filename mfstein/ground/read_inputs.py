"""One compiled version of a kernel for writable and read-only arrays alike.

numba types a NumPy array with its writeability: ``Array(float64, 1, 'C')`` for a
writable array and ``Array(float64, 1, 'C', readonly=True)`` for a read-only one, and
compiles a function again for each.  mfstein's prepared problems hand out read-only
parameter arrays (so that a shared array is never changed), while other callers pass
arrays of their own: every generated kernel ``f(s, p)``, ``jac(s, p)``, ... of a model
was compiled twice in one solve -- for a 20-coordinate model some 10 s of CPU for
nothing (issue 34).

A kernel marked with :func:`reads_inputs` never writes into its array arguments, so
the read-only version serves every caller: when numba asks for a version with writable
arrays, :func:`compile_read_only` compiles (or loads from the cache) the version with
those arrays read-only instead, and enters the asked-for argument types in numba's
dispatcher as a second key of that compiled code, so that the next call with writable
arrays finds it at once.  A call from other compiled code is typed by numba against
the read-only version (a writable array converts to a read-only one: numba's own
"safe" conversion, ``Array.can_convert_to``).  The machine code reads the same
numbers in the same order: the results are the same bits.  Writing into an argument
of a marked kernel is refused by numba at compile time (it types the argument
read-only), never done silently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["MARK", "compile_read_only", "reads_inputs"]

#: The attribute set on a dispatcher marked by :func:`reads_inputs`.
MARK = "__mfstein_reads_inputs__"

D = TypeVar("D")


def reads_inputs(dispatcher: D) -> D:
    """Mark a numba dispatcher whose array arguments are only read: it is compiled for
    read-only arrays once and serves writable ones too (:func:`compile_read_only`)."""
    setattr(dispatcher, MARK, True)
    return dispatcher


def compile_read_only(
    compile_: Callable[[Any, Any], Any], dispatcher: Any, sig: Any, numba: Any
) -> Any:
    """numba's ``compile_(dispatcher, sig)`` with every writable array argument of
    ``sig`` typed read-only, the asked-for argument types entered as a second key of
    the compiled code (``numba``: the module, handed over by :mod:`mfstein.ground.jit`,
    the one place that imports it)."""
    sigutils, types = numba.core.sigutils, numba.core.types
    args, ret = sigutils.normalize_signature(sig)
    read_only = tuple(
        a.copy(readonly=True) if isinstance(a, types.Array) and a.mutable else a for a in args
    )
    if read_only == tuple(args):
        return compile_(dispatcher, sig)
    entry = compile_(dispatcher, read_only if ret is None else ret(*read_only))
    done = dispatcher.overloads.get(read_only)
    if done is not None:
        # numba's C dispatcher looks a call's argument types up exactly while it may
        # compile: the asked-for types are entered as a second key of the same code
        dispatcher._insert([a._code for a in args], done.entry_point, done.objectmode)
    return entry
