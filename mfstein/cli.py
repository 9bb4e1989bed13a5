"""The ``mfstein`` console command: a thin dispatcher.

Each package owns its subcommands.  A command module exposes
``register(subparsers)``, which adds its subparsers and sets ``handler`` (a
function taking the parsed namespace and returning an exit status) as the
parser default.  Heavy imports happen inside the handlers, so ``mfstein --help``
stays fast.

Bad input raises :class:`mfstein.errors.ParameterError`; the dispatcher turns it
into one sentence on standard error and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from mfstein import __version__
from mfstein.errors import ParameterError

#: Modules that contribute subcommands, in the order their commands are listed.
COMMAND_MODULES: tuple[str, ...] = (
    "derive.cli",
    "numeric.cli",
    "numeric.exact.cli",
    "numeric.lemmas.cli",
    "sim.cli",
)


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with every package's subcommands registered."""
    parser = argparse.ArgumentParser(
        prog="mfstein",
        description=(
            "Stein's-method error analysis of the power-of-d-choices mean-field model: "
            "symbolic derivation, high-precision bounds, exact solutions and simulation."
        ),
    )
    parser.add_argument("--version", action="version", version=f"mfstein {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mfstein`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except ParameterError as exc:
        print(f"mfstein {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"mfstein {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (e.g. ``| head``) went away: stop quietly, as Unix tools do.
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
