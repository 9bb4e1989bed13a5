"""The supermarket's mean-field fast path through ``numeric.solve`` (issue 31): per-call cost.

    .venv/bin/python benchmarks/bench_fast_path.py [--tree DIR ...] [--rounds 3] [--repeat 20]

Each tree (default this working tree; ``--tree DIR`` adds a checkout of another
revision) runs in a fresh child interpreter (``PYTHONPATH`` set to it), the trees
alternating ``--rounds`` times; min / median over the rounds are printed.  In the child
each row is the median wall time (ms) of ``--repeat`` calls of
``numeric.solve(load_model("supermarket", b=b), {"lam": ...}, dps=30, order=order)``
(the family's fast path, :func:`mfstein.families.supermarket.solver.solve_model`):

* ``b=.. order .. warm``: the same inputs again (after one warm-up call);
* ``b=5 order 1 new lam``: a new arrival rate at every call (a parameter point and a
  problem prepared each time; before stop 46's fast47 the fast path prepared it a
  second time, a cache hit that checked the names again);
* ``exact b=3 N=20 warm``: ``numeric.exact.solve(load_model("supermarket", b=3),
  {"lam": "0.9"}, N=20)``, the exact task's fast path
  (:func:`mfstein.families.supermarket.exact.supermarket_fast`, on the prepared problem since
  stop 47);
* ``b=60 float64 order 2 (tail)``: ``second_order_float64`` of b = 60 at lam = 0.7,
  which solves the family's smaller member its negligible tail names
  (:func:`mfstein.families.supermarket.tail.negligible_tail`, on the prepared problem since
  stop 47).

The constant of the first row is printed per tree to show the same numbers.
"""

from __future__ import annotations

from bench_warm_routes import median_table

CHILD = """
import json
import numeric
import numeric.exact
from derive.models import load_model
from numeric.meanfield.stationary import second_order_float64
models = {b: load_model("supermarket", b=b) for b in (5, 60)}
p = {"lam": "0.7"}
def warm(b, order):
    return lambda k: numeric.solve(models[b], p, dps=30, order=order)
def new_lam(k):
    return numeric.solve(models[5], {"lam": f"0.7{k + 1:04d}"}, dps=30)
exact3 = load_model("supermarket", b=3)
def exact(k):
    return numeric.exact.solve(exact3, {"lam": "0.9"}, N=20)
def tail(k):
    return second_order_float64(models[60], p)
rows, first = median_ms({
    "b=5 order 1 warm": warm(5, 1),
    "b=5 order 2 warm": warm(5, 2),
    "b=60 order 1 warm": warm(60, 1),
    "b=60 order 2 warm": warm(60, 2),
    "b=5 order 1 new lam": new_lam,
    "exact b=3 N=20 warm": exact,
    "b=60 float64 order 2 (tail)": tail,
})
print(json.dumps({"rows": rows, "constant": str(first["b=5 order 1 warm"].constant)}))
"""


def main() -> None:
    median_table(
        __doc__,
        CHILD,
        "supermarket fast path, dps=30",
        "{:8.3f} /{:8.3f}",
        ("constant b=5", "constant"),
    )


if __name__ == "__main__":
    main()
