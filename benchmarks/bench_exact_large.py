"""Large exact chains: the iterative stationary solver before and after, side by side.

The supermarket chain with ``b = 3``, ``d = 2``, ``lam = 0.9`` (the check of the
1/N^2 expansion against exact solutions) at N = 80 ... 320 (up to 5.6 million
states), solved by BiCGSTAB with the symmetric Gauss--Seidel preconditioner of
:mod:`numeric.exact.solvers` in three ways:

``before``
    ``solve_krylov`` as of ``--before`` (default ``89931ba``, read from git):
    rounds of 100 iterations, each restarted from all ones' successor.
``ones``
    today's ``solve_krylov`` from all ones (one run while it makes progress).
``gaussian``
    today's ``solve_krylov`` from :func:`numeric.exact.solvers.gaussian_start`
    (the default of :func:`numeric.exact.solve` and ``solve_exact``).

Each (N, variant) runs in its own child process, with the same matrix (built by
:class:`numeric.exact.general.Chain`, as every exact solve is: reachable states
in breadth-first order), the same pinned state (the one nearest ``N s*``) and
the general solver's residual target ``||pi Q||_1 <= 1e-10 max_i q_i``.  A
child that passes ``--timeout`` seconds is stopped and its row says so.

    .venv/bin/python benchmarks/bench_exact_large.py
    .venv/bin/python benchmarks/bench_exact_large.py --sizes 80 160 --timeout 120
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ("before", "ones", "gaussian")


def _old_solvers(rev: str) -> types.ModuleType:
    """``numeric/exact/solvers.py`` as of ``rev``, imported from a temporary file."""
    import importlib.util
    import tempfile

    src = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:numeric/exact/solvers.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp(prefix="bench_exact_large_")) / "old_solvers.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("old_solvers", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["old_solvers"] = mod
    spec.loader.exec_module(mod)
    return mod


def worker(N: int, variant: str, rev: str) -> None:
    import resource

    import numpy as np

    import numeric
    from derive import supermarket
    from numeric.exact import solvers
    from numeric.exact.general import Chain

    model = supermarket(3, 2)
    mf = numeric.solve(model, {"lam": "0.9"}, dps=20)
    s = np.array([float(v) for v in mf.s_star])
    W = np.array([[float(mf.W[i, j]) for j in range(3)] for i in range(3)])
    old = _old_solvers(rev) if variant == "before" else None

    def run(n: int) -> tuple:
        # the library's own chain: reachable states in breadth-first (level) order
        ch = Chain.setup(model, n, {"lam": "0.9"}, None, None, None)
        reach, QT, _, _, r = ch._assemble(n * s)
        space = types.SimpleNamespace(states=reach.states, size=reach.states.shape[0])
        tol = 1e-10 * float(-QT.diagonal().min())
        t0 = time.perf_counter()
        if old is not None:
            sol = old.solve_krylov(QT, r, tol=tol)
        elif variant == "ones":
            sol = solvers.solve_krylov(QT, r, tol=tol)
        else:
            x0 = solvers.gaussian_start(space.states, n * s, n, W)
            sol = solvers.solve_krylov(QT, r, tol=tol, x0=x0)
        return space, sol, tol, time.perf_counter() - t0

    run(6)  # compile the kernels of this variant first
    space, sol, tol, seconds = run(N)
    dev = space.states / N - s
    n_mse = N * float(sol.pi @ np.einsum("ij,ij->i", dev, dev))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(
        json.dumps(
            {
                "states": int(space.size),
                "iterations": int(sol.iterations),
                "seconds": seconds,
                "residual": sol.residual,
                "target": tol,
                "n_mse": n_mse,
                "maxrss": rss,
            }
        )
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[80, 160, 240, 320])
    ap.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    ap.add_argument("--before", default="89931ba", help="git revision of the 'before' solver")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per child process")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(int(args.worker[0]), args.worker[1], args.worker[2])
        return 0
    head = (
        f"{'N':>4} {'states':>10} {'variant':>9} {'iter':>5} {'solve s':>8} {'max RSS':>8} "
        f"{'residual':>9} {'target':>8} {'N E||S-s*||^2':>17}"
    )
    print(head)
    print("-" * len(head))
    for N in args.sizes:
        for variant in args.variants:
            try:
                out = subprocess.run(
                    [sys.executable, __file__, "--worker", str(N), variant, args.before],
                    capture_output=True,
                    text=True,
                    timeout=args.timeout,
                    check=True,
                )
            except subprocess.TimeoutExpired:
                print(f"{N:>4} {'':>10} {variant:>9}   (not done after {args.timeout:.0f} s)")
                continue
            except subprocess.CalledProcessError as exc:
                last = (exc.stderr or "").strip().splitlines()[-1:] or ["?"]
                print(f"{N:>4} {'':>10} {variant:>9}   (failed: {last[0]})")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            ok = "" if r["residual"] <= r["target"] else " (above target)"
            print(
                f"{N:>4} {r['states']:>10,} {variant:>9} {r['iterations']:>5} "
                f"{r['seconds']:>8.1f} {r['maxrss'] / 1e9:>6.2f} GB {r['residual']:>9.1e} "
                f"{r['target']:>8.1e} {r['n_mse']:>17.12f}{ok}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
