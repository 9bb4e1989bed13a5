"""A new model's first solve with an empty cache: CPU seconds and how many versions of
its generated numba kernels were compiled, this tree against another, side by side.

    .venv/bin/python benchmarks/bench_first_model_solve.py --tree /tmp/before52 [--repeat 3]

Each run is a fresh interpreter with its own empty kernel cache (``MFSTEIN_CACHE_DIR``),
the trees alternating.  Cases: the random cache model of 10 items and 5 slots (20
states, a library model) and a 13-site ring written as a plain model (13 states: the
smallest size whose float64 kernels are numba's, ``LAMBDA_MAX_B = 12``), both solved at
15 digits.  ``versions`` counts the compiled versions of ``f``, ``jac`` and ``rates``
(stop 52: each was compiled twice, once for read-only parameter arrays and once for
writable ones); ``digest`` is a hash of ``s*`` and ``V``, which must agree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHILD = """
import hashlib, json, sys, time
import sympy as sp
from derive import Model, Transition
from derive.models import load_model
from numeric import solve

def ring(n):
    x, lam = sp.symbols(f"x0:{n}"), sp.Symbol("lam")
    moves = []
    for k in range(n):
        e = tuple(1 if j == k else 0 for j in range(n))
        down = tuple(-v for v in e)
        moves += [Transition(e, lam * (1 - x[k])), Transition(down, x[k] * (1 + x[k - 1]))]
    return Model("ring", x, (lam,), moves)

case = sys.argv[1]
if case == "cache":
    model, params, start = load_model("cache_random", n=10, m=5, alpha="0.5"), {}, None
else:
    model, params, start = ring(13), {"lam": "0.8"}, ",".join(["0.3"] * 13)
t = time.process_time()
sol = solve(model, params, start=start, dps=15)
cpu = time.process_time() - t
k = model.kernels("numba")
versions = sum(len(getattr(k, name).signatures) for name in ("f", "jac", "rates"))
text = ",".join(str(v) for v in [*sol.s_star, *sol.V])
print(json.dumps({"cpu": cpu, "versions": versions,
                  "digest": hashlib.sha256(text.encode()).hexdigest()[:16]}))
"""


def run(tree: Path, case: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PYTHONPATH": str(tree), "MFSTEIN_CACHE_DIR": cache}
        out = subprocess.run(
            [sys.executable, "-c", CHILD, case],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=tree,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, required=True, help="the other tree (git archive)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    trees = {"this tree": HERE.parent, "other tree": args.tree}
    print(f"{'case':<8} {'tree':<11} {'CPU s min / median':>20} {'versions':>9} {'digest':>17}")
    for case in ("cache", "ring13"):
        rows: dict[str, list[dict]] = {name: [] for name in trees}
        for i in range(args.repeat):
            order = list(trees.items()) if i % 2 == 0 else list(trees.items())[::-1]
            for name, tree in order:
                rows[name].append(run(tree, case))
        for name, got in rows.items():
            cpu = [r["cpu"] for r in got]
            print(
                f"{case:<8} {name:<11} {min(cpu):>9.2f} / {statistics.median(cpu):<8.2f}"
                f" {got[0]['versions']:>9} {got[0]['digest']:>17}"
            )


if __name__ == "__main__":
    main()
