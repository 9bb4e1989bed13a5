"""The paper's table (``mfstein table --gamma G --alpha A``), this tree beside another.

    .venv/bin/python benchmarks/bench_paper_table.py --tree /tmp/before47 [--reps 3]

Each repetition runs the same ``mfstein table`` command line in one fresh interpreter
per tree (this working tree and ``--tree DIR``, e.g. ``git archive main | tar -x -C
/tmp/main``), the trees alternating, with ``PYTHONPATH`` set to the tree; the numba
and kernel caches are warm after the first run of each tree, so the times are those
of a user's second run.  Two settings: the README's first command with a short
simulation (``--sim-steps``, default 1e5), and the same with ``--exact`` at small N
(N = 3, 5, 8: the exact chain runs too).  Prints min and median wall seconds of each
tree, their ratio (tree / this tree), and whether the printed tables are identical;
then the same for ``build`` of the paper table (:mod:`mfstein.families.supermarket.table`;
``sim.table`` before stop 47) called again in a warm process (``--repeat``
calls per child, the least kept: the table's own work, without imports and start-up).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def settings(steps: str) -> dict[str, list[str]]:
    """The command lines compared, by name."""
    common = ["--reps", "2", "--seed", "1", "--workers", "1", "--sim-steps", steps]
    return {
        "README table (N = 10..10^4)": [
            "--gamma", "0.1", "--alpha", "0.05", "--N", "10,100,1000,10000", *common,
        ],
        "with --exact (N = 3, 5, 8)": [
            "--gamma", "1", "--alpha", "0.5", "--N", "3,5,8", "--exact", *common,
        ],
    }  # fmt: skip


#: The child of :func:`warm`: the table's ``build`` of the setting, once to warm, then
#: ``repeat`` times; prints the least seconds.
WARM = """
import sys, time
try:
    from mfstein.families.supermarket import table
except ImportError:  # a tree before stop 47
    from sim import table
kw = eval(sys.argv[1])
table.build(**kw)
best = min(
    (lambda t0: (table.build(**kw), time.perf_counter() - t0)[1])(time.perf_counter())
    for _ in range(int(sys.argv[2]))
)
print(best)
"""


def build_kwargs(args: list[str]) -> dict:
    """The keywords of the table's ``build`` for a command line of :func:`settings`."""
    flags = [a for a in args if a != "--exact"]
    opts = dict(zip(flags[::2], flags[1::2], strict=True))
    return {
        "gamma": opts["--gamma"], "alpha": opts["--alpha"],
        "Ns": [int(n) for n in opts["--N"].split(",")], "steps": int(float(opts["--sim-steps"])),
        "reps": int(opts["--reps"]), "seed": int(opts["--seed"]),
        "workers": int(opts["--workers"]), "exact": "--exact" in args,
    }  # fmt: skip


def warm(tree: Path, args: list[str], repeat: int) -> float:
    """The least seconds of the table's ``build`` of the setting in one process on ``tree``,
    after a first call (kernels compiled, modules imported): the per-N work alone."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", WARM, repr(build_kwargs(args)), str(repeat)],
        env=env, cwd=tree, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return float(out.stdout.split()[-1])


def run(tree: Path, args: list[str]) -> tuple[float, str]:
    """Wall seconds of one fresh ``mfstein table`` process on ``tree`` and its output."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "mfstein", "table", *args],
        env=env, cwd=tree, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return time.perf_counter() - t0, out.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, required=True, help="the tree to compare with")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", default="1e5", help="--sim-steps of each run")
    ap.add_argument("--repeat", type=int, default=3, help="warm builds per child process")
    a = ap.parse_args()
    trees = {"this tree": ROOT, "--tree": a.tree.resolve()}
    print(f"load: {os.getloadavg()[0]:.2f} (1-minute average at the start)")
    print(f"{'setting':30} {'tree':10} {'min s':>8} {'median s':>9} {'ratio':>6}  same output")
    for name, args in settings(a.steps).items():
        for tree in trees.values():  # warm the caches of each tree (not timed)
            run(tree, args)
        times: dict[str, list[float]] = {k: [] for k in trees}
        outs: dict[str, str] = {}
        for _ in range(a.reps):
            for label, tree in trees.items():
                t, outs[label] = run(tree, args)
                times[label].append(t)
        same = outs["this tree"] == outs["--tree"]
        base = min(times["this tree"])
        for label, ts in times.items():
            ratio = min(ts) / base
            print(f"{name:30} {label:10} {min(ts):8.2f} {statistics.median(ts):9.2f} "
                  f"{ratio:6.2f}  {same}")  # fmt: skip
        inner: dict[str, list[float]] = {k: [] for k in trees}
        for _ in range(a.reps):
            for label, tree in trees.items():
                inner[label].append(warm(tree, args, a.repeat))
        base = min(inner["this tree"])
        for label, ts in inner.items():
            print(f"{name + ' (warm build)':30} {label:10} {min(ts):8.2f} "
                  f"{statistics.median(ts):9.2f} {min(ts) / base:6.2f}")  # fmt: skip
    print(f"load: {os.getloadavg()[0]:.2f} (1-minute average at the end)")


if __name__ == "__main__":
    main()
