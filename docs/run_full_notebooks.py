"""Execute the notebooks at full size and store them in ``docs/notebooks_full/``.

Run ``python docs/run_full_notebooks.py [NAME ...]`` (default: every notebook
whose stored run is missing or whose code changed since; ``--all`` re-runs them
all).  The documentation site renders these runs (``docs/notebooks_build.py``);
the test suite keeps executing the notebooks at CI size.  Each run can take
minutes: the notebooks' parameter cells give the sizes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import notebooks_build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help="notebook stems, e.g. 07_second_order"
    )
    parser.add_argument("--all", action="store_true", help="re-run even current stored runs")
    args = parser.parse_args(argv)
    known = notebooks_build.names()
    unknown = [n for n in args.names if n not in known]
    if unknown:
        parser.error(f"NAME must be one of {', '.join(known)}; got {', '.join(unknown)}")
    todo = args.names or [n for n in known if args.all or notebooks_build.current_full(n) is None]
    for name in todo:
        start = time.monotonic()
        print(f"{name}: executing at full size ...", file=sys.stderr, flush=True)
        path = notebooks_build.execute_full(name)
        print(
            f"{name}: {time.monotonic() - start:.0f} s, wrote {path}", file=sys.stderr, flush=True
        )
    if not todo:
        print("every stored full-size run is current", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
