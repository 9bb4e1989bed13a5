"""Errors shared by every mfstein package, importable without the numeric stack.

Importing this module loads nothing beyond the standard library, so the
command-line dispatcher and any module that only needs to *raise* an error
stay cheap to import.  ``derive.errors`` and ``numeric.precision`` re-export
these names for older callers.
"""

from __future__ import annotations

import operator
from typing import Any


class ParameterError(ValueError):
    """A parameter is outside its allowed range.

    The message is one sentence naming the parameter and the allowed range; the
    ``mfstein`` dispatcher prints it and exits with status 2.
    """


class NumericalError(ArithmeticError):
    """A computation failed its own check (independent routes or two working
    precisions disagree beyond the claimed digits, a residual is too large);
    no result is returned."""


class IllConditionedWarning(RuntimeWarning):
    """A float64 result is not trustworthy to the usual ~1e-10 relative accuracy."""


def check_int(name: str, value: Any, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` as an ``int`` or raise :class:`ParameterError`.

    Accepts Python and NumPy integers (and integral strings from a CLI); rejects
    bools, floats and anything below ``minimum`` or above ``maximum``.
    """
    ok = False
    if isinstance(value, str):
        try:
            value = int(value.strip())
            ok = True
        except ValueError:
            ok = False
    elif not isinstance(value, bool):
        try:
            value = operator.index(value)
            ok = True
        except TypeError:
            ok = False
    upper = "" if maximum is None else f" and <= {maximum}"
    if not ok or value < minimum or (maximum is not None and value > maximum):
        raise ParameterError(f"{name} must be an integer >= {minimum}{upper}, got {value!r}.")
    return int(value)
