"""Start-up cost, before vs after: ``mfstein --help`` and ``mfstein table`` overhead.

Run:  .venv/bin/python benchmarks/bench_startup.py [--before /tmp/before] [--repeat 5]

"before" is the committed tree exported with
``git -C /work/main archive HEAD | tar -x -C /tmp/before`` and run with
``PYTHONPATH`` pointing at it; "after" is this working tree.  Each figure is the
best of ``--repeat`` wall-clock runs of a fresh interpreter:

* ``mfstein --help``: build the full parser (every subcommand registered);
* ``table start-up``: ``mfstein table --help`` (parser plus the table module's
  registration), the fixed cost before any computation;
* ``imports``: the heavy modules loaded by ``--help`` (should be none).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(tree: str, code: str, repeat: int) -> tuple[float, str]:
    env = dict(os.environ, PYTHONPATH=tree)
    best, out = float("inf"), ""
    for _ in range(repeat):
        t = time.perf_counter()
        r = subprocess.run(
            [sys.executable, "-c", code], env=env, cwd=tree, capture_output=True, text=True
        )
        best = min(best, time.perf_counter() - t)
        out = r.stdout.strip() or r.stderr.strip()[-200:]
    return best, out


HELP = (
    "import sys; sys.argv=['mfstein','--help']\n"
    "try:\n from mfstein.cli import main; main()\nexcept SystemExit: pass"
)
TABLE = HELP.replace("'--help'", "'table','--help'")
MODS = (
    "import io, contextlib, sys\nwith contextlib.redirect_stdout(io.StringIO()):\n"
    "  sys.argv=['mfstein','--help']\n  from mfstein.cli import main\n  try: main()\n"
    "  except SystemExit: pass\n"
    "import mfstein; print(mfstein.__file__.split('/mfstein/')[0], [m for m in "
    "('sympy','numba','scipy','numpy','mpmath','matplotlib') if m in sys.modules])"
)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", default="/tmp/before")
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    rows = []
    for name, tree in (("before", a.before), ("after", ROOT)):
        t_help, _ = _run(tree, HELP, a.repeat)
        t_table, _ = _run(tree, TABLE, a.repeat)
        _, mods = _run(tree, MODS, 1)
        rows.append((name, t_help, t_table, mods))
    print(f"{'tree':<8}{'mfstein --help':>16}{'table start-up':>16}  heavy imports (tree)")
    for name, t1, t2, mods in rows:
        print(f"{name:<8}{t1 * 1e3:>13.0f} ms{t2 * 1e3:>13.0f} ms  {mods}")


if __name__ == "__main__":
    main()
