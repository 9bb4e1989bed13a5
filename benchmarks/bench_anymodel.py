"""Benchmark of the any-model layer: generic simulator and generic exact assembly.

    .venv/bin/python benchmarks/bench_anymodel.py
    .venv/bin/python benchmarks/bench_anymodel.py --steps 5e7 --repeat 3

Simulation: the supermarket model (b = 10, d = 2, lam = 0.9, N = 1000) on the
generic simulator (:mod:`sim.generic`, compiled from the model's generated
kernels) and on the registered fast path (:mod:`mfstein.families.supermarket.aggregated` through
:func:`sim.api.simulate`); events per second *per core* (CPU time of the event
loops, so a loaded machine still gives the per-core rate), best of
``--repeat`` runs after a warm-up run that compiles.

Exact: building the generator of the supermarket chain at N = 10, b = 10
(184,756 states) by the one route (lattice from the declared state space,
breadth-first search with exact rates, CSR assembly; :mod:`numeric.exact.lattice`)
-- and the complete solves (:func:`numeric.exact.solve_exact`, the supermarket's
fast path on the same chain with its own statistics, against
``numeric.exact.solve(..., route="general")``), best of ``--repeat`` after a
warm-up.
"""

from __future__ import annotations

import argparse
import time

#: Events per second per core of the C++ reference simulator measured for this project.
ANCHOR = 2.5e7
#: Goals (events/s per core) of issue 11.
GOALS = {"generic": 4e7, "supermarket": 1.5e8}


def _int(text: str) -> int:
    return int(float(text))


def bench_sim(steps: int, repeat: int) -> list[tuple[str, float, float, float]]:
    from derive.models import load_model
    from sim.api import simulate

    m = load_model("supermarket", b=10)
    rows = []
    for engine in ("generic", "fast"):
        simulate(m, {"lam": "0.9"}, N=1000, engine=engine, steps=10**5, reps=1, workers=1)
        best = None
        for _ in range(repeat):
            r = simulate(
                m, {"lam": "0.9"}, N=1000, engine=engine, steps=steps, reps=1, workers=1, seed=1
            )
            if best is None or r.events_per_second > best.events_per_second:
                best = r
        assert best is not None
        rows.append(
            (
                f"{best.engine} simulator",
                best.events_per_second,
                float(best.n_mse.mean),
                float(best.n_mse.ci95),
            )
        )
    return rows


def _generic_assembly(m, p, N):
    import numpy as np
    import scipy.sparse as sps

    from numeric.exact.lattice import ExactRates, make_lattice, reachable, round_to_lattice

    lat = make_lattice(m, N)
    n0 = round_to_lattice(lat, [0] * m.n)
    rates = ExactRates(m, {"lam": "0.9"})
    reach = reachable(m.kernels("numba"), rates, lat, p, n0, lat.count_bound(m.n))
    S = reach.states.shape[0]
    indptr = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(np.bincount(reach.rows, minlength=S), out=indptr[1:])
    off = sps.csr_matrix((reach.vals, reach.cols, indptr), shape=(S, S))
    QT = (off.T - sps.diags(np.asarray(off.sum(axis=1)).ravel())).tocsr()
    QT.sort_indices()
    return S, QT.nnz


def _best(fn, repeat):
    out, best = None, float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def bench_exact(repeat: int) -> list[tuple[str, int, int, float]]:
    import numpy as np

    from derive.models import load_model
    from mfstein.families.supermarket.exact import solve_exact
    from numeric.exact.general import solve

    m = load_model("supermarket", b=10)
    p = np.array([0.9])
    N = 10
    rows = []
    _generic_assembly(m, p, N)
    t, (S, nnz) = _best(lambda: _generic_assembly(m, p, N), repeat)
    rows.append(("assembly, generic (lattice + BFS + CSR)", S, nnz, t))
    solve_exact(3, "0.9", 10)
    t, r = _best(lambda: solve_exact(N, "0.9", 10), repeat)
    rows.append((f"full solve, solve_exact wrapper ({r.solver})", r.states, 0, t))
    solve(m, {"lam": "0.9"}, N=3, route="general")
    t, g = _best(lambda: solve(m, {"lam": "0.9"}, N=N, route="general"), repeat)
    rows.append((f"full solve, generic (exact.general.solve, {g.solver})", g.states, 0, t))
    assert abs(g.n_mse - r.n_mse) < 1e-8, (g.n_mse, r.n_mse)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=_int, default=2 * 10**7, help="events per run")
    ap.add_argument("--repeat", type=int, default=3, help="runs per case (best is reported)")
    args = ap.parse_args()
    print(f"simulation: supermarket b = 10, d = 2, lam = 0.9, N = 1000, {args.steps:.2g} events")
    print(
        f"{'engine':<24} {'events/s per core':>18} {'x anchor':>9} {'goal':>9} "
        f"{'N E||S-s*||^2 (95% CI)':>26}"
    )
    for name, eps, mse, ci in bench_sim(args.steps, args.repeat):
        goal = GOALS.get(name.split()[0], float("nan"))
        print(
            f"{name:<24} {eps:>18.3e} {eps / ANCHOR:>9.2f} {goal:>9.1e} "
            f"{mse:>17.4f} ± {ci:.4f}"
        )
    print(f"{'C++ anchor (measured once)':<24} {ANCHOR:>18.3e} {1.0:>9.2f}")
    print()
    print("exact: supermarket b = 10, d = 2, lam = 0.9, N = 10")
    print(f"{'route':<58} {'states':>9} {'nnz(Q^T)':>10} {'seconds':>9}")
    rows = bench_exact(args.repeat)
    for name, S, nnz, t in rows:
        print(f"{name:<58} {S:>9,} {nnz if nnz else '':>10} {t:>9.3f}")
    print(f"generic / today assembly time: {rows[1][3] / rows[0][3]:.2f}x")


if __name__ == "__main__":
    main()
