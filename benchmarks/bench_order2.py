"""Cost of the 1/N^2 terms, supermarket d = 2: the float64 c2 (default route)
next to the float64 LAPACK-trsyl slices and the 30-digit refined route.

Columns: ``route`` is what ``second_order_float64`` ran (``eigen``: tridiagonal
eigenbasis; ``schur``: compiled back substitution on the real Schur form; with
``cut K`` when the tail above level K is negligible and the model was solved
with buffer K); ``trsyl`` re-solves the third-moment equation slice by slice
with LAPACK trsyl (the old route, an independent check); ``30 digits`` is
``numeric.solve(..., dps=30, order=2, route="general")`` (two working
precisions, refined Schur solves).  ``rel diff`` is relative to the first
column's c2.  ``first s`` is the first call of the row (in the first row it
includes the imports and loading the kernels numba cached on disk; a
compilation, when the cache is cold, is paid there too); ``float64 s`` is the
best of ``--repeat`` further calls.

Run: .venv/bin/python benchmarks/bench_order2.py [--cases 0.9:200,1.1:200,0.9:50,1.1:50]
[--hp-max-b 50] [--trsyl-max-b 200] [--repeat 3]  (timings on a shared machine
are noisy).
"""

from __future__ import annotations

import argparse
import time

import numeric
from derive.models import load_model
from numeric.meanfield.stationary import second_order_float64


def _timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cases", default="0.9:200,1.1:200,1.2:200,0.9:50,1.1:50")
    ap.add_argument("--hp-max-b", type=int, default=50, help="largest b for the 30-digit route")
    ap.add_argument("--trsyl-max-b", type=int, default=200, help="largest b for trsyl")
    ap.add_argument("--dps", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3, help="float64 s: best of this many calls")
    args = ap.parse_args()
    print("supermarket d = 2; c2 = tr(B), N E||S-s*||^2 = c + c2/N + ...")
    head = (
        f"{'lam':>5} {'b':>4} {'route':>11} {'first s':>7} {'float64 s':>9} {'float64 c2':>20} "
        f"{'trsyl s':>8} {'rel diff':>8} {f'{args.dps} digits s':>13} {'digits':>6} "
        f"{'rel diff':>8}"
    )
    print(head)
    for case in args.cases.split(","):
        lam, b = case.split(":")
        b = int(b)
        model = load_model("supermarket", b=b)
        p = {"lam": lam}
        _, t_first = _timed(second_order_float64, model, p)  # loads (or compiles) the kernels
        runs = [_timed(second_order_float64, model, p) for _ in range(max(1, args.repeat))]
        f64, tf = runs[0][0], min(t for _, t in runs)
        route = f64["third_moment"]
        if f64.get("truncated_at") is not None:
            route += f" cut {f64['truncated_at']}"
        tr_t, tr_d = "-", "-"
        if b <= args.trsyl_max_b:
            tr, t = _timed(second_order_float64, model, p, solver="trsyl")
            tr_t, tr_d = f"{t:.2f}", f"{abs(tr['c2'] - f64['c2']) / abs(f64['c2']):.1e}"
        hp_t, digits, hp_d = "-", "-", "-"
        if b <= args.hp_max_b:
            numeric.solve(model, p, dps=10, order=2, route="general")  # warm-up
            hp, t = _timed(numeric.solve, model, p, dps=args.dps, order=2, route="general")
            hp_t, digits = f"{t:.2f}", str(hp.digits2)
            hp_d = f"{abs(f64['c2'] - float(hp.c2)) / abs(float(hp.c2)):.1e}"
        print(
            f"{lam:>5} {b:>4} {route:>11} {t_first:>7.2f} {tf:>9.2f} {f64['c2']:>20.15g} {tr_t:>8} "
            f"{tr_d:>8} {hp_t:>13} {digits:>6} {hp_d:>8}",
            flush=True,
        )


if __name__ == "__main__":
    main()
