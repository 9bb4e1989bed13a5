"""``mfstein cache``: where mfstein keeps generated code, compiled code, kept results
and stored models, how much of each, and ``--clear`` to remove them
(:mod:`mfstein.ground.cache_contents`).  Standard library only: as light as ``--help``."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``mfstein cache`` to the dispatcher."""
    p = subparsers.add_parser(
        "cache",
        help="the cache directory: its parts and their sizes (--clear removes them)",
        description=(
            "Show the cache directory ($MFSTEIN_CACHE_DIR, else the platform's user cache "
            "directory) and what mfstein keeps there: generated code, numba's compiled "
            "code, kept results (exact chains, simulation runs) and stored models, with "
            "their files and sizes.  Every file is made again when missing, so --clear "
            "costs only the time to make them again (the next run of a model compiles "
            "its kernels anew).  Files that are not mfstein's are listed and never removed."
        ),
    )
    p.add_argument("--clear", action="store_true", help="remove mfstein's files from it")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``mfstein cache``: prints :func:`mfstein.ground.cache_contents.look`'s
    survey (its ``to_json()`` with ``--json``, else its ``to_text()``)."""
    from mfstein.ground.cache import configured_cache_dir
    from mfstein.ground.cache_contents import look
    from mfstein.ground.streams import show

    survey = look(configured_cache_dir(), clear_it=bool(args.clear))
    return show(survey, args.json)
