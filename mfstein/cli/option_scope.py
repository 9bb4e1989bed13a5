"""Options that one path of a command does not use: refused in one sentence, never ignored.

A command whose options serve different paths (``exact`` without and with
``--model``, ``tail`` solving or ``--simulate``-ing) declares, where it picks
the path, which of its options that path leaves unused, with
:func:`refuse_unused`.  Such an option is declared with no default (``None``,
or ``False`` for a flag, ``[]`` for a repeatable one), so that "given" is
"not at its default": ``mfstein tail --reps 3`` without ``--simulate`` is then
one sentence and exit status 2, not a run that silently ignores ``--reps``.
Every value is still read by its typed parser while the command line is
parsed (:mod:`mfstein.cli.option_types`), whatever the path.  Standard library only.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from mfstein.errors import ParameterError

__all__ = ["given", "refuse_unused"]


def given(args: argparse.Namespace, dest: str) -> bool:
    """Whether the option stored in ``dest`` was given (is not ``None``, ``False`` or empty)."""
    value = getattr(args, dest, None)
    return value is not None and value is not False and value != []


def refuse_unused(
    args: argparse.Namespace, dests: Iterable[str], where: str, hint: str = "drop it"
) -> None:
    """Raise :class:`ParameterError` for the first option of ``dests`` that was given:
    ``"--reps is only used with --simulate; drop it."`` (``where`` says on which
    path the option is read, ``hint`` what to do instead)."""
    for dest in dests:
        if given(args, dest):
            flag = "--" + dest.replace("_", "-")
            raise ParameterError(f"{flag} is only used {where}; {hint}.")
