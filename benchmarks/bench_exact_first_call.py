"""Where a new N's first exact call goes (issue 34): SIR at a new ``N`` in a fresh process,
stage by stage, this tree beside another (``--before``), the trees taking turns.

Each child imports what :mod:`bench_exact_scale`'s ``sir`` child imports before its timer
(numba, NumPy, :mod:`scipy.sparse.linalg`, the lazy :mod:`numeric.exact`,
:mod:`derive.models`), after a child of its own removed the call's record (a new ``N``: the
cache holds the model's record at another ``N``).  Then, by the calling thread's CPU
(:func:`time.thread_time`, which idle BLAS threads do not touch):

``imports``
    The modules of the exact route the first call imports (those of its tree; for a tree
    whose NumPy search reads :mod:`scipy.sparse.csgraph`, that package too).
``keys`` .. ``result``
    The call's stages, each wrapped: the keys of its records (the code digest
    included), the record at another ``N`` read, the search, ``Q^T``, the closed classes,
    the sparse LU (:func:`numeric.exact.general.stationary_checked`), the record written
    with its arrays, the result; ``other`` the rest of the call.

Min / median of ``--repeat`` children per tree, in milliseconds.  Warm the cache first
(``bench_exact_scale.py`` does; or one call of each tree at any ``N``).

    .venv/bin/python benchmarks/bench_exact_first_call.py --before /tmp/before47 --repeat 20
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCALE = Path(__file__).resolve().parent / "bench_exact_scale.py"

CHILD = r"""
import functools, json, sys, time
import numba, numpy as np, scipy.sparse.linalg
import numeric.exact
from derive.models import load_model

T = time.thread_time
t0 = T()
import numeric.exact.general as g, numeric.exact.small as sm, mfstein.ground.generated
from numeric.exact import kept
if not hasattr(sm, "queue_order"):  # a tree whose search reads SciPy's graph routines
    import scipy.sparse.csgraph
acc = {"imports": T() - t0}
STAGES = [(kept, "keys", "keys"), (kept, "load", "load"), (sm, "one_pass", "search"),
          (sm, "transposed_generator", "generator"), (g, "_closed_classes", "classes"),
          (g, "stationary_checked", "LU"), (kept, "save", "write"), (g, "_result", "result")]
for mod, name, label in STAGES:
    def timed(*a, _f=getattr(mod, name), _label=label, **k):
        s = T()
        try:
            return _f(*a, **k)
        finally:
            acc[_label] = acc.get(_label, 0.0) + T() - s
    setattr(mod, name, functools.wraps(getattr(mod, name))(timed))
s = T()
numeric.exact.solve("sir", {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"},
                    N=int(sys.argv[1]))
call = T() - s
acc["other"] = call - sum(v for k, v in acc.items() if k != "imports")
acc["call"] = call
acc["imports + call"] = acc["imports"] + call
print(json.dumps(acc))
"""


def _child(tree: Path, N: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS="1")
    env["PYTHONPYCACHEPREFIX"] = str(Path("/tmp") / "mfstein-bench-pycache" / tree.name)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    run = {"env": env, "capture_output": True, "text": True, "check": True, "cwd": "/tmp"}
    subprocess.run([sys.executable, str(SCALE), "--child", "forget", str(N)], **run)
    out = subprocess.run([sys.executable, "-c", CHILD, str(N)], **run)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="another checkout, run beside")
    ap.add_argument("--repeat", type=int, default=10, help="children per tree")
    ap.add_argument("--N", type=int, default=100, help="SIR's N")
    args = ap.parse_args()
    trees = [("after", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    rows: dict[str, dict[str, list[float]]] = {label: {} for label, _ in trees}
    for _ in range(args.repeat):
        for label, tree in trees:
            for stage, value in _child(tree, args.N).items():
                rows[label].setdefault(stage, []).append(1e3 * value)
    print(f"SIR N = {args.N}, a new N; main-thread CPU ms, min / median of {args.repeat}")
    print(f"{'stage':>15}" + "".join(f"{label:>20}" for label, _ in trees))
    for stage in rows["after"]:
        cells = [rows[label].get(stage) for label, _ in trees]
        print(
            f"{stage:>15}"
            + "".join(
                f"{min(c):>10.2f} / {statistics.median(c):>6.2f}" if c else f"{'-':>20}"
                for c in cells
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
