"""The same homogeneous populations in rmftool 0.5 (``HomPP``) and in mfstein, side by side.

    .venv/bin/python benchmarks/bench_rmftool_hompp.py
    .venv/bin/python benchmarks/bench_rmftool_hompp.py --rmftool-python /tmp/rmfvenv/bin/python

rmftool is never a dependency of mfstein: it runs in a scratch environment, in a
subprocess, made once with

    python3 -m venv /tmp/rmfvenv && /tmp/rmfvenv/bin/pip install rmftool

(the interpreter is ``--rmftool-python``, default ``$RMFTOOL_PYTHON`` or
``/tmp/rmfvenv/bin/python``).  Without it the benchmark says so and prints
mfstein's numbers alone.

Models (rate tensors ``A[s, s']`` and ``B[s, s1, s', s1']``, given once and passed
unchanged to ``HomPP.add_rate_tensors`` and to :func:`derive.population`):

* ``sirs``: S -> I at rate 0.1 (outside) plus the contact pair (S, I) -> (I, I) at
  rate 3, I -> R at rate 1, R -> S at rate 0.5 (the library's SIRS with beta = 3,
  gamma = 1, rho = 0.5, a = 0.1);
* ``pairs``: four states, the cycle 0 -> 1 -> 2 -> 0 (rates 1, 1, 0.5), 3 -> 0
  (rate 1), and the pairs (1, 2) -> (3, 3) at rate 2 and (0, 3) -> (1, 1) at rate 1.5:
  both objects of a pair change state.

Compared: the fixed point ``s*``, the refined term ``V`` (``E[X] = s* + V/N + ...``),
and the transient to order 1 (``x(t)``, ``V(t)``) from the model's start at a few
times; also rmftool's order-2 steady-state term against mfstein's ``A``.  Times:
rmftool's own calls (measured inside its process, imports excluded), mfstein's
float64 route and its 30-digit route (each the first call in this process, so code
generation and compilation are included).

What rmftool 0.5 does wrong here, as met (printed with the numbers):
``HomPP.meanFieldExpansionTransient(order=1)`` raises a ``TypeError``
(``drift_r_vector`` is imported twice; the heterogeneous one wins), so the
benchmark repeats the call with the homogeneous ``drift_r_vector`` of rmftool's own
module ``refinedRefined_transientRegime`` put back; its fixed point is the ODE
integrated to t = 10^4 with ``odeint``; its order-2 term is compared, not trusted.

Measured (2026-12-02, shared 2-core machine): s* and V agree to 1e-13 on both
models; x(t) to 1e-7 and V(t) to 1e-5 (rmftool integrates with ``rtol=1e-6``);
rmftool's order-2 term differs from mfstein's ``A`` by 0.1-0.5 on both models
(the states sum to 1).  The exact chain decides for mfstein: on ``sirs``,
``N^2 (E[X_0] - s*_0 - V_0/N)`` is 6.06, 5.61, 5.40 at N = 64, 128, 256, halving
its distance to mfstein's A_0 = 5.193 per doubling of N and already below
rmftool's 5.666 (the same check on ``pairs`` is
``tests/numeric/test_population.py::test_the_refined_error_tends_to_the_next_term``).
rmftool's columns show its numbers as it returns them; the difference column says
how many of their digits hold.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: The child run in rmftool's environment: reads the model as JSON on stdin, writes
#: its numbers as JSON on stdout (prints of rmftool go to stderr).
CHILD = r"""
import contextlib, json, sys, time
import numpy as np
spec = json.load(sys.stdin)
out = {"notes": []}
with contextlib.redirect_stdout(sys.stderr):
    import rmftool.population_processes as pp
    import refinedRefined_transientRegime as homogeneous
    A, B = np.array(spec["A"]), np.array(spec["B"])

    def model():
        m = pp.HomPP()
        m.add_rate_tensors(A, B)
        m.set_initial_state(np.array(spec["x0"]))
        return m

    t = time.perf_counter()
    pi, V, _ = model().meanFieldExpansionSteadyState(order=1)
    out["steady_seconds"] = time.perf_counter() - t
    out["s_star"], out["V"] = pi.tolist(), V.tolist()
    try:
        t = time.perf_counter()
        out["A"] = model().meanFieldExpansionSteadyState(order=2)[2].tolist()
        out["order2_seconds"] = time.perf_counter() - t
    except Exception as exc:
        out["notes"].append(f"order 2: {type(exc).__name__}: {exc}")
    try:
        model().meanFieldExpansionTransient(order=1, time=spec["times"][0])
    except TypeError as exc:
        out["notes"].append(
            f"order-1 transient raises TypeError: {exc}; rerun with the homogeneous "
            "drift_r_vector of rmftool's refinedRefined_transientRegime put back"
        )
        pp.drift_r_vector = homogeneous.drift_r_vector
    out["x"], out["Vt"], seconds = [], [], 0.0
    for horizon in spec["times"]:
        t = time.perf_counter()
        T, X, Vt, _ = model().meanFieldExpansionTransient(order=1, time=horizon)
        seconds += time.perf_counter() - t
        out["x"].append(X[-1].tolist())
        out["Vt"].append(Vt[-1].tolist())
    out["transient_seconds"] = seconds
print(json.dumps(out))
"""


def models() -> dict[str, dict[str, Any]]:
    """The benchmark's populations: rate tensors (plain floats), state names, start."""
    import numpy as np

    sirs_A = np.zeros((3, 3))
    sirs_A[0, 1], sirs_A[1, 2], sirs_A[2, 0] = 0.1, 1.0, 0.5
    sirs_B = np.zeros((3,) * 4)
    sirs_B[0, 1, 1, 1] = 3.0
    pairs_A = np.zeros((4, 4))
    pairs_A[0, 1], pairs_A[1, 2], pairs_A[2, 0], pairs_A[3, 0] = 1.0, 1.0, 0.5, 1.0
    pairs_B = np.zeros((4,) * 4)
    pairs_B[1, 2, 3, 3], pairs_B[0, 3, 1, 1] = 2.0, 1.5
    return {
        "sirs": {
            "A": sirs_A,
            "B": sirs_B,
            "states": ("S", "I", "R"),
            "x0": ("0.99", "0.01", "0"),
        },
        "pairs": {"A": pairs_A, "B": pairs_B, "states": None, "x0": ("1", "0", "0", "0")},
    }


def run_rmftool(python: str, spec: dict[str, Any], times: list[float]) -> dict[str, Any] | str:
    """rmftool's numbers for one model, or a sentence saying why there are none."""
    if not Path(python).exists():
        return (
            f"rmftool's environment {python} is absent (make it with: python3 -m venv "
            "/tmp/rmfvenv && /tmp/rmfvenv/bin/pip install rmftool); mfstein's numbers alone"
        )
    payload = {
        "A": spec["A"].tolist(),
        "B": spec["B"].tolist(),
        "x0": [float(v) for v in spec["x0"]],
        "times": times,
    }
    t = time.perf_counter()
    proc = subprocess.run(
        [python, "-c", CHILD],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no message)"]
        return f"rmftool failed (exit status {proc.returncode}): {tail[0]}"
    out = json.loads(proc.stdout)
    out["process_seconds"] = time.perf_counter() - t
    return out


def run_mfstein(spec: dict[str, Any], times: list[float]) -> dict[str, Any]:
    """mfstein's numbers: float64 route (s*, V, transient) and the 30-digit route."""
    import numeric
    from derive import population

    model = population(spec["A"], spec["B"], states=spec["states"], name="bench-hompp")
    out: dict[str, Any] = {}
    t = time.perf_counter()
    sol = numeric.solve(model, {}, precision="float64")
    out["steady_seconds"] = time.perf_counter() - t
    out["s_star"], out["V"] = [float(v) for v in sol.s_star], [float(v) for v in sol.V]
    t = time.perf_counter()
    exact = numeric.solve(model, {}, dps=30, order=2)
    out["dps30_seconds"] = time.perf_counter() - t
    out["dps30"] = (exact.s_star, exact.V, exact.digits)
    out["A"] = [float(v) for v in exact.A]
    t = time.perf_counter()
    tr = numeric.transient(model, {}, times=times, start=list(spec["x0"]), order=1)
    out["transient_seconds"] = time.perf_counter() - t
    out["x"] = [[float(v) for v in row] for row in tr.x]
    out["Vt"] = [[float(v) for v in row] for row in tr.V]
    return out


def compare(label: str, theirs: list[float] | None, ours: list[float]) -> list[str]:
    """One line per coordinate: rmftool, mfstein, difference."""
    lines = []
    for i, v in enumerate(ours):
        if theirs is None:
            lines.append(f"  {f'{label}[{i}]':<12}  {'-':>16}  {v:>16.10f}")
        else:
            lines.append(
                f"  {f'{label}[{i}]':<12}  {theirs[i]:>16.10f}  {v:>16.10f}  {theirs[i] - v:>10.2e}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rmftool-python",
        default=os.environ.get("RMFTOOL_PYTHON", "/tmp/rmfvenv/bin/python"),
        help="the interpreter of rmftool's scratch environment",
    )
    parser.add_argument(
        "--times", default="0.5,1,2", help="transient output times (comma-separated)"
    )
    args = parser.parse_args(argv)
    import mpmath

    times = [float(t) for t in args.times.split(",")]
    for name, spec in models().items():
        theirs = run_rmftool(args.rmftool_python, spec, times)
        ours = run_mfstein(spec, times)
        print(f"== {name}: {spec['A'].shape[0]} states, start {', '.join(spec['x0'])}")
        if isinstance(theirs, str):
            print(f"  {theirs}")
            theirs = {}
        print(f"  {'quantity':<12}  {'rmftool 0.5':>16}  {'mfstein':>16}  {'difference':>10}")
        for key in ("s_star", "V", "A"):
            print("\n".join(compare(key, theirs.get(key), ours[key])))
        for k, t in enumerate(times):
            for key in ("x", "Vt"):
                got = theirs.get(key)
                print("\n".join(compare(f"{key}({t:g})", got[k] if got else None, ours[key][k])))
        s30, v30, digits = ours["dps30"]
        print(f"  mfstein's 30-digit route ({digits} digits):")
        print(f"    s* = {', '.join(mpmath.nstr(v, digits) for v in s30)}")
        print(f"    V  = {', '.join(mpmath.nstr(v, digits) for v in v30)}")
        for note in theirs.get("notes", []):
            print(f"  rmftool: {note}")
        print(
            "  seconds: steady state (s*, V) rmftool "
            f"{theirs.get('steady_seconds', float('nan')):.3f}, mfstein float64 "
            f"{ours['steady_seconds']:.3f}, mfstein 30 digits with order 2 "
            f"{ours['dps30_seconds']:.3f}; transient rmftool "
            f"{theirs.get('transient_seconds', float('nan')):.3f}, mfstein "
            f"{ours['transient_seconds']:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
