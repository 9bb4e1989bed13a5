"""A warm ``sim.simulate`` call, this tree against another, side by side (issue 31).

Each round starts one process per tree (alternating, ``--rounds`` rounds); a process
builds the models, calls ``simulate`` once (compiling and preparing), then times
``--calls`` further calls with the same inputs (``steps=2000, reps=1, workers=1``, so
the event loop is a small part) and reports their minimum and median wall time.  The
table gives, per model, the minimum over rounds of each tree's minimum and the
median of its medians, and the ratio of this tree to the other.

Models: the library's SIR (a model object), a plain SIS written as a researcher writes
it (transitions only, ``s + i`` conserved; the generic engine) and the supermarket
``b = 10`` (its aggregated fast path).

Usage::

    .venv/bin/python benchmarks/bench_sim_warm_call.py --before /tmp/before47 [--rounds 3]
        [--calls 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time
import sympy as sp
from derive import Model, Transition
from derive.models import load_model
from sim import simulate

def plain():
    s, i = sp.symbols("s i")
    beta, gamma, eps = sp.symbols("beta gamma eps")
    return Model("plain_sis", (s, i), (beta, gamma, eps),
                 [Transition((-1, 1), (beta * i + eps) * s), Transition((1, -1), gamma * i)])

cases = {
    "sir": (load_model("sir"), {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}, 100),
    "plain": (plain(), {"beta": "2", "gamma": "1", "eps": "1/10"}, 50),
    "supermarket": (load_model("supermarket", b=10), {"lam": "0.9"}, 100),
}
out = {}
calls = int(sys.argv[1])
for name, (model, params, N) in cases.items():
    run = lambda: simulate(model, params, N=N, steps=2000, reps=1, seed=1, workers=1)
    run()
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    out[name] = [min(times), sorted(times)[len(times) // 2]]
print(json.dumps(out))
"""


def child(tree: Path, calls: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(calls)],
        cwd=tree, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the other tree (e.g. /tmp/before47)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=20)
    a = ap.parse_args()
    trees = {"before": Path(a.before).resolve(), "after": Path(__file__).resolve().parents[1]}
    got: dict[str, list[dict]] = {k: [] for k in trees}
    for _ in range(a.rounds):
        for label, tree in trees.items():  # alternating
            got[label].append(child(tree, a.calls))
    print(f"{'model':<12} {'before min':>11} {'after min':>10} {'ratio':>6} "
          f"{'before med':>11} {'after med':>10} {'ratio':>6}  (ms, warm call)")  # fmt: skip
    for name in got["after"][0]:
        mins = {k: min(r[name][0] for r in v) for k, v in got.items()}
        meds = {k: statistics.median(r[name][1] for r in v) for k, v in got.items()}
        print(
            f"{name:<12} {1e3 * mins['before']:>11.2f} {1e3 * mins['after']:>10.2f} "
            f"{mins['after'] / mins['before']:>6.2f} {1e3 * meds['before']:>11.2f} "
            f"{1e3 * meds['after']:>10.2f} {meds['after'] / meds['before']:>6.2f}"
        )


if __name__ == "__main__":
    main()
