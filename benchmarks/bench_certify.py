"""Benchmark: certified enclosures (Arb) side by side with the float routes.

Run:  .venv/bin/python benchmarks/bench_certify.py [--dps 50] [--b 10,50,200]

For each buffer ``b`` (supermarket model, ``d = 2``) and for SIR, one row:

* ``float``: :func:`numeric.solve` at ``dps`` digits (independent routes at two
  working precisions; for the supermarket the tail levels beyond the
  truncation level are cut as negligible);
* ``certify``: :func:`numeric.certify` of that solution -- Krawczyk on all
  ``b`` levels, verified Lyapunov solves, ``c`` by two certified routes --
  with the certified digits and the width of the enclosure of ``c``.

Times are wall clock in seconds after kernel generation (generating the
``b = 200`` Arb kernels from SymPy once takes a few seconds; they are cached
on disk).  Goals (issue 14): certified ``c`` at ``b = 50``, 50 digits, under
10 s; at ``b = 200`` under 2 minutes.
"""

from __future__ import annotations

import argparse
import time

from numeric.certified.arb import working_precision


def _row(label: str, solve, cert) -> list[str]:
    t = time.perf_counter()
    sol = solve()
    t_float = time.perf_counter() - t
    t = time.perf_counter()
    cs = cert(sol)
    t_cert = time.perf_counter() - t
    with working_precision(cs.prec):
        width = f"{float(2 * cs.constant.rad()):.1e}"
    return [
        label,
        f"{t_float:.2f}",
        str(sol.digits),
        f"{t_cert:.2f}",
        str(cs.certified_digits),
        width,
        cs.certificates["krawczyk_radius"],
        cs.decide(sol.constant, sol.digits),
    ]


def main() -> None:
    import numeric
    from derive import supermarket
    from derive.kernels import kernels
    from derive.models.sir import sir

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dps", type=int, default=50)
    ap.add_argument("--b", default="10,50,200")
    ap.add_argument("--lam", default="0.95")
    args = ap.parse_args()
    dps, lam = args.dps, args.lam
    rows = []
    for b in [int(x) for x in args.b.split(",")]:
        kernels(supermarket(b, 2), "arb")  # generation (cached) is not timed
        kernels(supermarket(b, 2), "mpmath")
        rows.append(
            _row(
                f"supermarket lam={lam} b={b}",
                lambda b=b: numeric.bound(lam, b, 2, dps=dps),
                lambda s: s.certify(params={"lam": lam}),
            )
        )
    m = sir()
    p = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
    kernels(m, "arb")
    rows.append(
        _row(
            "sir (1 conservation law)",
            lambda: numeric.solve(m, p, dps=dps),
            lambda s: s.certify(params=p),
        )
    )
    head = [
        "case",
        "float s",
        "digits",
        "certify s",
        "cert. digits",
        "width of c",
        "s* radius",
        "float digits",
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(f"certified c vs float routes, dps = {dps}")
    print("  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True)))
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))


if __name__ == "__main__":
    main()
