"""Time derivation + kernel generation of the supermarket model for large buffers.

For each b and back end, three situations, each measured in a fresh Python
process so that nothing is shared by accident:

* **first**  -- empty cache directory: derive f, J, Hessian, Q, f~ with SymPy,
  print the source, load it, and (numba) compile every kernel on first call;
* **memory** -- a second ``kernels()`` call in that same process (memory cache);
* **disk**   -- a new process pointed at the now-filled cache directory: load the
  module from disk (no SymPy derivation) and call every kernel once (numba
  loads its compiled code from its own on-disk cache).

Run::

    .venv/bin/python benchmarks/bench_derive.py            # b = 10, 50, 100
    .venv/bin/python benchmarks/bench_derive.py --b 10 20  # other sizes
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

KERNELS = ("f", "jac", "jac_values", "hess_values", "Q", "ftilde", "rates")


def _worker(b: int, backend: str) -> dict[str, float]:
    t0 = time.perf_counter()
    from derive import supermarket

    t_import = time.perf_counter() - t0
    model = supermarket(b, 2)
    t1 = time.perf_counter()
    k = model.kernels(backend)
    t_kernels = time.perf_counter() - t1
    if backend == "numba":
        import numpy as np

        s = np.linspace(0.9, 0.01, b)
        p = np.array([0.95])
    else:
        import mpmath

        s = [mpmath.mpf(0.9) * mpmath.mpf(0.7) ** i for i in range(b)]
        p = [mpmath.mpf("0.95")]
    t2 = time.perf_counter()
    for name in KERNELS:
        getattr(k, name)(s, p)
    t_first_calls = time.perf_counter() - t2
    t3 = time.perf_counter()
    k_again = model.kernels(backend)
    t_memory = time.perf_counter() - t3
    assert k_again is k
    return {
        "import": t_import,
        "kernels": t_kernels,
        "first_calls": t_first_calls,
        "memory": t_memory,
        "source_lines": k.source.count("\n"),
    }


def _run(b: int, backend: str, cache: str) -> dict[str, float]:
    env = dict(os.environ, MFSTEIN_CACHE_DIR=cache)
    out = subprocess.run(
        [sys.executable, __file__, "--worker", str(b), backend],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Print the timing table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--b", type=int, nargs="+", default=[10, 50, 100])
    parser.add_argument("--backend", nargs="+", default=["numba", "mpmath"])
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(_worker(int(args.worker[0]), args.worker[1])))
        return 0
    header = (
        f"{'b':>4} {'backend':>7} {'lines':>6} | {'first: derive+gen':>17} {'+calls':>8} | "
        f"{'memory':>9} | {'disk: load':>10} {'+calls':>8} | {'speed-up':>8}"
    )
    print(header)
    print("-" * len(header))
    for b in args.b:
        for backend in args.backend:
            with tempfile.TemporaryDirectory(prefix="mfstein-bench-") as cache:
                first = _run(b, backend, cache)
                disk = _run(b, backend, cache)
            cold = first["kernels"] + first["first_calls"]
            warm = disk["kernels"] + disk["first_calls"]
            print(
                f"{b:>4} {backend:>7} {first['source_lines']:>6} | {first['kernels']:>16.2f}s "
                f"{first['first_calls']:>7.2f}s | {first['memory'] * 1e6:>7.1f}us | "
                f"{disk['kernels']:>9.3f}s {disk['first_calls']:>7.3f}s | {cold / warm:>7.0f}x"
            )
    print(
        "first = empty cache (SymPy derivation + code printing + load; +calls = first call "
        "of all 7 kernels, i.e. numba compilation); memory = second kernels() call; "
        "disk = new process, cache filled. Times exclude interpreter start and imports."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
