"""Gragg-Bulirsch-Stoer extrapolation on fixed-point integers, at any precision.

One step of length ``H`` runs the explicit midpoint rule with ``n_j = 2 j``
substeps (``j = 1, 2, ...``); its end point has an error expansion in even
powers of ``H / n_j`` (Gragg), so the Aitken-Neville table

    T[j][k] = T[j][k-1] + (T[j][k-1] - T[j-1][k-1]) / ((n_j / n_{j-k})^2 - 1)

removes them one by one: ``T[j][j]`` has order ``2 j``.  The step is accepted at
the first ``j`` where ``|T[j][j] - T[j][j-1]|`` (the error estimate of
``T[j][j-1]``, pessimistic for ``T[j][j]``) is below the tolerance, relative to
the largest entry; it is rejected (and ``H`` cut) when ``j`` reaches the
largest column.  ``H`` grows while steps converge before the column
``kmax - 3`` and shrinks when they need more (high orders pay at high precision).  Numbers are
Python integers scaled by ``2^P`` (:mod:`numeric.heterogeneous.fixed_point`); the
coefficients of the table are exact rationals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from mfstein.ground.errors import NumericalError

Rhs = Callable[[np.ndarray], np.ndarray]


def _midpoint(rhs: Rhs, z0: np.ndarray, f0: np.ndarray, H: int, m: int, P: int) -> np.ndarray:
    """The explicit midpoint rule with ``m`` (even) substeps over ``H``."""
    h = H // m
    prev, cur = z0, z0 + ((h * f0) >> P)
    for _ in range(m - 1):
        prev, cur = cur, prev + ((2 * h * rhs(cur)) >> P)
    return cur


def _magnitude(z: np.ndarray) -> int:
    return max((abs(int(v)) for v in z), default=0)


class Extrapolation:
    """The integrator: ``rhs`` autonomous, ``P`` fraction bits, ``digits`` the
    relative local tolerance ``10^-digits``, at most ``max_evals`` evaluations."""

    def __init__(self, rhs: Rhs, P: int, digits: int, max_evals: int,
                 on_step: Callable[[int], None] | None = None) -> None:
        self.rhs, self.P = rhs, P
        self.kmax = max(6, min(30, digits // 2 + 2))
        self.target = max(4, self.kmax - 3)
        self.tol_num, self.tol_den = 1, 10**digits
        self.max_evals, self.evals = max_evals, 0
        self.on_step = on_step

    def _f(self, z: np.ndarray) -> np.ndarray:
        self.evals += 1
        if self.evals > self.max_evals:
            raise NumericalError(
                f"the heterogeneous transient at this precision needs more than {self.max_evals} "
                "right-hand-side evaluations (a very long horizon or very large rates); give a "
                "shorter time grid or omit dps for the float64 route."
            )
        return self.rhs(z)

    def step(self, z: np.ndarray, H: int) -> tuple[np.ndarray | None, int]:
        """``(z(t + H), column)``, or ``(None, kmax)`` when the table did not converge."""
        f0 = self._f(z)
        scale = max(_magnitude(z), 1 << self.P)
        tol = max(1, scale * self.tol_num // self.tol_den)
        rows: list[list[np.ndarray]] = []
        for j in range(1, self.kmax + 1):
            nj = 2 * j
            row = [_midpoint(self._f, z, f0, H, nj, self.P)]
            for k in range(1, j):
                nk = 2 * (j - k)
                diff = row[k - 1] - rows[-1][k - 1]
                row.append(row[k - 1] + (diff * nk * nk) // (nj * nj - nk * nk))
            rows.append(row)
            if j >= 3 and _magnitude(row[-1] - row[-2]) <= tol:
                return row[-1], j
        return None, self.kmax

    def run(self, z0: np.ndarray, ends: Sequence[int], H0: int) -> list[np.ndarray]:
        """``z`` at each of the (non-decreasing, fixed-point) times ``ends`` from ``t = 0``."""
        out, z, t, H = [], z0, 0, max(H0, 1)
        for end in ends:
            while t < end:
                h = min(H, end - t)
                new, column = self.step(z, h)
                if new is None:
                    H = max(1, (h * 2) // 5)
                    continue
                z, t = new, t + h
                if self.on_step is not None:
                    self.on_step(t)
                if column < self.target:
                    H = max(H, (h * 8) // 5)
                elif column > self.target + 1:
                    H = (h * 7) // 10
            out.append(z)
        return out
