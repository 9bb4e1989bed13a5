"""Are the printed results of two trees the same?  The default (working-precision)
route at several models, orders and precisions, in one fresh process per tree.

Run:  .venv/bin/python benchmarks/same_digits.py --before /tmp/before

"before" is a committed tree (``git -C /work/main archive HEAD | tar -x -C DIR``),
"after" this working tree.  For every case the script compares

* ``to_dict()`` as JSON (the digits each result claims, its errors and notes), which
  must be equal, and
* every number at the working precision (``s_star``, ``W``, ``V``, ``P``, the
  constants, ``A``/``B``/``c2`` at order 2), in full, to show how many cases differ
  beyond the printed digits (float64 seeds of the iterative refinement may move
  the last bits of the working precision, never a printed digit).

The exit status is 1 when any printed result differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
#: (label, model name, its options and params, keyword arguments of ``numeric.solve``).
CASES: list[tuple[str, str, dict, dict]] = [
    ("sir", "sir", SIR, {}),
    ("sir dps 60", "sir", SIR, {"dps": 60}),
    ("sir order 2", "sir", {"beta": "2", "gamma": "1", "rho": "0.3", "a": "0.2"}, {"order": 2}),
    ("sis", "sis", {"a": "0.1", "beta": "2", "gamma": "1"}, {"order": 2}),
    ("jsq_L L=2 b=6", "jsq_L", {"L": "2", "b": "6", "alpha": "0.6", "beta": "1.2"}, {}),
    ("jsq_L L=3", "jsq_L", {"L": "3", "alpha": "0.7", "beta": "1"}, {"dps": 20}),
    ("jiq", "jiq", {"lam": "0.8"}, {}),
    ("bike_sharing K=10", "bike_sharing", {"lam": "1", "mu": "1", "s": "3"}, {}),
    (
        "two speeds",
        "power_of_d_two_speeds",
        {"lam": ".7", "mu1": "1", "mu2": "2", "gamma": ".5"},
        {},
    ),
    ("supermarket b=5 general", "supermarket", {"b": "5", "lam": "0.9"}, {"route": "general"}),
    ("supermarket b=8 order 2", "supermarket", {"b": "8", "lam": "0.7"}, {"order": 2}),
    ("supermarket b=20 general", "supermarket", {"b": "20", "lam": "0.99"}, {"route": "general"}),
    ("two-speed classes K=4", "power_of_two_heterogeneous", {"K": "4", "lam": "0.8"}, {}),
    ("cache_random", "cache_random", {"n": "6", "m": "3"}, {"dps": 25}),
    ("sir observables", "sir", SIR, {"observables": ["S*I", "quadratic"], "order": 2}),
]

#: The fields compared in full (those a result has).
FIELDS = ("s_star", "W", "V", "P", "constant", "A", "B", "c2", "constant2")

CHILD = r"""
import json, sys
import mpmath
import numeric

def full(v):
    if isinstance(v, mpmath.matrix):
        return [full(v[i, j]) for i in range(v.rows) for j in range(v.cols)]
    if isinstance(v, (list, tuple)):
        return [full(x) for x in v]
    if isinstance(v, (mpmath.mpf, mpmath.mpc)):
        return mpmath.nstr(v, 200, min_fixed=1, max_fixed=0)
    return repr(v)

out = {}
for label, name, values, kw in json.loads(sys.argv[1]):
    sol = numeric.solve(name, values, **kw)
    nums = {f: full(getattr(sol, f)) for f in FIELDS if getattr(sol, f, None) is not None}
    out[label] = {"dict": json.dumps(sol.to_dict(), sort_keys=True, default=str), "full": nums}
print(json.dumps(out))
"""


def run(tree: str) -> dict:
    """The results of every case, solved in a fresh process on ``tree``."""
    code = f"FIELDS = {FIELDS!r}\n" + CHILD
    env = dict(os.environ, PYTHONPATH=tree)
    r = subprocess.run(
        [sys.executable, "-c", code, json.dumps(CASES)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if r.returncode:
        raise SystemExit(f"the cases failed in {tree}:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", default="/tmp/before")
    a = p.parse_args()
    before, after = run(a.before), run(ROOT)
    printed_differ = 0
    print(f"{'case':<30}{'to_dict':>10}{'numbers (full)':>18}  fields differing beyond print")
    for label, *_ in CASES:
        b, f = before[label], after[label]
        same_dict = b["dict"] == f["dict"]
        printed_differ += not same_dict
        moved = [k for k in b["full"] if b["full"][k] != f["full"].get(k)]
        full_cell = "identical" if not moved else "last bits"
        shown = f"{moved}" if moved else f"({len(b['full'])} fields)"
        print(f"{label:<30}{'same' if same_dict else 'DIFFER':>10}{full_cell:>18}  {shown}")
    print(f"{len(CASES)} cases; to_dict differs in {printed_differ}")
    sys.exit(1 if printed_differ else 0)


if __name__ == "__main__":
    main()
