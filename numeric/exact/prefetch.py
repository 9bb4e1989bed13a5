"""A hint to the processor that compiled code will read an array's entry soon.

The breadth-first search of the exact chain (:func:`numeric.exact.lattice.explore`)
looks every jump's target up in a hash table far larger than the caches, at a
slot that nothing predicts; each lookup then waits for memory, one after the
other, since the search branches on what it reads.  Asking for the slots of a
state some rows ahead (LLVM's ``llvm.prefetch``, a read with high locality) lets
those waits overlap.  A prefetch changes no value.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir

from mfstein.ground.jit import numba

cgutils, types = numba.core.cgutils, numba.core.types


@numba.extending.intrinsic
def prefetch(typingctx: Any, arr: Any, idx: Any) -> Any:
    """``prefetch(arr, i)`` in compiled code: fetch the cache line of ``arr[i]`` (a
    one-dimensional array, ``i`` in bounds: no wraparound) ahead of its read."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(arr, idx), codegen
