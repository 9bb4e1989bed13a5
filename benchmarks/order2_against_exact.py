"""The 1/N^2 coefficients c2 and A against exact finite-N chains, as a table.

The numbers behind ``tests/numeric/meanfield/test_order2.py::
test_supermarket_order2_against_exact_up_to_N320``: for the supermarket with
``lam = 0.9``, ``b = 3``, ``d = 2`` (or other values), the exact stationary law at
each N (:func:`numeric.exact.solve`), the scaled errors ``N (N E||Y||^2 - c)``
and ``N (N E[Y] - V)`` that tend to ``c2`` and ``A``, and Richardson
extrapolation over the largest sizes (error ``O(1/N^k)`` after ``k - 1`` levels).

    .venv/bin/python benchmarks/order2_against_exact.py                  # N = 20..320, ~2 min
    .venv/bin/python benchmarks/order2_against_exact.py --sizes 10 20 40 --lam 1.2
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time


def richardson(values: list) -> list:
    """Levels of Richardson extrapolation for values at N, 2N, 4N, ... whose error
    is a power series in 1/N: entry ``j`` removes the 1/N .. 1/N^j terms."""
    import numpy as np

    col = [np.asarray(v, dtype=float) for v in values]
    out = [col[-1]]
    for j in range(1, len(values)):
        col = [(2**j * col[i + 1] - col[i]) / (2**j - 1) for i in range(len(col) - 1)]
        out.append(col[-1])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[20, 40, 80, 160, 320])
    ap.add_argument("--lam", default="0.9")
    ap.add_argument("--b", type=int, default=3)
    ap.add_argument("--d", type=int, default=2)
    ap.add_argument("--levels", type=int, default=3, help="sizes used by the extrapolation")
    args = ap.parse_args()
    sizes = sorted(args.sizes)
    if any(2 * a != b for a, b in itertools.pairwise(sizes)):
        print("--sizes must double from one to the next (e.g. 20 40 80)", file=sys.stderr)
        return 2

    import numpy as np

    import numeric
    import numeric.exact as exact
    from derive import load_model

    model = load_model("supermarket", b=args.b, d=args.d)
    params = {"lam": args.lam}
    sol = numeric.solve(model, params, dps=20, order=2)
    c, c2 = float(sol.constant), float(sol.c2)
    V = np.array([float(v) for v in sol.V])
    A = np.array([float(v) for v in sol.A])
    print(f"supermarket lam = {args.lam}, b = {args.b}, d = {args.d}: c = {c:.12g}, c2 = {c2:.12g}")
    print(f"A = {np.array2string(A, precision=10)}")
    head = (
        f"{'N':>5} {'states':>10} {'solve s':>8} {'rel. residual':>13} "
        f"{'N(N E||Y||^2 - c)':>18} {'|gap c2|':>9} {'max|gap A|':>10}"
    )
    print(head)
    print("-" * len(head))
    xs, bias = [], []
    for N in sizes:
        t0 = time.perf_counter()
        r = exact.solve(model, params, N=N)
        xs.append(N * (r.n_mse - c))
        bias.append(N * (np.asarray(r.n_bias, dtype=float) - V))
        print(
            f"{N:>5} {r.states:>10,} {time.perf_counter() - t0:>8.1f} {r.relative_residual:>13.1e} "
            f"{xs[-1]:>18.10f} {abs(xs[-1] - c2):>9.2e} {np.max(np.abs(bias[-1] - A)):>10.2e}",
            flush=True,
        )
    k = min(args.levels, len(sizes))
    print(f"\nRichardson over N = {', '.join(map(str, sizes[-k:]))}: relative error per level")
    for j, (ec, ea) in enumerate(zip(richardson(xs[-k:]), richardson(bias[-k:]), strict=True)):
        print(
            f"  level {j}: c2 {abs(ec - c2) / abs(c2):.1e}   "
            f"A {np.max(np.abs(ea - A)) / np.max(np.abs(A)):.1e}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
