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
    """Handler of ``mfstein cache``."""
    from mfstein.ground.cache import configured_cache_dir
    from mfstein.ground.cache_contents import clear, survey
    from mfstein.ground.limits import human_bytes
    from mfstein.ground.streams import write_json

    directory = configured_cache_dir()
    parts = clear(directory) if args.clear else survey(directory)
    if args.json:
        write_json(
            {
                "directory": str(directory),
                "cleared": bool(args.clear),
                "parts": [p.to_dict() for p in parts],
            }
        )
        return 0
    verb = "removed from" if args.clear else "in"
    print(f"cache directory: {directory}" + ("" if directory.is_dir() else " (none yet)"))
    width = max(len(p.name) for p in parts)
    for part in parts:
        what = f"{_files(part.files)}, {human_bytes(part.size)}"
        kept = " (left alone)" if args.clear and part is parts[-1] else ""
        print(f"  {part.name:<{width}}  {what}{kept}")
    mine = parts[:-1]
    total = f"{_files(sum(p.files for p in mine))}, {human_bytes(sum(p.size for p in mine))}"
    print(f"mfstein's files {verb} it: {total}")
    return 0


def _files(n: int) -> str:
    return f"{n:,} file" + ("" if n == 1 else "s")
