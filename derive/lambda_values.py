"""Lambdified NumPy functions placed into their kernel's output shape, and kept on disk.

A float64 kernel of a small model (:class:`derive.sparse.LambdaKernels`) is one
function lambdified by SymPy that returns the kernel's non-zero entries in order;
:func:`placed` writes them into a zero array of the kernel's shape.  The one
wrapper serves the route that lambdifies (with SymPy) and the route that reads
the printed function back from disk (:mod:`derive.models.stored`, without SymPy):
:func:`portable` records a lambdified function as its source text and the
modules or module attributes its global names are bound to, :func:`revived`
compiles that text again into a namespace holding the same objects, so both
functions run the same bytecode on the same NumPy functions (bit for bit the
same numbers).

Standard library and NumPy only.
"""

from __future__ import annotations

import builtins
import importlib
import linecache
from collections.abc import Callable, Sequence
from types import CodeType, ModuleType
from typing import Any

import numpy as np

#: Modules whose attributes a lambdified function's globals may be bound to.
_HOMES = ("numpy", "math", "functools", "numpy.linalg")


def placed(raw: Callable[..., Any], idx: Sequence[Any], shape: tuple[int, ...]) -> Callable:
    """``fn(s, p)``: the values ``raw(*s, *p)`` written at the indices ``idx`` of a
    zero array of ``shape``."""

    def fn(s: Any, p: Any) -> Any:
        out = np.zeros(shape)
        if idx:
            vals = np.array(raw(*s, *p), dtype=float).reshape(len(idx))
            for ix, v in zip(idx, vals.tolist(), strict=True):
                out[ix] = v
        return out

    return fn


#: The operators of plain arithmetic (``BINARY_OP``'s argument text): on Python
#: floats each gives the value it gives on NumPy float64 scalars (IEEE arithmetic,
#: the C library's ``pow``), or raises where NumPy returns ``inf``/``nan``.
_SAME_ON_FLOATS = frozenset({"+", "-", "*", "/", "**"})
#: Bytecode a plain-arithmetic function may consist of besides those operators.
_PLAIN_OPS = frozenset(
    {
        "RESUME",
        "LOAD_FAST",
        "STORE_FAST",
        "LOAD_CONST",
        "UNARY_NEGATIVE",
        "UNARY_POSITIVE",
        "BUILD_LIST",
        "BUILD_TUPLE",
        "LIST_EXTEND",
        "LIST_APPEND",
        "RETURN_VALUE",
        "NOP",
    }
)


def plain_arithmetic(raw: Callable[..., Any]) -> bool:
    """Whether ``raw`` reads only its arguments and constants and computes with
    ``+ - * / **`` alone (no global name, no call, no comparison): then it gives
    the same numbers on Python floats as on NumPy float64 scalars, except where
    Python raises (``ZeroDivisionError``, ``OverflowError``) or returns a
    ``complex`` (a negative base to a fractional power) and NumPy gives
    ``inf``/``nan``."""
    import dis

    code = getattr(raw, "__code__", None)
    if code is None or code.co_names or any(isinstance(k, CodeType) for k in code.co_consts):
        return False
    for ins in dis.get_instructions(code):
        if ins.opname == "BINARY_OP":
            if ins.argrepr not in _SAME_ON_FLOATS:
                return False
        elif ins.opname not in _PLAIN_OPS:
            return False
    return True


def flat(raw: Callable[..., Any], n: int, module: str = "numpy") -> Callable:
    """``fn(s, p)``: the ``n`` values ``raw(*s, *p)`` as a flat float64 array
    (``module="numpy"``) or a list (``"mpmath"``).

    For float64 arrays ``s``, ``p`` and a ``raw`` of plain arithmetic
    (:func:`plain_arithmetic`) the values are computed on Python floats, about
    three times faster than on NumPy scalars and the same numbers; where Python
    raises or a value is complex, on the NumPy scalars as before."""
    plain = module == "numpy" and plain_arithmetic(raw)
    shape = (n,)
    ndarray, array = np.ndarray, np.array

    def fn(s: Any, p: Any) -> Any:
        if n == 0:
            return np.zeros(0) if module == "numpy" else []
        # both 1-d float64 arrays (tolist gives Python floats of the same values); NumPy's
        # own float64 descriptor recognised by identity, the test inline (a point's
        # search evaluates a dozen times)
        if (
            plain
            and type(s) is ndarray
            and type(p) is ndarray
            and s.ndim == 1
            and p.ndim == 1
            and (s.dtype is _F64 or s.dtype == _F64)
            and (p.dtype is _F64 or p.dtype == _F64)
        ):
            try:
                out = array(raw(*s.tolist(), *p.tolist()), dtype=float)
            except (ArithmeticError, TypeError):  # NumPy's inf or nan (or complex)
                pass
            else:
                return out if out.shape == shape else out.reshape(n)
        out = raw(*s, *p)
        if module == "numpy":
            return np.array(out, dtype=float).reshape(n)
        return list(out)

    return fn


_F64 = np.dtype(np.float64)


def _global_names(code: CodeType) -> set[str]:
    names: set[str] = set()
    codes = [code]
    while codes:
        c = codes.pop()
        names.update(c.co_names)
        codes += [k for k in c.co_consts if isinstance(k, CodeType)]
    return names


def portable(raw: Callable[..., Any]) -> dict[str, Any] | None:
    """``raw`` (a function made by :func:`sympy.lambdify`) as JSON-ready text: its
    name, its source and the binding of every global name it reads (``["module",
    name]`` or ``["attr", module, name]``); ``None`` when its source is not at hand
    or a name is bound to anything else (the function is then not kept)."""
    code = raw.__code__
    source = "".join(linecache.getlines(code.co_filename))
    if not source:
        return None
    bindings: dict[str, list[str]] = {}
    space = raw.__globals__
    for name in sorted(_global_names(code)):
        if name not in space:
            continue  # an attribute name, or a builtin
        value = space[name]
        if isinstance(value, ModuleType):
            bindings[name] = ["module", value.__name__]
        elif value is getattr(builtins, name, None):
            continue
        else:
            home = next(
                (m for m in _HOMES if getattr(importlib.import_module(m), name, None) is value),
                None,
            )
            if home is None:
                return None
            bindings[name] = ["attr", home, name]
    return {"name": raw.__name__, "source": source, "bindings": bindings}


def revived(record: dict[str, Any]) -> Callable[..., Any]:
    """The function :func:`portable` recorded, compiled again (no SymPy)."""
    space: dict[str, Any] = {"__builtins__": builtins}
    for name, (kind, module, *attr) in record["bindings"].items():
        mod = importlib.import_module(module)
        space[name] = mod if kind == "module" else getattr(mod, attr[0])
    exec(compile(record["source"], f"<stored {record['name']}>", "exec"), space)
    return space[record["name"]]
