"""Run ``mfstein`` in the test's own process, answering like ``subprocess.run``.

A command started as a process costs a Python start and the imports of the numeric
stack (1-3 s of CPU) before it does anything; most command-line checks are about
what the command prints and its exit status, which :func:`mfstein.cli.main` gives in
this process just as well, and a kernel compiled by one check is reused by the next.
What only a real process shows (the start-up guard, signals, a closed descriptor,
the console script) keeps its subprocess tests; each command keeps at least one.

The answer is a :class:`subprocess.CompletedProcess` whose ``args`` are those of the
equivalent process (``python -m mfstein ...``), so checks written for a process read
it unchanged.  A command still running after ``timeout`` seconds (a quiet machine's
seconds, stretched by :func:`deadlines.deadline`) is stopped and the test fails: a
hang is a failure, not a slow pass.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from deadlines import deadline


class _Hung(BaseException):
    """Raised in the command by the deadline's timer (a BaseException: the dispatcher's
    one-line reporting of failures does not swallow it)."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _Hung


def run_main(
    argv: Sequence[str],
    cwd: Path,
    capture: pytest.CaptureFixture[str],
    timeout: float | None = None,
    env: Mapping[str, str | None] | None = None,
) -> subprocess.CompletedProcess:
    """``mfstein argv`` run by :func:`mfstein.cli.main` in this process, in directory
    ``cwd``, with the environment changed by ``env`` (a value ``None`` removes the
    variable) for the run's duration; what it printed is read from ``capture``
    (``capsys``), which is emptied first."""
    from mfstein.cli import main

    capture.readouterr()
    changes = {"COLUMNS": "200", "MFSTEIN_TRACEBACK": None, **(env or {})}
    saved = {name: os.environ.get(name) for name in changes}
    here = os.getcwd()
    guard = timeout is not None and threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGALRM, _on_alarm) if guard else None
    try:
        _set_environment(changes)
        os.chdir(cwd)
        if guard:
            signal.setitimer(signal.ITIMER_REAL, deadline(timeout))
        status = main(list(argv))
    except _Hung:
        pytest.fail(f"mfstein {' '.join(argv)} did not finish within {deadline(timeout):.0f} s")
    finally:
        if guard:
            signal.setitimer(signal.ITIMER_REAL, 0.0)
            signal.signal(signal.SIGALRM, previous)
        os.chdir(here)
        _set_environment(saved)
    out, err = capture.readouterr()
    return subprocess.CompletedProcess([sys.executable, "-m", "mfstein", *argv], status, out, err)


def _set_environment(values: Mapping[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
