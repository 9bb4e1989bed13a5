"""Warm routes on one model (issues 31, 34): what a repeated or extended call costs.

    .venv/bin/python benchmarks/bench_warm_routes.py [--tree DIR ...] [--dps 30]

Each tree (default this working tree; ``--tree DIR`` adds a checkout of another
revision, e.g. ``git archive main | tar -x -C /tmp/main``) runs in a fresh child
interpreter with ``PYTHONPATH`` set to it, one after the other in one run, on the
library SIR at ``--dps`` digits (kernels warmed first by a call at other
parameters), and prints one table:

* ``order 1``: ``numeric.solve(sir, params, dps=dps)`` at new parameters;
* ``order 2 after order 1``: the same call with ``order=2`` next (the issue's goal:
  only the order-2 part is paid);
* ``order 2 alone``: ``order=2`` at other new parameters, nothing prepared before;
* ``order 1 again``: the first call repeated (a warm call: nothing to prepare);
* ``transient again``: ``numeric.transient`` at ``t = 0, 1, 2`` asked a second time.

CPU seconds of the child (the machine may be shared).  The ``c2`` of the two
order-2 rows is printed to show they are the same numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import json, time
import numeric
from derive.models import load_model
m = load_model("sir")
base = {"gamma": "1", "rho": "0.5", "a": "0.1"}
dps = DPS
def timed(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out
numeric.solve(m, {**base, "beta": "2"}, dps=dps, order=2)  # kernels compiled and loaded
numeric.transient(m, {**base, "beta": "2"}, times=[0, 1, 2])
one = {**base, "beta": "3.25"}
other = {**base, "beta": "3.5"}
rows = {}
rows["order 1"], _ = timed(lambda: numeric.solve(m, one, dps=dps))
rows["order 2 after order 1"], a = timed(lambda: numeric.solve(m, one, dps=dps, order=2))
rows["order 2 alone"], b = timed(lambda: numeric.solve(m, other, dps=dps, order=2))
rows["order 1 again"], _ = timed(lambda: numeric.solve(m, one, dps=dps))
numeric.transient(m, one, times=[0, 1, 2])
rows["transient again"], _ = timed(lambda: numeric.transient(m, one, times=[0, 1, 2]))
print(json.dumps({"rows": rows, "c2": [str(a.c2), str(b.c2)]}))
"""


def run_json(tree: str, argv: list[str]) -> dict:
    """``python *argv`` in a fresh interpreter with the library of ``tree``
    (``PYTHONPATH``, working directory): the JSON of its last printed line."""
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run(
        [sys.executable, *argv],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(tree: str, dps: int) -> dict:
    return run_json(tree, ["-c", CHILD.replace("DPS", str(dps))])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", default=[], help="another checkout to compare")
    ap.add_argument("--dps", type=int, default=30, help="digits (30)")
    args = ap.parse_args()
    trees = [*args.tree, ROOT]
    results = [run(t, args.dps) for t in trees]
    names = list(results[0]["rows"])
    print(f"SIR at {args.dps} digits, CPU seconds per call")
    print(f"  {'':24s}" + "".join(f"{os.path.basename(t.rstrip('/'))[:14]:>16s}" for t in trees))
    for name in names:
        print(f"  {name:24s}" + "".join(f"{r['rows'][name]:16.3f}" for r in results))
    for t, r in zip(trees, results, strict=True):
        name = os.path.basename(t.rstrip("/"))
        print(f"  c2 ({name}): after order 1 {r['c2'][0]}, alone {r['c2'][1]}")


if __name__ == "__main__":
    main()
