"""What the exact result's error estimate costs: the solve, and its first print.

The estimate of ``||pi - pi_true||_1`` (:mod:`numeric.exact.law_error`) is made when a
result is first printed (one sparse LU of the pinned system and a few solves), not
by the solve; this prints, per case, the solve's seconds beside the first
``to_json()`` (which makes the estimate) and a second one (cached), alternating
repetitions, min and median.

    .venv/bin/python benchmarks/bench_law_error.py
    .venv/bin/python benchmarks/bench_law_error.py --sir-N 60 100 --repeat 5
"""

from __future__ import annotations

import argparse
import statistics
import time

SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}


def _case(N: int) -> tuple[float, float, float, int]:
    """Seconds of the solve, of the first and of a second ``to_json()``, and the states."""
    import numeric.exact

    t0 = time.perf_counter()
    r = numeric.exact.solve("sir", SIR, N=N)
    t1 = time.perf_counter()
    r.to_json()
    t2 = time.perf_counter()
    r.to_json()
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2, r.states


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sir-N", nargs="*", type=int, default=[30, 100], help="SIR population")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    _case(6)  # compile and import outside the timings
    print(f"{'N':>5} {'states':>7} {'solve s':>16} {'first print s':>16} {'second print s':>16}")
    for N in args.sir_N:
        runs = [_case(N) for _ in range(args.repeat)]
        cols = []
        for k in range(3):
            xs = [run[k] for run in runs]
            cols.append(f"{min(xs):7.4f}/{statistics.median(xs):7.4f}")
        print(f"{N:>5} {runs[0][3]:>7} {cols[0]:>16} {cols[1]:>16} {cols[2]:>16}")
    print("(min/median of --repeat runs in one process; the estimate is in the first print)")


if __name__ == "__main__":
    main()
