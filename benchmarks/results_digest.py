"""Digests of every task's numbers, this tree beside another: a refactor changes no bit.

Each task runs once on a plain model as a researcher writes it (states ``s``, ``i``,
transitions only, a conservation law) and on library models (SIR, the supermarket
with b = 4 and with b = 40, truncated), and its numbers are reduced to a short
SHA-256 digest of their ``repr``.  Wall-clock fields of simulations are left out;
everything else -- fixed points, covariances, constants, digits, exact laws'
moments, seeded simulations, certified enclosures, transients -- must be equal
bit for bit between two trees whose change is meant to keep every number::

    python benchmarks/results_digest.py --tree /tmp/before

(``/tmp/before``: ``git archive <commit> | tar -x -C /tmp/before``).  Each tree runs
in a fresh interpreter with ``PYTHONPATH`` set to it; the table marks every row
that differs.  Exit status 1 when a row differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _digest(x: object) -> str:
    return hashlib.sha256(repr(x).encode()).hexdigest()[:16]


def _floats(xs: object) -> list[float]:
    return [float(v) for v in xs]  # type: ignore[union-attr]


def _timeless(d: dict) -> str:
    skip = ("wall_seconds", "events_per_second")
    return json.dumps({k: v for k, v in d.items() if k not in skip}, sort_keys=True, default=str)


def digests() -> dict[str, str]:
    """The digests of this tree (run in a child with ``PYTHONPATH`` set to it)."""
    import warnings

    import sympy as sp

    import mfstein as mf
    import numeric
    from derive import Model, Transition
    from derive.models import load_model

    warnings.simplefilter("ignore")
    s, i = sp.symbols("s i")
    beta, gamma, a = sp.symbols("beta gamma a")
    plain = Model(
        "plain_si",
        (s, i),
        (beta, gamma, a),
        [Transition((-1, 1), (beta * i + a) * s), Transition((1, -1), gamma * i)],
    )
    P, start = {"beta": "2", "gamma": "1", "a": "0.1"}, ["0.9", "0.1"]
    out: dict[str, str] = {}
    one = numeric.solve(plain, P, start=start)
    out["plain solve"] = _digest((one.s_star, one.W, one.V, one.constant, one.digits))
    two = numeric.solve(plain, P, start=start, order=2)
    out["plain order 2"] = _digest((two.c2, two.A, two.B))
    f64 = numeric.solve(plain, P, start=start, precision="float64")
    out["plain float64"] = _digest((_floats(f64.s_star), float(f64.constant), _floats(f64.V)))
    ex = mf.exact(plain, P, N=10, start=start)
    out["plain exact"] = _digest((ex.mean.tolist(), ex.to_dict().get("note")))
    # each simulation on a named loop: ``auto`` picks by the cache's state (whether the
    # model's loop is compiled, the events rented in its place: sim.rent), and the two
    # loops draw the same chain only to about 1e-12
    run = dict(steps=20000, reps=2, workers=1, engine="interpreted")
    sim = mf.simulate(plain, P, N=10, seed=3, start=start, **run)
    out["plain simulate"] = _digest(_timeless(sim.to_dict()))
    cert = one.certify()
    out["plain certify"] = _digest((str(cert.constant), cert.certified_digits))
    tr = numeric.transient(plain, P, start=start, times=[0, 1, 2])
    out["plain transient"] = _digest(tr.x.tolist())
    sir = load_model("sir")
    Q = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
    r = numeric.solve(sir, Q, dps=20)
    out["sir solve"] = _digest((r.s_star, r.W, r.constant))
    r64 = numeric.solve(sir, Q, precision="float64")
    out["sir float64"] = _digest((_floats(r64.s_star), float(r64.constant)))
    out["sir exact"] = _digest(mf.exact(sir, Q, N=8).mean.tolist())
    rs = mf.simulate(sir, Q, N=20, seed=1, **run)
    out["sir simulate"] = _digest(_timeless(rs.to_dict()))
    rc = mf.simulate(sir, Q, N=20, seed=1, **dict(run, engine="generic"))
    out["sir simulate compiled"] = _digest(_timeless(rc.to_dict()))
    out["sir transient"] = _digest(numeric.transient(sir, Q, times=[0, 0.5, 3]).x.tolist())
    for b in (4, 40):
        sup = load_model("supermarket", b=b)
        m = numeric.solve(sup, {"lam": "0.9"}, dps=20)
        out[f"supermarket b={b}"] = _digest((m.s_star, m.constant, m.digits))
        m64 = numeric.solve(sup, {"lam": "0.9"}, precision="float64")
        out[f"supermarket b={b} float64"] = _digest((_floats(m64.s_star), float(m64.constant)))
    big2 = numeric.solve(load_model("supermarket", b=40), {"lam": "0.9"}, dps=20, order=2)
    out["supermarket b=40 order 2"] = _digest(big2.c2)
    return out


def _run(tree: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    code = f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); " + (
        "import json, results_digest; print(json.dumps(results_digest.digests()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        sys.exit(f"results_digest: the run in {tree} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, help="another checkout, run beside this one")
    args = ap.parse_args(argv)
    here = _run(ROOT)
    other = _run(args.tree) if args.tree else {}
    width = max(map(len, here))
    print(f"{'task':<{width}}  {'this tree':<16}  {'other tree':<16}")
    differ = 0
    for name, d in here.items():
        o = other.get(name, "-")
        mark = "" if not other or o == d else "  DIFFERS"
        differ += bool(mark)
        print(f"{name:<{width}}  {d:<16}  {o:<16}{mark}")
    if other:
        print(f"{len(here) - differ} of {len(here)} rows equal bit for bit")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
