"""The options of a command that runs long work on workers, declared and read once.

``--no-progress`` (with :func:`progress_wanted`, the one rule for drawing a
progress bar) and ``--scheduler`` (a running Dask scheduler) mean the same in
``simulate``, ``table``, ``sweep``, ``tail`` and ``pi``; each command adds them
here, where it lists them, so its ``--help`` keeps its own order.
"""

from __future__ import annotations

import argparse
import sys


def add_progress_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--no-progress`` (read by :func:`progress_wanted`)."""
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_scheduler_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--scheduler``: the address of a running Dask scheduler (``None``: local
    processes)."""
    p.add_argument("--scheduler", help="address of a running Dask scheduler")


def progress_wanted(args: argparse.Namespace, *, quiet_with_json: bool = True) -> bool:
    """Whether to draw a progress bar on standard error: not with ``--no-progress``, only
    when standard error is a terminal, and (``quiet_with_json``) not with ``--json``."""
    if args.no_progress or (quiet_with_json and args.json):
        return False
    return sys.stderr.isatty()
