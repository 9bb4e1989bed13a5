"""The command-line options a model family declares as its own (issue 31).

A family may take some of its values from short options instead of ``--param``
(the supermarket's arrival rate ``--lam``, its choices ``--d``, its service rate
``--mu``, ...).  Which family owns which option is part of the family's one
registration, :attr:`mfstein.ground.fast_paths.FastPath.short_options` of
:data:`~mfstein.ground.fast_paths.FAST_PATHS`; this module reads it there, and the
general option code (:mod:`mfstein.cli.model_args`) asks :func:`declares` and
:func:`owner`.  Neither names a family.  ``--b`` is not a short option: it is
``--param b=...`` for any model with a factory option ``b``.  Standard library and
the ground only (``mfstein --help`` reads the registration as data).

>>> owner("mu") in FAMILIES and declares(owner("mu"), "mu")
True
>>> declares(None, "mu")
False
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from mfstein.ground.fast_paths import FAST_PATHS, ShortOptions

__all__ = ["FAMILIES", "ShortOptions", "check_states", "declares", "owner"]

#: Family name (as ``--model`` gives it) -> its own options: the families of the
#: fast-path table that declare any (read from their registrations).
FAMILIES: Mapping[str, ShortOptions] = MappingProxyType(
    {name: entry.short_options for name, entry in FAST_PATHS.items() if entry.short_options.dests}
)


def declares(family: str | None, dest: str) -> bool:
    """Whether the family ``family`` (a ``--model`` value) takes option ``dest``."""
    entry = FAMILIES.get(family or "")
    return entry is not None and dest in entry.dests


def owner(dest: str) -> str:
    """The family whose option ``dest`` is (for the one-sentence refusals)."""
    return next(name for name, entry in FAMILIES.items() if dest in entry.dests)


def check_states(family: str | None, N: Any, options: dict[str, Any]) -> None:
    """Run the family's own size check of ``N`` objects with ``options``, if it has one."""
    entry = FAMILIES.get(family or "")
    if entry is None or entry.check is None:
        return
    module, _, name = entry.check.partition(":")
    getattr(importlib.import_module(module), name)(N, options)
