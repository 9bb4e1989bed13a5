"""Warm calls and sweeps (issue 34), side by side in one run.

    .venv/bin/python benchmarks/bench_sweep.py
    .venv/bin/python benchmarks/bench_sweep.py --points 1000 --loop 50 --skip-dps
    .venv/bin/python benchmarks/bench_sweep.py --tree /tmp/main --rounds 2
    .venv/bin/python benchmarks/bench_sweep.py --points 1000 --skip-dps --again 5

The model is the supermarket written as a plain user model with b = 10 coordinates
(``benchmarks/models/supermarket_user.py``: no family, no fast path).

* **warm solve**: a hand-written SciPy script (the drift and its Jacobian typed by
  hand, the fixed point by ``scipy.optimize.root``, ``W`` and ``P`` by
  ``scipy.linalg.solve_continuous_lyapunov``, ``c = tr(W)``) against a warm
  ``numeric.solve(..., precision="float64")`` (a new ``lam`` each call, after one
  call that prepared the model); median time per call; again with the model
  declaring its unique fixed point (``unique=True``), where a warm call starts
  from a fixed point found before (:mod:`numeric.meanfield.problem`).
* **sweeps** of ``--points`` values of ``lam`` from 0.5 to 0.99: order 1 float64,
  order 2 float64 and order 1 at 30 digits (also with ``workers=2``: two local
  processes, the model rebuilt in each) by ``numeric.sweep``, against a loop of
  ``numeric.solve`` (timed on ``--loop`` of the points and scaled to all of them);
  every sweep warm except the first row, an order-2 sweep that also loads the
  compiled third-moment kernel long order-2 sweeps use (the first in a process).

With ``--tree DIR`` (e.g. ``git -C /work/main archive HEAD | tar -x -C /tmp/main``)
that checkout and this one are measured one after the other, each in a fresh
interpreter with ``PYTHONPATH`` set to it (the measuring code is this file's),
``--rounds`` times.  ``--again`` times each float64 sweep several times in a row
(columns ``wall s`` and ``cpu s``: the least; ``cpu med``: the median).

Wall time and the CPU time of this process and its finished child processes are
both printed (the machine may be shared: CPU time is the cost, wall time what a
user waits).  The goals of issue 34: warm
solve <= 3x the script; sweeps <= 1 s / <= 5 s / <= 60 s.  The script's ``c`` and
the sweep's are compared at the end.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

USER = f"{Path(__file__).resolve().parent / 'models' / 'supermarket_user.py'}:supermarket_user"
B = 10


def scipy_script(lam: float, b: int = B) -> float:
    """Theorem 1's constant of the supermarket (d = 2) by a hand-written SciPy script."""
    import scipy.linalg as sla
    from scipy.optimize import root

    def f(s: np.ndarray) -> np.ndarray:
        p = np.concatenate(([1.0], s, [0.0]))
        return lam * (p[:-2] ** 2 - p[1:-1] ** 2) - (p[1:-1] - p[2:])

    def jac(s: np.ndarray) -> np.ndarray:
        J = np.diag(-2 * lam * s - 1.0)
        J[np.arange(1, b), np.arange(b - 1)] = 2 * lam * s[:-1]
        J[np.arange(b - 1), np.arange(1, b)] = 1.0
        return J

    s = root(f, lam ** (2.0 ** np.arange(1, b + 1) - 1), jac=jac).x
    p = np.concatenate(([1.0], s, [0.0]))
    Q = np.diag(lam * (p[:-2] ** 2 - p[1:-1] ** 2) + (p[1:-1] - p[2:]))
    J = jac(s)
    W = sla.solve_continuous_lyapunov(J, -Q)
    P = sla.solve_continuous_lyapunov(J.T, -np.eye(b))
    assert abs(np.trace(W) - np.sum(P * Q)) <= 1e-9 * np.trace(W)
    return float(np.trace(W))


def _cpu() -> float:
    """CPU seconds of this process and of its finished child processes (a sweep's
    local workers, counted once they have exited)."""
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def _timed(fn, *args, **kwargs) -> tuple[float, float, object]:
    w, c = time.perf_counter(), _cpu()
    out = fn(*args, **kwargs)
    return time.perf_counter() - w, _cpu() - c, out


def warm_calls(repeat: int) -> list[tuple[str, float, float]]:
    """Median wall and CPU seconds per call of the script and the two warm solves,
    the three alternating at each ``lam`` (the same load for each)."""
    import numeric
    from derive.models import load_model

    m = load_model(USER, b=B)
    mu = load_model(USER, b=B, unique=True)  # declares its unique fixed point: warm start
    for model in (m, mu):
        numeric.solve(model, {"lam": "0.9"}, precision="float64")  # prepares the model
    cases = (
        ("SciPy script (root + 2 Lyapunov)", lambda x: scipy_script(x)),
        (
            "mfstein warm solve, float64",
            lambda x: numeric.solve(m, {"lam": x}, precision="float64"),
        ),
        (
            "  same, unique fixed point declared",
            lambda x: numeric.solve(mu, {"lam": x}, precision="float64"),
        ),
    )
    walls: list[list[float]] = [[] for _ in cases]
    cpus: list[list[float]] = [[] for _ in cases]
    for lam in np.linspace(0.8, 0.95, repeat).tolist():
        for k, (_, fn) in enumerate(cases):
            w, c, _ = _timed(fn, lam)
            walls[k].append(w)
            cpus[k].append(c)
    return [
        (name, statistics.median(w), statistics.median(c))
        for (name, _), w, c in zip(cases, walls, cpus, strict=True)
    ]


def _solve_loop(solve, model, lams: list[str], kw: dict) -> list:
    """``solve`` at each ``lam`` in turn (the loop a sweep replaces)."""
    return [solve(model, {"lam": x}, **kw) for x in lams]


def sweeps(
    points: int, loop: int, skip_dps: bool, again: int = 1
) -> list[tuple[str, float, float, float, float, float]]:
    """Each sweep of ``points`` values and the loop of ``numeric.solve`` it replaces
    (timed on ``loop`` points, scaled): ``(name, wall, cpu, loop wall, loop cpu, cpu
    median)``, each float64 sweep timed ``again`` times (the least wall and CPU time,
    and the median CPU time; one run on a shared machine is at the mercy of the
    load).  The first row is an order-2 sweep before any
    other order-2 sweep of this many points in the process: it includes loading the
    compiled third-moment kernel (numba's disk cache) that long order-2 sweeps use
    (:data:`numeric.meanfield.sweep_points.COMPILE_MIN_POINTS`); the other rows run
    with everything warm."""
    import numeric
    from derive.models import load_model

    m = load_model(USER, b=B)
    grid = f"0.5:0.99:{points}"
    numeric.sweep(m, {"lam": "0.5:0.99:3"}, precision="float64", order=2, progress=False)
    rows = []
    w, c, _ = _timed(numeric.sweep, m, {"lam": grid}, precision="float64", order=2, progress=False)
    rows.append((f"order 2 float64, first long sweep ({points} points)", w, c, np.nan, np.nan, c))
    numeric.sweep(m, {"lam": "0.5:0.99:3"}, dps=30, progress=False)  # warm everything
    cases = [("order 1 float64", {"precision": "float64"}, 1.0)]
    cases.append(("order 2 float64", {"precision": "float64", "order": 2}, 5.0))
    if not skip_dps:
        cases.append(("order 1 30 digits", {"dps": 30}, 60.0))
        cases.append(("  same, 2 local processes", {"dps": 30, "workers": 2}, 60.0))
    for name, kw, goal in cases:
        runs = [
            _timed(numeric.sweep, m, {"lam": grid}, progress=False, **kw)
            for _ in range(again if kw.get("precision") == "float64" else 1)
        ]
        res = runs[0][2]
        assert not res.refused, res.refused[:1]
        w, c = min(r[0] for r in runs), min(r[1] for r in runs)
        c_med = statistics.median(r[1] for r in runs)
        sample = [r.params["lam"] for r in res.rows][:: max(1, points // loop)]
        one = {k: v for k, v in kw.items() if k != "workers"}
        lw, lc, _ = _timed(_solve_loop, numeric.solve, m, sample, one)
        scale = points / len(sample)
        label = f"{name} ({points} points; goal {goal:g} s)"
        rows.append((label, w, c, lw * scale, lc * scale, c_med))
    return rows


def checks() -> list[tuple[str, float, int, float, float]]:
    """``(lam, sweep c, its digits, script c, digits that agree)`` at two points."""
    import numeric
    from derive.models import load_model

    sol = numeric.sweep(load_model(USER, b=B), {"lam": ["0.9", "0.95"]}, precision="float64")
    out = []
    for row in sol.rows:
        ref = scipy_script(float(row.params["lam"]))
        agree = -np.log10(abs(row.c - ref) / ref) if row.c != ref else 16.0
        out.append((row.params["lam"], row.c, row.digits, ref, float(agree)))
    return out


def measure(args: argparse.Namespace) -> dict:
    """Every measurement of this process (the library on ``sys.path``)."""
    return {
        "warm": warm_calls(args.repeat),
        "sweeps": sweeps(args.points, args.loop, args.skip_dps, args.again),
        "checks": checks(),
    }


def _child(tree: str, argv: list[str]) -> dict:
    """:func:`measure` in a fresh interpreter with the library of ``tree``."""
    from bench_warm_routes import run_json

    return run_json(tree, [str(Path(__file__).resolve()), *argv, "--json"])


def report(label: str, res: dict) -> None:
    """The tables of one tree's measurements."""
    warm = res["warm"]
    print(f"[{label}] warm calls, supermarket as a user model, b = {B} (median per call)")
    print(f"  {'':40s} {'wall ms':>10s} {'cpu ms':>10s}")
    for name, w, c in warm:
        print(f"  {name:40s} {1e3 * w:10.3f} {1e3 * c:10.3f}")
    print(f"  ratio mfstein / script (cpu): {warm[1][2] / warm[0][2]:.1f}x (goal <= 3x)")
    print(f"  ratio with the uniqueness declared (warm start): {warm[2][2] / warm[0][2]:.1f}x")
    print(f"[{label}] sweeps over lam (numeric.sweep vs a loop of numeric.solve, scaled)")
    print(
        f"  {'':52s} {'wall s':>8s} {'cpu s':>8s} {'cpu med':>8s} {'loop wall':>10s} "
        f"{'loop cpu':>9s}"
    )
    for name, w, c, lw, lc, c_med in res["sweeps"]:
        print(f"  {name:52s} {w:8.2f} {c:8.2f} {c_med:8.2f} {lw:10.1f} {lc:9.1f}")
    for lam, c, digits, ref, agree in res["checks"]:
        print(
            f"  check lam = {lam}: sweep c = {c!r} ({digits} digits), script {ref!r}: "
            f"{agree:.1f} digits agree"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=1000, help="lam values per sweep (1000)")
    ap.add_argument("--loop", type=int, default=50, help="points of the solve loop timed (50)")
    ap.add_argument("--repeat", type=int, default=30, help="warm calls timed (30)")
    ap.add_argument("--skip-dps", action="store_true", help="leave out the 30-digit sweep")
    ap.add_argument(
        "--again",
        type=int,
        default=1,
        help="each float64 sweep timed this many times: least wall and CPU s, median CPU s (1)",
    )
    ap.add_argument(
        "--tree",
        action="append",
        default=[],
        help="another checkout (e.g. main's) measured as well, each tree in a fresh "
        "interpreter with PYTHONPATH set to it, alternating (repeatable)",
    )
    ap.add_argument("--rounds", type=int, default=1, help="rounds over the trees (1)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.json:
        import json

        print(json.dumps(measure(args)))
        return
    if not args.tree:
        report("this tree", measure(args))
        return
    argv = [f"--points={args.points}", f"--loop={args.loop}", f"--repeat={args.repeat}"]
    argv += [f"--again={args.again}"]
    argv += ["--skip-dps"] if args.skip_dps else []
    trees = [*args.tree, str(Path(__file__).resolve().parents[1])]
    for r in range(args.rounds):
        for tree in trees:
            print(f"round {r + 1}, tree {tree}")
            report(Path(tree).name, _child(tree, argv))
            print(flush=True)


if __name__ == "__main__":
    main()
