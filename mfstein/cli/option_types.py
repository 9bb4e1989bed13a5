"""argparse types for numeric options: exact parsing, declared limits, one sentence.

Every integer option of a command is declared with :func:`integer` (or
:func:`integer_list`) and every real option with :func:`real`, naming the
option and its range (the limits live in :mod:`mfstein.ground.limits`).  The value is
read by :mod:`mfstein.ground.numbers` (``1e6``, ``10**6``, ``5.0`` are integers;
``1e400``, ``10**5000``, ``nan``, ``1/2`` are refused without float overflow or
giant-integer arithmetic) while the command line is parsed, so nothing runs
with a value out of range; a refusal is one line ``mfstein CMD: error: N must
be an integer >= 1 and <= 2147483647, got '1e400'.`` and exit status 2.  Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mfstein.ground.errors import ParameterError
from mfstein.ground.numbers import (
    exact_text,
    parse_integer,
    parse_integer_list,
    parse_integer_or_word,
    parse_real,
)

__all__ = ["OptionValueError", "checked_text", "integer", "integer_list", "integer_or_word", "real"]


class OptionValueError(Exception):
    """A numeric option out of its range, raised while the command line is parsed.

    Deliberately not a ``ValueError``: argparse lets it through, and the
    dispatcher (:func:`mfstein.cli.main`) prints its one sentence as
    ``mfstein CMD: error: ...`` and returns status 2, as for any
    :class:`mfstein.ground.errors.ParameterError` (an in-process caller gets the status,
    not ``SystemExit``).
    """


def _argparse_type(name: str, parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ParameterError as exc:
            raise OptionValueError(str(exc)) from None

    convert.__name__ = name  # argparse names the type in its own messages
    return convert


def integer(name: str, minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: an exact integer ``minimum .. maximum``."""
    return _argparse_type(name, lambda t: parse_integer(name, t, minimum, maximum))


def integer_list(name: str, minimum: int, maximum: int | None = None) -> Callable[[str], list[int]]:
    """An argparse ``type``: comma-separated exact integers ``minimum .. maximum``."""
    return _argparse_type(name, lambda t: parse_integer_list(name, t, minimum, maximum))


def integer_or_word(
    name: str, minimum: int, maximum: int | None, words: tuple[str, ...]
) -> Callable[[str], int | str]:
    """An argparse ``type``: one of ``words`` (``auto``, ``inf``) or an exact integer
    ``minimum .. maximum`` (:func:`mfstein.ground.numbers.parse_integer_or_word`)."""
    return _argparse_type(name, lambda t: parse_integer_or_word(name, t, minimum, maximum, words))


def checked_text(parse: Callable[[str], Any]) -> Callable[[str], str]:
    """An argparse ``type`` that reads the text with ``parse`` (one of the types
    above), so that a bad value is refused while the command line is parsed,
    and keeps the text as written for a handler that reads it again (e.g. a
    grid of ``N`` passed on as text)."""

    def convert(text: str) -> str:
        parse(text)
        return text

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def real(
    name: str,
    low: Any = None,
    high: Any = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Callable[[str], str]:
    """An argparse ``type``: a real number within the bounds, kept as a decimal
    string (a fraction such as ``1/3`` divided to 40 significant digits), so the
    high-precision routes read it exactly and the float64 ones correctly rounded."""

    def parse(text: str) -> str:
        value = parse_real(name, text, low, high, low_open=low_open, high_open=high_open)
        return exact_text(text, value)

    return _argparse_type(name, parse)
