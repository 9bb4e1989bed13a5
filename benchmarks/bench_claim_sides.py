"""The core paper's claims, evaluated at the working precision and in Arb balls: this tree
against another (issue 31: one evaluator per claim over ``numeric.lemmas.sides.Sides``).

    .venv/bin/python benchmarks/bench_claim_sides.py --tree DIR [--rounds 5] [--b 8]

``--tree DIR`` is a checkout of another revision (``git archive main | tar -x -C
/tmp/main``).  Each round runs one fresh child interpreter per tree, alternating the
order, with ``PYTHONPATH`` set to it.  A child solves and certifies one grid point
(gamma = 0.1, alpha = 0.05, N = 100, buffer ``--b``, dps 30) once, outside the timing,
then times every registered claim at the working precision (a fresh ``Context`` around
the same solution: ``J``, ``P``, norms and eigenvalues recomputed, as in ``check``) and
every certified evaluator (a fresh ``CertifiedContext`` cache: Arb's eigenvalues
recomputed), three times each, and reports the fastest.  Printed: min and median over
the rounds of CPU seconds per tree, and the ratio this tree / other tree.
"""

from __future__ import annotations

import argparse
import os
import statistics

from bench_warm_routes import ROOT, run_json

CHILD = """
import json, time
from numeric.certified.enclosures import heavy_traffic_ball
from numeric.lemmas import get_claims
from numeric.lemmas.certified_claims import CertifiedContext, evaluate
from numeric.lemmas.runner import grid_params

grid = grid_params(gamma="0.1", alpha="0.05", N=[100], b=BUF, dps=30)
base = grid.context(100, lam_guard=20)
c = CertifiedContext(base, heavy_traffic_ball(grid.gamma, grid.alpha, 100), True)
claims = get_claims(None)

def working():
    ctx = grid.context(100, lam_guard=20)
    ctx.__dict__["sol"] = base.sol
    for claim in claims:
        claim.evaluate(ctx)

def balls():
    c._cache = {}
    for claim in claims:
        evaluate(claim, c, base)

def best(fn):
    times = []
    for _ in range(3):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)

working(), balls()  # kernels loaded
print(json.dumps({"working": best(working), "balls": best(balls)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="another checkout to compare")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (5)")
    ap.add_argument("--b", type=int, default=8, help="buffer size (8)")
    args = ap.parse_args()
    trees = [args.tree, ROOT]
    child = ["-c", CHILD.replace("BUF", str(args.b))]
    runs: dict[str, list[dict]] = {t: [] for t in trees}
    for r in range(args.rounds):
        for t in trees if r % 2 == 0 else trees[::-1]:
            runs[t].append(run_json(t, child))
    print(f"all claims at one point (b = {args.b}, N = 100, dps 30), CPU s, {args.rounds} rounds")
    print(f"  {'':10s}" + "".join(f"{os.path.basename(t.rstrip('/'))[:18]:>22s}" for t in trees))
    for key in ("working", "balls"):
        cells, mins = [], []
        for t in trees:
            values = [run[key] for run in runs[t]]
            mins.append(min(values))
            cells.append(f"{min(values):.4f} / {statistics.median(values):.4f}")
        print(
            f"  {key:10s}"
            + "".join(f"{c:>22s}" for c in cells)
            + f"   ratio {mins[1] / mins[0]:.2f}"
        )
    print("  (min / median; ratio = this tree's min / the other tree's min)")


if __name__ == "__main__":
    main()
