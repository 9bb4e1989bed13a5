"""Benchmark of the exponential-tail tools: JSQ simulator throughput and the QBD solve.

Prints one table:

* the JSQ simulator (:mod:`sim.tails`, sorted-array O(1) data structure) in events
  per second per core at n = 10 and n = 1000 (eps = n^-1.5), best of ``--repeat``
  runs of ``--events`` events, timed in CPU seconds of the kernel;
* the exact JSQ QBD solve (:func:`numeric.tails.solve_jsq`, automatic phase
  truncation) for n = 5, eps = ``--eps``, wall seconds, side by side with an
  independent route: the same (untruncated-in-spread) chain on sorted queue
  vectors with queues capped, solved by sparse LU (scipy.sparse), whose answer
  ``E[eps qbar]`` must agree.  The sparse route is slow (fill-in of the LU
  factors: ~9 minutes for its 53130 states at the default eps = 0.3 on a loaded
  2-core machine) and is skipped above 100000 states.

Usage::

    .venv/bin/python benchmarks/bench_tails.py [--events 2e7] [--eps 0.3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from numeric.tails import solve_jsq  # noqa: E402
from sim.rng import seed_states  # noqa: E402
from sim.tails import TailsSpec, advance, fresh_state  # noqa: E402

#: Largest chain the sparse-LU route builds.
MAX_SPARSE_STATES = 100_000


def sim_rate(n: int, events: int, repeat: int) -> float:
    eps = n**-1.5
    best = 0.0
    st = seed_states(1, repeat + 1)
    bw = max(1, int(np.ceil(45 / eps / 2**20)))
    spec = TailsSpec(n, eps, (1.0,), (), 0, bw, 2**20 + 1)
    advance(spec, fresh_state(spec, st[0]), 1000)  # compile
    for i in range(repeat):
        _, sums = advance(spec, fresh_state(spec, st[i + 1]), events)
        best = max(best, sums["acc"][3] / sums["seconds"])
    return best


def sparse_route(n: int, eps: float, qmax: int) -> tuple[float, float, int]:
    import scipy.sparse
    import scipy.sparse.linalg

    t0 = time.perf_counter()
    lam = n * (1 - eps)
    states = list(itertools.combinations_with_replacement(range(qmax + 1), n))
    index = {s: i for i, s in enumerate(states)}
    rows, cols, vals = [], [], []
    for i, s in enumerate(states):
        if s[0] < qmax:
            rows.append(i), cols.append(index[tuple(sorted((s[0] + 1, *s[1:])))]), vals.append(lam)
        for p in range(n):
            if s[p] > 0:
                t = tuple(sorted((*s[:p], s[p] - 1, *s[p + 1 :])))
                rows.append(i), cols.append(index[t]), vals.append(1.0)
    N = len(states)
    Q = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(N, N))
    Q = Q - scipy.sparse.diags(np.asarray(Q.sum(axis=1)).ravel())
    A = Q.T.tolil()
    A[0, :] = 1.0
    b = np.zeros(N)
    b[0] = 1.0
    pi = scipy.sparse.linalg.spsolve(A.tocsc(), b)
    mean = float(pi @ np.array(states).sum(axis=1))
    return eps * mean, time.perf_counter() - t0, N


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=float, default=2e7)
    ap.add_argument("--eps", type=float, default=0.3)
    ap.add_argument("--qmax", type=int, default=0, help="queue cap of the sparse route")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rows = []
    for n in (10, 1000):
        rate = sim_rate(n, int(a.events), a.repeat)
        rows.append((f"JSQ simulator n={n}, eps=n^-1.5", f"{rate:.3e} events/s", "", ""))
    t0 = time.perf_counter()
    sol = solve_jsq(5, a.eps)
    t_qbd = time.perf_counter() - t0
    qmax = a.qmax or int(np.ceil(-30 / np.log(1 - a.eps) / 5)) + 3
    m_qbd = sol.law.scaled_mean(a.eps)
    label = f"QBD n=5, eps={a.eps} (D={sol.D}, {sol.phases} phases)"
    states = math.comb(qmax + 5, 5)
    if states > MAX_SPARSE_STATES:  # the sparse LU's fill-in would need many GB
        rows.append((label, f"{t_qbd:.2f} s", f"sparse LU skipped ({states} states)", ""))
    else:
        m_sp, t_sp, N = sparse_route(5, a.eps, qmax)
        rows.append(
            (
                label,
                f"{t_qbd:.2f} s",
                f"sparse LU, qmax={qmax} ({N} states): {t_sp:.2f} s",
                f"E[eps qbar] {m_qbd:.10f} vs {m_sp:.10f}",
            )
        )
    w = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        print("  ".join(c.ljust(k) for c, k in zip(r, w, strict=True)).rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
