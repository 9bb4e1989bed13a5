"""Exact chains at both ends of the scale (issue 34): a small chain against a direct
sparse solve, and the supermarket's large chains by time and peak memory.

Every case runs in a fresh child process (the kernel cache is warm: a first
child solves each model once at a small N, and SIR once at the timed N, whose
record :mod:`numeric.exact.kept` keeps, before anything is timed), and every
figure is CPU time of that child (user + system, ``resource.getrusage``), since
the machine may be shared:

``sir``
    ``numeric.exact.solve("sir", ...)`` at ``N = 100`` (5,151 states): the CPU of
    the interpreter and the imports, of the first call in the new process and of a
    second call in it; beside them
    :func:`scipy.sparse.linalg.spsolve` on the same pinned generator (built by
    :class:`numeric.exact.general.Chain`, as the solve builds it).  Min and median
    of ``--repeat`` children per tree, the trees taking turns, and of the ratio
    first solve / spsolve within each child.  That spsolve runs after two solves
    in its process (SuperLU and the allocator warm), while the first solve is the
    process's first; so beside it, like for like, ``spsolve`` in a fresh child of
    its own: the first call of a process, on the same generator (saved by the
    ``sir`` child to a temporary ``.npz``), its imports before the timer as for
    mfstein, and the ratio first solve / that spsolve per pair of children.
``sir-new``
    The same, but the call's own record (:mod:`numeric.exact.kept`) is removed
    before it, by a child of its own (so that the timed child imports and hashes
    what the ``sir`` child does): the first call at an ``N`` the cache has not
    seen (the cache holds the model's kernels and the records of other calls,
    e.g. at ``N = 6``).
``supermarket``
    ``solve_exact(N, 0.9, b=3, d=2)`` at each ``--sizes`` N (the only case with
    ``--no-sir``; N = 420, 12,525,171 states, takes some 80 s of CPU and 2.5 GB):
    the CPU of the call, the child's peak resident memory (``ru_maxrss``) and bytes per state, the
    residual, the iterations, and ``N E||S - s*||^2``.  Best of ``--repeat``
    children below ``--large`` states, one run above.

Idle BLAS threads.  NumPy's and SciPy's OpenBLAS each start a worker thread at import
(here, on 2 cores), which spins for a while before it sleeps (some 200 ms of CPU
during the imports); a child's CPU counts every thread, so a call timed right after
the imports is charged the end of that spin, 5-25 ms, in the solve's child and in the
fresh spsolve's alike, and by chance.  Neither call wakes those threads.  So each
SIR row has a second line, ``main thread``: the same calls timed by the calling
thread's CPU (:func:`time.thread_time`), which does all their work.  (Waiting for the
threads to sleep first is no cure: after an idle wait the first call is 5-15 ms
slower, a cold core.)

``--before PATH`` runs the same children with ``PATH`` (another checkout of
mfstein, e.g. ``git worktree add /tmp/before <rev>``) first on ``PYTHONPATH`` and
prints its rows beside.

    .venv/bin/python benchmarks/bench_exact_scale.py
    .venv/bin/python benchmarks/bench_exact_scale.py --sizes 100 320 420 --before /tmp/before
    .venv/bin/python benchmarks/bench_exact_scale.py --no-sir --sizes 420  # 1.25e7 states
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from math import comb
from pathlib import Path

from trees import tree_cache

ROOT = Path(__file__).resolve().parents[1]
SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
#: The supermarket's N of the warm-up: 234,136 states, above the direct solver's
#: 5,000 (so that the compiled BiCGSTAB is in the cache too: at N = 6 it was not) and
#: above :data:`numeric.exact.small.SMALL_STATES` (so that the compiled search and
#: assembly are too: at N = 30, the warm-up until stop 53, the chain took the NumPy
#: route, and the first large child compiled them, 6 s more CPU and some 48 MB more
#: peak memory, numba's compiler state, than the children after it).
WARM_LARGE = 110


def _cpu() -> float:
    import resource

    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def _clocks() -> tuple[float, float]:
    """The process's CPU (:func:`_cpu`) and the calling thread's, in seconds."""
    import time

    return _cpu(), time.thread_time()


def _peak() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _forget_call(N: int) -> None:
    """Remove the record of the SIR call at ``N`` (:mod:`numeric.exact.kept`) and the
    arrays kept beside it: the cache as a call at an ``N`` it has never seen finds it.
    (Until stop 48 the arrays stayed, and the call's write replaced a 490 KB file: its
    rename took some 0.25 ms more than a new file's, measured on ext4.)"""
    from mfstein.ground import records
    from numeric.exact.kept import call_key

    key = call_key("sir", SIR, N, None, None, None, route="auto")
    records._path(key).unlink(missing_ok=True)
    records._arrays_path(key).unlink(missing_ok=True)


def child_sir(N: int, save: str | None = None) -> dict:
    """The SIR case in this (fresh) process; ``save``: a path to keep the pinned
    system ``A x = e_r`` in (``.npz``) for :func:`child_spsolve`."""
    import numba  # noqa: F401  (the imports are timed apart from the calls)
    import numpy as np
    import scipy.sparse.linalg  # noqa: F401

    import numeric.exact
    from derive.models import load_model

    t0, m0 = _clocks()
    r = numeric.exact.solve("sir", SIR, N=N)
    t1, m1 = _clocks()
    numeric.exact.solve("sir", SIR, N=N)
    warm = _cpu() - t1
    from scipy.sparse.linalg import spsolve

    from numeric.exact.general import Chain
    from numeric.exact.solvers import normalise, pinned, residual

    ch = Chain.setup(load_model("sir"), N, SIR, None, None, None)
    _, QT, _, _, ref = ch._assemble(np.asarray(r.s_star, dtype=float) * N)
    A = pinned(QT, ref).tocsc()
    rhs = np.zeros(QT.shape[0])
    rhs[ref] = 1.0
    t2 = _cpu()
    x = spsolve(A, rhs)
    t3 = _cpu()
    pi = normalise(x)
    if save:
        np.savez(save, indptr=A.indptr, indices=A.indices, data=A.data, shape=A.shape, rhs=rhs, x=x)
    return {
        "states": r.states,
        "solve": t1 - t0,
        "solve_main": m1 - m0,
        "imports": t0,
        "warm": warm,
        "spsolve": t3 - t2,
        "residual": r.residual,
        "spsolve_residual": residual(QT, pi),
        "max_diff": float(np.abs(pi - np.asarray(r.pi)).max()) if len(pi) == r.states else None,
    }


def child_spsolve(path: str) -> dict:
    """:func:`scipy.sparse.linalg.spsolve` on the system :func:`child_sir` saved in
    ``path``: the first call of this (fresh) process, the imports before the timer."""
    import numpy as np
    import scipy.sparse as sps
    from scipy.sparse.linalg import spsolve

    with np.load(path) as z:
        A = sps.csc_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
        rhs, x_warm = z["rhs"], z["x"]
    t0, m0 = _clocks()
    x = spsolve(A, rhs)
    t1, m1 = _clocks()
    return {
        "spsolve_fresh": t1 - t0,
        "spsolve_fresh_main": m1 - m0,
        "same_x": bool(np.array_equal(x, x_warm)),
    }


def child_supermarket(N: int) -> dict:
    """The supermarket case (b = 3, d = 2, lam = 0.9) in this (fresh) process."""
    t0 = _cpu()
    from numeric.exact import solve_exact

    r = solve_exact(N, "0.9", 3, 2)
    return {
        "states": r.states,
        "solve": _cpu() - t0,
        "peak": _peak(),
        "residual": r.residual,
        "iterations": r.iterations,
        "method": r.solver,
        "n_mse": r.n_mse,
    }


#: Children keep their bytecode here, as an installed package does (a session that
#: sets ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module from source
#: in every child, some 30-60 ms of the first call).
PYCACHE = Path(tempfile.gettempdir()) / "mfstein-bench-pycache"


def _run(tree: Path, case: str, N: int, timeout: float, *extra: str) -> dict | None:
    env = dict(
        os.environ,
        PYTHONPATH=str(tree),
        PYTHONPYCACHEPREFIX=str(PYCACHE / tree.name),
        MFSTEIN_CACHE_DIR=tree_cache(str(tree)),  # each tree its own compiled code
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--child", case, str(N), *extra],
            capture_output=True, text=True, env=env, timeout=timeout, check=True,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    except subprocess.CalledProcessError as exc:
        tail = exc.stderr.strip().splitlines()[-1:] or ["?"]
        return {"error": tail[0]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _best(tree: Path, case: str, N: int, runs: int, timeout: float) -> dict | None:
    rows = [_run(tree, case, N, timeout) for _ in range(runs)]
    good = [r for r in rows if r is not None and "error" not in r]
    if not good:
        return rows[-1]
    return min(good, key=lambda r: r["solve"])


def _alternating(
    trees: list[tuple[str, Path]], case: str, N: int, runs: int, timeout: float
) -> dict[str, list[dict | None]]:
    """``runs`` children of ``case`` (``sir`` or ``sir-new``) per tree, the trees taking
    turns (a change in the machine's load falls on both); each followed by a fresh
    child of ``spsolve`` on its generator (:func:`child_spsolve`), whose figures join
    its row.  For ``sir-new`` a child of its own removes the call's record first."""
    rows: dict[str, list[dict | None]] = {label: [] for label, _ in trees}
    with tempfile.TemporaryDirectory(prefix="bench-exact-") as tmp:
        system = str(Path(tmp) / "system.npz")
        for _ in range(runs):
            for label, tree in trees:
                if case == "sir-new":
                    _run(tree, "forget", N, timeout)
                row = _run(tree, "sir", N, timeout, system)
                if row is not None and "error" not in row:
                    fresh = _run(tree, "spsolve", N, timeout, system)
                    row.update(fresh if fresh is not None and "error" not in fresh else {})
                rows[label].append(row)
    return rows


def _sir_row(label: str, runs: list[dict | None], new: bool = False) -> str:
    """The SIR case's line: min / median over the children of the first solve, of
    spsolve and of their ratio in each child; the rest from the child of the fastest
    first solve."""
    import statistics

    what = "SIR N=100, a new N" if new else "SIR N=100"
    good = [r for r in runs if r is not None and "error" not in r]
    if not good:
        r = runs[-1]
        return f"{label:>7}  {what}: {'timeout' if r is None else r['error']}"

    def spread(values: list[float], digits: int = 3) -> str:
        return f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f}"

    r = min(good, key=lambda g: g["solve"])
    paired = [g for g in good if "spsolve_fresh" in g]
    fresh = (
        f"spsolve first in a fresh child {spread([g['spsolve_fresh'] for g in paired])} "
        f"(same x: {all(g['same_x'] for g in paired)}); first / fresh spsolve "
        f"{spread([g['solve'] / g['spsolve_fresh'] for g in paired], 1)}x; "
        if paired
        else ""
    )
    main = (
        f"\n{'':>7}  main thread, CPU s min / median: first solve "
        f"{spread([g['solve_main'] for g in good])}; spsolve first in a fresh child "
        f"{spread([g['spsolve_fresh_main'] for g in paired])}; first / fresh spsolve "
        f"{spread([g['solve_main'] / g['spsolve_fresh_main'] for g in paired], 1)}x"
        if paired
        else ""
    )
    return (
        f"{label:>7}  {what} ({r['states']:,} states), CPU s min / median of {len(good)}: "
        f"first solve {spread([g['solve'] for g in good])}; spsolve on the same generator "
        f"{spread([g['spsolve'] for g in good])}; first / spsolve "
        f"{spread([g['solve'] / g['spsolve'] for g in good], 1)}x; {fresh}second solve "
        f"{spread([g['warm'] for g in good])}; interpreter and imports {r['imports']:.2f}; "
        f"residuals {r['residual']:.1e} / {r['spsolve_residual']:.1e}; max |pi - pi_spsolve| "
        f"{r['max_diff']:.1e}{main}"
    )


def _market_row(label: str, N: int, r: dict | None) -> str:
    states = comb(N + 3, 3)
    if r is None or "error" in r:
        why = "timeout" if r is None else r["error"]
        return f"{label:>7} {N:>5} {states:>11,}  {why}"
    return (
        f"{label:>7} {N:>5} {r['states']:>11,} {r['solve']:>9.1f} {r['peak'] / 1e9:>8.2f} "
        f"{r['peak'] / r['states']:>7.0f} {r['method']:>9} {r['iterations']:>5} "
        f"{r['residual']:>9.1e} {r['n_mse']:>16.12f}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="*", type=int, default=[100, 320], help="supermarket N")
    ap.add_argument("--sir-N", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3, help="runs of a small case")
    ap.add_argument("--large", type=int, default=10**6, help="one run above this many states")
    ap.add_argument("--before", type=Path, help="another checkout, run beside")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per child")
    ap.add_argument("--no-sir", action="store_true", help="the supermarket's rows only")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        case, N, *extra = args.child
        if case == "forget":
            _forget_call(int(N))
            print(json.dumps({}))
        elif case == "sir":
            print(json.dumps(child_sir(int(N), *extra)))
        elif case == "spsolve":
            print(json.dumps(child_spsolve(*extra)))
        else:
            print(json.dumps(child_supermarket(int(N))))
        return 0
    trees = [("after", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    for _, tree in trees:  # warm the kernel cache of both models, and of the Krylov solver
        if not args.no_sir:
            _run(tree, "sir", 6, args.timeout)
            _run(tree, "sir", args.sir_N, args.timeout)  # and the call's own (numeric.exact.kept)
        _run(tree, "supermarket", WARM_LARGE, args.timeout)
    for case in () if args.no_sir else ("sir", "sir-new"):
        rows = _alternating(trees, case, args.sir_N, args.repeat, args.timeout)
        for label, _ in trees:
            print(_sir_row(label, rows[label], new=case == "sir-new"), flush=True)
    print()
    print(
        f"{'':>7} {'N':>5} {'states':>11} {'CPU s':>9} {'peak GB':>8} {'B/state':>7} "
        f"{'method':>9} {'iter':>5} {'residual':>9} {'N E||S-s*||^2':>16}"
    )
    for N in args.sizes:
        runs = 1 if comb(N + 3, 3) > args.large else args.repeat
        for label, tree in trees:
            print(
                _market_row(label, N, _best(tree, "supermarket", N, runs, args.timeout)), flush=True
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
