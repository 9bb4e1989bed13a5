"""Order 2 near heavy traffic (issue 36): the truncated route's time and digits.

Each case is ``numeric.solve(supermarket(b=B), {"lam": LAM}, dps=DPS, order=2)``
(the fast path for order 1, then ``A``, ``B``, ``c2`` on the levels that matter,
grown until they settle: :mod:`numeric.meanfield.truncation`).  Columns: the
case, wall and CPU seconds of the call (the first row also loads the kernels
numba cached on disk; a cold cache compiles them there), the digits of ``c2``
earned and ``c2`` itself.  With ``--check`` each ``c2`` is recomputed at twice
the precision and the printed digits are checked against it (``ok`` when the
difference is within one unit of the last claimed digit).

Before issue 36 the first case ran past 4 minutes, the second never answered
(a truncation nested in every ring of the next), the third did not finish in
25 minutes.

Run: .venv/bin/python benchmarks/bench_order2_heavy.py [--cases 20:0.99:30,20:0.999:5,50:0.99:30]
[--check]  (timings on a shared machine are noisy).
"""

from __future__ import annotations

import argparse
import time

import mpmath

import numeric
from derive.models.supermarket import supermarket

CASES = "20:0.99:30,20:0.999:5,50:0.99:30"


def _solve(b: int, lam: str, dps: int):
    return numeric.solve(supermarket(b=b), {"lam": lam}, dps=dps, order=2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cases", default=CASES, help="comma-separated b:lam:dps")
    ap.add_argument("--check", action="store_true", help="check c2 at twice the precision")
    args = ap.parse_args()
    head = f"{'case':>24} {'wall s':>7} {'cpu s':>7} {'digits':>6}  c2"
    print(head + ("  check" if args.check else ""))
    for case in args.cases.split(","):
        b, lam, dps = case.split(":")
        wall, cpu = time.perf_counter(), time.process_time()
        sol = _solve(int(b), lam, int(dps))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        label = f"b={b} lam={lam} dps={dps}"
        c2 = mpmath.nstr(sol.c2, sol.digits2)
        line = f"{label:>24} {wall:7.1f} {cpu:7.1f} {sol.digits2:>6}  {c2}"
        if args.check:
            truth = _solve(int(b), lam, 2 * int(dps)).c2
            with mpmath.workdps(2 * int(dps)):
                unit = abs(sol.c2) * mpmath.mpf(10) ** (1 - sol.digits2)
                ok = abs(mpmath.mpf(mpmath.nstr(sol.c2, sol.digits2)) - truth) <= unit
            line += "  " + ("ok" if ok else f"WRONG (truth {mpmath.nstr(truth, 2 * int(dps))})")
        print(line, flush=True)


if __name__ == "__main__":
    main()
