"""Time the full claim registry of the core paper over N = 10^1 .. 10^8 (dps 30, b = auto).

Prints, for gamma = 0.1 and 0.01 (alpha = 0.05, xi = 1e-5):

1. per grid point: the buffer numeric chose, the time numeric takes to solve
   (shared by all claims) and the time of all claims on top of it;
2. the slowest claims summed over the grid;
3. side by side, Theorem 1's Kronecker system solved by the banded elimination
   used here and by dense ``mpmath.lu_solve`` on the same ``b^2 x b^2`` matrix.

Run: ``.venv/bin/python benchmarks/bench_lemmas.py`` (a few minutes on 2 cores).
"""

from __future__ import annotations

import time
from collections import defaultdict

import mpmath

from numeric import heavy_traffic_lambda
from numeric.lemmas import REGISTRY, check
from numeric.lemmas.context import Context
from numeric.linalg.kronecker import kronecker_solve_identity, kronecker_sum_rows

ALPHA, XI, DPS = "0.05", "0.00001", 30
GRID = [10**k for k in range(1, 9)]


def registry_table(gamma: str) -> float:
    from fractions import Fraction

    per_claim: dict[str, float] = defaultdict(float)
    print(f"\ngamma = {gamma}, alpha = {ALPHA}, xi = {XI}, dps = {DPS}, b = auto")
    print(f"{'N':>10} {'b':>4} {'solve [s]':>10} {'claims [s]':>11} {'total [s]':>10}")
    total = 0.0
    for n in GRID:
        lam = heavy_traffic_lambda(gamma, ALPHA, n, dps=DPS)
        ctx = Context(
            lam=lam,
            N=n,
            b="auto",
            xi=Fraction(XI),
            dps=DPS,
            gamma=Fraction(gamma),
            alpha=Fraction(ALPHA),
        )
        t0 = time.perf_counter()
        _ = ctx.sol  # numeric solve, timed separately
        t1 = time.perf_counter()
        for c in REGISTRY.values():
            s = time.perf_counter()
            c.evaluate(ctx)
            per_claim[c.id] += time.perf_counter() - s
        t2 = time.perf_counter()
        total += t2 - t0
        print(f"{n:>10} {ctx.b_used:>4} {t1 - t0:>10.2f} {t2 - t1:>11.2f} {t2 - t0:>10.2f}")
    print(f"{'all':>10} {'':>4} {'':>10} {'':>11} {total:>10.2f}")
    top = sorted(per_claim.items(), key=lambda kv: -kv[1])[:5]
    print("slowest claims over the grid: " + ", ".join(f"{k} {v:.2f} s" for k, v in top))
    return total


def kronecker_table() -> None:
    print("\nTheorem 1's Kronecker system (b^2 x b^2), dps 30: banded elimination vs dense LU")
    print(f"{'b':>4} {'banded [s]':>11} {'dense LU [s]':>13} {'max |diff|':>12}")
    for b in (4, 6, 8, 10):
        with mpmath.workdps(DPS + 10):
            sol_lam = heavy_traffic_lambda("0.1", ALPHA, 100, dps=DPS)
            from mfstein.families.supermarket.solver import solve_supermarket

            J = mpmath.matrix(solve_supermarket(sol_lam, b, dps=DPS).J)
            t0 = time.perf_counter()
            x = kronecker_solve_identity(J)
            t1 = time.perf_counter()
            A = mpmath.matrix(kronecker_sum_rows(J))
            rhs = mpmath.matrix([1 if i == j else 0 for j in range(b) for i in range(b)])
            t2 = time.perf_counter()
            y = mpmath.lu_solve(A, rhs)
            t3 = time.perf_counter()
            diff = max(abs(x[i] - y[i]) for i in range(b * b))
        print(f"{b:>4} {t1 - t0:>11.3f} {t3 - t2:>13.3f} {mpmath.nstr(diff, 2):>12}")


def main() -> None:
    for gamma in ("0.1", "0.01"):
        registry_table(gamma)
    t0 = time.perf_counter()
    check(None, gamma="0.1", alpha=ALPHA, N=GRID, xi=XI, dps=DPS)
    print(f"\ncheck() end to end, gamma = 0.1, 8 grid points: {time.perf_counter() - t0:.2f} s")
    kronecker_table()


if __name__ == "__main__":
    main()
