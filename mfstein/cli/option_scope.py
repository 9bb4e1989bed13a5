"""Options that one path of a command does not use: refused in one sentence, never ignored.

A command whose options serve different paths (``exact`` without and with
``--model``, ``tail`` solving or ``--simulate``-ing) declares, where it picks
the path, which of its options that path leaves unused, with
:func:`refuse_unused`.  "Given" means written on the command line (the
dispatcher records what it read), whatever the value: ``mfstein tail --reps 8``
without ``--simulate`` is one sentence and exit status 2, not a run that
silently ignores ``--reps``.
Every value is still read by its typed parser while the command line is
parsed (:mod:`mfstein.cli.option_types`), whatever the path.  Standard library only.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from mfstein.ground.errors import ParameterError

__all__ = ["given", "refuse_unused"]


def given(args: argparse.Namespace, dest: str) -> bool:
    """Whether the option stored in ``dest`` was given on the command line.

    The dispatcher records the options it read (``args.given_options``, see
    :class:`mfstein.cli._Parser`); without that record (a namespace built by
    hand) an option counts as given when it is not ``None``, ``False`` or empty.
    """
    record = getattr(args, "given_options", None)
    if record is not None:
        return dest in record
    value = getattr(args, dest, None)
    return value is not None and value is not False and value != []


def refuse_unused(
    args: argparse.Namespace, dests: Iterable[str], where: str, hint: str = "drop it"
) -> None:
    """Raise :class:`ParameterError` for the first option of ``dests`` that was given:
    ``"--reps is only used with --simulate; drop it."`` (``where`` says on which
    path the option is read, ``hint`` what to do instead)."""
    record = getattr(args, "given_options", None) or {}
    for dest in dests:
        if given(args, dest):
            flag = record.get(dest) or "--" + dest.replace("_", "-")
            raise ParameterError(f"{flag} is only used {where}; {hint}.")
