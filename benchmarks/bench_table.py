"""Benchmark of ``mfstein table --model ... --observable G`` (issue 24's speed goal).

    .venv/bin/python benchmarks/bench_table.py                 # the goal's full run
    .venv/bin/python benchmarks/bench_table.py --steps 1e6     # a shorter simulation
    .venv/bin/python benchmarks/bench_table.py --no-simulate   # expansion and exact only

The model is a 10-dimensional user model in a file
(``benchmarks/models/supermarket_user.py`` with b = 10, lam = 0.9: no family,
no fast path), the observable its mean queue length ``x1 + ... + x10``, at
N = 10, 100, 1000 with ``--order 2 --exact --simulate`` (the exact chain at N = 10
has 184,756 states; at N = 100 and 1000 it is a dash with the reason).

Reported, each as the wall time of a fresh ``mfstein`` process (what a user
waits for):

* the expansion rows alone (``--order 2``, no exact, no simulation), run twice:
  the second run finds the generated kernels in the cache -- goal under 2 s;
* the full table with ``--sim-steps`` events per N (default 10^7) -- goal under
  a minute on 2 cores, most of it simulation.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = f"{ROOT / 'benchmarks' / 'models' / 'supermarket_user.py'}:supermarket_user"
B = 10
#: Goals of issue 24 (seconds).
GOAL_EXPANSION = 2.0
GOAL_FULL = 60.0


def _int(text: str) -> int:
    return int(float(text))


def command(extra: list[str]) -> list[str]:
    """The ``mfstein table`` command line of the benchmark (plus ``extra``)."""
    g = " + ".join(f"x{k}" for k in range(1, B + 1))
    return [
        sys.executable,
        "-m",
        "mfstein",
        "table",
        "--model",
        MODEL,
        "--param",
        f"b={B}",
        "--param",
        "lam=0.9",
        "--observable",
        g,
        "--N",
        "10,100,1000",
        "--order",
        "2",
        *extra,
    ]


def timed(argv: list[str]) -> tuple[float, str]:
    """Wall time of one process and its standard output (raises on failure)."""
    t0 = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT)
    return time.perf_counter() - t0, r.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=_int, default=10**7, help="events per N (default 1e7)")
    ap.add_argument("--reps", type=_int, default=4, help="replications (default 4)")
    ap.add_argument("--no-simulate", action="store_true", help="skip the simulation")
    args = ap.parse_args()

    first, _ = timed(command([]))
    cached, out = timed(command([]))
    print(out.rstrip())
    print(
        f"expansion rows: {first:.2f} s first run, {cached:.2f} s cached "
        f"(goal < {GOAL_EXPANSION:g} s cached)"
    )
    extra = ["--exact"]
    if not args.no_simulate:
        extra += ["--simulate", "--sim-steps", str(args.steps), "--reps", str(args.reps)]
    full, out = timed(command(extra))
    print(out.rstrip())
    what = "full table" if not args.no_simulate else "expansion + exact"
    print(f"{what}: {full:.2f} s (goal < {GOAL_FULL:g} s with 1e7 events per N)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
