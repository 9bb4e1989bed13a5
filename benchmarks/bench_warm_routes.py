"""Warm routes on one model (issues 31, 34): what a repeated or extended call costs.

    .venv/bin/python benchmarks/bench_warm_routes.py [--tree DIR ...] [--dps 30] [--rounds 1]

Each tree (default this working tree; ``--tree DIR`` adds a checkout of another
revision, e.g. ``git archive main | tar -x -C /tmp/main``) runs in a fresh child
interpreter with ``PYTHONPATH`` set to it, one after the other in one run (``--rounds``
times, the trees alternating; min / median printed), on the
library SIR at ``--dps`` digits (kernels warmed first by a call at other
parameters), and prints one table:

* ``order 1``: ``numeric.solve(sir, params, dps=dps)`` at new parameters;
* ``order 2 after order 1``: the same call with ``order=2`` next (the issue's goal:
  only the order-2 part is paid);
* ``order 2 alone``: ``order=2`` at other new parameters, nothing prepared before;
* ``order 1 again``: the first call repeated (a warm call: nothing to prepare);
* ``transient again``: ``numeric.transient`` at ``t = 0, 1, 2`` asked a second time;
* ``... M matrix``: order 1, then order 2, with the observable given as a matrix;
* ``truncated ...``: the supermarket with b = 40 on the general route (truncated at
  its negligible levels; a fresh model object, its kernels warmed by another):
  order 1, order 1 again, order 2 after order 1.

CPU seconds of the child (the machine may be shared).  The ``c2`` of the two
order-2 rows is printed to show they are the same numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import json, time
import numeric
from derive.models import load_model
m = load_model("sir")
base = {"gamma": "1", "rho": "0.5", "a": "0.1"}
dps = DPS
def timed(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out
numeric.solve(m, {**base, "beta": "2"}, dps=dps, order=2)  # kernels compiled and loaded
numeric.transient(m, {**base, "beta": "2"}, times=[0, 1, 2])
one = {**base, "beta": "3.25"}
other = {**base, "beta": "3.5"}
rows = {}
rows["order 1"], _ = timed(lambda: numeric.solve(m, one, dps=dps))
rows["order 2 after order 1"], a = timed(lambda: numeric.solve(m, one, dps=dps, order=2))
rows["order 2 alone"], b = timed(lambda: numeric.solve(m, other, dps=dps, order=2))
rows["order 1 again"], _ = timed(lambda: numeric.solve(m, one, dps=dps))
numeric.transient(m, one, times=[0, 1, 2])
rows["transient again"], _ = timed(lambda: numeric.transient(m, one, times=[0, 1, 2]))
M3 = [["2", "1/2", "0"], ["1/2", "1", "0"], ["0", "0", "1"]]
rows["order 1, M matrix"], _ = timed(lambda: numeric.solve(m, other, dps=dps, M=M3))
rows["order 2 after 1, M matrix"], _ = timed(
    lambda: numeric.solve(m, other, dps=dps, order=2, M=M3)
)
cut = {"lam": "0.85"}
numeric.solve(load_model("supermarket", b=40), cut, dps=dps, order=2, route="general")
import derive.models  # another object, nothing of it prepared: forget the one kept by name
getattr(derive.models, "clear_models", lambda: None)()  # (a tree without the cache: fresh)
sm = load_model("supermarket", b=40)
rows["truncated order 1"], _ = timed(lambda: numeric.solve(sm, cut, dps=dps, route="general"))
rows["truncated order 1 again"], _ = timed(
    lambda: numeric.solve(sm, cut, dps=dps, route="general")
)
rows["truncated order 2 after 1"], t = timed(
    lambda: numeric.solve(sm, cut, dps=dps, order=2, route="general")
)
print(json.dumps({"rows": rows, "c2": [str(a.c2), str(b.c2), str(t.c2)]}))
"""


def run_json(tree: str, argv: list[str]) -> dict:
    """``python *argv`` in a fresh interpreter with the library of ``tree``
    (``PYTHONPATH``, working directory): the JSON of its last printed line."""
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run(
        [sys.executable, *argv],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def tree_runs(trees: list[str], rounds: int, argv: list[str]) -> list[list[dict]]:
    """:func:`run_json` of ``argv`` in each tree, the trees alternating ``rounds`` times:
    one list of answers per tree."""
    runs: list[list[dict]] = [[] for _ in trees]
    for _ in range(max(1, rounds)):
        for k, t in enumerate(trees):
            runs[k].append(run_json(t, argv))
    return runs


def tree_parser(doc: str) -> argparse.ArgumentParser:
    """The command line of a script run beside other trees: ``--tree`` (repeatable)
    and ``--rounds``, described by the first line of ``doc``."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--tree", action="append", default=[], help="another checkout to compare")
    ap.add_argument("--rounds", type=int, default=1, help="rounds, the trees alternating (1)")
    return ap


#: Child code timing the calls of a dict ``calls`` (name -> ``call(k)``, ``k`` the
#: repetition, ``-1`` the warm-up): ``rows`` (the median ms of ``REPEAT`` calls per name)
#: and ``first`` (each warm-up's answer), for :func:`repeated_runs`' children.
MEDIAN_MS = """
import statistics, time
def median_ms(calls):
    rows, first = {}, {}
    for name, call in calls.items():
        first[name] = call(-1)
        times = []
        for k in range(REPEAT):
            t = time.perf_counter()
            call(k)
            times.append(time.perf_counter() - t)
        rows[name] = 1e3 * statistics.median(times)
    return rows, first
"""


def repeated_runs(
    doc: str, child: str, repeat: int
) -> tuple[argparse.Namespace, list[str], list[list[dict]]]:
    """``(args, trees, runs)`` of a script timing ``--repeat`` calls per row (default
    ``repeat``, substituted for ``REPEAT`` in :data:`MEDIAN_MS` and the code ``child``,
    run after it): its command line
    (:func:`tree_parser`), the trees (``--tree`` ones, then this one) and
    :func:`tree_runs` of ``child``."""
    ap = tree_parser(doc)
    ap.add_argument("--repeat", type=int, default=repeat, help=f"calls per row ({repeat})")
    args = ap.parse_args()
    trees = [*args.tree, ROOT]
    code = (MEDIAN_MS + child).replace("REPEAT", str(args.repeat))
    return args, trees, tree_runs(trees, args.rounds, ["-c", code])


def median_table(doc: str, child: str, title: str, cell: str, shown: tuple[str, str]) -> None:
    """Run ``child`` in each tree (:func:`repeated_runs`, 20 calls per row by default) and
    print its table under ``title`` (:func:`print_rows`, cells ``cell``), then per tree
    the value its first answer has under the key ``shown[1]``, labelled ``shown[0]``
    (the same numbers in every tree)."""
    args, trees, runs = repeated_runs(doc, child, 20)
    print(f"{title}: ms per call (median of {args.repeat} calls;")
    print(f"min / median over {args.rounds} rounds, the trees alternating)")
    print_rows(trees, runs, 22, cell)
    for t, rs in zip(trees, runs, strict=True):
        print(f"  {shown[0]} ({os.path.basename(t.rstrip('/'))}): {rs[0][shown[1]]}")


def print_rows(
    trees: list[str], runs: list[list[dict]], width: int = 28, cell: str = "{:8.3f} /{:7.3f}"
) -> None:
    """The table of :func:`tree_runs`' answers (each ``{"rows": {name: time}}``): one line
    per row name, one column per tree, each cell ``cell`` of the min and median."""
    column = len(cell.format(0, 0)) + 1
    names = "".join(f"{os.path.basename(t.rstrip('/'))[:16]:>{column}s}" for t in trees)
    print(f"  {'':{width}s}" + names)
    for name in runs[0][0]["rows"]:
        cells = []
        for rs in runs:
            times = [r["rows"][name] for r in rs]
            cells.append(cell.format(min(times), statistics.median(times)))
        print(f"  {name:{width}s}" + "".join(f"{c:>{column}s}" for c in cells))


def main() -> None:
    ap = tree_parser(__doc__)
    ap.add_argument("--dps", type=int, default=30, help="digits (30)")
    args = ap.parse_args()
    trees = [*args.tree, ROOT]
    runs = tree_runs(trees, args.rounds, ["-c", CHILD.replace("DPS", str(args.dps))])
    print(f"SIR at {args.dps} digits, CPU seconds per call (min / median of {args.rounds})")
    print_rows(trees, runs)
    for t, rs in zip(trees, runs, strict=True):
        name, r = os.path.basename(t.rstrip("/")), rs[0]
        print(f"  c2 ({name}): after order 1 {r['c2'][0]}, alone {r['c2'][1]}")
        print(f"  c2 ({name}): truncated b=40 {r['c2'][2]}")


if __name__ == "__main__":
    main()
