"""SIGTERM handled like Ctrl-C: work in progress is saved, then the process ends.

A ``kill`` (SIGTERM, the signal a batch system or ``timeout`` sends) must not
leave half-written files or orphaned worker processes behind, so the
``mfstein`` command turns it into a ``KeyboardInterrupt`` (:func:`raise_interrupt`,
installed by :func:`mfstein.cli.main` whatever SIGINT's disposition: a background
job of a script ignores SIGINT, and a batch system still stops it by SIGTERM)
-- every ``finally`` and ``except BaseException`` clean-up runs, e.g.
:func:`mfstein.ground.io.atomic_write` removes its temporary file -- and the
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
nothing, and :func:`check` never raises.

:func:`leave` ends the command's process once its work is done: it runs the
exit functions and leaves by ``os._exit``, so that no stretch of interpreter
finalisation (where CPython has reset the handlers to the default action) is
left for a late signal to land in.

:func:`deferred` holds the ``KeyboardInterrupt`` back while numba compiles
(:mod:`mfstein.ground.jit` wraps numba's ``Dispatcher.compile`` in it): raised inside
numba's compiler or llvmlite -- often in a ``ctypes`` callback from LLVM, which
prints it as an ignored exception and goes on -- it left LLVM half-way through a
module, and the process printed tracebacks or died by SIGSEGV on its way out.
The signal is recorded at once and raised as soon as the compilation returns.
Standard library only.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import typing
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "check",
    "deferred",
    "end_at_once",
    "exit_status",
    "forget",
    "leave",
    "note",
    "raise_interrupt",
    "stop_requested",
    "terminated",
]

_received: list[int] = []
#: Depth of :func:`deferred` blocks the main thread is in, and whether a signal came
#: in one (to be raised when the outermost ends).
_deferring: list[int] = [0]
_pending: list[bool] = [False]
#: ``os._exit`` as it was at import: user code run under :mod:`mfstein.ground.exit_guard`
#: sees a guard in its place, which these handlers must not call.
_exit = os._exit


def note(signum: int) -> None:
    """Record that signal ``signum`` asked this process to stop."""
    _received.append(int(signum))


def forget() -> None:
    """Forget the signals recorded so far: a command run again in the same process
    (``mfstein.cli.main`` called twice) starts with no stop requested."""
    _received.clear()
    _pending[0] = False


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
    """Signal handler: record the signal and raise ``KeyboardInterrupt`` -- at once,
    or, inside a :func:`deferred` block, when the block ends."""
    note(signum)
    if _deferring[0]:
        _pending[0] = True
        return
    raise KeyboardInterrupt


@contextmanager
def deferred() -> Iterator[None]:
    """Run the block (numba's compiler, module docstring) with the ``KeyboardInterrupt``
    of :func:`raise_interrupt` held back: a signal that comes meanwhile is recorded
    and raised when the outermost block ends.  In another thread than the main one
    (where no Python signal handler runs) it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _deferring[0] += 1
    try:
        yield
    finally:
        _deferring[0] -= 1
        if not _deferring[0] and _pending[0]:
            _pending[0] = False
            raise KeyboardInterrupt


def end_at_once(prog: str) -> typing.Callable[[int, object], None]:
    """A signal handler that ends the process at once, for moments with nothing to keep
    (the command still starting, or leaving with its output written): standard output
    flushed, the line ``PROG: interrupted`` (SIGINT) or ``PROG: terminated`` (SIGTERM)
    on standard error, status 128 + n (``os._exit``: no clean-up left to run)."""

    def handler(signum: int, frame: object) -> None:
        word = "terminated" if signum == signal.SIGTERM else "interrupted"
        _flush(sys.stdout)
        try:
            os.write(2, f"{prog}: {word}\n".encode())
        finally:
            _exit(128 + signum)

    return handler


def leave(status: int, prog: str) -> typing.NoReturn:
    """End this process -- the ``mfstein`` command, its work done -- with ``status``.

    Python's own way out (``sys.exit``) runs the exit functions, then finalises
    the interpreter: CPython first resets every signal that has a Python
    handler to its default action (``_PySignal_Fini``) and then collects and
    tears down every module, a few tenths of a second with SymPy, numba and
    SciPy loaded in which a Ctrl-C or SIGTERM kills the process by the signal
    (status -2 or -15, no message).  So the command leaves by itself: SIGINT
    and SIGTERM (unless ignored) now end it at once with the line ``PROG:
    interrupted`` or ``PROG: terminated`` and status 128 + n; the
    :mod:`atexit` functions run (e.g. the removal of a private cache
    directory) once the worker processes still alive are killed (the pools are
    shut down by then, the work done or saved); standard output and error are
    flushed; and ``os._exit`` ends the process, with no Python code after the
    flush.
    """
    import atexit

    now = end_at_once(prog)
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, now)
    _end_children()
    atexit._run_exitfuncs()  # errors are reported by atexit itself, as at a normal exit
    for stream in (sys.stdout, sys.stderr):
        failed = _flush(stream)
        if failed is not None and status == 0:  # the output was not all written
            status = 141 if isinstance(failed, BrokenPipeError) else 1
    _exit(status)


def _end_children() -> None:
    """Kill the worker processes still alive: the command's work is done (or saved), so
    they have nothing left to finish -- and :mod:`multiprocessing`'s exit function would
    wait for ever for a worker that was never told to stop (Python's own exit first
    stops the pools' manager threads, a step this way out skips)."""
    mp = sys.modules.get("multiprocessing")
    if mp is None:
        return
    for child in mp.active_children():
        try:
            child.kill()
        except OSError:  # pragma: no cover - already gone
            pass


def _flush(stream: typing.TextIO | None) -> BaseException | None:
    """Flush ``stream``; the error when that failed (a full disk, a reader that went
    away, a closed stream), else ``None``."""
    try:
        if stream is not None:
            stream.flush()
    except (OSError, ValueError) as exc:
        return exc
    return None
