"""What printing only the claimed digits costs (docs/design.md, "Printed digits").

    .venv/bin/python benchmarks/bench_printed_digits.py
    .venv/bin/python benchmarks/bench_printed_digits.py --entries 100000 --repeat 7

Two ways of writing the same estimate arrays (a mean and a 95% half-width per entry,
as a simulation's ``marginal_pmf`` or ``n_cov``) side by side, alternating
repetitions in one run: the print of :meth:`sim.stats.Estimate.to_dict` (each
half-width with 2 digits rounded up, each mean down to that place, through
:func:`mfstein.ground.display.estimate_figures`) and the plain ``tolist`` of all 17
digits it replaced.  Prints a table of min and median seconds and the ratio of the
medians; say the load (``uptime``) with it.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable


def _time(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _side_by_side(
    new: Callable[[], object], old: Callable[[], object], repeat: int
) -> tuple[list[float], list[float]]:
    """Alternating repetitions (new, old, new, old, ...) after one warm-up of each."""
    new(), old()
    a, b = [], []
    for _ in range(repeat):
        a.append(_time(new))
        b.append(_time(old))
    return a, b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000, help="estimate entries")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions of each")
    args = parser.parse_args()

    import numpy as np

    from sim.stats import Estimate, plain

    rng = np.random.default_rng(1)
    mean = rng.random(args.entries)
    half = rng.random(args.entries) * 1e-3
    est = Estimate(mean, half)
    old = lambda: (plain(mean), plain(half))  # noqa: E731
    rows = [(f"{args.entries:,} estimates", *_side_by_side(est.to_dict, old, args.repeat))]

    print(f"{'what':<18} {'method':<22} {'min s':>9} {'median s':>9}")
    for what, a, b in rows:
        print(f"{what:<18} {'claimed digits (new)':<22} {min(a):9.4f} {statistics.median(a):9.4f}")
        print(f"{'':<18} {'all digits (before)':<22} {min(b):9.4f} {statistics.median(b):9.4f}")
        ratio = statistics.median(a) / statistics.median(b)
        print(f"{'':<18} {'ratio of medians':<22} {ratio:9.2f}")


if __name__ == "__main__":
    main()
