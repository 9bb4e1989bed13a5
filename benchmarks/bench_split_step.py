"""The exact solver's BiCGSTAB iterations of this checkout against another tree's.

:func:`numeric.exact.fused.split_step` is one iteration of the compiled BiCGSTAB on
the split system (:mod:`numeric.exact.fused`).  Both versions are loaded in one
process (``--tree``'s ``numeric/exact/fused.py`` under another module name,
:func:`bench_forward_sweep.load_fused`) and run on the same chain: the supermarket's
(``b = 3``, ``d = 2``, ``lam = 0.9``) transposed generator at ``--N``, built as every
exact solve builds it (:class:`numeric.exact.general.Chain`: level order, the pinned
state nearest ``N s*``), from all ones.  Each run is :func:`~numeric.exact.fused.split_start`
and ``--iterations`` calls of ``split_step``; first the two runs' iterates ``z`` and
residuals are compared bit for bit (as 64-bit words) and their recursive residuals'
norms after every iteration; then each repetition times the iterations of the old and
of the new run, in alternating order, in CPU seconds of the calling thread.  The table
gives milliseconds per iteration and nanoseconds per state and iteration, min and
median over ``--repeat`` repetitions, and new / old of each.

Usage::

    git -C /work/main archive <rev> | tar -x -C /tmp/before
    .venv/bin/python benchmarks/bench_split_step.py --tree /tmp/before [--N 120]
        [--iterations 20] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_forward_sweep import arguments, load_fused

from numeric.exact import fused


def chain(N: int) -> tuple[Any, int]:
    """The supermarket's ``Q^T`` (sorted rows) and pinned state at ``N``, as the exact
    solve assembles them."""
    import numeric
    from derive import supermarket
    from numeric.exact.general import Chain

    model = supermarket(3, 2)
    s = np.array([float(v) for v in numeric.solve(model, {"lam": "0.9"}, dps=20).s_star])
    ch = Chain.setup(model, N, {"lam": "0.9"}, None, None, None)
    _, QT, _, _, r = ch._assemble(N * s)
    if not QT.has_sorted_indices:
        QT.sort_indices()
    return QT, r


class Run:
    """One BiCGSTAB run of a ``fused`` module on ``Q^T``: its seven vectors and
    scalars, started from all ones (the old module's ``split_start`` has no ``sc``
    and its ``sc`` three entries; this checkout's kernels read a copy of ``Q^T`` in
    the triangles' layout, :func:`bench_forward_sweep.arguments`, an older tree's the
    CSR)."""

    def __init__(self, module: Any, QT: Any, r: int, stack: ExitStack) -> None:
        self.module, self.args = module, arguments(module, QT, r, stack)
        n = QT.shape[0]
        self.vectors = [np.empty(n) for _ in range(7)]
        self.ones = np.ones(n)

    def start(self) -> None:
        z, res, rhat, p, v, _, _ = self.vectors
        try:
            self.sc = np.empty(4)
            self.module.split_start(*self.args, self.ones, z, res, rhat, p, v, self.sc)
        except TypeError:  # a tree from before the next rho moved into the iteration
            self.sc = np.ones(3)
            self.module.split_start(*self.args, self.ones, z, res, rhat, p, v)

    def steps(self, k: int) -> tuple[list[float], float]:
        """``k`` iterations: their norms and the thread's CPU seconds."""
        norms = []
        t0 = time.thread_time()
        for _ in range(k):
            norms.append(self.module.split_step(*self.args, *self.vectors, self.sc))
        return norms, time.thread_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="root of the other checkout")
    ap.add_argument("--N", type=int, default=120, help="supermarket N (default 120)")
    ap.add_argument("--iterations", type=int, default=20, help="per timing (default 20)")
    ap.add_argument("--repeat", type=int, default=7, help="repetitions (default 7)")
    a = ap.parse_args()
    QT, r = chain(a.N)
    with tempfile.TemporaryDirectory(prefix="bench_split_step_") as into, ExitStack() as stack:
        runs = {
            "old": Run(load_fused(a.tree, into), QT, r, stack),
            "new": Run(fused, QT, r, stack),
        }
        for run in runs.values():  # compiled (or loaded from the cache) before any timing
            run.start()
            run.steps(1)
        norms, times = {}, {"old": [], "new": []}
        for i in range(a.repeat):
            order = ("old", "new") if i % 2 == 0 else ("new", "old")
            for label in order:
                runs[label].start()
                norms[label], seconds = runs[label].steps(a.iterations)
                times[label].append(seconds / a.iterations)
        same = norms["old"] == norms["new"] and all(
            np.array_equal(x.view(np.uint64), y.view(np.uint64))
            for x, y in zip(runs["old"].vectors[:6], runs["new"].vectors[:6], strict=True)
        )
    S = QT.shape[0]
    o, w = times["old"], times["new"]
    print(f"N = {a.N}, {S:,} states, {a.repeat} x {a.iterations} iterations from all ones")
    print("same bits | old ms/it min / median | new ms/it min / median | new/old min / median")
    print(
        f"{same!s:9s} | {min(o) * 1e3:8.2f} / {statistics.median(o) * 1e3:8.2f}     "
        f"| {min(w) * 1e3:8.2f} / {statistics.median(w) * 1e3:8.2f}     "
        f"| {min(w) / min(o):.3f} / {statistics.median(w) / statistics.median(o):.3f}"
    )
    per = [f"{min(x) / S * 1e9:.1f} / {statistics.median(x) / S * 1e9:.1f}" for x in (o, w)]
    print(f"ns per state and iteration: old {per[0]}, new {per[1]}")


if __name__ == "__main__":
    main()
