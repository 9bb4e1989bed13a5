"""The general (structure-free) route against the supermarket fast path.

Both solve the same supermarket model (d = 2) to 30 digits; the fast path uses
the tridiagonal structure (mfstein.families.supermarket.solver.solve_supermarket), the
general route knows only the transitions (ODE start, Newton, refined Lyapunov solves,
numeric.meanfield.general).
Kernels are generated and compiled in a warm-up run first (their one-time cost
is printed separately).  Run: .venv/bin/python benchmarks/bench_models.py
"""

from __future__ import annotations

import argparse
import time

import mpmath

import numeric
from derive.models import load_model


def _time(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--b", default="20,50,100", help="dimensions (comma-separated)")
    ap.add_argument("--lam", default="0.99")
    ap.add_argument("--dps", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    print(f"supermarket d = 2, lam = {args.lam}, {args.dps} digits; best of {args.repeat} runs")
    header = f"{'b':>5} {'warm-up s':>10} {'fast s':>9} {'general s':>10} {'ratio':>7} {'agree':>6}"
    print(header)
    for b in (int(x) for x in args.b.split(",")):
        model = load_model("supermarket", b=b)
        p = {"lam": args.lam}
        t0 = time.perf_counter()
        numeric.solve(model, p, dps=args.dps, route="general")
        warm = time.perf_counter() - t0
        tf, fast = _time(lambda m=model, p=p: numeric.solve(m, p, dps=args.dps), args.repeat)
        tg, gen = _time(
            lambda m=model, p=p: numeric.solve(m, p, dps=args.dps, route="general"),
            args.repeat,
        )
        with mpmath.workdps(args.dps + 10):
            rel = abs(fast.constant - gen.constant) / fast.constant
            agree = args.dps if rel == 0 else min(args.dps, int(-mpmath.log10(rel)))
        print(f"{b:>5} {warm:>10.2f} {tf:>9.2f} {tg:>10.2f} {tg / tf:>7.1f} {agree:>6}")


if __name__ == "__main__":
    main()
