"""Persistent-Idle simulator throughput: server-slots per second per core.

Prints a table for n = 2, 10, 100 servers (batches ``0:.4,2:.2,4:.3,6:.1`` scaled so
the load is about 0.8, capacities ``1:.5,2:.3,3:.2`` for every server) with:

* :func:`sim.pi_kernels.run_slots` under PI (path-bound check on, the default) and
  with the check off, and under JIQ;
* a pure NumPy reference of PI written here (one slot per Python iteration, the
  capacities of all servers drawn as one vector) -- the straightforward
  implementation the compiled loop replaces.

Usage::

    .venv/bin/python benchmarks/bench_pi.py [--slots 2e7] [--repeat 3]

Each figure is the best of ``--repeat`` runs timed in CPU seconds of this process
(``time.process_time``), so it is a per-core rate on a shared machine.  The goal
is at least 5e7 server-slots/s for the compiled PI loop.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from derive.models.persistent_idle import make_model  # noqa: E402
from sim import pi  # noqa: E402
from sim.rng import seed_states  # noqa: E402

SERVICE = "1:.5,2:.3,3:.2"
GOAL = 5e7


def arrivals(n: int, load: float = 0.8) -> str:
    """Batches of ``6 k`` jobs (``k = ceil(n / 4)``) with probability ``p``: load ``load``."""
    size = 6 * max(1, -(-n // 4))
    p = load * n * 1.7 / size
    return f"0:{1 - p!r},{size}:{p!r}"


def compiled_rate(n: int, policy: str, slots: int, repeat: int, check: bool) -> float:
    model = make_model(arrivals(n), SERVICE, n)
    spec = pi.PISpec(model, policy, check)
    state = pi.fresh_state(spec, seed_states(1, 1)[0])
    state, _ = pi.advance(spec, state, 1000)  # compile / load the cache, warm up
    best = 0.0
    for _ in range(repeat):
        _, sums = pi.advance(spec, state, slots)
        best = max(best, slots * n / sums["seconds"])
    return best


def numpy_rate(n: int, slots: int, repeat: int) -> float:
    """PI (eq. (4)) in NumPy: per slot, one batch, a uniform idle server, a capacity vector."""
    model = make_model(arrivals(n), SERVICE, n)
    av = np.array(model.arrivals.values)
    ap = np.array(model.arrivals.probs)
    sv = np.array(model.services[0].values)
    sp = np.array(model.services[0].probs)
    best = 0.0
    for _ in range(repeat):
        gen = np.random.default_rng(1)
        q = np.zeros(n, dtype=np.int64)
        li = 0
        qsum = np.zeros(n, dtype=np.int64)
        t0 = time.process_time()
        a_all = gen.choice(av, size=slots, p=ap)
        for t in range(slots):
            idle = np.flatnonzero(q == 0)
            if idle.size:
                li = idle[gen.integers(idle.size)]
            q[li] += a_all[t]
            q = np.maximum(q - gen.choice(sv, size=n, p=sp), 0)
            qsum += q
        best = max(best, slots * n / (time.process_time() - t0))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slots", type=float, default=2e7, help="slots per timing at n = 2")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--numpy-slots", type=float, default=2e4)
    args = ap.parse_args()
    rows = []
    for n in (2, 10, 100):
        slots = max(10_000, int(args.slots * 2 / n))
        rows.append(
            (
                n,
                compiled_rate(n, "pi", slots, args.repeat, True),
                compiled_rate(n, "pi", slots, args.repeat, False),
                compiled_rate(n, "jiq", slots, args.repeat, True),
                numpy_rate(n, int(args.numpy_slots), 1),
            )
        )
    head = (
        f"{'n':>4} {'PI':>12} {'PI no check':>12} {'JIQ':>12} {'NumPy PI':>12} "
        f"{'PI / NumPy':>10} {'PI >= 5e7':>9}"
    )
    print("server-slots per second per core (best of", args.repeat, "runs)")
    print(head)
    print("-" * len(head))
    for n, p, pn, j, npy in rows:
        ok = "yes" if p >= GOAL else "no"
        print(f"{n:>4} {p:>12.3g} {pn:>12.3g} {j:>12.3g} {npy:>12.3g} {p / npy:>10.0f} {ok:>9}")


if __name__ == "__main__":
    main()
