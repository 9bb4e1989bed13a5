"""Wall time of the transient expansion (numeric.transient).

float64 (SciPy solve_ivp, method auto, rtol 1e-10) for SIR and the supermarket
model (d = 2, lam = 0.9, from the empty system) with b = 10 and 50, at orders
0, 1 and 2, on 101 times in [0, T]; and the mpmath route (Taylor series at two
working precisions, the same right-hand side over mpf arrays) for SIR and the
supermarket with b = 2 at orders 0, 1 and 2 on 11 times in [0, T_mp], next to
the float64 route on the same times (rtol 1e-12): the largest difference over
x, V, W (A, B).
Kernels are generated and compiled in a warm-up call first (its time is shown
separately); the table shows the best of ``--repeat`` runs.  Run:
.venv/bin/python benchmarks/bench_transient.py
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from derive.models import load_model
from numeric.expansion.transient import transient

SIR = ("sir", {}, {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}, "0.75,0.25,0")


def _cases(bs: list[int]) -> list[tuple[str, str, dict, dict, str | None]]:
    out = [("sir", *SIR)]
    out += [(f"supermarket b={b}", "supermarket", {"b": b}, {"lam": "0.9"}, None) for b in bs]
    return out


def _time(fn, repeat: int) -> tuple[float, object]:
    best, res = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        res = fn()
        best = min(best, time.perf_counter() - t)
    return best, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--b", default="10,50", help="supermarket buffers (comma-separated)")
    ap.add_argument("--T", type=float, default=10.0, help="final time (default 10)")
    ap.add_argument("--dps", type=int, default=20, help="digits of the mpmath rows")
    ap.add_argument("--mp-T", type=float, default=2.0, help="final time of the mpmath rows")
    ap.add_argument("--mp-orders", default="0,1,2", help="orders of the mpmath rows")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    times = np.linspace(0.0, args.T, 101)
    bs = [int(x) for x in args.b.split(",")]
    print(f"transient on 101 times in [0, {args.T:g}]; best of {args.repeat} runs")
    print(
        f"{'model':>18} {'route':>8} {'order':>5} {'state':>7} {'method':>7} "
        f"{'warm-up s':>10} {'run s':>8}"
    )
    for label, name, options, params, start in _cases(bs):
        model = load_model(name, **options)
        for order in (0, 1, 2):
            t0 = time.perf_counter()
            transient(model, params, times=[0.0, 1e-3], start=start, order=order)
            warm = time.perf_counter() - t0

            def run(model=model, params=params, start=start, order=order):
                return transient(model, params, times=times, start=start, order=order)

            sec, res = _time(run, args.repeat)
            n = len(res.free)
            size = n + (n + n * n if order >= 1 else 0) + (n**3 + n * n + n if order == 2 else 0)
            print(
                f"{label:>18} {'float64':>8} {order:>5} {size:>7} {res.integrator:>7} "
                f"{warm:>10.2f} {sec:>8.2f}"
            )
    times_mp = np.linspace(0.0, args.mp_T, 11)
    print(f"mpmath ({args.dps} digits) on 11 times in [0, {args.mp_T:g}], float64 beside it")
    print(
        f"{'model':>18} {'order':>5} {'mpmath s':>9} {'digits':>6} {'float64 s':>9} {'max diff':>9}"
    )
    for label, name, options, params, start in (
        ("sir", *SIR),
        ("supermarket b=2", "supermarket", {"b": 2}, {"lam": "0.9"}, None),
    ):
        model = load_model(name, **options)
        for order in (int(x) for x in args.mp_orders.split(",")):
            t0 = time.perf_counter()
            res = transient(model, params, times=times_mp, start=start, order=order, dps=args.dps)
            sec = time.perf_counter() - t0
            t0 = time.perf_counter()
            fl = transient(
                model, params, times=times_mp, start=start, order=order, rtol=1e-12, atol=1e-14
            )
            sec_f = time.perf_counter() - t0
            diff = max(
                float(np.max(np.abs(getattr(fl, k) - getattr(res, k).astype(float))))
                for k in ("x", "V", "W", "A", "B")
                if getattr(res, k) is not None
            )
            print(
                f"{label:>18} {order:>5} {sec:>9.2f} {res.digits:>6} {sec_f:>9.2f} {diff:>9.1e}",
                flush=True,
            )


if __name__ == "__main__":
    main()
