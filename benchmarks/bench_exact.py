"""Benchmark of ``numeric.exact``: time, peak memory and residual per solver.

Each (N, b, method) runs in a fresh child process so that its peak resident
memory (``ru_maxrss``) and its peak traced NumPy allocation (``tracemalloc``)
belong to that solve alone.  The arrival rate is the paper's heavy-traffic
``lam = 1 - gamma / N^alpha`` with gamma = 0.1, alpha = 0.05.

    .venv/bin/python benchmarks/bench_exact.py                 # the full table
    .venv/bin/python benchmarks/bench_exact.py --cases 10:6 20:5 --methods direct bicgstab

The ``seconds`` column is the wall time of :func:`numeric.exact.solve_exact`
(enumeration, assembly, solve, moments), measured after a warm-up solve that
compiles the numba kernels.  The baselines -- plain sparse LU (``direct``) and
GMRES(40) with the same preconditioner -- run only up to ``--baseline-max``
states: beyond that they take minutes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from math import comb

DEFAULT_CASES = ("10:6", "10:8", "10:10", "10:12", "20:5")


def worker(N: int, b: int, method: str) -> None:
    import resource
    import tracemalloc

    import mpmath

    from numeric import heavy_traffic_lambda
    from numeric.exact import solve_exact

    lam = mpmath.nstr(heavy_traffic_lambda("0.1", "0.05", N), 20)
    solve_exact(2, lam, b, solver=method)  # compile this model's kernels first
    tracemalloc.start()
    r = solve_exact(N, lam, b, solver=method)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(
        json.dumps(
            {
                "N": N,
                "b": b,
                "lam": lam,
                "method": r.solver,
                "states": r.states,
                "seconds": r.seconds,
                "iterations": r.iterations,
                "residual": r.residual,
                "traced_peak": peak,
                "maxrss": rss,
                "n_mse": r.n_mse,
            }
        )
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", default=list(DEFAULT_CASES), help="N:b pairs")
    ap.add_argument("--methods", nargs="+", default=["bicgstab", "direct", "gmres"])
    ap.add_argument(
        "--baseline-max", type=int, default=60000, help="largest system for direct and gmres"
    )
    ap.add_argument("--timeout", type=float, default=590.0, help="seconds per child process")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(int(args.worker[0]), int(args.worker[1]), args.worker[2])
        return 0
    head = (
        f"{'N':>3} {'b':>3} {'states':>9} {'method':>9} {'iter':>5} {'seconds':>9} "
        f"{'numpy peak':>11} {'max RSS':>9} {'residual':>9} {'N E||S-s*||^2':>16}"
    )
    print(head)
    print("-" * len(head))
    for case in args.cases:
        N, b = (int(x) for x in case.split(":"))
        for method in args.methods:
            states = comb(N + b, b)
            if method != "bicgstab" and states > args.baseline_max:
                skip = f"(skipped: > {args.baseline_max:,} states)"
                print(f"{N:>3} {b:>3} {states:>9,} {method:>9}   {skip}")
                continue
            try:
                out = subprocess.run(
                    [sys.executable, __file__, "--worker", str(N), str(b), method],
                    capture_output=True,
                    text=True,
                    timeout=args.timeout,
                    check=True,
                )
            except subprocess.TimeoutExpired:
                print(f"{N:>3} {b:>3} {states:>9,} {method:>9}   (timeout > {args.timeout:.0f} s)")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"{N:>3} {b:>3} {r['states']:>9,} {r['method']:>9} {r['iterations']:>5} "
                f"{r['seconds']:>9.2f} {r['traced_peak'] / 1e6:>8.0f} MB "
                f"{r['maxrss'] / 1e6:>6.0f} MB {r['residual']:>9.1e} {r['n_mse']:>16.10f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
