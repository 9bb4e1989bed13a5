"""Tasks given a model by name (issue 31, stop 47): what a repeated call costs.

    .venv/bin/python benchmarks/bench_by_name.py [--tree DIR ...] [--rounds 3] [--repeat 10]

Each tree (default this working tree; ``--tree DIR`` adds a checkout of another
revision) runs in a fresh child interpreter (``PYTHONPATH`` set to it), the trees
alternating ``--rounds`` times; min / median over the rounds are printed.  In the child
each row is the median wall time (ms) of ``--repeat`` calls after one warm-up call, the
model always given by its name (``"sir"``, ``"supermarket"`` with ``b`` among the
parameters), the same inputs every call:

* ``sir order 1``, ``order 2``, ``observable``, ``float64``: ``numeric.solve``;
* ``sir transient``: ``numeric.transient`` at ``t = 0, 1, 2``;
* ``sir exact N=20``: ``numeric.exact.solve``;
* ``supermarket b=4 order 2``: ``numeric.solve`` (the family's fast path).

Where each call builds the model anew (before stop 47), a warm call prepares the
problem again; with one model per name it reaches the problem its first call prepared.
The ``c2`` of the SIR order-2 row is printed per tree to show the same numbers.
"""

from __future__ import annotations

from bench_warm_routes import median_table

CHILD = """
import json
import numeric, numeric.exact
p = {"beta": "2", "gamma": "1", "rho": "0.5", "a": "0.1"}
sm = {"b": 4, "lam": "0.9"}
rows, first = median_ms({
    "sir order 1": lambda k: numeric.solve("sir", p, dps=30),
    "sir order 2": lambda k: numeric.solve("sir", p, dps=30, order=2),
    "sir observable": lambda k: numeric.solve("sir", p, dps=30, observables=["S*I"]),
    "sir float64": lambda k: numeric.solve("sir", p, precision="float64"),
    "sir transient": lambda k: numeric.transient("sir", p, times=[0, 1, 2]),
    "sir exact N=20": lambda k: numeric.exact.solve("sir", p, N=20),
    "supermarket b=4 order 2": lambda k: numeric.solve("supermarket", sm, dps=30, order=2),
})
print(json.dumps({"rows": rows, "c2": str(first["sir order 2"].c2)}))
"""


def main() -> None:
    median_table(
        __doc__, CHILD, "tasks by name, dps=30", "{:8.2f} /{:8.2f}", ("c2 of sir order 2", "c2")
    )


if __name__ == "__main__":
    main()
