"""The default test tier under an artificial load: does any test fail by time alone?

Starts ``--busy`` processes that spin on the CPU (a stand-in for ``stress``: other
work on a shared machine), runs the README's test command (``python -m pytest -q -n
auto``, the default tier) beside them, samples the load average every 10 s, and
prints one table: the wall time, the load it ran at (mean and maximum of the
1-minute average), and pytest's summary line.  The busy processes end with the run
whatever ends it.

Run:  .venv/bin/python benchmarks/suite_under_load.py [--busy 6] [--pytest-args "..."]
          [-k EXPRESSION] [PATH ...]

``--busy 6`` on 2 cores keeps the 1-minute load near 8 once the suite's own two
workers are counted.  A quiet baseline is ``--busy 0``.  The suite starts once the
1-minute load average has caught up with the busy processes (at most
``--warm-up`` seconds), as on a machine that was already busy: the tests' deadlines
(tests/deadlines.py) read that average.  ``PATH`` and ``-k`` choose a part of the
tier (for a short check of the script itself); by default the whole tier runs.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _spin() -> None:
    while True:
        pass


def _sample(loads: list[float], stop: threading.Event) -> None:
    while not stop.wait(10.0):
        loads.append(os.getloadavg()[0])


def _warm_up(busy: int, seconds: float) -> None:
    """Wait until the 1-minute load average reaches ``busy`` (or ``seconds`` pass)."""
    until = time.monotonic() + seconds
    while os.getloadavg()[0] < 0.9 * busy and time.monotonic() < until:
        time.sleep(1.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy", type=int, default=6, help="busy processes (default 6)")
    parser.add_argument("--pytest-args", default="-q -n auto", help="the tier's pytest arguments")
    parser.add_argument("-k", dest="keyword", help="only the tests pytest's -k selects")
    parser.add_argument(
        "--warm-up",
        type=float,
        default=90.0,
        help="seconds at most to wait for the load average to reach --busy (default 90)",
    )
    parser.add_argument("paths", nargs="*", help="test files or directories (default: the tier)")
    args = parser.parse_args()
    if args.busy < 0:
        parser.error("--busy must be >= 0")
    if args.warm_up < 0:
        parser.error("--warm-up must be >= 0")
    busy = [mp.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for p in busy:
        p.start()
    command = [sys.executable, "-m", "pytest", *shlex.split(args.pytest_args)]
    if args.keyword:
        command += ["-k", args.keyword]
    command += args.paths
    loads: list[float] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_sample, args=(loads, stop), daemon=True)
    try:
        _warm_up(args.busy, args.warm_up)
        loads.append(os.getloadavg()[0])
        sampler.start()
        t0 = time.monotonic()
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    finally:
        stop.set()
        for p in busy:
            p.kill()
    wall = time.monotonic() - t0
    lines = proc.stdout.strip().splitlines()
    summary = lines[-1] if lines else "(no output)"
    failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    mean = sum(loads) / len(loads) if loads else float("nan")
    peak = max(loads) if loads else float("nan")
    print(f"{'busy':>5} {'cores':>5} {'wall':>9} {'load mean':>10} {'load max':>9}  pytest")
    row = f"{args.busy:>5} {os.cpu_count():>5} {wall / 60:>7.1f} m {mean:>10.1f} {peak:>9.1f}"
    print(f"{row}  {summary}")
    for line in failed:
        print(line)
    if proc.returncode not in (0, 5) and not failed:  # e.g. a usage error: say what pytest said
        print("\n".join(proc.stderr.strip().splitlines()[-5:] + lines[-5:]))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
