"""Benchmark of numba compile time of the generated kernels against b.

Numba's type inference takes time superlinear in the length of one function;
the numba back end therefore splits a long kernel into compiled helpers of at
most ``chunk_size`` statements (:class:`derive.backends.NumbaBackend`).  This
script times, for the supermarket model (``2 b`` transitions), the first call
of ``rates_into`` -- i.e. its compilation -- once per chunk size, side by side
with the unsplit kernel (``none``).  Each (b, chunk) pair runs in a fresh child
process with its own empty kernel cache directory, so nothing is reused.

    .venv/bin/python benchmarks/bench_compile.py                    # b = 100 200 300 600
    .venv/bin/python benchmarks/bench_compile.py --b 100 200 --chunks 150 none

Columns: ``generate`` = derivation, CSE and writing of the module
(``model.kernels("numba")``); ``compile`` = first call of ``rates_into``;
``call`` = one later call (microseconds); ``max |diff|`` = largest difference
of the rates from those of the first chunk size listed (0 means bit-identical).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_B = (100, 200, 300, 600)
DEFAULT_CHUNKS = ("none", "150")


def worker(b: int, chunk: str, lam: float) -> None:
    import numpy as np

    from derive.backends import get_backend
    from derive.models import load_model

    get_backend("numba").chunk_size = None if chunk == "none" else int(chunk)
    model = load_model("supermarket", b=b)
    t0 = time.perf_counter()
    k = model.kernels("numba")
    t1 = time.perf_counter()
    p = np.array([lam if str(q) == "lam" else 1.0 for q in model.params])
    s = lam ** (2.0 ** np.arange(1, b + 1) - 1)  # the mean-field fixed point of Po2
    out = np.empty(len(model.transitions))
    k.rates_into(s, p, out)
    t2 = time.perf_counter()
    reps = 200
    for _ in range(reps):
        k.rates_into(s, p, out)
    t3 = time.perf_counter()
    print(
        json.dumps(
            {
                "generate": t1 - t0,
                "compile": t2 - t1,
                "call_us": (t3 - t2) / reps * 1e6,
                "rates": out.tolist(),
                "nt": len(out),
            }
        )
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--b", nargs="+", type=int, default=list(DEFAULT_B), help="buffer sizes b")
    ap.add_argument(
        "--chunks",
        nargs="+",
        default=list(DEFAULT_CHUNKS),
        help="statements per compiled helper; 'none' = no splitting",
    )
    ap.add_argument("--lam", type=float, default=0.9, help="arrival rate per server")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per child process")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(int(args.worker[0]), args.worker[1], args.lam)
        return 0
    for c in args.chunks:
        if c != "none" and not (c.isdigit() and int(c) > 0):
            ap.error(f"--chunks takes positive integers or 'none', got {c!r}.")
    head = (
        f"{'b':>4} {'trans':>5} {'chunk':>6} {'generate s':>10} {'compile s':>10} "
        f"{'call us':>8} {'max |diff|':>10}"
    )
    print(head)
    print("-" * len(head))
    for b in args.b:
        ref = None
        for chunk in args.chunks:
            cache = tempfile.mkdtemp(prefix="mfstein-bench-compile-")
            env = {**os.environ, "MFSTEIN_CACHE_DIR": cache}
            cmd = [sys.executable, __file__, "--worker", str(b), chunk, "--lam", str(args.lam)]
            try:
                run = subprocess.run(
                    cmd, capture_output=True, text=True, timeout=args.timeout, check=True, env=env
                )
            except subprocess.TimeoutExpired:
                print(f"{b:>4} {'':>5} {chunk:>6}   (timeout > {args.timeout:.0f} s)", flush=True)
                continue
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            r = json.loads(run.stdout.strip().splitlines()[-1])
            ref = r["rates"] if ref is None else ref
            diff = max(abs(x - y) for x, y in zip(r["rates"], ref, strict=True))
            print(
                f"{b:>4} {r['nt']:>5} {chunk:>6} {r['generate']:>10.2f} {r['compile']:>10.2f} "
                f"{r['call_us']:>8.1f} {diff:>10.1e}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
