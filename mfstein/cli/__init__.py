"""The ``mfstein`` console command: a thin dispatcher.

Each package owns its subcommands.  A command module exposes
``register(subparsers)``, which adds its subparsers and sets ``handler`` (a
function taking the parsed namespace and returning an exit status) as the
parser default.  Heavy imports happen inside the handlers, so ``mfstein --help``
stays fast.

Bad input raises :class:`mfstein.ground.errors.ParameterError`; the dispatcher turns it
into one sentence on standard error and exit status 2.  A computation that
fails its own check (:class:`mfstein.ground.errors.NumericalError`) or runs out of
memory ends with one sentence and exit status 1.  No input or environment shows
a traceback: an ``OSError`` (unwritable file, full disk, lost connection) is one
sentence and status 1, an ``OverflowError`` status 2, and any other library
exception one "internal error" sentence and status 1 (``MFSTEIN_TRACEBACK=1``
re-raises it for debugging).  Standard output carries the answer only (one
JSON document with ``--json``: :mod:`mfstein.ground.streams`); a standard output that
is closed (``mfstein ... >&-``) is an error (one sentence, status 1, before any
work), while a reader that goes away (``| head``) ends the command quietly with
status 141, the Unix convention for a broken pipe.  Ctrl-C ends with status
130; further presses while leaving are ignored.  Python warnings raised while a
subcommand runs are shown as one line, ``mfstein CMD: warning: MESSAGE``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import typing
from collections.abc import Sequence

from mfstein import __version__
from mfstein.ground import signals
from mfstein.ground.errors import NumericalError, ParameterError
from mfstein.ground.streams import stdout_closed

#: Modules that contribute subcommands, in the order their commands are listed.
COMMAND_MODULES: tuple[str, ...] = (
    "mfstein.cli.derive",
    "mfstein.cli.models",
    "mfstein.cli.bound",
    "mfstein.cli.solve",
    "mfstein.cli.transient",
    "mfstein.cli.sweep",
    "mfstein.cli.exact",
    "mfstein.cli.lemmas",
    "mfstein.cli.simulate",
    "mfstein.cli.tail",
    "mfstein.cli.pi",
    "mfstein.cli.cache",
)


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line (``mfstein CMD: error: ...``), exit 2;
    ``--help`` still shows the usage.  Subcommand parsers inherit the class."""

    def error(self, message: str) -> typing.NoReturn:
        text = " ".join(message.split())
        self.exit(2, f"{self.prog}: error: {text} (see {self.prog} --help).\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Parse as argparse does, and record in ``given_options`` (destination ->
        option string) the options written on the command line, so that a path that
        does not use one can refuse it (:mod:`mfstein.cli.option_scope`) even when
        its value equals the default.  A subcommand's record reaches the top-level
        namespace with the rest of its values."""
        self._given: dict[str, str] = {}
        ns, extras = super().parse_known_args(args, namespace)
        record = dict(getattr(ns, "given_options", None) or {})
        record.update(self._given)
        ns.given_options = record
        return ns, extras

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> object:
        if action.option_strings and hasattr(self, "_given"):
            self._given.setdefault(action.dest, action.option_strings[0])
        return super()._get_values(action, arg_strings)


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with every package's subcommands registered."""
    parser = _Parser(
        prog="mfstein",
        description=(
            "Error analysis of mean-field models of load balancing by Stein's method: "
            "symbolic derivation, high-precision constants for any model, exact "
            "solutions and simulation."
        ),
    )
    parser.add_argument("--version", action="version", version=f"mfstein {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mfstein`` console script; returns the exit status.

    In the ``mfstein`` command's own process (the start-up guard of
    :mod:`mfstein` is there) it does not return: the process ends here with that
    status (:func:`mfstein.ground.signals.leave`), so that a Ctrl-C or SIGTERM while it
    leaves still gives one line and 130 or 143, not death by the signal.
    """
    command = _started_as_command()
    status, prog = _dispatch(argv)
    if command:
        signals.leave(status, prog)
    return status


def _dispatch(argv: Sequence[str] | None) -> tuple[int, str]:
    """Parse ``argv`` and run the subcommand: ``(exit status, program name)``."""
    from mfstein.cli.option_types import OptionValueError

    try:
        parser = build_parser()
        args = parser.parse_args(argv)
    except KeyboardInterrupt:  # a library caller (the console script has the guard)
        return _interrupted("mfstein"), "mfstein"
    except OptionValueError as exc:  # a numeric option out of its declared range
        words = sys.argv[1:] if argv is None else list(argv)
        command = next((w for w in words if not w.startswith("-")), "")
        return _fail(command, "error", exc, 2), f"mfstein {command}".strip()
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2, "mfstein"
    prog = f"mfstein {args.command}"
    return _run(args, handler), prog


def _run(args: argparse.Namespace, handler: typing.Callable[..., object]) -> int:
    """Run the subcommand's ``handler``: its exit status, every failure as one line."""
    import warnings

    show = warnings.showwarning
    held: list[str] = []  # floating-point warnings, printed only after a success
    warnings.showwarning = _one_line_warning(args.command, held)
    try:
        signals.forget()  # a press recorded by an earlier command in this process is not ours
        _PRESSES[0] = 0
        _end_startup_guard()
        if stdout_closed():  # every print would be dropped without a word
            return _fail(
                args.command,
                "error",
                "standard output is closed; redirect it to a file, or to /dev/null to "
                "discard the answer.",
                1,
            )
        status = int(handler(args) or 0)
        if sys.stdout is not None:
            sys.stdout.flush()  # a write error (full disk, closed pipe) is reported here
        if status == 0:
            for text in held:
                print(f"mfstein {args.command}: warning: {text}", file=sys.stderr)
        if status == 130:  # the command kept what a Ctrl-C left: later presses only exit
            _ignore_interrupts()
            status = signals.exit_status()  # 143 after a SIGTERM
        return status
    except ParameterError as exc:
        return _fail(args.command, "error", exc, 2)
    except NumericalError as exc:
        # a result that failed its own check is never printed
        return _fail(args.command, "numerical error", exc, 1)
    except MemoryError:
        return _fail(
            args.command,
            "error",
            "not enough memory for this computation; reduce the size (N, b, dps) or free memory.",
            1,
        )
    except KeyboardInterrupt:
        return _interrupted(f"mfstein {args.command}")
    except BrokenPipeError:
        # The reader (e.g. ``| head``) went away: stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except OSError as exc:
        if _was_interrupted(exc):  # e.g. an interrupted system call
            return _interrupted(f"mfstein {args.command}")
        # the environment: a file that cannot be written, a full disk, a lost connection
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        text = exc.strerror or str(exc) or type(exc).__name__
        return _fail(args.command, "error", f"{text}{where}.", 1)
    except (OverflowError, RecursionError) as exc:
        return _fail(
            args.command,
            "error",
            f"a size or value is too large to compute with ({type(exc).__name__}: {exc}); "
            "reduce it.",
            2,
        )
    except Exception as exc:  # a library failed on this input: one sentence, no traceback
        if _was_interrupted(exc):  # e.g. numpy's ImportError for a Ctrl-C mid-import
            return _interrupted(f"mfstein {args.command}")
        if os.environ.get("MFSTEIN_TRACEBACK"):
            raise
        return _fail(
            args.command,
            "internal error",
            f"{type(exc).__name__}: {exc} (set MFSTEIN_TRACEBACK=1 for the details and "
            "please report it).",
            1,
        )
    finally:
        warnings.showwarning = show


def _is_startup_guard(handler: object) -> bool:
    """Whether ``handler`` is the start-up guard of :mod:`mfstein`."""
    return getattr(handler, "__qualname__", "").startswith("_quiet_interrupt_during_startup")


def _started_as_command() -> bool:
    """Whether this process is the ``mfstein`` command: :mod:`mfstein` installed its
    start-up guard (and :func:`_end_startup_guard` has not yet replaced it)."""
    import signal

    return any(_is_startup_guard(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGTERM))


def _end_startup_guard() -> None:
    """Hand Ctrl-C back to Python (``KeyboardInterrupt``) once the work starts.

    The start-up guard of :mod:`mfstein` (``mfstein/__init__.py``) leaves at once
    with status 130 on Ctrl-C, which is right while nothing has been done; from
    here on a subcommand may have results to keep (a simulation saves its
    completed batches), so Ctrl-C must raise ``KeyboardInterrupt`` (or set the
    simulator's flag) instead.
    """
    import signal

    for signum, handler in (
        (signal.SIGINT, _keyboard_interrupt),
        (signal.SIGTERM, signals.raise_interrupt),  # like Ctrl-C: clean up, status 143
    ):
        if _is_startup_guard(signal.getsignal(signum)):
            signal.signal(signum, handler)


#: Ctrl-C presses seen by :func:`_keyboard_interrupt` in this process.
_PRESSES = [0]


def _keyboard_interrupt(signum: int, frame: object) -> None:
    """Python's default SIGINT behaviour (raise ``KeyboardInterrupt``), counting the
    presses: a library that turns the interruption into another exception (NumPy
    raises ``ImportError`` when Ctrl-C hits its C extension's import) is then
    still reported as an interruption, not as an internal error.  The press is
    also recorded for the work's own polls (:func:`mfstein.ground.signals.check`), which
    raise it again if a library lost the ``KeyboardInterrupt``."""
    _PRESSES[0] += 1
    signals.raise_interrupt(signum, frame)  # held back while numba compiles


def _was_interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` followed a Ctrl-C (a press was counted, or a
    ``KeyboardInterrupt`` is in its chain of causes)."""
    return _PRESSES[0] > 0 or _caused_by_interrupt(exc)


def _ignore_interrupts() -> None:
    """Ignore Ctrl-C from now on: the process is leaving with status 130, and a
    press that raised ``KeyboardInterrupt`` on the way out (after ``main``
    returned) would end it by the signal instead (status -2, no message)."""
    import signal

    for _ in range(5):  # signal.signal first runs a press still pending: retry then
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            break
        except KeyboardInterrupt:
            continue
        except ValueError:  # pragma: no cover - not the main thread
            break


def _interrupted(prog: str) -> int:
    """One line for Ctrl-C, status 130 (SIGTERM: ``terminated``, 143); further
    presses while leaving are ignored."""
    _ignore_interrupts()
    word = "terminated" if signals.terminated() else "interrupted"
    try:
        print(f"{prog}: {word}", file=sys.stderr)
    except OSError:  # pragma: no cover - standard error itself is gone
        pass
    return signals.exit_status()


def _caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a Ctrl-C (``KeyboardInterrupt``) is in ``exc``'s chain of causes."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        todo += [e.__cause__, e.__context__]
    return False


def _one_line_warning(command: str, held: list[str]) -> typing.Callable[..., None]:
    """A :func:`warnings.showwarning` that prints ``mfstein CMD: warning: MESSAGE`` as
    one line (no file name, no source line), like the dispatcher's errors.

    NumPy's floating-point warnings ("overflow encountered in ...") are arithmetic
    events inside a computation whose own checks judge the result: they are added
    to ``held`` (once each) instead, printed after a command that succeeds and
    dropped when it fails, where the error line says what went wrong."""

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = " ".join(str(message).split()) or category.__name__
        if len(text) > 600:
            text = text[:597] + "..."
        if issubclass(category, RuntimeWarning) and " encountered in " in text:
            if text not in held:
                held.append(text)
            return
        try:
            print(f"mfstein {command}: warning: {text}", file=file or sys.stderr)
        except OSError:  # pragma: no cover - standard error itself is gone
            pass

    return show


def _fail(command: str, kind: str, message: object, status: int) -> int:
    """Print ``mfstein COMMAND: KIND: MESSAGE`` as one line on standard error."""
    text = " ".join(str(message).split()) or "failed."
    if len(text) > 600:
        text = text[:597] + "..."
    try:
        print(f"mfstein {command}: {kind}: {text}", file=sys.stderr)
    except OSError:  # pragma: no cover - standard error itself is gone
        pass
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
