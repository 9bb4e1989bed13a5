"""The command-line options a model family declares as its own (issue 31).

A family may take some of its values from short options instead of ``--param``:
the supermarket's arrival rate ``--lam`` (or ``--gamma``/``--alpha``, the core
paper's ``lam = 1 - gamma/N^alpha``), its choices ``--d`` and
``--without-replacement`` and its service rate ``--mu``.  :data:`FAMILIES` is the
one place that says which family owns which option; the general option code
(:mod:`mfstein.cli.model_args`) asks :func:`declares` and :func:`owner` and names
no family.  ``--b`` is not here: it is ``--param b=...`` for any model with a
factory option ``b``.  Standard library only.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = ["FAMILIES", "ShortOptions", "check_states", "declares", "owner"]


@dataclass(frozen=True)
class ShortOptions:
    """One family's own options (``argparse`` destinations) and, optionally, its
    check of a run's size before the model is built (``"module:function"``, called
    as ``f(N, options)`` with the factory options)."""

    dests: tuple[str, ...]
    check: str | None = None


#: Family name (as ``--model`` gives it) -> its own options.
FAMILIES = MappingProxyType(
    {
        "supermarket": ShortOptions(
            dests=("lam", "gamma", "alpha", "d", "without_replacement", "mu"),
            check="mfstein.cli.supermarket_grid:check_exact_states",
        ),
    }
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
