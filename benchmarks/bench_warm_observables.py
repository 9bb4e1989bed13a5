"""Warm calls with observables (issue 31): what a repeated call with an observable costs.

    .venv/bin/python benchmarks/bench_warm_observables.py [--tree DIR ...] [--rounds 3]

Each tree (default this working tree; ``--tree DIR`` adds a checkout of another
revision) runs in a fresh child interpreter (``PYTHONPATH`` set to it), the trees
alternating ``--rounds`` times; min / median over the rounds are printed.  In the child,
on the library SIR (three states, one conservation law) with the observable ``S*I``,
each call is made once (warm-up: kernels, the prepared problem, the observable parsed),
then ``--repeat`` times; the row is the median wall time of one repeated call (ms):

* ``solve``: ``numeric.solve(sir, params)`` without an observable (the floor);
* ``solve + S*I``: the same call with ``observables=["S*I"]`` (30 digits);
* ``order 2 + S*I``: with ``order=2`` (the ``1/N^2`` term too);
* ``float64 + S*I``: ``precision="float64"``;
* ``exact N=20 E[S*I]``: the exact chain's ``expect("S*I")``;
* ``table N=10,20``: :func:`sim.accuracy.accuracy` (expansion and exact columns).

The ``g0`` of the first observable row is printed per tree to show the same numbers.
"""

from __future__ import annotations

import os

from bench_warm_routes import print_rows, tree_parser, tree_runs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import json, statistics, time
import numeric
from numeric.exact import solve as exact
from derive.models import load_model
from sim.accuracy import accuracy
m = load_model("sir")
p = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
g = ["S*I"]
calls = {
    "solve": lambda: numeric.solve(m, p),
    "solve + S*I": lambda: numeric.solve(m, p, observables=g),
    "order 2 + S*I": lambda: numeric.solve(m, p, order=2, observables=g),
    "float64 + S*I": lambda: numeric.solve(m, p, precision="float64", observables=g),
    "exact N=20 E[S*I]": lambda: exact(m, p, N=20).expect("S*I", m),
    "table N=10,20": lambda: accuracy(m, p, "S*I", [10, 20]),
}
rows, g0 = {}, None
for name, call in calls.items():
    out = call()  # warm-up
    if name == "solve + S*I":
        g0 = str(out.observables["S*I"].g0)
    times = []
    for _ in range(REPEAT):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    rows[name] = 1e3 * statistics.median(times)
print(json.dumps({"rows": rows, "g0": g0}))
"""


def main() -> None:
    ap = tree_parser(__doc__)
    ap.add_argument("--repeat", type=int, default=20, help="repeated calls per row (20)")
    args = ap.parse_args()
    trees = [*args.tree, ROOT]
    child = CHILD.replace("REPEAT", str(args.repeat))
    runs = tree_runs(trees, args.rounds, ["-c", child])
    print(f"SIR, observable S*I: ms per warm call (median of {args.repeat} calls;")
    print(f"min / median over {args.rounds} rounds, the trees alternating)")
    print_rows(trees, runs, 22, "{:8.2f} /{:8.2f}")
    for t, rs in zip(trees, runs, strict=True):
        print(f"  g0 of S*I ({os.path.basename(t.rstrip('/'))}): {rs[0]['g0']}")


if __name__ == "__main__":
    main()
