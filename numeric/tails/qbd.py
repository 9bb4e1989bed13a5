"""Matrix-geometric solution of a level-independent continuous-time QBD.

Generator (levels ``0, 1, 2, ...``; blocks indexed by phase)::

    level 0:   B1 (local)    A0 (up)
    level m:   A2 (down)     A1 (local)    A0 (up)        m >= 1

The stationary vector is ``pi_m = pi_0 R^m`` (Neuts), where ``R`` is the
minimal non-negative solution of ``A0 + R A1 + R^2 A2 = 0``, and ``pi_0``
solves ``pi_0 (B1 + R A2) = 0`` with ``pi_0 (I - R)^{-1} 1 = 1``.

``G`` (first passage one level down) is computed by logarithmic reduction
(Latouche and Ramaswami, 1993), which converges quadratically, then
``R = A0 (-(A1 + A0 G))^{-1}``.  Checks, each raising
:class:`mfstein.ground.errors.NumericalError` that names the residual:

* ``G`` stochastic: ``max |1 - G 1| <= tol``;
* ``||A0 + R A1 + R^2 A2||_inf / ||A1||_inf <= tol``;
* ``||pi_0 (B1 + R A2)||_inf / ||B1||_inf <= tol`` after normalisation.

The spectral radius of ``R`` (the decay factor of ``pi_m`` per level) is taken
from the eigenvalues of ``R`` restricted to its non-zero rows (the others
contribute only zero eigenvalues).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mfstein.ground.errors import NumericalError

__all__ = ["QBDSolution", "solve_qbd"]


@dataclass
class QBDSolution:
    """Result of :func:`solve_qbd`."""

    #: Stationary probabilities of level 0 (normalised over all levels).
    pi0: np.ndarray
    #: The rate matrix.
    R: np.ndarray
    #: ``sp(R)`` -- ``pi_m`` decays like ``sp(R)^m``.
    spectral_radius: float
    #: The relative residual ``||A0 + R A1 + R^2 A2||_inf / ||A1||_inf`` (module
    #: docstring).
    residual_R: float
    #: The relative residual ``||pi_0 (B1 + R A2)||_inf / ||B1||_inf`` after normalisation
    #: (module docstring).
    residual_boundary: float
    #: The residual ``max |1 - G 1|`` of ``G``'s row sums (module docstring).
    residual_G: float
    #: Logarithmic-reduction steps.
    iterations: int

    def level_marginal(self) -> np.ndarray:
        """``sum_m pi_m = pi_0 (I - R)^{-1}`` (the phase marginal)."""
        P = self.R.shape[0]
        return np.linalg.solve((np.eye(P) - self.R).T, self.pi0)

    def levels(self, count: int) -> np.ndarray:
        """``pi_0, pi_1, ..., pi_{count-1}`` as rows."""
        out = np.empty((count, self.pi0.size))
        v = self.pi0
        for m in range(count):
            out[m] = v
            v = v @ self.R
        return out


def solve_qbd(
    A0: np.ndarray,
    A1: np.ndarray,
    A2: np.ndarray,
    B1: np.ndarray,
    *,
    tol: float = 1e-10,
    max_iter: int = 80,
) -> QBDSolution:
    """Solve the QBD described in the module docstring (dense float64).

    Raises
    ------
    NumericalError
        When logarithmic reduction does not converge in ``max_iter`` steps or a
        residual exceeds ``tol``.
    """
    P = A1.shape[0]
    eye = np.eye(P)
    neg_inv = np.linalg.inv(-A1)
    up = neg_inv @ A0
    down = neg_inv @ A2
    G = down.copy()
    T = up.copy()
    ones = np.ones(P)
    res_G = np.inf
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (reported)
        U = up @ down + down @ up
        both = np.linalg.solve(eye - U, np.hstack([up @ up, down @ down]))
        up, down = both[:, :P], both[:, P:]
        G = G + T @ down
        T = T @ up
        res_G = float(np.abs(ones - G @ ones).max())
        if res_G <= 1e-14 or np.abs(T).max() < 1e-17:
            break
    if not res_G <= tol:
        raise NumericalError(
            f"QBD: logarithmic reduction stopped after {it} steps with |1 - G 1| = {res_G:.2e} "
            f"> {tol:.0e} (is the chain positive recurrent?)."
        )
    R = A0 @ np.linalg.inv(-(A1 + A0 @ G))
    R[R < 0] = 0.0  # rounding: R is non-negative
    scale = max(np.abs(A1).sum(axis=1).max(), 1.0)
    res_R = float(np.abs(A0 + R @ A1 + R @ R @ A2).sum(axis=1).max() / scale)
    if not res_R <= tol:
        raise NumericalError(f"QBD: residual of A0 + R A1 + R^2 A2 is {res_R:.2e} > {tol:.0e}.")
    Mb = B1 + R @ A2
    v = np.linalg.solve(eye - R, ones)  # (I - R)^{-1} 1
    system = Mb.copy()
    system[:, 0] = v
    rhs = np.zeros(P)
    rhs[0] = 1.0
    pi0 = np.linalg.solve(system.T, rhs)
    bscale = max(np.abs(B1).sum(axis=1).max(), 1.0)
    res_b = float(np.abs(pi0 @ Mb).max() / bscale)
    if not res_b <= tol or pi0.min() < -tol:
        raise NumericalError(
            f"QBD: boundary residual |pi_0 (B1 + R A2)| = {res_b:.2e} (min pi_0 = "
            f"{pi0.min():.2e}); tolerance {tol:.0e}."
        )
    pi0 = np.maximum(pi0, 0.0)
    rows = np.flatnonzero(R.sum(axis=1) > 0)
    if rows.size:
        sp = float(np.abs(np.linalg.eigvals(R[np.ix_(rows, rows)])).max())
    else:
        sp = 0.0
    return QBDSolution(pi0, R, sp, res_R, res_b, res_G, it)
