"""Simulator throughput: events per second per core, side by side with a baseline.

Prints a table with:

* the aggregated simulator (:mod:`mfstein.families.supermarket.aggregated`) at N = 10 and N = 1000,
  b = 10, d = 2, lam = 1 - 0.1/N^0.05 (the core paper, Table 1), against a
  straightforward compiled simulator of the same chain (numba, NumPy's
  ``np.random`` inside njit, all 2b rates recomputed per event, an exponential
  holding time drawn per event, the event found by a linear scan of the
  cumulative rates, ``||S - s*||^2`` recomputed in O(b) per event);
* the per-server simulator (:mod:`mfstein.families.supermarket.perserver`, power-of-2, FIFO,
response
  times) at N = 1000;
* optionally (``--table``) the wall time of ``mfstein table`` reproducing Table 1
  with ``--table-steps`` events per replication.

Usage::

    .venv/bin/python benchmarks/bench_sim.py [--events 5e7] [--table] [--table-steps 1e8]

Each figure is the best of ``--repeat`` runs, timed in CPU seconds of this
process (``time.process_time``), so it is a per-core rate even when the machine
is shared; the table's wall time is wall-clock time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numba
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mfstein.families.supermarket import aggregated, engine, perserver  # noqa: E402
from mfstein.families.supermarket.simulate import reference_point  # noqa: E402
from sim.rng import seed_states  # noqa: E402


@numba.njit(cache=True)
def baseline(n, steps, lam, d, s_star, seed):
    """The straightforward simulator: rates, exponential clock and error recomputed
    per event (O(b) per event), NumPy's RNG."""
    np.random.seed(seed)  # noqa: NPY002 (numba supports only the legacy API in njit)
    b = s_star.shape[0]
    N = n[0]
    rates = np.empty(2 * b)
    t = 0.0
    area = 0.0
    for _ in range(steps):
        total = 0.0
        for k in range(1, b + 1):
            a = lam * N * ((n[k - 1] / N) ** d - (n[k] / N) ** d)
            rates[2 * k - 2] = a
            rates[2 * k - 1] = n[k] - n[k + 1]
            total += a + n[k] - n[k + 1]
        blocked = lam * N * (n[b] / N) ** d
        total += blocked
        dt = np.random.exponential(1.0 / total)  # noqa: NPY002
        err = 0.0
        for k in range(b):
            e = n[k + 1] / N - s_star[k]
            err += e * e
        area += dt * err
        t += dt
        u = np.random.random() * total  # noqa: NPY002
        acc = 0.0
        for i in range(2 * b):
            acc += rates[i]
            if u < acc:
                k = i // 2 + 1
                n[k] += 1 if i % 2 == 0 else -1
                break
    return N * area / t


def _best(fn, repeat):
    best = np.inf
    out = None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def bench_aggregated(N, events, repeat):
    lam = 1 - 0.1 / N**0.05
    b, d = 10, 2
    s_star = np.array(reference_point(repr(lam), b, d, True, "pod", N))
    spec = engine.Spec(
        N=N, lam=lam, b=b, d=d, replacement=True, policy="pod", s_star=tuple(s_star)
    )
    state = engine.fresh_state(spec, seed_states(1, 1)[0])
    state, _ = engine.advance(spec, state, 10_000)  # compile / warm

    def fast():
        return engine.advance(spec, state, events)[1]

    t_fast, sums = _best(fast, repeat)
    mse_fast = sums["scalars"][aggregated.SUMSQ] / sums["scalars"][aggregated.TIME] / N
    n0 = aggregated.initial_counts(N, s_star)
    baseline(n0.copy(), 1000, lam, d, s_star, 1)
    base_events = max(events // 5, 10**6)
    t_base, mse_base = _best(lambda: baseline(n0.copy(), base_events, lam, d, s_star, 1), repeat)
    return events / t_fast, base_events / t_base, mse_fast, mse_base


def bench_per_server(N, events, repeat):
    lam = 1 - 0.1 / N**0.05
    b, d = 10, 2
    s_star = reference_point(repr(lam), b, d, True, "pod", N)
    spec = engine.Spec(
        N=N,
        lam=lam,
        b=b,
        d=d,
        replacement=True,
        policy="pod",
        engine="per-server",
        s_star=tuple(s_star),
    )
    state = engine.fresh_state(spec, seed_states(1, 1)[0])
    state, _ = engine.advance(spec, state, 10_000)
    t, sums = _best(lambda: engine.advance(spec, state, events)[1], repeat)
    jobs = sums["scalars"][perserver.JOBS]
    return events / t, jobs / t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=float, default=5e7)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--table", action="store_true", help="also time `mfstein table`")
    ap.add_argument("--table-steps", type=float, default=1e8)
    ap.add_argument("--table-reps", type=int, default=10)
    args = ap.parse_args()
    events = int(args.events)
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'simulator':<34}{'N':>7}{'events/s (1 core)':>20}{'N E||S-s*||^2':>16}")
    for N in (10, 1000):
        fast, base, m_fast, m_base = bench_aggregated(N, events, args.repeat)
        print(f"{'aggregated (families.supermarket)':<34}{N:>7}{fast:>20.3e}{m_fast:>16.4f}")
        print(f"{'baseline (np.random, O(b)/event)':<34}{N:>7}{base:>20.3e}{m_base:>16.4f}")
        print(f"{'  speed-up':<34}{'':>7}{fast / base:>19.1f}x")
    ev, jobs = bench_per_server(1000, max(events // 5, 10**6), args.repeat)
    print(f"{'per-server pod (FIFO, resp. times)':<34}{1000:>7}{ev:>20.3e}{'':>16}")
    print(f"{'  completed jobs/s':<34}{'':>7}{jobs:>20.3e}")
    if args.table:
        cmd = [
            os.path.join(ROOT, ".venv", "bin", "mfstein"),
            "table",
            "--gamma",
            "0.1",
            "--alpha",
            "0.05",
            "--N",
            "10,100,1000,10000",
            "--sim-steps",
            str(int(args.table_steps)),
            "--reps",
            str(args.table_reps),
            "--no-progress",
        ]
        t0 = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        wall = time.perf_counter() - t0
        print(out)
        print(
            f"mfstein table (Table 1, {args.table_reps} reps x {args.table_steps:.0e} steps "
            f"per N, {os.cpu_count()} cores): {wall:.1f} s wall"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
