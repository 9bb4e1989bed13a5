"""Running a user's code (a model file, a factory) under a time limit.

:func:`time_limited` stops a block of code that runs longer than ``seconds``:

1. *Python-level work* (a ``while True`` loop, ``time.sleep``, a blocking
   read): a ``SIGALRM`` timer (:func:`signal.setitimer`) whose handler raises
   :class:`TimeLimitExceeded` in the main thread; the caller turns it into one
   sentence.  POSIX only, main thread only; elsewhere this stage is skipped.
2. *A loop inside C code that holds the GIL* (``sum(itertools.count())``, a
   regular expression that backtracks for ever): no Python signal handler can
   run then, so a small watchdog process, started with the block and stopped
   when it ends, waits ``seconds + GRACE_SECONDS``, prints the one-sentence
   ``message`` on standard error and kills the stuck process (``SIGKILL``,
   status 137).  Also POSIX only.

:class:`TimeLimitExceeded` derives from :class:`BaseException`, so that the
user's own ``except Exception`` blocks do not swallow it.  Standard library
only.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["GRACE_SECONDS", "TimeLimitExceeded", "time_limited"]

#: Seconds the watchdog process waits beyond the limit before it kills the process.
GRACE_SECONDS = 2.0

_WATCHDOG = (
    "import os, signal, sys, time\n"
    "pid, delay, msg = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]\n"
    "time.sleep(delay)\n"
    "try:\n"
    "    os.kill(pid, 0)\n"
    "except OSError:\n"
    "    sys.exit(0)\n"
    "os.write(2, (msg + '\\n').encode())\n"
    "os.kill(pid, signal.SIGKILL)\n"
)


class TimeLimitExceeded(BaseException):
    """The block given to :func:`time_limited` ran past its limit."""


def _raise(signum: int, frame: object) -> None:
    raise TimeLimitExceeded


@contextmanager
def time_limited(seconds: float, message: str) -> Iterator[None]:
    """Run the block under a limit of ``seconds``: past it, raise
    :class:`TimeLimitExceeded` (Python-level work) or, ``GRACE_SECONDS``
    later, print ``message`` and kill the process (work stuck in C code)."""
    main = threading.current_thread() is threading.main_thread()
    alarm = main and hasattr(signal, "setitimer")
    watchdog = None
    old_handler = None
    if hasattr(os, "fork"):
        try:
            watchdog = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    "-c",
                    _WATCHDOG,
                    str(os.getpid()),
                    str(seconds + GRACE_SECONDS),
                    message,
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:  # pragma: no cover - no process to spare: the alarm still works
            watchdog = None
    if alarm:
        old_handler = signal.signal(signal.SIGALRM, _raise)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
        if watchdog is not None:
            watchdog.kill()
            watchdog.wait()
