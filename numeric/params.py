"""Parameter values of a model: names checked, values parsed exactly, ranges enforced.

``params`` is a mapping from parameter names to values (strings are parsed
exactly in the working precision, as everywhere in :mod:`numeric`); the
allowed ranges are the ones the model's factory declared
(:class:`derive.spec.Parameter`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import mpmath
from mpmath import mpf

from mfstein.ground.arguments import check_params, did_you_mean
from mfstein.ground.errors import ParameterError
from numeric.precision import to_mpf


def check_finite_model(model: Any, unbounded: str) -> None:
    """Refuse anything but a finite :class:`derive.model.Model`.

    A :class:`derive.spec.Truncated` family (infinite buffers, an unbounded state
    space) raises with the caller's sentence ``unbounded``, which says what finite
    buffer to give; any other object raises naming its type.
    """
    from derive.model import Model
    from derive.spec import Truncated

    if isinstance(model, Truncated):
        raise ParameterError(unbounded)
    if not isinstance(model, Model):
        raise ParameterError(f"model must be a derive.Model, got {type(model).__name__}.")


def parameter_names(model: Any) -> list[str]:
    """The model's parameter names in kernel order (printed once per model:
    SymPy's printer costs about 0.1 ms a symbol, and every route asks several times)."""
    try:
        return list(_names(model))
    except TypeError:  # an unhashable stand-in for a model
        return [str(p) for p in getattr(model, "params", ())]


@lru_cache(maxsize=256)
def _names(model: Any) -> tuple[str, ...]:
    return tuple(str(p) for p in getattr(model, "params", ()))


def check_names(model: Any, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """``params`` as a dict after checking that it names exactly the model's parameters."""
    check_params(params)
    if params is None:
        params = {}
    check = getattr(model, "check_state_space", None)
    if check is not None:
        check()  # a jump that can leave the declared state space: one sentence, once
    names = list(model.params) if not hasattr(model, "states") else parameter_names(model)
    given = {str(k): v for k, v in params.items()}
    unknown = sorted(set(given) - set(names))
    if unknown:
        hint = did_you_mean(unknown[0], names, quote=False) if len(unknown) == 1 else ""
        raise ParameterError(
            f"{', '.join(unknown)} is not a parameter of model {model.name}{hint}; its parameters "
            f"are {', '.join(names) or 'none'}."
        )
    missing = [n for n in names if n not in given]
    if missing:
        raise ParameterError(
            f"model {model.name} needs a value for {', '.join(missing)} "
            f"(e.g. --param {missing[0]}=VALUE)."
        )
    return given


def parse_params(model: Any, params: Mapping[str, Any] | None) -> dict[str, mpf]:
    """Parameter values as ``mpf`` at the current precision, in range, by name."""
    return read_values(model, check_names(model, params))


def read_values(model: Any, given: Mapping[str, Any]) -> dict[str, mpf]:
    """The values of parameters already checked by :func:`check_names` as ``mpf`` at
    the current precision, each in its declared range."""
    out: dict[str, mpf] = {}
    for name, raw in given.items():
        value = _read(name, raw)
        declared = model.info.parameter(name)
        if declared is not None and not _in_range(declared, raw, value):
            raise ParameterError(f"{name} must be {declared.describe()}, got {raw!r}.")
        out[name] = value
    return out


def values_read(model: Any, given: Mapping[str, Any], prec: int) -> dict[str, mpf] | None:
    """What :func:`read_values` returns at the working precision of ``prec`` bits when
    every value has been read there before and found in its declared range (text and
    Python numbers: the memos of :func:`_read` and :func:`_in_range`), else ``None``:
    a sweep's point whose grid values were read when the grid was checked costs no
    change of the working precision."""
    out: dict[str, mpf] = {}
    info = model.info
    for name, raw in given.items():
        kind = type(raw)
        if kind not in (str, int, float):
            return None
        value = _READ.get((kind, raw, prec))
        if value is None:
            return None
        declared = info.parameter(name)
        if declared is not None and _IN_RANGE.get((id(declared), kind, raw, prec)) is not declared:
            return None
        out[name] = value
    return out


#: Values read before, by (type, value as given, working precision in bits): a sweep
#: reads each grid value when it checks the grid and again at its point.
_READ: dict[tuple[type, Any, int], mpf] = {}
#: At most this many values are kept (the memo is emptied when it is full).
READ_MEMO = 4096


def _read(name: str, raw: Any) -> mpf:
    """``raw`` read by :func:`numeric.precision.to_mpf` at the working precision,
    remembered for text and Python numbers (the reading depends on nothing else;
    a refused value raises each time)."""
    if type(raw) not in (str, int, float):
        return to_mpf(name, raw)
    key = (type(raw), raw, mpmath.mp.prec)
    hit = _READ.get(key)
    if hit is None:
        hit = to_mpf(name, raw)
        if len(_READ) >= READ_MEMO:
            _READ.clear()
        _READ[key] = hit
    return hit


#: The declared ranges each value read before was found in, by (id of the
#: declaration, type, value as given, working precision in bits): a sweep checks
#: each grid value when it reads the grid and again at its point.
_IN_RANGE: dict[tuple[int, type, Any, int], Any] = {}


def _in_range(declared: Any, raw: Any, value: mpf) -> bool:
    """``declared.contains(value)`` for ``value``, ``raw`` read at the working
    precision, remembered for text and Python numbers as :func:`_read` remembers
    the reading (the verdict depends on nothing else; the entry holds the
    declaration, so its id names no other one)."""
    if type(raw) not in (str, int, float):
        return declared.contains(value)
    key = (id(declared), type(raw), raw, mpmath.mp.prec)
    if _IN_RANGE.get(key) is declared:
        return True
    if not declared.contains(value):
        return False
    if len(_IN_RANGE) >= READ_MEMO:
        _IN_RANGE.clear()
    _IN_RANGE[key] = declared
    return True


def kernel_vector(model: Any, values: Mapping[str, mpf]) -> list[mpf]:
    """Parameter values in the order the generated kernels expect."""
    return [values[n] for n in parameter_names(model)]
