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

Side by side with another tree (``git archive main | tar -x -C /tmp/main``)::

    .venv/bin/python benchmarks/bench_transient.py --tree /tmp/main --reps 5

runs one fresh child interpreter per tree and repetition (the trees alternating,
``PYTHONPATH`` set to the tree) and prints CPU seconds (min / median over the
children) of: the float64 rows above after their warm-up (each the best of 3 calls;
SIR and the supermarket with ``--b``, orders 0 to 2, 101 times in ``[0, T]``); a
transient of SIR at a new parameter point each call (the prepared problem and the
transient's setup made afresh, times ``[0, 1]``); the same call repeated (a warm
call: nothing prepared); and the SIR mpmath order 1 at ``--dps`` digits on 11 times
in ``[0, mp-T]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
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


def _child(bs: list[int], T: float, dps: int, mp_T: float) -> dict[str, float]:
    """CPU seconds of the rows of the side-by-side table (module docstring), in this
    interpreter."""
    times = np.linspace(0.0, T, 101)
    out: dict[str, float] = {}
    for label, name, options, params, start in _cases(bs):
        model = load_model(name, **options)
        for order in (0, 1, 2):
            transient(model, params, times=[0.0, 1e-3], start=start, order=order)  # warm-up
            best = float("inf")
            for _ in range(3):
                t0 = time.process_time()
                transient(model, params, times=times, start=start, order=order)
                best = min(best, time.process_time() - t0)
            out[f"{label} order {order}"] = best
    name, options, params, start = SIR
    sir = load_model(name, **options)

    def point(k: int) -> dict[str, str]:
        return {**params, "beta": f"3.{k:03d}"}

    calls = 20
    t0 = time.process_time()
    for k in range(calls):
        transient(sir, point(k), times=[0.0, 1.0], start=start)
    out["sir new point, t in [0, 1]"] = (time.process_time() - t0) / calls
    t0 = time.process_time()
    for _ in range(calls):
        transient(sir, point(0), times=[0.0, 1.0], start=start)
    out["sir warm call, t in [0, 1]"] = (time.process_time() - t0) / calls
    t0 = time.process_time()
    transient(sir, params, times=np.linspace(0.0, mp_T, 11), start=start, order=1, dps=dps)
    out[f"sir mpmath order 1, dps {dps}"] = time.process_time() - t0
    return out


def _side_by_side(args: argparse.Namespace) -> None:
    """The trees alternating, one child interpreter per tree and repetition."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    trees = [root, *args.tree]
    argv = ["--child", "--b", args.b, "--T", str(args.T), "--dps", str(args.dps)]
    argv += ["--mp-T", str(args.mp_T)]
    runs: dict[str, dict[str, list[float]]] = {t: {} for t in trees}
    for _ in range(args.reps):
        for tree in trees:
            env = dict(os.environ, PYTHONPATH=tree)
            done = subprocess.run(
                [sys.executable, os.path.abspath(__file__), *argv],
                env=env,
                cwd=tree,
                capture_output=True,
                text=True,
            )
            if done.returncode:
                raise SystemExit(f"{tree}: {done.stderr.strip().splitlines()[-1]}")
            for row, sec in json.loads(done.stdout.strip().splitlines()[-1]).items():
                runs[tree].setdefault(row, []).append(sec)
    print(f"CPU s, min / median of {args.reps} runs per tree (trees alternating)")
    print(f"{'':<34}" + "".join(f"{os.path.basename(t) or t:>22}" for t in trees) + "   ratio")
    for row in runs[root]:
        meds = [statistics.median(runs[t][row]) for t in trees]
        cells = "".join(
            f"{min(runs[t][row]):>10.4f} / {m:<9.4f}" for t, m in zip(trees, meds, strict=True)
        )
        ratios = "".join(f"{m / meds[0]:>8.2f}" for m in meds[1:])
        print(f"{row:<34}{cells}{ratios}")
    print("(ratio: median of the other tree / this tree; above 1: this tree is faster)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--b", default="10,50", help="supermarket buffers (comma-separated)")
    ap.add_argument("--T", type=float, default=10.0, help="final time (default 10)")
    ap.add_argument("--dps", type=int, default=20, help="digits of the mpmath rows")
    ap.add_argument("--mp-T", type=float, default=2.0, help="final time of the mpmath rows")
    ap.add_argument("--mp-orders", default="0,1,2", help="orders of the mpmath rows")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--tree", action="append", default=[], help="another checkout, side by side")
    ap.add_argument("--reps", type=int, default=5, help="repetitions per tree (with --tree)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    bs = [int(x) for x in args.b.split(",")]
    if args.child:
        print(json.dumps(_child(bs, args.T, args.dps, args.mp_T)))
        return
    if args.tree:
        _side_by_side(args)
        return
    times = np.linspace(0.0, args.T, 101)
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
