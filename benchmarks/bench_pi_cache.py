"""CPU of a fresh process's first ``mfstein pi`` with a warm cache: main vs this tree.

Issues 34/35: :func:`sim.pi_kernels.run_slots` took the split rule as a numba
dispatcher argument, whose type names the function's memory address, so numba's
cache key differed in every process: each ``mfstein pi`` (and each xdist worker)
compiled the kernel again and added a ``.N.nbc`` file to the cache.  The rule is now
a first-class function type (a C pointer) and a second process loads the kernel.

For each tree (``--before``, e.g. ``git -C /work/main archive HEAD | tar -x -C
/tmp/pi41_before``, and this checkout) a cache directory of its own is warmed by one
run of each command; then the commands run ``--repeat`` times, the two trees
alternating, each a fresh process timed in CPU seconds (user + system of the child,
``resource.getrusage``).  Commands: ``mfstein pi`` (policy pi, the default rule) and
``mfstein pi --policy pi-split --split-rule`` with a user rule written to a temporary
module, both with 2 servers and 20,000 slots, and the latter with 10 servers and
2e6 slots, whose last column (the run's server-slots per second, best of the
repetitions) shows the price of calling the rule through a pointer in the hot loop.
The last line counts ``run_slots`` object-code files in the tree's cache after all
runs (one per process before the fix).

Usage::

    .venv/bin/python benchmarks/bench_pi_cache.py [--before /tmp/pi41_before] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RULE = """
def lowest_idle(q, a, b, out):
    for i in range(q.shape[0]):
        if q[i] == 0:
            out[i] = a
            return
"""
BASE = ["--arrivals", "0:.4,2:.2,4:.3,6:.1", "--service", "1:1", "--service", "1:.5,2:.3,3:.2"]
RUN = ["--slots", "20000", "--reps", "2", "--workers", "1", "--no-progress", "--json"]
COMMANDS = {
    "pi": [*BASE, *RUN],
    "pi-split + user rule": [
        *BASE,
        *("--policy", "pi-split", "--split-rule", "pi41rule:lowest_idle"),
        *RUN,
    ],
    "pi-split, rule, n=10": [
        *("--arrivals", "0:.3,1:.3,3:.2,5:.2", "--service", "1:.5,2:.3,3:.2", "--n", "10"),
        *("--policy", "pi-split", "--split-rule", "pi41rule:lowest_idle"),
        *("--slots", "2000000", "--workers", "1", "--no-progress", "--json"),
    ],
}


def child_cpu(tree: Path, cache: Path, rules: Path, args: list[str]) -> tuple[float, float]:
    """CPU seconds of one fresh ``python -m mfstein pi ARGS`` run on ``tree``, and the
    server-slots per second of its compiled loop (from its ``--json`` output)."""
    env = {
        **os.environ,
        "PYTHONPATH": f"{tree}{os.pathsep}{rules}",
        "MFSTEIN_CACHE_DIR": str(cache),
    }
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, "-m", "mfstein", "pi", *args],
        env=env,
        cwd=tree,
        check=True,
        capture_output=True,  # stderr: the short runs warn of correlated batch means
        text=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rate = float(json.loads(out.stdout)["server_slots_per_second"])
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", type=Path, default=Path("/tmp/pi41_before"))
    ap.add_argument("--repeat", type=int, default=5)
    opts = ap.parse_args()
    trees = {"before": opts.before.resolve(), "after": ROOT}
    with tempfile.TemporaryDirectory(prefix="bench_pi_cache_") as tmp:
        rules = Path(tmp)
        (rules / "pi41rule.py").write_text(RULE)
        caches = {name: rules / f"cache_{name}" for name in trees}
        times: dict[tuple[str, str], list[float]] = {}
        rates: dict[tuple[str, str], list[float]] = {}
        for cmd, args in COMMANDS.items():
            for name, tree in trees.items():  # warm each tree's cache
                child_cpu(tree, caches[name], rules, args)
            for _ in range(opts.repeat):
                for name, tree in trees.items():
                    cpu, rate = child_cpu(tree, caches[name], rules, args)
                    times.setdefault((cmd, name), []).append(cpu)
                    rates.setdefault((cmd, name), []).append(rate)
        files = {n: len(list(c.rglob("pi_kernels.run_slots-*.nbc"))) for n, c in caches.items()}
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    head = f"{'command':<22} {'tree':<7} {'min CPU s':>9} {'median':>7} {'ratio':>6}"
    print(f"{head} {'best server-slots/s':>19}")
    for cmd in COMMANDS:
        ref = statistics.median(times[(cmd, "before")])
        for name in trees:
            t = times[(cmd, name)]
            med = statistics.median(t)
            row = f"{cmd:<22} {name:<7} {min(t):>9.2f} {med:>7.2f} {med / ref:>6.2f}"
            print(f"{row} {max(rates[(cmd, name)]):>19.3g}")
    print(
        "run_slots .nbc files in the cache after all runs: "
        + ", ".join(f"{n} {k}" for n, k in files.items())
    )


if __name__ == "__main__":
    main()
