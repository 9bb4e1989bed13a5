"""What preparing a model costs each route, before and after the one prepared problem
(issue 31, stop 42).

    .venv/bin/python benchmarks/bench_prepared_problem.py --tree /tmp/main [--reps 5]

Each repetition runs one fresh child interpreter per tree (this working tree and each
``--tree DIR``, e.g. ``git archive main | tar -x -C /tmp/main``), the trees alternating,
with ``PYTHONPATH`` set to the tree.  The child warms the kernels of a plain
two-state model (transitions only, a conservation law) and of the library SIR, then
times, in CPU seconds per call:

* ``float64 new point``: ``numeric.solve(..., precision="float64")`` at a new
  parameter value each call (a cold float64 problem, as a loop over values builds);
* ``float64 again``: the same call repeated (a warm call);
* ``order 1 new point``: ``numeric.solve(..., dps=15)`` at a new value each call;
* ``exact new point``: ``mfstein.exact(..., N=10)`` at a new value each call;
* ``certify``: ``solution.certify()`` of an order-1 solution.

The table gives min and median over the repetitions and the ratio of the medians
(tree / this tree).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, time, warnings
warnings.simplefilter("ignore")
import sympy as sp
import mfstein as mf
import numeric
from derive import Model, Transition
from derive.models import load_model

s, i = sp.symbols("s i"); beta, gamma, a = sp.symbols("beta gamma a")
plain = Model("plain_si", (s, i), (beta, gamma, a),
              [Transition((-1, 1), (beta * i + a) * s), Transition((1, -1), gamma * i)])
start = ["0.9", "0.1"]
sir = load_model("sir")

def point(k):
    return {"beta": f"2.{k:03d}", "gamma": "1", "a": "0.1"}

def per_call(fn, n):
    t = time.process_time()
    for k in range(n):
        fn(k)
    return (time.process_time() - t) / n

numeric.solve(plain, point(999), start=start, precision="float64")
numeric.solve(plain, point(998), start=start, dps=15)
mf.exact(plain, point(997), N=10, start=start)
numeric.solve(sir, {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}, precision="float64")
one = numeric.solve(plain, point(996), start=start, dps=15)
one.certify()
out = {
    "float64 new point": per_call(
        lambda k: numeric.solve(plain, point(k), start=start, precision="float64"), 40),
    "float64 again": per_call(
        lambda k: numeric.solve(plain, point(0), start=start, precision="float64"), 40),
    "SIR float64 new point": per_call(lambda k: numeric.solve(
        sir, {"beta": f"3.{k:03d}", "gamma": "1", "rho": "0.5", "a": "0.1"},
        precision="float64"), 40),
    "order 1 new point": per_call(
        lambda k: numeric.solve(plain, point(100 + k), start=start, dps=15), 10),
    "exact new point": per_call(
        lambda k: mf.exact(plain, point(200 + k), N=10, start=start), 10),
    "certify": per_call(lambda k: one.certify(), 5),
}
print(json.dumps(out))
"""


def run(tree: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=tree)
    done = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, cwd=tree, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"{tree}: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], help="another checkout")
    parser.add_argument("--reps", type=int, default=5, help="repetitions per tree")
    args = parser.parse_args()
    trees = [ROOT, *args.tree]
    times: dict[str, dict[str, list[float]]] = {t: {} for t in trees}
    for _ in range(args.reps):
        for tree in trees:  # alternating
            for name, value in run(tree).items():
                times[tree].setdefault(name, []).append(value)
    names = list(times[ROOT])
    head = f"{'ms per call':<24}" + "".join(f"{os.path.basename(t) or t:>26}" for t in trees)
    print(head + "".join(f"{'ratio':>9}" for _ in args.tree))
    for name in names:
        cells, meds = [], []
        for tree in trees:
            v = times[tree][name]
            meds.append(statistics.median(v))
            cells.append(f"{1e3 * min(v):10.2f} / {1e3 * meds[-1]:10.2f}")
        ratios = "".join(f"{m / meds[0]:9.2f}" for m in meds[1:])
        print(f"{name:<24}" + "".join(f"{c:>26}" for c in cells) + ratios)
    print("(min / median over the repetitions; ratio: median of the tree / this tree)")


if __name__ == "__main__":
    main()
