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

The watchdog never outlives the process it watches: it waits on a pipe whose
only writer is that process, so when the process ends -- however abruptly
(``os._exit`` in a model factory, ``SIGKILL``) -- the kernel closes the pipe and
the watchdog leaves at once, releasing the standard error it shares (a caller
reading the command's output sees its end); on Linux the kernel also kills it
with its parent (``PR_SET_PDEATHSIG``), should the pipe have leaked into
another process.  Its standard input and output are not the parent's, and it
kills only its own parent (``os.getppid()``), never a number that may since
have been given to another process.

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

#: The watchdog: its standard input is the read end of a pipe that only the watched
#: process (its parent) writes to.  It returns when the pipe closes (the parent ended,
#: or left the block) and, past the delay, prints the message and kills its parent,
#: if it still is its parent.
_WATCHDOG = (
    "import os, select, signal, sys\n"
    "pid, delay, msg = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]\n"
    "if sys.platform.startswith('linux'):\n"
    "    try:\n"
    "        import ctypes\n"
    "        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)\n"
    "    except Exception:\n"
    "        pass\n"
    "if os.getppid() != pid:\n"
    "    sys.exit(0)\n"
    "ready, _, _ = select.select([0], [], [], delay)\n"
    "if ready or os.getppid() != pid:\n"
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
        watchdog = _start_watchdog(seconds + GRACE_SECONDS, message)
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
            process, lifeline = watchdog
            process.kill()
            os.close(lifeline)
            process.wait()


def _start_watchdog(delay: float, message: str) -> tuple[subprocess.Popen, int] | None:
    """Start the watchdog process (:data:`_WATCHDOG`); return it and the write end of
    its lifeline pipe (closing it, or this process ending, lets the watchdog go), or
    ``None`` when no process can be started (the alarm still works)."""
    try:
        read_end, write_end = os.pipe()  # not inherited by other children (PEP 446)
    except OSError:  # pragma: no cover - out of file descriptors
        return None
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHDOG, str(os.getpid()), str(delay), message],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:  # pragma: no cover - no process to spare
        os.close(write_end)
        return None
    finally:
        os.close(read_end)
    return process, write_end
