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

from bench_warm_routes import median_table

CHILD = """
import json
import numeric
from numeric.exact import solve as exact
from derive.models import load_model
from sim.accuracy import accuracy
m = load_model("sir")
p = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
g = ["S*I"]
rows, first = median_ms({
    "solve": lambda k: numeric.solve(m, p),
    "solve + S*I": lambda k: numeric.solve(m, p, observables=g),
    "order 2 + S*I": lambda k: numeric.solve(m, p, order=2, observables=g),
    "float64 + S*I": lambda k: numeric.solve(m, p, precision="float64", observables=g),
    "exact N=20 E[S*I]": lambda k: exact(m, p, N=20).expect("S*I", m),
    "table N=10,20": lambda k: accuracy(m, p, "S*I", [10, 20]),
})
g0 = str(first["solve + S*I"].observables["S*I"].g0)
print(json.dumps({"rows": rows, "g0": g0}))
"""


def main() -> None:
    median_table(
        __doc__, CHILD, "SIR, observable S*I, warm calls", "{:8.2f} /{:8.2f}", ("g0 of S*I", "g0")
    )


if __name__ == "__main__":
    main()
