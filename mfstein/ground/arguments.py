"""Checks of the Python entries' arguments: one sentence naming the argument and what is allowed.

The task entries (``numeric.solve``, ``numeric.exact.solve``,
``numeric.transient``, ``numeric.certify``, ``sim.simulate``) check their
arguments at the top with these helpers, before any symbolic or numeric work:

* :func:`check_keywords` -- a decorator refusing a keyword the entry does not
  take with a :class:`TypeError` (as Python would) whose sentence names the
  nearest valid keyword;
* :func:`check_params` -- ``params`` is ``None`` or a mapping of parameter
  names to values;
* :func:`check_path` -- a file argument (a checkpoint) is a path;
* :func:`check_start` -- a start state is ``None``, a string or a sequence of numbers;
* :func:`renamed_keywords` -- a decorator keeping an entry's old keyword names
  working as deprecated aliases of the new ones (:func:`warn_renamed`), so that
  one name has one meaning across the API (docs/internal-api.md, "Vocabulary").

Values and ranges are checked where they are read (:func:`mfstein.ground.errors.check_int`,
:mod:`mfstein.ground.limits`, :mod:`numeric.params`); the model itself where it
is built (:class:`derive.Model`).  Like the rest of the ground package, this
module imports only the standard library and :mod:`mfstein.ground.errors`.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from mfstein.ground.errors import ParameterError

__all__ = [
    "check_keywords",
    "check_params",
    "check_path",
    "check_start",
    "did_you_mean",
    "renamed_keywords",
    "unknown_keyword",
    "warn_renamed",
]

F = TypeVar("F", bound=Callable[..., Any])


def did_you_mean(given: str, valid: Sequence[str], quote: bool = True) -> str:
    """``" (did you mean 'dps'?)"`` naming the valid name nearest to ``given``
    (:func:`difflib.get_close_matches`), or ``""`` when none is close."""
    close = difflib.get_close_matches(given, list(valid), n=1, cutoff=0.6)
    if not close:
        return ""
    return f" (did you mean {close[0]!r}?)" if quote else f" (did you mean {close[0]}?)"


def unknown_keyword(entry: str, given: str, valid: Sequence[str]) -> str:
    """The sentence for a keyword ``given`` that ``entry`` does not take.

    Names the nearest valid keyword (:func:`did_you_mean`) when one is close, and
    lists the valid ones.
    """
    hint = did_you_mean(given, valid)
    return (
        f"{entry}() got an unexpected keyword argument {given!r}{hint}; "
        f"its keywords are {', '.join(valid)}."
    )


def check_keywords(function: F) -> F:
    """Decorate an entry so that an unknown keyword raises :class:`TypeError` in one
    sentence naming the nearest valid keyword (:func:`unknown_keyword`).

    The signature, name and docstring stay those of ``function``
    (:func:`functools.wraps`); a call with valid keywords is passed through unchanged.
    """
    sig = inspect.signature(function)
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return function  # takes any keyword: nothing to check
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    valid = tuple(p.name for p in sig.parameters.values() if p.kind in kinds)
    allowed = frozenset(valid)

    @functools.wraps(function)
    def entry(*args: Any, **kwargs: Any) -> Any:
        for name in kwargs:
            if name not in allowed:
                raise TypeError(unknown_keyword(function.__name__, name, valid))
        return function(*args, **kwargs)

    return entry  # type: ignore[return-value]


def check_params(params: Any, name: str = "params") -> None:
    """Refuse a ``params`` that is neither ``None`` nor a mapping of names to values."""
    if params is not None and not isinstance(params, Mapping):
        raise ParameterError(
            f"{name} must be a mapping of parameter names to values (e.g. {{'lam': '0.9'}}) "
            f"or None, got {type(params).__name__}."
        )


def check_path(name: str, value: Any) -> None:
    """Refuse a file argument that is neither ``None`` nor a path (``str`` or ``os.PathLike``)."""
    if value is None:
        return
    if isinstance(value, bytes) or not isinstance(value, str | os.PathLike):
        raise ParameterError(
            f"{name} must be a file path (a str or os.PathLike) or None, "
            f"got {type(value).__name__} {value!r}."
        )
    if not os.fspath(value):
        raise ParameterError(f"{name} must be a non-empty file path, got {value!r}.")


def check_start(start: Any, name: str = "start") -> None:
    """Refuse a start state that is neither ``None``, a string (``"reference"``,
    ``"0.5,0.5"``) nor a sequence of numbers (the fractions of the state)."""
    if start is None or isinstance(start, str):
        return
    if isinstance(start, bytes | Mapping) or not isinstance(start, Iterable):
        raise ParameterError(
            f"{name} must be a sequence of numbers (one fraction per state, e.g. [0.9, 0.1]), "
            f"a string or None, got {type(start).__name__} {start!r}."
        )


def warn_renamed(where: str, old: str, new: str, stacklevel: int = 3) -> None:
    """Emit the :class:`DeprecationWarning` of an old name ``old`` of ``where``
    (an entry or a class) that is now called ``new``."""
    warnings.warn(
        f"{where}: {old} is deprecated; use {new} instead (same meaning).",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def renamed_attribute(where: str, old: str, new: str) -> property:
    """A read-only property ``old`` of the class ``where`` that returns the attribute
    ``new`` and warns that ``old`` is its deprecated name (:func:`warn_renamed`)."""

    def read(self: Any) -> Any:
        warn_renamed(where, old, new, stacklevel=3)
        return getattr(self, new)

    return property(read, doc=f"Deprecated name of :attr:`{new}` (same value; warns).")


def renamed_keywords(**renames: str) -> Callable[[F], F]:
    """Decorate an entry so that each old keyword ``old`` of ``renames = {old: new}``
    is still taken, as a deprecated alias of ``new``.

    A call with ``old`` warns (:func:`warn_renamed`, a :class:`DeprecationWarning`
    naming ``new``) and is passed on with ``new``; a call giving both raises a
    :class:`TypeError` in one sentence.  The signature, name and docstring stay
    those of ``function`` (which takes only the new names).  A class's ``__init__``
    is named by its class in the sentences (``Spec(): simulator= is deprecated``).
    """

    def decorate(function: F) -> F:
        name = function.__name__
        if name == "__init__":  # a class's constructor: named by its class
            name = function.__qualname__.split(".<locals>.")[-1].removesuffix(".__init__")

        @functools.wraps(function)
        def entry(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(
                        f"{name}() got both {new}= and its deprecated alias {old}=; "
                        f"give {new}= only."
                    )
                warn_renamed(f"{name}()", f"{old}=", f"{new}=")
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return entry  # type: ignore[return-value]

    return decorate
