"""mfstein's heterogeneous populations against rmftool 0.5's ``HetPP``, side by side.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_rmftool_hetpp.py
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_rmftool_hetpp.py --sizes 50 --timeout 900

rmftool is never a dependency of mfstein: it runs in a subprocess with the
python of a scratch environment (``--rmftool-python``, default
``/tmp/rmfvenv/bin/python``; make one with ``python3 -m venv /tmp/rmfvenv &&
/tmp/rmfvenv/bin/pip install rmftool numpy scipy sympy matplotlib``); without it
the comparisons are skipped with a message and only mfstein's timings run.

Numbers (two HetPPs, the same float64 tensors given to both):

* ``unilateral``: K = 6 objects with 3 states and their own rates, no interaction
  (the mean field is exact there: V = 0);
* ``power-of-two``: K = 8 servers of distinct speeds, buffer 2 (S = 3), JSQ(2)
  among two distinct servers (:mod:`derive.models.heterogeneous_servers`): pairwise.

For each: the fixed point, rmftool's refined term ``V`` (ours is ``V/K``) and the
transient ``x(T)``, ``V(T)`` at ``T = 3`` (both from each object in state 0);
the largest absolute difference of each.

Speed (CPU seconds): the power-of-two model with K = 50 and K = 200 (S = 3); each tool in a
fresh process (import, model and first call all included): rmftool's
``meanFieldExpansionSteadyState(order=1)``, mfstein's float64 route and its
30-digit route.  A run past ``--timeout`` seconds is stopped and reported as such.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RMF_PYTHON = "/tmp/rmfvenv/bin/python"

RMF_RUN = r"""
import json, sys, time
import numpy as np
t0 = time.perf_counter()
from rmftool.population_processes import HetPP
data = np.load(sys.argv[1])
A, B = data["A"], data["B"]
K, S = A.shape[0], A.shape[1]
m = HetPP()
m.add_rate_tensors(A, B)
x0 = np.zeros((K, S)); x0[:, 0] = 1
m.set_initial_state(x0)
pi, V, _ = m.meanFieldExpansionSteadyState(order=1)
out = {"x": pi.ravel().tolist(), "V": V.ravel().tolist(), "seconds": time.perf_counter() - t0}
if sys.argv[3] == "transient":
    T, X, VT, _ = m.meanFieldExpansionTransient(order=1, time=float(sys.argv[4]))
    out["xT"], out["VT"] = X[-1].ravel().tolist(), VT[-1].ravel().tolist()
json.dump(out, open(sys.argv[2], "w"))
"""

OURS_RUN = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import numeric
from derive import heterogeneous
data = np.load(sys.argv[1])
model = heterogeneous(data["A"], data["B"])
kw = {"precision": "float64"} if sys.argv[3] == "float64" else {"dps": 30}
sol = numeric.solve(model, {}, **kw)
out = {"x": [float(v) for v in sol.s_star], "V": [float(v) for v in sol.V],
       "digits": sol.digits, "seconds": time.perf_counter() - t0}
json.dump(out, open(sys.argv[2], "w"))
"""


def unilateral(K: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """K objects, 3 states, own rates, no interaction."""
    A = np.zeros((K, 3, 3))
    for k in range(K):
        A[k, 0, 1], A[k, 1, 2], A[k, 2, 0] = 1 + 0.25 * k, 0.5 + 0.1 * k, 1.0
        A[k, 1, 0] = 0.3
    return A, np.zeros((K, K, 3, 3, 3, 3))


def power_of_two(K: int, lam: float = 0.7, b: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """The tensors of :func:`derive.models.heterogeneous_servers.power_of_two_heterogeneous`
    at ``lam``, speeds evenly spread over [1/2, 3/2]."""
    S = b + 1
    mu = 0.5 + np.arange(K) / (K - 1)
    A = np.zeros((K, S, S))
    for s in range(1, S):
        A[:, s, s - 1] = mu
    block = np.zeros((S, S, S, S))
    for s in range(b):
        for s1 in range(s, S):
            block[s, s1, s + 1, s1] = lam * (2 if s < s1 else 1) / (K - 1)
    B = np.zeros((K, K, S, S, S, S))
    B[~np.eye(K, dtype=bool)] = block
    return A, B


def _child_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(python: str, code: str, tensors: tuple, mode: str, timeout: float,
        extra: tuple = ()) -> tuple[dict | None, float]:
    """Run ``code`` in a fresh process; ``(its JSON answer or None, CPU seconds)``:
    CPU time (user + system) rather than wall time, so that a shared, loaded machine
    still compares the two tools fairly; ``timeout`` is wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "t.npz", Path(tmp) / "out.json"
        np.savez(data, A=tensors[0], B=tensors[1])
        c0 = _child_cpu()
        try:
            proc = subprocess.run(
                [python, "-c", code, str(data), str(out), mode, *extra],
                capture_output=True, text=True, timeout=timeout,
                env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
            )
        except subprocess.TimeoutExpired:
            return None, _child_cpu() - c0
        wall = _child_cpu() - c0
        if proc.returncode != 0:
            print(f"  ({python} failed: {proc.stderr.strip().splitlines()[-1:]})")
            return None, wall
        return json.loads(out.read_text()), wall


def compare(name: str, tensors: tuple, rmf: str | None, T: float) -> None:
    """Fixed point, refined term and transient of both tools, side by side."""
    import numeric
    from derive import heterogeneous

    K = tensors[0].shape[0]
    model = heterogeneous(*tensors)
    ours = numeric.solve(model, {}, precision="float64")
    tr = numeric.transient(model, {}, times=[0, T])
    print(f"\n{name} (K = {K}, S = {model.S}, {len(model.pairwise)} pairwise moves)")
    if rmf is None:
        print("  rmftool absent: comparison skipped")
        return
    theirs, _ = run(rmf, RMF_RUN, tensors, "transient", 3600, (str(T),))
    if theirs is None:
        print("  rmftool gave no answer")
        return
    rows = [
        ("fixed point x*", np.array(ours.s_star, float), theirs["x"]),
        ("refined term V/K", np.array(ours.V, float) / K, theirs["V"]),
        (f"transient x({T:g})", tr.x[-1], theirs["xT"]),
        (f"transient V({T:g})/K", tr.V[-1] / K, theirs["VT"]),
    ]
    for label, a, b in rows:
        b = np.asarray(b)
        print(f"  {label:22s} max |mfstein - rmftool| = {np.max(np.abs(a - b)):.2e}"
              f"   (largest entry {np.max(np.abs(b)):.3g})")


def speed(sizes: list[int], rmf: str | None, timeout: float) -> None:
    """Fresh-process timings of the refined steady state."""
    print("\nspeed: power-of-two, S = 3, refined steady state, fresh process each (CPU s)")
    for K in sizes:
        tensors = power_of_two(K)
        f64, t64 = run(sys.executable, OURS_RUN, tensors, "float64", timeout)
        d30, t30 = run(sys.executable, OURS_RUN, tensors, "dps", timeout)
        line = f"  K = {K:4d}: mfstein float64 {t64:7.1f} s"
        line += f" ({f64['digits']} digits)" if f64 else " (no answer)"
        line += f", 30 digits {t30:7.1f} s" + (f" ({d30['digits']} digits)" if d30 else
                                               f" (stopped at {timeout:g} s)")
        if rmf is not None:
            theirs, tr = run(rmf, RMF_RUN, tensors, "steady", timeout)
            shown = f"{tr:7.1f} s" if theirs else f"> {tr:.0f} s (stopped at {timeout:g} s wall)"
            line += f"; rmftool {shown}; ratio {tr / t64:.1f}x"
            if theirs and f64:
                gap = np.max(np.abs(np.array(f64["V"]) / K - np.array(theirs["V"])))
                line += f"; max |V/K - V_rmf| = {gap:.1e}"
        print(line)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rmftool-python", default=RMF_PYTHON)
    p.add_argument("--sizes", default="50,200", help="K of the speed runs")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    p.add_argument("--skip-speed", action="store_true")
    p.add_argument("--skip-compare", action="store_true")
    a = p.parse_args()
    rmf = a.rmftool_python if Path(a.rmftool_python).exists() else None
    if rmf is None:
        print(f"rmftool's python {a.rmftool_python} not found: comparisons skipped.")
    if not a.skip_compare:
        compare("unilateral", unilateral(), rmf, 3.0)
        compare("power-of-two", power_of_two(8), rmf, 3.0)
    if not a.skip_speed:
        speed([int(k) for k in a.sizes.split(",")], rmf, a.timeout)


if __name__ == "__main__":
    main()
