"""Issue 25: mfstein's routes side by side on big and new models (and rmf_tool's).

Run:  .venv/bin/python benchmarks/bench_general_route.py [--tree DIR] [--rmf-python PY]
      [--quick] [--timeout 300]

Every row runs in a fresh child interpreter of the tree under test (default this
working tree; ``--tree DIR`` runs a checkout of another revision, e.g. ``git
worktree add /tmp/before main``, through ``PYTHONPATH``) with its own empty
kernel and numba caches (``MFSTEIN_CACHE_DIR``, ``NUMBA_CACHE_DIR``), so "first"
includes code generation and compiling; "warm" is the next call in the same
child.  A child that does not finish within ``--timeout`` seconds prints
``> T s``; a route the tree does not have prints ``-``.

Rows (lam = 0.9; "user file" is ``benchmarks/models/supermarket_user.py``, the
supermarket model without its fast path):

* user file, order 1, 30 digits, first run, b = 100, 200 (the whole child:
  imports, model, kernels, solve);
* user file, warm, b = 100, against the fast path (library model) in the same
  child, and their ratio (each the best of 5 calls);
* user file, float64 route (``precision="float64"``), b = 200, 1000: the
  ``numeric.solve`` call in a fresh child (model built first) and the whole child;
* user file, order 2, 30 digits, b = 100, 200;
* cache model (``cache_random``, 20 coordinates), float64 order 2, first call
  (nothing cached: neither mfstein's kernels nor numba's code) and warm;
* SIR, first answer (30 digits) in a fresh child and the warm call; the same in
  float64 (``precision="float64"``);
* rmf_tool (when ``--rmf-python`` names an interpreter that imports ``rmf_tool``):
  the supermarket with its ``DDPP`` class at b = 200, order 1 (``meanFieldExpansionSteadyState``
  with ``order=1``), and SIR (first call, best of 5 warm calls on the same object),
  each against mfstein's float64 route.

The float64 rows start their clock after importing SciPy and the route's modules,
as rmf_tool's start after ``import rmf_tool`` (which imports NumPy, SciPy and
SymPy); "total" is the whole child, imports included.

"warm" is always the best of 5 calls in the same child.  The load average is
printed before and after (``os.getloadavg``): on a shared machine rerun on a quiet
one before quoting a row.

Each row also prints the digits the route claims and, where both exist, on
how many digits it agrees with the 30-digit answer of the same tree.
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PRELUDE = f"""
import json, sys, time
sys.path.insert(0, {os.path.join(ROOT, "benchmarks", "models")!r})
t_start = time.time()
import mpmath
import numeric
from derive.models import load_model
from supermarket_user import supermarket_user
def s(x):
    return mpmath.nstr(x, 32) if x is not None else None
def best_of(k, call):
    best, result = 1e9, None
    for _ in range(k):
        t0 = time.perf_counter(); result = call(); best = min(best, time.perf_counter() - t0)
    return result, best
"""

CASES = {
    "user_first": """
b = {b}
m = supermarket_user(b)
r = numeric.solve(m, {{"lam": "0.9"}}, dps=30)
out = {{"t": time.time() - t_start, "c": s(r.constant), "digits": r.digits}}
""",
    "user_warm": """
m = supermarket_user(100)
fm = load_model("supermarket", b=100)
numeric.solve(m, {{"lam": "0.9"}}, dps=30)
numeric.solve(fm, {{"lam": "0.9"}}, dps=30)
r, t = best_of(5, lambda: numeric.solve(m, {{"lam": "0.9"}}, dps=30))
f, tf = best_of(5, lambda: numeric.solve(fm, {{"lam": "0.9"}}, dps=30))
out = {{"t": t, "fast": tf, "ratio": t / tf, "c": s(r.constant), "ref": s(f.constant)}}
""",
    "user_float64": """
b = {b}
m = supermarket_user(b)
t0 = time.time()
try:
    r = numeric.solve(m, {{"lam": "0.9"}}, precision="float64")
except TypeError:
    r = None
t1 = time.time()
if r is None:
    out = {{"t": None}}
else:
    _, warm = best_of(5, lambda: numeric.solve(m, {{"lam": "0.9"}}, precision="float64"))
    f = numeric.solve(load_model("supermarket", b=b), {{"lam": "0.9"}}, dps=30)
    out = {{"t": t1 - t0, "total": t1 - t_start, "warm": warm, "c": s(r.constant),
            "digits": r.digits, "ref": s(f.constant)}}
""",
    "user_order2": """
b = {b}
m = supermarket_user(b)
r = numeric.solve(m, {{"lam": "0.9"}}, dps=30, order=2)
out = {{"t": time.time() - t_start, "c": s(r.c2), "digits": r.digits2}}
""",
    "cache_f64_o2": """
m = load_model("cache_random")
t0 = time.time()
try:
    r = numeric.solve(m, {{}}, precision="float64", order=2)
    t1 = time.time()
    _, warm = best_of(5, lambda: numeric.solve(m, {{}}, precision="float64", order=2))
    out = {{"t": t1 - t0, "total": t1 - t_start, "warm": warm, "c": s(r.c2),
            "digits": r.digits2}}
except TypeError:
    from numeric.meanfield.stationary import second_order_float64
    q = second_order_float64(m, {{}})
    out = {{"t": time.time() - t0, "c": repr(q["c2"]), "digits": None}}
t1 = time.time()
""",
    "sir": """
m = load_model("sir")
p = {{"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}}
r = numeric.solve(m, p, dps=30)
t_first = time.time() - t_start
_, best = best_of(5, lambda: numeric.solve(m, p, dps=30))
out = {{"t": t_first, "warm": best, "c": s(r.constant), "digits": r.digits}}
""",
    "sir_float64": """
m = load_model("sir")
p = {{"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}}
r = numeric.solve(m, p, precision="float64")
t_first = time.time() - t_start
_, best = best_of(5, lambda: numeric.solve(m, p, precision="float64"))
ref = numeric.solve(m, p, dps=30)
out = {{"t": t_first, "warm": best, "c": s(r.constant), "digits": r.digits, "ref": s(ref.constant)}}
""",
}

#: Imports done before the float64 route's clock starts, as rmf_tool's are (its
#: ``import rmf_tool`` loads NumPy, SciPy and SymPy before its clock starts);
#: the row's "total" is the whole child, imports included.
WARM_IMPORTS = """
import scipy.integrate, scipy.linalg, scipy.sparse, scipy.sparse.linalg
import numeric.meanfield.float64_route, numeric.meanfield.structure, derive.sparse
"""

RMF = """
import json, sys, time, warnings
warnings.filterwarnings("ignore")
import matplotlib
matplotlib.use("Agg")
sys.path.insert(0, {path!r} + "/src")
import numpy as np
import rmf_tool as rmf

def model(b, lam=0.9):
    ddpp = rmf.DDPP()
    for k in range(b):
        e = np.zeros(b); e[k] = 1
        up = (lambda x, k=k: lam * (1 - x[0] ** 2)) if k == 0 else (
            lambda x, k=k: lam * (x[k - 1] ** 2 - x[k] ** 2))
        down = (lambda x, k=k: x[k] - x[k + 1]) if k < b - 1 else (lambda x, k=k: x[k])
        ddpp.add_transition(e, up)
        ddpp.add_transition(-e, down)
    ddpp.set_initial_state(np.zeros(b))
    return ddpp

def sir(beta=3.0, gamma=1.0, rho=0.5, a=0.1):
    ddpp = rmf.DDPP()
    ddpp.add_transition(np.array([-1, 1, 0]), lambda x: (a + beta * x[1]) * x[0])
    ddpp.add_transition(np.array([0, -1, 1]), lambda x: gamma * x[1])
    ddpp.add_transition(np.array([1, 0, -1]), lambda x: rho * x[2])
    ddpp.set_initial_state(np.array([0.99, 0.01, 0.0]))
    return ddpp

b = {b}
if b == 3:  # SIR: first call, then the best of 5 warm calls on the same object
    m = sir()
    t0 = time.time()
    m.meanFieldExpansionSteadyState(order=1)
    first = time.time() - t0
    best = 1e9
    for _ in range(5):
        t0 = time.time()
        pi, V, (V, W) = m.meanFieldExpansionSteadyState(order=1)
        best = min(best, time.time() - t0)
    print(json.dumps({{"t": first, "warm": best, "c": repr(float(np.trace(W)))}}))
    sys.exit(0)
# the finite-difference route first (rmf_tool's fastest at this size), printed at
# once, so that a symbolic route past the time limit still leaves a row
t0 = time.time()
model(b).theoretical_V(symbolic_differentiation=False)  # V only: no c to compare
fd = time.time() - t0
out = {{"t": fd, "finite_differences": fd}}
print(json.dumps(out), flush=True)
t0 = time.time()
pi, V, (V, W) = model(b).meanFieldExpansionSteadyState(order=1)
out.update(symbolic=time.time() - t0, c=repr(float(np.trace(W))))
out["t"] = min(out["t"], out["symbolic"])
print(json.dumps(out))
"""


def child(tree: str, code: str, timeout: float, python: str = sys.executable) -> dict | None:
    cache = tempfile.mkdtemp(prefix="bench25-")
    env = dict(os.environ)
    env.update(PYTHONPATH=tree, MFSTEIN_CACHE_DIR=cache, NUMBA_CACHE_DIR=os.path.join(cache, "nb"))
    try:
        res = subprocess.run(
            [python, "-c", code],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=tree,
        )
    except subprocess.TimeoutExpired as exc:  # what it printed before the limit
        text = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        lines = [ln for ln in text.splitlines() if ln.startswith("{")]
        return {**json.loads(lines[-1]), "timed_out": True} if lines else None
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    if res.returncode != 0 or not lines:
        return {"error": (res.stderr.strip().splitlines() or ["?"])[-1][:120]}
    return json.loads(lines[-1])


def agree(a: str | None, b: str | None) -> str:
    """Significant digits on which two decimal strings agree."""
    if not a or not b:
        return ""
    import mpmath

    with mpmath.workdps(40):
        x, y = mpmath.mpf(a), mpmath.mpf(b)
        if x == y:
            return ">= 30"
        return str(int(mpmath.floor(-mpmath.log10(abs(x - y) / abs(y)))))


def fmt(v: float | None, timeout: float | None = None) -> str:
    if v is None:
        return f"> {timeout:g} s" if timeout else "-"
    return f"{v:.3g} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=ROOT, help="checkout to benchmark (default: this tree)")
    ap.add_argument("--rmf-python", default=None, help="an interpreter that imports rmf_tool")
    ap.add_argument("--rmf-path", default="/tmp/rmf_tool", help="where rmf_tool is unpacked")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--quick", action="store_true", help="skip b = 200 / 1000 rows")
    args = ap.parse_args()
    code = PRELUDE + "\n{body}\nprint(json.dumps(out))\n"
    rows = []

    def run(label: str, case: str, **kw: object) -> dict | None:
        body = CASES[case].format(**kw)
        if case == "user_float64":
            body = WARM_IMPORTS + body
        r = child(args.tree, code.format(body=body), args.timeout)
        rows.append((label, r))
        print(f"{label:55s} {describe(r, args.timeout)}", flush=True)
        return r

    print(f"tree {args.tree}; load {os.getloadavg()[0]:.2f}; {time.strftime('%H:%M:%S')}")
    ref100 = run("user file, order 1, 30 d, first run, b = 100", "user_first", b=100)
    if not args.quick:
        run("user file, order 1, 30 d, first run, b = 200", "user_first", b=200)
    run("user file, warm b = 100 vs fast path", "user_warm")
    f200 = run("user file, float64, b = 200 (solve call)", "user_float64", b=200)
    if not args.quick:
        run("user file, float64, b = 1000 (solve call)", "user_float64", b=1000)
    run("user file, order 2, 30 d, b = 100", "user_order2", b=100)
    if not args.quick:
        run("user file, order 2, 30 d, b = 200", "user_order2", b=200)
    run("cache model, float64 order 2, first call", "cache_f64_o2")
    run("SIR, first answer (30 d) / warm call", "sir")
    f_sir = run("SIR, float64, first answer / warm call", "sir_float64")
    if args.rmf_python:
        r = child(
            args.rmf_path, RMF.format(path=args.rmf_path, b=3), args.timeout, python=args.rmf_python
        )
        label = "rmf_tool, SIR, order 1 (float64), first / warm"
        print(f"{label:55s} {describe(r, args.timeout)}", flush=True)
        if r and f_sir and f_sir.get("warm") and r.get("warm"):
            print(
                f"{'SIR warm call, mfstein float64 / rmf_tool':55s} "
                f"{f_sir['warm'] / r['warm']:.2f}x; rmf_tool agrees with the 30-digit c on "
                f"{agree(r.get('c'), f_sir.get('ref'))} digits"
            )
        r = child(
            args.rmf_path,
            RMF.format(path=args.rmf_path, b=200),
            args.timeout,
            python=args.rmf_python,
        )
        label = "rmf_tool, supermarket b = 200, order 1 (float64)"
        print(f"{label:55s} {describe(r, args.timeout)}", flush=True)
        if r and f200 and f200.get("t") and r.get("t"):
            print(
                f"{'float64 route speed-up over rmf_tool at b = 200':55s} "
                f"{r['t'] / f200['t']:.1f}x; rmf_tool agrees with the 30-digit c on "
                f"{agree(r.get('c'), f200.get('ref'))} digits"
            )
    _ = ref100
    print(f"load {os.getloadavg()[0]:.2f} at the end; {time.strftime('%H:%M:%S')}")


def describe(r: dict | None, timeout: float) -> str:
    if r is None:
        return fmt(None, timeout)
    if "error" in r:
        return f"error: {r['error']}"
    if r.get("t") is None:
        return "-"
    parts = [fmt(r["t"])]
    for key in ("total", "fast", "warm", "symbolic", "finite_differences"):
        if key in r:
            parts.append(f"{key} {fmt(r[key])}")
    if r.get("timed_out"):
        parts.append(f"the rest > {timeout:g} s")
    if "ratio" in r:
        parts.append(f"ratio {r['ratio']:.1f}x")
    if r.get("digits") is not None:
        parts.append(f"claims {r['digits']} d")
    if r.get("ref"):
        parts.append(f"agrees with 30 d on {agree(r.get('c'), r.get('ref'))}")
    if r.get("c"):
        parts.append(f"value {r['c'][:20]}")
    return "; ".join(parts)


if __name__ == "__main__":
    main()
