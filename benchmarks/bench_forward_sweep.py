"""The exact solver's two sweeps of this checkout against those of another tree.

:func:`numeric.exact.fused.sgs_in_place` (GMRES's preconditioner) and
:func:`numeric.exact.fused.split_apply` (BiCGSTAB's operator) each run a forward
sweep with ``D + L``; this checkout may write it once
(:func:`numeric.exact.fused.forward`).  Both versions are loaded in one process
(``--tree``'s ``numeric/exact/fused.py`` under another module name) and applied to the
same transposed generator (a random one: ``--n`` states, about ``--per-row`` entries
per row, column indices sorted, as the solver stores ``Q^T``).  First the outputs are
compared bit for bit (as 64-bit words, so that even the sign of a zero counts); then
each repetition times ``--calls`` calls of the old and of the new function, in
alternating order, in CPU seconds of the process.  The table gives milliseconds per
call, min and median over ``--repeat`` repetitions, and new / old of each.

Usage::

    git -C /work/main archive <rev> | tar -x -C /tmp/before
    .venv/bin/python benchmarks/bench_forward_sweep.py --tree /tmp/before [--n 300000]
        [--repeat 15] [--calls 10]
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from typing import Any

import numpy as np
import scipy.sparse as sps

from numeric.exact import fused, triangles


def load_fused(tree: str, into: str) -> Any:
    """``numeric/exact/fused.py`` of ``tree``, copied into the folder ``into`` (numba
    caches its loops next to it, not in ``tree``), as the module ``fused_before``."""
    path = shutil.copy(os.path.join(tree, "numeric", "exact", "fused.py"), into)
    spec = importlib.util.spec_from_file_location("fused_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["fused_before"] = module  # where numba's compiled loops look it up
    spec.loader.exec_module(module)
    return module


def generator_transpose(n: int, per_row: float) -> sps.csr_matrix:
    """A random generator's transpose, CSR with sorted rows (seed 4): about ``per_row``
    rates in ``(0, 1)`` per row, half of them within 1000 states of the diagonal."""
    rng = np.random.default_rng(4)
    m = int(n * per_row)
    rows = rng.integers(0, n, size=m)
    near = rng.integers(-1000, 1001, size=m)
    cols = np.where(np.arange(m) % 2 == 0, np.clip(rows + near, 0, n - 1), rng.integers(0, n, m))
    keep = rows != cols
    Q = sps.csr_matrix((rng.random(m)[keep], (rows[keep], cols[keep])), shape=(n, n))
    Q = Q + sps.diags(-np.asarray(Q.sum(axis=1)).ravel() - 1.0)
    QT = Q.T.tocsr()
    QT.sort_indices()
    return QT


def arguments(module: Any, QT: sps.csr_matrix, r: int, stack: ExitStack) -> tuple[Any, ...]:
    """The first arguments of ``module``'s kernels: ``(m, r)``, ``m`` a copy of ``QT``
    in the triangles' layout (:mod:`numeric.exact.triangles`) for as long as ``stack``
    is open, where the kernels take it (this checkout's), else ``(indptr, indices,
    data, r)`` (a tree from before)."""
    if next(iter(inspect.signature(module.matvec.py_func).parameters)) == "m":
        return stack.enter_context(triangles.split(QT.copy())), r
    return QT.indptr, QT.indices, QT.data, r


def calls(
    module: Any, name: str, QT: sps.csr_matrix, r: int, v: np.ndarray, stack: ExitStack
) -> Any:
    """A function of no arguments that applies ``module.name`` once; its output."""
    out, scratch = np.empty_like(v), np.empty_like(v)
    arrays = arguments(module, QT, r, stack)
    if name == "sgs_in_place":
        return lambda: module.sgs_in_place(*arrays, v, out), out
    return lambda: module.split_apply(*arrays, v, out, scratch), out


def cpu_ms(run: Any, k: int) -> float:
    t0 = time.process_time()
    for _ in range(k):
        run()
    return (time.process_time() - t0) / k * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="root of the other checkout")
    ap.add_argument("--n", type=int, default=300_000, help="states (default 300000)")
    ap.add_argument("--per-row", type=float, default=8.0, help="entries per row (default 8)")
    ap.add_argument("--repeat", type=int, default=15, help="repetitions (default 15)")
    ap.add_argument("--calls", type=int, default=10, help="calls per timing (default 10)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_forward_sweep_") as into, ExitStack() as stack:
        table(load_fused(a.tree, into), a, stack)


def table(before: Any, a: argparse.Namespace, stack: ExitStack) -> None:
    """Print the table (module docstring) of ``before`` against this checkout."""
    QT = generator_transpose(a.n, a.per_row)
    r = a.n // 3
    v = np.random.default_rng(5).standard_normal(a.n)
    print(f"n = {a.n}, {QT.nnz / a.n:.1f} entries per row, {a.repeat} x {a.calls} calls")
    print("function       | same bits | old ms min / median | new ms min / median | new/old")
    for name in ("sgs_in_place", "split_apply"):
        old, old_out = calls(before, name, QT, r, v, stack)
        new, new_out = calls(fused, name, QT, r, v, stack)
        old()
        new()  # compiled (or loaded from the cache) before any timing
        same = np.array_equal(old_out.view(np.uint64), new_out.view(np.uint64))
        times: dict[str, list[float]] = {"old": [], "new": []}
        for i in range(a.repeat):
            order = (("old", old), ("new", new)) if i % 2 == 0 else (("new", new), ("old", old))
            for label, run in order:
                times[label].append(cpu_ms(run, a.calls))
        o, w = times["old"], times["new"]
        print(
            f"{name:14s} | {same!s:9s} | {min(o):7.2f} / {statistics.median(o):7.2f}"
            f"     | {min(w):7.2f} / {statistics.median(w):7.2f}     | "
            f"{min(w) / min(o):.3f} / {statistics.median(w) / statistics.median(o):.3f}"
        )


if __name__ == "__main__":
    main()
