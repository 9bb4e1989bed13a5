"""Errors shared by every mfstein package, importable without the numeric stack.

Importing this module loads nothing beyond the standard library and
:mod:`mfstein.ground.exceptions`, where the classes are defined (the bottom of the
ground: :mod:`mfstein.ground.numbers`, whose ``parse_integer`` is :func:`check_int`, and
:mod:`mfstein.ground.limits` raise them from there), so the command-line dispatcher and
any module that only needs to *raise* an error stay cheap to import.  Import
them from here; ``numeric.precision`` re-exports them for older callers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mfstein.ground.exceptions import (
    IllConditionedWarning,
    NumericalError,
    ParameterError,
    StabilityWarning,
)

__all__ = [
    "IllConditionedWarning",
    "NumericalError",
    "ParameterError",
    "StabilityWarning",
    "check_bool",
    "check_choice",
    "check_int",
]


def check_int(name: str, value: Any, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` as an ``int`` in ``minimum .. maximum`` or raise :class:`ParameterError`.

    Accepts Python and NumPy integers and integral strings from a CLI (``"12"``,
    ``"1e6"``, ``"10**6"``, read exactly by :func:`mfstein.ground.numbers.parse_integer`,
    the one integer parser); rejects bools, floats and anything out of range.
    """
    from mfstein.ground.numbers import parse_integer

    return parse_integer(name, value, minimum, maximum)


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` as a ``bool`` or raise :class:`ParameterError`.

    Accepts ``True``/``False`` and NumPy's ``np.True_``/``np.False_``; refuses
    anything else (``"no"``, ``0``, ``None``): a truthy string must not switch a
    flag on.  The one sentence: ``"<name> must be True or False, got 'no'."``.
    """
    if isinstance(value, bool):
        return value
    if type(value).__module__ == "numpy" and "bool" in type(value).__name__:
        return bool(value)
    raise ParameterError(f"{name} must be True or False, got {value!r}.")


def check_choice(name: str, value: Any, choices: Iterable[str]) -> None:
    """Raise :class:`ParameterError` unless ``value`` is one of ``choices``.

    The one sentence every "unknown option" refusal shares:
    ``"<name> must be one of a, b, c, got 'x'."``.
    """
    choices = tuple(choices)
    if value not in choices:
        raise ParameterError(f"{name} must be one of {', '.join(choices)}, got {value!r}.")


#: The packages whose frames a warning skips to name the caller's line.
LIBRARY_PACKAGES = ("derive", "numeric", "sim", "mfstein.families", "mfstein.ground")


def caller_level(inside: tuple[str, ...] = LIBRARY_PACKAGES) -> int:
    """The ``stacklevel`` for :func:`warnings.warn` called right here that names the
    first frame outside the modules ``inside`` (by module name): the user's line that
    called the library, whatever wrappers (renamed keywords, argument checks) and
    internal calls lie between.  A warning from a command names the command's line."""
    import sys

    def within(name: str) -> bool:
        return any(name == p or name.startswith(p + ".") for p in inside)

    frame, level = sys._getframe(1), 1
    while frame is not None and within(frame.f_globals.get("__name__", "")):
        frame, level = frame.f_back, level + 1
    return level
