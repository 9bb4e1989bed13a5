"""Benchmark: Theorem 1's constant, structure-aware routes against the dense Kronecker solve.

Run:  .venv/bin/python benchmarks/bench_bound.py

Rows (times in seconds, wall clock, after compilation / kernel generation):

* float64, b = 50: one evaluation of ``constant_float64`` (Newton on derive's
  numba kernels + truncated Lyapunov solve) against the dense ``b^2 x b^2``
  Kronecker system solved with LAPACK; and a 10^4-point sweep.
* mpmath: one Lyapunov solve ``P J + J^T P = -I`` by the column-shooting route
  and by the dense Kronecker system at the same precision, for the same ``J``;
  plus the complete vouched :func:`numeric.solve` (fixed point at two
  precisions, shooting + covariance routes, digit check).  The dense solve is
  only run where it finishes in reasonable time; beyond that its cost is
  extrapolated as ``t(16) (b/16)^6`` and marked ``~``.
"""

from __future__ import annotations

import argparse
import time

import mpmath
import numpy as np


def _best(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _jacobian(lam: str, b: int, dps: int):
    from derive import supermarket
    from numeric import equilibrium

    s = equilibrium(lam, b, dps=dps)
    with mpmath.workdps(dps):
        return supermarket(b, 2).kernels("mpmath").jac(s, [mpmath.mpf(lam)])


def float64_rows(lam: float) -> list[tuple[str, str, str, str]]:
    from derive import supermarket
    from numeric import constant_float64, equilibrium
    from numeric.linalg.tridiagonal import kronecker_sum

    b = 50
    constant_float64([lam], b)  # compile
    one = _best(lambda: constant_float64([lam], b), repeat=20)
    # dense Kronecker in float64 (LAPACK) for the same c
    s = np.array([float(x) for x in equilibrium(repr(lam), b, dps=20)])
    k = supermarket(b, 2).kernels("numba")
    J, Q = k.jac(s, np.array([lam])), k.Q(s, np.array([lam]))

    def kron() -> float:
        K = kronecker_sum(J)
        P = np.linalg.solve(K, -np.eye(b).reshape(-1, order="F")).reshape(b, b, order="F")
        return float(np.trace(P @ Q))

    t_kron = _best(kron, repeat=2)
    c_fast = float(constant_float64([lam], b)[0])
    rel = abs(c_fast - kron()) / c_fast
    grid = np.linspace(0.5, 0.999, 10_000)
    t_sweep = _best(lambda: constant_float64(grid, b), repeat=1)
    return [
        (
            "float64 c, b=50 (per evaluation)",
            f"{one * 1e3:.3f} ms",
            f"{t_kron * 1e3:.1f} ms",
            f"{t_kron / one:.0f}x (rel. diff {rel:.1e})",
        ),
        ("float64 sweep, b=50, 10^4 points", f"{t_sweep:.2f} s", "-", "-"),
    ]


def mp_rows(lam: str) -> list[tuple[str, str, str, str]]:
    from mfstein.families.supermarket.solver import solve_supermarket
    from numeric.linalg.tridiagonal import shooting_growth_digits, solve_shooting, solve_vectorised

    rows = []
    t16 = None
    for b, dps in ((16, 40), (50, 50), (100, 100)):
        J = _jacobian(lam, b, dps + 120)
        with mpmath.workdps(dps):
            wp = dps + shooting_growth_digits(J) + 10
        with mpmath.workdps(wp):
            I = mpmath.eye(b)
            t_shoot = _best(lambda J=J, I=I: solve_shooting(J, I), repeat=2)
            P1 = solve_shooting(J, I)
        with mpmath.workdps(dps):
            I = mpmath.eye(b)
            if b <= 16:
                t0 = time.perf_counter()
                P2 = solve_vectorised(J, I)
                t_kron = time.perf_counter() - t0
                t16 = t_kron
                with mpmath.workdps(dps + 5):
                    diff = mpmath.mnorm(P1 - P2, 1) / mpmath.mnorm(P2, 1)
                kron_txt = f"{t_kron:.2f} s (diff {mpmath.nstr(diff, 2)})"
            else:
                t_kron = t16 * (b / 16) ** 6
                kron_txt = f"~{t_kron:.0f} s (extrapolated)"
        rows.append(
            (
                f"P solve, b={b}, {dps} digits",
                f"{t_shoot:.3f} s",
                kron_txt,
                f"{t_kron / t_shoot:.0f}x",
            )
        )
        t_full = _best(lambda b=b, dps=dps: solve_supermarket(lam, b, dps=dps), repeat=1)
        rows.append((f"full solve(), b={b}, {dps} digits", f"{t_full:.2f} s", "-", "-"))
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lam", default="0.99", help="arrival rate (default 0.99)")
    args = p.parse_args()
    rows = float64_rows(float(args.lam)) + mp_rows(args.lam)
    header = ("case", "structure-aware", "dense Kronecker", "speed-up")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(f"lam = {args.lam}, d = 2, mpmath backend = {mpmath.libmp.BACKEND}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


if __name__ == "__main__":
    main()
