"""The event loops of this checkout against those of an earlier commit, side by side.

For a change that should move code but not speed or numbers (a shared ``@njit``
helper in place of a copied block): each case is ``sim.simulate`` called
``--events / 1e6`` times with ``steps=1e6`` (``reps=1, workers=1``, a fixed seed:
the run stays in the process) in a new process on the checkout and on
``--against REV`` (extracted with ``git archive`` into a temporary folder), the two
alternating ``--repeat`` times; a process first makes a short call of the same case
(compiles or loads the loop), then times the long ones (CPU seconds of the process).
The table gives the best CPU nanoseconds per event of each and whether the two
results agree bit for bit (every field but the timings).

Cases: SIR and JIQ (lam = 0.9; four of its intensities are not polynomials, so
the interpreter runs their programs), N = 1000, on the interpreted loop
(:mod:`sim.table_loop`) and on their own compiled loop (:mod:`sim.generic_kernels`);
the supermarket (b = 10, lam = 0.9, N = 1000) on its compiled loop (the table-driven
one: its unrolled loop is too long) and on the aggregated and the per-server loop.

Usage::

    .venv/bin/python benchmarks/bench_loop_versions.py --against main [--events 2e6]
        [--repeat 3] [--only interpreted]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SIR = "'sir', {'beta': '3', 'gamma': '1', 'rho': '0.5', 'a': '0.1'}, N=1000"
SUPERMARKET = "'supermarket', {'b': 10, 'lam': '0.9'}, N=1000"
JIQ = "'jiq', {'lam': '0.9'}, N=1000"
#: name -> (model arguments of ``sim.simulate``, engine)
CASES = {
    "SIR interpreted": (SIR, "interpreted"),
    "SIR compiled": (SIR, "generic"),
    "JIQ interpreted": (JIQ, "interpreted"),
    "JIQ compiled": (JIQ, "generic"),
    "supermarket compiled": (SUPERMARKET, "generic"),
    "supermarket aggregated": (SUPERMARKET, "aggregated"),
    "supermarket per-server": (SUPERMARKET, "per-server"),
}

#: Events of one call: ``sim.runner.INLINE_EVENTS``, the most a run keeps in its own
#: process (a larger one forks workers, whose CPU time this process does not see).
INLINE_EVENTS = 1_000_000

CHILD = """
import hashlib, json, time
import sim

STEPS = {steps}


def call(steps):
    return sim.simulate({model}, steps=steps, reps=1, workers=1, seed=7, engine={engine!r})

def numbers(x):
    if isinstance(x, dict):
        return {{k: numbers(v) for k, v in x.items() if "second" not in k}}
    return [numbers(v) for v in x] if isinstance(x, list) else x

call(20_000)
c0 = time.process_time()
for _ in range({calls}):
    r = call(STEPS)
cpu = time.process_time() - c0
text = json.dumps(numbers(r.to_dict()), sort_keys=True, default=repr)
print(json.dumps({{"cpu": cpu, "hash": hashlib.sha256(text.encode()).hexdigest()}}))
"""


def run_child(root: str, model: str, engine: str, events: int) -> dict:
    """CPU seconds and result hash of one case in a new process on the code at ``root``."""
    env = dict(os.environ, PYTHONPATH=root)
    calls = max(1, round(events / INLINE_EVENTS))
    code = CHILD.format(model=model, engine=engine, steps=INLINE_EVENTS, calls=calls)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def extract(rev: str, into: str) -> str:
    """The tree of ``rev`` written below ``into`` (its path)."""
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    return into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", required=True, help="the earlier commit (a git revision)")
    ap.add_argument("--events", type=float, default=2e6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", help="only the cases whose name contains this text")
    args = ap.parse_args()
    events = int(args.events)
    cases = {k: v for k, v in CASES.items() if args.only is None or args.only in k}
    print(f"{events:.0e} events, best of {args.repeat}, load {os.getloadavg()[0]:.1f}")
    head = f"{args.against + ' ns':>12} {'this ns':>9} {'ratio':>6} {'same numbers':>12}"
    print(f"{'case':<24} {head}")
    with tempfile.TemporaryDirectory() as tmp:
        old = extract(args.against, tmp)
        for name, (model, engine) in cases.items():
            best = {"old": float("inf"), "new": float("inf")}
            hashes = {"old": set(), "new": set()}
            calls = max(1, round(events / INLINE_EVENTS))
            for _ in range(args.repeat):
                for key, root in (("old", old), ("new", ROOT)):
                    r = run_child(root, model, engine, events)
                    best[key] = min(best[key], r["cpu"] / (calls * INLINE_EVENTS) * 1e9)
                    hashes[key].add(r["hash"])
            same = "yes" if hashes["old"] == hashes["new"] and len(hashes["new"]) == 1 else "NO"
            ratio = best["new"] / best["old"]
            print(f"{name:<24} {best['old']:12.1f} {best['new']:9.1f} {ratio:6.2f} {same:>12}")


if __name__ == "__main__":
    main()
