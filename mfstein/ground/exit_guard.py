"""Running a user's code (a model file, a factory) that might end the process.

``sys.exit`` raises :class:`SystemExit`, which the caller can catch and report;
``os._exit`` ends the process on the spot -- no ``finally``, no exit function,
status 0 for ``os._exit(0)`` -- so a model factory calling it made ``mfstein
solve`` print nothing and report success.  :func:`exit_guarded` replaces
``os._exit`` (the one function, also reached as ``posix._exit``) while the
block runs with a function that raises :class:`ExitCalled` instead; the caller
turns it into one sentence.  Only a call made in this process is stopped: a
child started by the user's code (``os.fork``, ``multiprocessing``) still
leaves by the real ``os._exit``.  Standard library only.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ExitCalled", "exit_guarded"]

_lock = threading.Lock()


class ExitCalled(BaseException):
    """``os._exit(status)`` was called by the code run under :func:`exit_guarded`.

    A :class:`BaseException`, like :class:`SystemExit`: the user's own
    ``except Exception`` does not swallow it.
    """

    def __init__(self, status: Any) -> None:
        super().__init__(status)
        self.status = status


def _modules() -> list[Any]:
    """The modules through which ``_exit`` is reached: ``os`` and its C module."""
    low = sys.modules.get("posix") or sys.modules.get("nt")
    return [os] if low is None or low is os else [os, low]


@contextmanager
def exit_guarded() -> Iterator[None]:
    """Run the block with ``os._exit`` raising :class:`ExitCalled` in this process."""
    real = os._exit
    owner = os.getpid()

    def _exit(status: int) -> None:
        if os.getpid() != owner:  # a forked child of the user's code: leave for real
            real(status)
        raise ExitCalled(status)

    with _lock:
        saved = [(m, getattr(m, "_exit", real)) for m in _modules()]
        for module, _ in saved:
            module._exit = _exit
    try:
        yield
    finally:
        with _lock:
            for module, previous in saved:
                module._exit = previous
