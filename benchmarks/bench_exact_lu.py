"""What the exact route's direct solve does between ``Q^T`` and ``pi``, stage by stage
(issue 34): the pinned matrix, its CSC copy, SuperLU with each column ordering, the
solve, the normalisation, the residual, the refinement, the law's condition estimate,
and beside them the same system through :func:`scipy.sparse.linalg.spsolve`.

The cases' ``Q^T`` and pinned state ``r`` are caught from a real call
(:func:`numeric.exact.general.stationary_checked` wrapped): SIR at ``N`` = 50 / 100 /
200, a 2-coordinate user model (a tandem of two infinite-server stations,
``benchmarks/models/tandem_user.py``, truncated by the solver) and the supermarket
``b = 3`` at ``N`` = 20 / 40 (its family's exact route).  Then, in this process, the
stages take turns ``--repeat`` times (min / median, CPU ms of the calling thread,
one BLAS thread):

``pinned``       :func:`numeric.exact.pinned.pinned` (CSR, a copy of the values)
``tocsc``        its CSC copy, what SuperLU reads
``splu <perm>``  :func:`scipy.sparse.linalg.splu` with ``permc_spec`` = ``<perm>``
                 (``sym``: in SuperLU's ``SymmetricMode``, :data:`VARIANTS`)
``solve``        one triangular solve of ``A x = e_r``
``normalise`` / ``residual``  :func:`~numeric.exact.pinned.normalise`, ``||Q^T pi||_1``
``_direct``      the whole direct solve (:func:`numeric.exact.general._direct`)
``condition``    the law's ``||A^-1||_1`` estimate over the solve's factor (lazy: run when
                 a result is first printed, :mod:`numeric.exact.law_error`)
``spsolve``      ``spsolve(A_csc, e_r)`` (COLAMD, factor and solve in one call)

Below the stages, for each variant: its factor's fill (``nnz(L + U)``), the refinement
steps ``_direct`` takes with it, and ``max |pi - pi_MMD_AT_PLUS_A|_1`` against the
law's stated error (``law_error``).

With ``--fresh K``, each case's system is saved and solved again in ``K`` new processes
of each kind, taking turns: the first ``_direct`` of a process (``Q^T`` to ``pi``, SciPy
and the module imported before the timer) beside a first ``spsolve(A_csc, e_r)``, the
script of :mod:`bench_exact_scale` (``A`` handed over in CSC).

    .venv/bin/python benchmarks/bench_exact_lu.py --repeat 15
    .venv/bin/python benchmarks/bench_exact_lu.py --repeat 0 --fresh 10 --cases "SIR N=100"
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
ORDERINGS = ("MMD_AT_PLUS_A", "COLAMD", "MMD_ATA", "NATURAL")
#: SuperLU's options of each variant factor: the orderings, and MMD_AT_PLUS_A in
#: SuperLU's symmetric mode (the column elimination tree of ``A^T + A``, no postorder)
VARIANTS = {perm: {"permc_spec": perm} for perm in ORDERINGS} | {
    "MMD_AT_PLUS_A sym": {"permc_spec": "MMD_AT_PLUS_A", "options": {"SymmetricMode": True}}
}
SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
TANDEM = {"lam": "1", "mu1": "1", "mu2": "1"}


def _catch(run) -> tuple:
    """``(Q^T, r, free_dims, tol, method)`` of the last direct-or-not solve ``run()``
    makes, and the result it returns."""
    import numeric.exact.general as g

    seen: list = []
    real = g.stationary_checked

    def catching(QT, r, **kw):
        out = real(QT, r, **kw)
        seen.append((QT, r, kw["free_dims"], kw.get("tol", g.TOL), out[2]))
        return out

    g.stationary_checked = catching
    try:
        result = run()
    finally:
        g.stationary_checked = real
    return seen[-1], result


def cases(names: list[str]) -> dict[str, tuple]:
    """The cases' caught systems (module docstring)."""
    import numeric.exact
    from derive.models import load_model

    def tandem() -> object:
        return load_model(f"{ROOT}/benchmarks/models/tandem_user.py:tandem_user")

    runs = {
        "SIR N=50": lambda: numeric.exact.solve("sir", SIR, N=50),
        "SIR N=100": lambda: numeric.exact.solve("sir", SIR, N=100),
        "SIR N=200": lambda: numeric.exact.solve("sir", SIR, N=200),
        "tandem N=20": lambda: numeric.exact.solve(tandem(), TANDEM, N=20),
        "tandem N=40": lambda: numeric.exact.solve(tandem(), TANDEM, N=40),
        "tandem N=80": lambda: numeric.exact.solve(tandem(), TANDEM, N=80),
        "SIR N=400": lambda: numeric.exact.solve("sir", SIR, N=400),
        "supermarket b=2 N=300": lambda: numeric.exact.solve_exact(300, "0.9", 2, 2),
        "supermarket b=3 N=20": lambda: numeric.exact.solve_exact(20, "0.9", 3, 2),
        "supermarket b=3 N=40": lambda: numeric.exact.solve_exact(40, "0.9", 3, 2),
    }
    return {name: _catch(runs[name])[0] for name in names}


def _stages(QT, r: int, qmax: float, tol: float) -> dict:
    """The stages as functions of nothing, each returning what the next reads."""
    import numpy as np
    import scipy.sparse.linalg as spla

    from numeric.exact import general, law_error
    from numeric.exact.pinned import factor, normalise, pinned, residual

    A, lu = factor(QT, r)
    rhs = np.zeros(QT.shape[0])
    rhs[r] = 1.0
    x = lu.solve(rhs)
    pi = normalise(x)
    law_error.remember_factor(QT, r, lu)
    P = pinned(QT, r)
    stages = {
        "qmax": lambda: float(-QT.diagonal().min()),
        "pinned": lambda: pinned(QT, r),
        "tocsc": lambda: P.tocsc(),
    }
    for name, how in VARIANTS.items():
        stages[f"splu {name}"] = lambda how=how: spla.splu(A, **how)
    stages |= {
        "solve": lambda: lu.solve(rhs),
        "normalise": lambda: normalise(x),
        "residual": lambda: residual(QT, pi),
        "_direct": lambda: general._direct(QT, r, qmax, tol),
        "condition": lambda: law_error.condition(QT, r),
        "spsolve": lambda: spla.spsolve(A, rhs),
    }
    return stages


def _orderings(QT, r: int, qmax: float, tol: float, states: int) -> list[str]:
    """Per ordering: fill, refinement steps, and the law's change against its error."""
    import numpy as np
    import scipy.sparse.linalg as spla

    from numeric.exact import general, law_error
    from numeric.exact.pinned import normalise, pinned, residual

    A = pinned(QT, r).tocsc()
    rhs = np.zeros(QT.shape[0])
    rhs[r] = 1.0
    base, base_res = general._direct(QT, r, qmax, tol)
    err = law_error.law_error(base_res, law_error.condition(QT, r), states)
    stated = "none made" if err is None else f"{err:.1e}"
    lines = []
    for perm, how in VARIANTS.items():
        lu = spla.splu(A, **how)
        x = lu.solve(rhs)
        pi, res, steps = normalise(x), None, 0
        res = residual(QT, pi)
        while res > tol * qmax and steps < 4:
            x = x + lu.solve(rhs - A @ x)
            cand = normalise(x)
            if not residual(QT, cand) < res:
                break
            pi, res, steps = cand, residual(QT, cand), steps + 1
        d = float(np.abs(pi - base).sum())
        lines.append(
            f"    {perm:>17}: nnz(L+U) {lu.L.nnz + lu.U.nnz:>9,}  refinements {steps}  "
            f"residual {res:.2e}  |pi - pi_MMD|_1 {d:.1e}  (law_error {stated})"
        )
    return lines


def in_turn(stages: dict, repeat: int) -> list[str]:
    """Min / median CPU ms of each stage, the stages taking turns ``repeat`` times."""
    times: dict[str, list[float]] = {k: [] for k in stages}
    for _ in range(repeat):
        for k, f in stages.items():
            t0 = time.thread_time()
            f()
            times[k].append(1e3 * (time.thread_time() - t0))
    return [f"  {k:>20} {min(v):>9.3f} / {statistics.median(v):>9.3f}" for k, v in times.items()]


CHILD = r"""
import json, sys, time
import numpy as np, scipy.sparse as sps, scipy.sparse.linalg as spla
from numeric.exact import general
from numeric.exact.pinned import pinned

with np.load(sys.argv[1]) as z:
    shape = tuple(int(n) for n in z["shape"])
    QT = sps.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=shape)
    r, qmax, tol = int(z["r"]), float(z["qmax"]), float(z["tol"])
rhs = np.zeros(shape[0])
rhs[r] = 1.0
T = time.thread_time
if sys.argv[2] == "direct":
    t = T()
    pi, res = general._direct(QT, r, qmax, tol)
else:
    A = pinned(QT, r).tocsc()
    t = T()
    x = spla.spsolve(A, rhs)
print(json.dumps({sys.argv[2]: 1e3 * (T() - t)}))
"""


def fresh(QT, r: int, qmax: float, tol: float, k: int) -> list[str]:
    """Min / median CPU ms of a new process's first ``_direct`` and first ``spsolve``."""
    import tempfile

    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/system.npz"
        np.savez(path, data=QT.data, indices=QT.indices, indptr=QT.indptr, shape=QT.shape,
                 r=r, qmax=qmax, tol=tol)  # fmt: skip
        env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
        got: dict[str, list[float]] = {"direct": [], "spsolve": []}
        for _ in range(k):
            for kind in got:
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, path, kind],
                    env=env, capture_output=True, text=True, check=True, cwd="/tmp",
                )  # fmt: skip
                got[kind] += json.loads(out.stdout.strip().splitlines()[-1]).values()
    return [
        f"  {'fresh ' + kind:>20} {min(v):>9.3f} / {statistics.median(v):>9.3f}"
        for kind, v in got.items()
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15, help="turns of every stage")
    ap.add_argument(
        "--cases",
        nargs="*",
        default=["SIR N=50", "SIR N=100", "SIR N=200", "tandem N=20", "tandem N=40",
                 "supermarket b=3 N=20", "supermarket b=3 N=40"],
    )  # fmt: skip
    ap.add_argument("--fresh", type=int, default=0, help="new processes per kind")
    args = ap.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f}; CPU ms of this thread, min / median of {args.repeat}")
    for name, (QT, r, free_dims, tol, method) in cases(args.cases).items():
        S = QT.shape[0]
        qmax = float(-QT.diagonal().min())
        print(f"\n{name}: {S:,} states, nnz(Q^T) {QT.nnz:,}, free dims {free_dims}, "
              f"method {method}, tol {tol:.0e}")  # fmt: skip
        if args.repeat:
            print("\n".join(in_turn(_stages(QT, r, qmax, tol), args.repeat)))
        if args.fresh:
            print("\n".join(fresh(QT, r, qmax, tol, args.fresh)))
        if args.repeat:
            print("\n".join(_orderings(QT, r, qmax, tol, S)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
