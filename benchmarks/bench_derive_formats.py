"""``mfstein derive`` in each ``--format``, this tree beside another, in fresh processes.

Each command runs as a user runs it (``python -m mfstein derive ...``, a new
interpreter each time), alternating the two trees repetition by repetition; the
table gives the min and median wall time of each and their ratio (this / before),
and whether the two trees printed the same bytes::

    python benchmarks/bench_derive_formats.py --before /tmp/before47 --reps 5

(``/tmp/before47``: ``git archive <commit> | tar -x -C /tmp/before47``).
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
BD = f"{ROOT}/examples/birth_death.py:birth_death"
#: The commands timed: the supermarket's short form and a model file, every format.
COMMANDS = [
    f"--format {fmt} --b 2 --show f,J,stein,lyapunov,kron,generator"
    for fmt in ("latex", "text", "json", "python")
] + [
    "--format latex --b 3 --d 3 --mu mu --show f,J,hessian,Q,ftilde,stein,lyapunov,kron,generator",
    "--format latex --model sir --show f,J,H,Q,ftilde,stein,generator",
    f"--format latex --param lam=1/2 --show f,J,H,Q,lyapunov --model {BD}",
]


def _run(tree: Path, args: str) -> tuple[float, bytes]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "mfstein", "derive", *args.split()],
        env=env,
        capture_output=True,
        check=True,
    ).stdout
    return time.perf_counter() - t0, out


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit status 1 when the two trees print different bytes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the other tree")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args(argv)
    differ = 0
    print(f"{'command':<60} {'before min/med s':>17} {'this min/med s':>15} {'ratio':>6} same")
    for command in COMMANDS:
        times: dict[str, list[float]] = {"before": [], "this": []}
        outs: dict[str, bytes] = {}
        for _ in range(args.reps):
            for name, tree in (("before", args.before), ("this", ROOT)):
                t, outs[name] = _run(tree, command)
                times[name].append(t)
        b, t = times["before"], times["this"]
        same = outs["before"] == outs["this"]
        differ += not same
        print(
            f"{command[:60]:<60} {min(b):8.2f}/{statistics.median(b):<8.2f}"
            f"{min(t):7.2f}/{statistics.median(t):<7.2f} {min(t) / min(b):6.2f} {same}"
        )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
