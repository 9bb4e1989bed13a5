"""Issue 16, before and after in one run: start-up, large buffers, float64, simulator, threads.

Run:  .venv/bin/python benchmarks/bench_house.py [--before-rev 1969b49] [--timeout 60]

"before" is the tree of ``--before-rev`` (default ``1969b49``, the last commit
before the issue-16 work), exported with ``git archive REV | tar -x`` into a
temporary directory and run with ``PYTHONPATH`` pointing at it (nothing is
installed); "after" is this working tree.  Every figure comes from a fresh child
interpreter of the tree in question, with its own empty kernel cache
(``MFSTEIN_CACHE_DIR``) created for this run; a child that does not finish within
``--timeout`` seconds is killed and printed as ``> T s (timeout)``.

Rows (wall-clock seconds unless stated; the machine may be shared -- the load
average is printed with the table -- so the bound rows also give the child's
CPU seconds):

* ``mfstein --help`` and ``table --help``: best of ``--repeat`` runs
  (:mod:`bench_startup` does the timing);
* ``table, tiny run``: ``mfstein table`` for one N with 1000 simulated events,
  i.e. its fixed overhead (imports, automatic buffer, bound, worker start-up),
  best of two runs after one that fills the caches;
* ``bound``: :func:`numeric.solve` at 50 digits for b = 200, 400, 1000 at
  lam = 1.2 (every level matters, nothing can be truncated; the before tree
  cannot solve lam > 1 and says so) and lam = 0.9 (doubly exponential tail,
  truncated by the after tree).  "first use" runs with an empty kernel cache
  (kernel generation included), "kernels cached" is the next run with that
  cache.  When both trees finish, the note says on how many of the 50 digits
  their constants agree;
* ``float64 c, b = 1000``: one :func:`numeric.constant_float64` evaluation at
  lam = 0.9 after a warm-up call (numba compilation), best of 20;
* ``Newton step, b = 1000``: the linear solve inside the float64 fixed point
  (J at lam = 0.95), dense LU (NumPy, one BLAS thread, as the before tree
  did) against the O(b) banded elimination (both measured in the after
  tree), best of 20;
* ``aggregated simulator, b = 50``: events per CPU second (N = 1000,
  lam = 0.95, 2e7 events, best of 3) -- fixed thinning of the second-moment
  accumulation (before) against thinning scaled with b (after);
* ``exact N = 10, b = 10``: :func:`numeric.exact.solve_exact` while two busy
  loops (started and stopped by this script) occupy the cores: the before tree
  with the libraries' default BLAS threads, the after tree with its default
  limit (1 thread) and with ``MFSTEIN_BLAS_THREADS=all`` (no limit).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from bench_startup import HELP, TABLE, _run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Child snippets; each prints one JSON object on its last line.
BOUND = """
import json, time
from mfstein.families.supermarket.solver import solve_supermarket
t, cpu = time.perf_counter(), time.process_time()
r = solve_supermarket({lam!r}, {b}, dps=50)
out = {{"s": time.perf_counter() - t, "cpu": time.process_time() - cpu, "c": str(r.constant)}}
print(json.dumps(out))
"""
FLOAT64 = """
import json, time
from numeric import constant_float64
t = time.perf_counter()
constant_float64([0.9], 1000)
first = time.perf_counter() - t
best = float("inf")
for _ in range(20):
    t = time.perf_counter()
    constant_float64([0.9], 1000)
    best = min(best, time.perf_counter() - t)
print(json.dumps({"s": best, "first": first}))
"""
NEWTON = """
import json, sys
import mpmath
import numpy as np
from numeric import equilibrium, sweep
from mfstein.families.supermarket.member import supermarket_member
from numeric.linalg.tridiagonal import float64_matrix
from numeric.precision import limited_blas
sweep._compiled_kernels()
lam = mpmath.mpf("0.95")
member = supermarket_member(1000, 2, lam, mpmath.mpf(1))
s = equilibrium("0.95", 1000, dps=20)
J = float64_matrix(member.kernels(1000).jac(s, member.params()))
f = np.sin(np.arange(1000.0))
index = np.argwhere(J != 0).astype(np.int64)
values = J[index[:, 0], index[:, 1]].copy()
sys.path.insert(0, "benchmarks")
from bench_bound import _best

with limited_blas():  # one thread for both: the algorithms, not the threads, are compared
    dense = _best(lambda: np.linalg.solve(J, f), repeat=20)
banded = _best(lambda: sweep._tridiagonal_step(index, values, f.copy()), repeat=20)
x = f.copy()
sweep._tridiagonal_step(index, values, x)
err = float(np.max(np.abs(x - np.linalg.solve(J, f))) / np.max(np.abs(x)))
print(json.dumps({"dense": dense, "banded": banded, "err": err}))
"""
SIM = """
import json, time
import numpy as np
from mfstein.families.supermarket import aggregated, engine
from mfstein.families.supermarket.simulate import reference_point
from sim.rng import seed_states
N, b, lam = 1000, 50, 0.95
s_star = tuple(reference_point(repr(lam), b, 2, True, "pod", N))
spec = engine.Spec(N=N, lam=lam, b=b, d=2, replacement=True, policy="pod", s_star=s_star)
state = engine.fresh_state(spec, seed_states(1, 1)[0])
state, _ = engine.advance(spec, state, 10_000)
best = float("inf")
for _ in range(3):
    t = time.process_time()
    engine.advance(spec, state, 20_000_000)
    best = min(best, time.process_time() - t)
print(json.dumps({"rate": 2e7 / best, "thin": getattr(spec, "thinning", spec.thin_bits)}))
"""
EXACT = """
import json, time
from numeric import heavy_traffic_lambda
from numeric.exact import solve_exact
import mpmath
lam = mpmath.nstr(heavy_traffic_lambda("0.1", "0.05", 10), 20)
solve_exact(2, lam, 10)
t = time.perf_counter()
r = solve_exact({N}, lam, 10)
print(json.dumps({{"s": time.perf_counter() - t, "mse": float(r.n_mse)}}))
"""
TINY_TABLE = (
    "import sys\nsys.argv = ['mfstein', 'table', '--gamma', '0.1', '--alpha', '0.05', '--N', '10',"
    " '--sim-steps', '1000', '--reps', '1', '--workers', '1', '--no-progress']\n"
    "from mfstein.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
)


def export(rev: str) -> str:
    """``git archive rev`` unpacked into a new temporary directory."""
    out = tempfile.mkdtemp(prefix="mfstein-before-")
    archive = subprocess.run(
        ["git", "-C", ROOT, "archive", rev], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", out], input=archive, check=True)
    return out


def child(tree: str, code: str, timeout: float, **env: str) -> dict | None:
    """Run ``code`` in a fresh interpreter on ``tree``; its last JSON line, or None on timeout."""
    full = dict(os.environ, PYTHONPATH=tree, **env)
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        env=full,
        cwd=tree,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None
    lines = out.strip().splitlines()
    if proc.returncode != 0 or not lines:
        last = (err.strip().splitlines() or ["no output"])[-1]
        return {"error": "fails: " + last.rpartition("Error: ")[2][:44]}
    return json.loads(lines[-1])


def wall(tree: str, code: str, timeout: float, repeat: int, **env: str) -> float | None:
    """Best wall time of ``repeat`` fresh-interpreter runs of ``code`` (None on timeout)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        if child(tree, code + "\nprint('{}')\n", timeout, **env) is None:
            return None
        best = min(best, time.perf_counter() - t)
    return best


def seconds(value: float | None, timeout: float, unit: str = "s") -> str:
    if value is None:
        return f"> {timeout:.0f} s (timeout)"
    if unit == "ms":
        return f"{value * 1e3:.3g} ms"
    return f"{value:.3g} s" if value >= 0.01 else f"{value * 1e3:.3g} ms"


def busy_loops(n: int) -> list[subprocess.Popen]:
    """``n`` processes spinning on a core each (stopped by :func:`stop`)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
        p.wait()


def agree(c1: str, c2: str) -> int:
    """Leading significant digits on which two decimal strings agree."""
    import mpmath

    with mpmath.workdps(80):
        x, y = mpmath.mpf(c1), mpmath.mpf(c2)
        if x == y:
            return 50
        return max(0, int(-mpmath.log10(abs(x - y) / abs(x))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before-rev", default="1969b49")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per child (default 60)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per start-up figure")
    ap.add_argument("--buffers", default="200,400,1000", help="b values of the bound rows")
    a = ap.parse_args()
    T = a.timeout
    # a terminated run still stops its busy loops and removes its temporary trees
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    before = export(a.before_rev)
    trees = {"before": before, "after": ROOT}
    caches = {name: tempfile.mkdtemp(prefix=f"mfstein-cache-{name}-") for name in trees}
    rows: list[tuple[str, str, str, str]] = []
    load0 = os.getloadavg()[0]
    t_start = time.perf_counter()

    def both(label: str, fn, note=lambda r1, r2: "") -> None:
        r = {name: fn(name, tree) for name, tree in trees.items()}
        rows.append((label, r["before"][0], r["after"][0], note(r["before"][1], r["after"][1])))
        print(f"  {label}: {r['before'][0]} | {r['after'][0]}", file=sys.stderr, flush=True)

    try:
        # start-up (bench_startup's timing of --help and table --help)
        both("mfstein --help", lambda n, t: (seconds(_run(t, HELP, a.repeat)[0], T), None))
        both("mfstein table --help", lambda n, t: (seconds(_run(t, TABLE, a.repeat)[0], T), None))

        def tiny(name: str, tree: str):
            env = {"MFSTEIN_CACHE_DIR": caches[name]}
            if wall(tree, TINY_TABLE, 4 * T, 1, **env) is None:  # fills the caches
                return seconds(None, 4 * T), None
            return seconds(wall(tree, TINY_TABLE, T, 2, **env), T), None

        both("table, tiny run (1000 events)", tiny)

        # the 50-digit constant
        refused: dict[tuple[str, str], int] = {}  # (tree, lam) -> b at which it failed
        for b in (int(x) for x in a.buffers.split(",")):
            for lam in ("1.2", "0.9"):
                fresh = {name: tempfile.mkdtemp(prefix="mfstein-cache-") for name in trees}
                failed: set[str] = set()  # trees whose first use timed out
                for what in ("first use", "kernels cached"):

                    def bound(
                        name: str, tree: str, lam=lam, b=b, fresh=fresh, failed=failed, what=what
                    ):
                        if name in failed:
                            return "not run (first use timed out)", None
                        if (name, lam) in refused:
                            return f"not run (fails at b={refused[name, lam]})", None
                        code = BOUND.format(lam=lam, b=b)
                        r = child(tree, code, T, MFSTEIN_CACHE_DIR=fresh[name])
                        if r is None:
                            failed.add(name)
                            return seconds(None, T), None
                        if "error" in r:
                            if what != "first use":
                                refused[name, lam] = b
                            return r["error"], None
                        return f"{seconds(r['s'], T)} (cpu {seconds(r['cpu'], T)})", r["c"]

                    def note(c1, c2):
                        return f"{agree(c1, c2)} digits agree" if c1 and c2 else ""

                    both(f"bound lam={lam} b={b} 50 digits ({what})", bound, note)
                for c in fresh.values():
                    shutil.rmtree(c, ignore_errors=True)

        def f64(name: str, tree: str):
            r = child(tree, FLOAT64, T, MFSTEIN_CACHE_DIR=caches[name])
            if r is None or "error" in r:
                return (seconds(None, T) if r is None else r["error"]), None
            return f"{r['s'] * 1e3:.3g} ms", f"first call {r['first']:.1f} s"

        both(
            "float64 c, lam=0.9, b=1000 (per call)",
            f64,
            lambda x, y: " | ".join(v or "-" for v in (x, y)),
        )
        r = child(ROOT, NEWTON, 4 * T, MFSTEIN_CACHE_DIR=caches["after"])
        if r and "error" not in r:
            rows.append(
                (
                    "Newton step b=1000: dense LU | banded",
                    f"{r['dense'] * 1e3:.3g} ms",
                    f"{r['banded'] * 1e3:.3g} ms",
                    f"after tree, rel. diff {r['err']:.1e}",
                )
            )

        def sim(name: str, tree: str):
            r = child(tree, SIM, 4 * T)
            if r is None or "error" in r:
                return (seconds(None, 4 * T) if r is None else r["error"]), None
            return f"{r['rate']:.3g} ev/s", r["thin"]

        both(
            "aggregated simulator b=50 (events/CPU s)",
            sim,
            lambda x, y: f"thinning 2^-{x} | 2^-{y}",
        )

        for name, tree in trees.items():  # compile the kernels before loading the machine
            child(tree, EXACT.format(N=2), 4 * T, MFSTEIN_CACHE_DIR=caches[name])
        hogs = busy_loops(2)
        try:

            def exact(env: dict):
                def run(name: str, tree: str):
                    if name == "before" and env:
                        return "-", None
                    code = EXACT.format(N=10)
                    r = child(tree, code, T, MFSTEIN_CACHE_DIR=caches[name], **env)
                    if r is None or "error" in r:
                        return (seconds(None, T) if r is None else r["error"]), None
                    return seconds(r["s"], T), None

                return run

            both("exact N=10 b=10, 2 busy loops (default)", exact({}))
            both(
                "exact N=10 b=10, 2 busy loops, MFSTEIN_BLAS_THREADS=all",
                exact({"MFSTEIN_BLAS_THREADS": "all"}),
            )
        finally:
            stop(hogs)
    finally:
        shutil.rmtree(before, ignore_errors=True)
        for c in caches.values():
            shutil.rmtree(c, ignore_errors=True)

    head = ("case", f"before ({a.before_rev})", "after (working tree)", "note")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(
        f"load average {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end, "
        f"{os.cpu_count()} cores; total {time.perf_counter() - t_start:.0f} s; timeout {T:.0f} s"
    )
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


if __name__ == "__main__":
    main()
