"""Cost of the 1/N^2 terms: c2 at 30 digits (two working precisions, refined
Schur solves) next to the float64 route, supermarket d = 2.

Run: .venv/bin/python benchmarks/bench_order2.py [--b 10,50,200] [--lam 0.9]
(each row runs once after a warm-up that generates and compiles the kernels).
"""

from __future__ import annotations

import argparse
import time

import numeric
from derive.models import load_model
from numeric.expansion import second_order_float64


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--b", default="10,50,200")
    ap.add_argument("--hp-max-b", type=int, default=50, help="largest b for the 30-digit route")
    ap.add_argument("--lam", default="0.9")
    ap.add_argument("--dps", type=int, default=30)
    args = ap.parse_args()
    print(f"supermarket d = 2, lam = {args.lam}; c2 = tr(B), N E||S-s*||^2 = c + c2/N + ...")
    print(
        f"{'b':>5} {'float64 s':>10} {'float64 c2':>22} {'30-digit s':>11} "
        f"{'digits':>7} {'agree':>8}"
    )
    for b in (int(x) for x in args.b.split(",")):
        model = load_model("supermarket", b=b)
        p = {"lam": args.lam}
        second_order_float64(model, p)  # warm-up: kernels
        t = time.perf_counter()
        f64 = second_order_float64(model, p)
        tf = time.perf_counter() - t
        hp_t, digits, agree = "-", "-", "-"
        if b <= args.hp_max_b:
            numeric.solve(model, p, dps=10, order=2, method="general")  # warm-up
            t = time.perf_counter()
            hp = numeric.solve(model, p, dps=args.dps, order=2, method="general")
            hp_t = f"{time.perf_counter() - t:.2f}"
            digits = str(hp.digits2)
            agree = f"{abs(f64['c2'] - float(hp.c2)) / abs(float(hp.c2)):.1e}"
        print(f"{b:>5} {tf:>10.2f} {f64['c2']:>22.15g} {hp_t:>11} {digits:>7} {agree:>8}")


if __name__ == "__main__":
    main()
