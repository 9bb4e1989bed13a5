"""The float64 order 2 and the supermarket's fast path on the prepared problem (issue 31).

    .venv/bin/python benchmarks/bench_order2_base.py [--tree DIR ...] [--rounds 1] [--repeat 5]

Each tree (default this working tree; ``--tree DIR`` adds another checkout, e.g.
``git archive main | tar -x -C /tmp/main``) runs in a fresh child interpreter with
``PYTHONPATH`` set to it, the trees alternating ``--rounds`` times, kernels warmed
first; each row is the CPU seconds of one call, min / median over ``--repeat``
parameter points (new ones each time) and the rounds:

* ``plain: order 2 after order 1``: :func:`numeric.second_order_float64` on a model
  of transitions only (a conservation law, a start given) right after
  ``numeric.solve(..., precision="float64")`` at the same point;
* ``plain: order 2 again``: the same call repeated;
* ``sir: order 2 after order 1``: the same on the library SIR (reference point);
* ``supermarket b=10: order 2`` / ``again``: its own fixed point (the fast path's);
* ``supermarket b=10: solve 30 digits``: ``numeric.solve`` on the fast path.

The digests of the numbers (``c2`` and ``c``) are printed per tree: equal trees
give equal digests.
"""

from __future__ import annotations

import os
import statistics

from bench_warm_routes import ROOT, tree_parser, tree_runs

CHILD = """
import hashlib, json, time
import sympy as sp
import numeric
from derive import Model, Transition
from derive.models import load_model
from numeric.meanfield.stationary import second_order_float64
s, i = sp.symbols("s i")
beta, gamma, a = sp.symbols("beta gamma a")
plain = Model("plain_si", (s, i), (beta, gamma, a),
              [Transition((-1, 1), (beta * i + a) * s), Transition((1, -1), gamma * i)])
sir, sm = load_model("sir"), load_model("supermarket", b=10)
start = ["0.9", "0.1"]
def timed(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out
rows, numbers = {}, []
def row(name, fn):
    dt, out = timed(fn)
    rows.setdefault(name, []).append(dt)
    numbers.append(repr(out["c2"]) if isinstance(out, dict) else str(out.constant))
second_order_float64(plain, {"beta": "2", "gamma": "1", "a": "0.1"}, start=start)  # warm
second_order_float64(sir, {"beta": "2", "gamma": "1", "rho": "0.5", "a": "0.1"})
second_order_float64(sm, {"lam": "0.5"})
numeric.solve(sm, {"lam": "0.5"}, dps=30)
for k in range(REPEAT):
    p = {"beta": f"{2.5 + k / 8}", "gamma": "1", "a": "0.1"}
    numeric.solve(plain, p, start=start, precision="float64")
    row("plain: order 2 after order 1", lambda: second_order_float64(plain, p, start=start))
    row("plain: order 2 again", lambda: second_order_float64(plain, p, start=start))
    q = {"beta": f"{3 + k / 8}", "gamma": "1", "rho": "0.5", "a": "0.1"}
    numeric.solve(sir, q, precision="float64")
    row("sir: order 2 after order 1", lambda: second_order_float64(sir, q))
    lam = {"lam": f"{0.6 + k / 50}"}
    row("supermarket b=10: order 2", lambda: second_order_float64(sm, lam))
    row("supermarket b=10: order 2 again", lambda: second_order_float64(sm, lam))
    row("supermarket b=10: solve 30 digits", lambda: numeric.solve(sm, lam, dps=30))
digest = hashlib.sha256("|".join(numbers).encode()).hexdigest()[:16]
print(json.dumps({"rows": rows, "digest": digest}))
"""


def main() -> None:
    ap = tree_parser(__doc__)
    ap.add_argument("--repeat", type=int, default=5, help="parameter points per round (5)")
    args = ap.parse_args()
    trees = [*args.tree, ROOT]
    runs = tree_runs(trees, args.rounds, ["-c", CHILD.replace("REPEAT", str(max(1, args.repeat)))])
    print(f"CPU ms per call (min / median of {args.repeat} points x {args.rounds} rounds)")
    print(f"  {'':36s}" + "".join(f"{os.path.basename(t.rstrip('/'))[:16]:>18s}" for t in trees))
    for name in runs[0][0]["rows"]:
        cells = []
        for rs in runs:
            times = [1e3 * v for r in rs for v in r["rows"][name]]
            cells.append(f"{min(times):8.2f} /{statistics.median(times):7.2f}")
        print(f"  {name:36s}" + "".join(f"{c:>18s}" for c in cells))
    for t, rs in zip(trees, runs, strict=True):
        print(f"  digest of c2 and c ({os.path.basename(t.rstrip('/'))}): {rs[0]['digest']}")


if __name__ == "__main__":
    main()
