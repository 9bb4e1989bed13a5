"""SIGTERM handled like Ctrl-C: work in progress is saved, then the process ends.

A ``kill`` (SIGTERM, the signal a batch system or ``timeout`` sends) must not
leave half-written files or orphaned worker processes behind, so the
``mfstein`` command turns it into a ``KeyboardInterrupt`` (:func:`raise_interrupt`,
installed by :func:`mfstein.cli.main` whatever SIGINT's disposition: a background
job of a script ignores SIGINT, and a batch system still stops it by SIGTERM)
-- every ``finally`` and ``except BaseException`` clean-up runs, e.g.
:func:`mfstein.io.atomic_write` removes its temporary file -- and the
simulation runner (:mod:`sim.runner`) treats it as a Ctrl-C press: completed
batches are kept and saved, workers are stopped.  :func:`note` records that it
came, so that the command ends with status 143 (128 + SIGTERM) and the line
``mfstein CMD: terminated`` instead of Ctrl-C's 130.

The ``mfstein`` command records Ctrl-C too (its SIGINT handler calls :func:`note`
before raising ``KeyboardInterrupt``), so that long numerical work can poll
:func:`check` at its phase boundaries: a ``KeyboardInterrupt`` that a library
lost on the way (raised inside a finalizer or a callback that reports and
discards exceptions) is raised again there, and the command still stops
within one phase.  A library caller that installed no such handler records
nothing, and :func:`check` never raises.  Standard library only.
"""

from __future__ import annotations

import signal

__all__ = ["check", "exit_status", "note", "raise_interrupt", "stop_requested", "terminated"]

_received: list[int] = []


def note(signum: int) -> None:
    """Record that signal ``signum`` asked this process to stop."""
    _received.append(int(signum))


def stop_requested() -> bool:
    """Whether a Ctrl-C or a SIGTERM was recorded by :func:`note`."""
    return bool(_received)


def check() -> None:
    """Raise ``KeyboardInterrupt`` when a stop was recorded (:func:`stop_requested`):
    the poll of long work between its phases (module docstring)."""
    if _received:
        raise KeyboardInterrupt


def terminated() -> bool:
    """Whether a SIGTERM was recorded by :func:`note`."""
    return int(signal.SIGTERM) in _received


def exit_status() -> int:
    """143 after a SIGTERM, else 130 (Ctrl-C)."""
    return 128 + int(signal.SIGTERM) if terminated() else 130


def raise_interrupt(signum: int, frame: object) -> None:
    """Signal handler: record the signal and raise ``KeyboardInterrupt``."""
    note(signum)
    raise KeyboardInterrupt
