"""Cost of the exact tails' error estimates (numeric/tails/errors.py).

Prints one table: for each case, the wall seconds of the solve that makes the result
(:func:`numeric.tails.report.exact_tails`, which now also estimates every number's
error) and of the estimate alone on a result made beforehand (``errors()`` of the JSQ
or SSQ solution -- the SSQ's root and weight propagation, a ``U x U`` inverse, runs
inside the solve and is not in this column -- and the M/M/n law's closed form),
min / median over ``--repeat`` alternating repetitions.

Usage::

    .venv/bin/python benchmarks/bench_tail_errors.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from numeric.tails.errors import mmn_law_error
from numeric.tails.jsq_qbd import solve_jsq
from numeric.tails.report import exact_tails
from numeric.tails.ssq import binomial_pmfs, solve_ssq

CASES = [("jsq", 3, 0.1), ("jsq", 5, 0.3), ("ssq", 20, 0.05), ("mmn", 1000, 0.01)]


def _estimate(model: str, n: int, eps: float):
    """The estimate alone, on a result made beforehand."""
    if model == "jsq":
        sol = solve_jsq(n, eps)
        return lambda: sol.errors()
    if model == "ssq":
        sol = solve_ssq(*binomial_pmfs(n, eps))
        return lambda: sol.errors()
    law = exact_tails("mmn", n, eps).law
    return lambda: mmn_law_error(n, law.mean())


def _seconds(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'case':<18} {'exact_tails s (min/med)':>26} {'errors() s (min/med)':>26}")
    for model, n, eps in CASES:
        estimate = _estimate(model, n, eps)
        solve, est = [], []
        for _ in range(args.repeat):  # alternating
            solve.append(_seconds(lambda m=model, k=n, e=eps: exact_tails(m, k, e, [1.0])))
            est.append(_seconds(estimate))
        row = (f"{min(solve):.4f}/{statistics.median(solve):.4f}",
               f"{min(est):.2e}/{statistics.median(est):.2e}")  # fmt: skip
        print(f"{model} n={n} eps={eps:<6} {row[0]:>26} {row[1]:>26}")


if __name__ == "__main__":
    main()
