"""One parameter point of a claim check, and the objects claims read from it.

A :class:`Context` holds ``(lam, N, b, d, xi, dps)`` and, when the heavy-traffic
scaling was given, ``gamma`` and ``alpha`` with ``lam = 1 - gamma / N^alpha``
(the core paper, Section 3).  The mean-field objects -- ``s*``, ``J(s*)``, ``P``, ``f~``,
the constant ``c`` and the eigenvalues of ``J`` -- come from :mod:`numeric`
(``bound`` for ``b = "auto"``, ``solve`` for a given ``b``) and are computed on
first use, once per context.  A few derived quantities the paper's proofs use
(the spectral norm of ``J``, the Hessian of ``f`` at ``s*`` from ``derive``'s
generated kernels) are cached here too, so claims never recompute them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import mpmath

from mfstein.ground.errors import ParameterError
from numeric.lemmas.hessian import max_quadratic_ratio


@dataclass
class Context:
    """The parameters of one grid point and lazily computed mean-field objects.

    Parameters
    ----------
    lam:
        Arrival rate per server, ``0 < lam < 1``.
    N:
        Number of servers.
    b:
        Buffer size (``int >= 1``) or ``"auto"`` (numeric's choice of a buffer at
        which the constant no longer changes).
    d:
        Servers sampled per arrival (2 in the paper).
    xi:
        The paper's arbitrarily small ``xi > 0`` (Lemmas 6, 10, 12, Remark 2).
    dps:
        Working precision in decimal digits.
    gamma, alpha:
        Heavy-traffic parameters, or ``None`` when ``lam`` was given directly.
    guard:
        Extra digits carried in the claims' own arithmetic.
    """

    lam: Any
    N: int
    b: int | str = "auto"
    d: int = 2
    xi: Any = None
    dps: int = 30
    gamma: Any = None
    alpha: Any = None
    guard: int = 10
    _cache: dict = field(default_factory=dict, repr=False)

    # -- the mean-field solution (numeric) ---------------------------------
    @cached_property
    def sol(self):
        """numeric's :class:`MeanFieldSolution` at this point (M = I)."""
        import numeric  # its public short form, the family's registration

        with mpmath.workdps(self.dps):
            # the claims use J and P of every level: no tail truncation
            return numeric.bound(self.lam, self.b, self.d, dps=self.dps, truncate=False)

    @property
    def b_used(self) -> int:
        """The buffer size actually used (``sol.n`` when ``b = "auto"``)."""
        return int(self.sol.n) if self.b == "auto" else int(self.b)

    @property
    def digits(self) -> int:
        """Significant digits trusted: ``min(dps, sol.digits)`` once the solution was
        computed, else ``dps`` (a claim that never touched numeric's objects)."""
        if "sol" not in self.__dict__:
            return int(self.dps)
        return max(3, min(int(self.dps), int(self.sol.digits)))

    # -- matrices and norms used by the proofs -----------------------------
    @cached_property
    def J(self) -> mpmath.matrix:
        """``J(s*)`` as computed by numeric."""
        return mpmath.matrix(self.sol.J)

    @cached_property
    def P(self) -> mpmath.matrix:
        """``P`` with ``P J + J^T P = -I`` (Lemma 4), as computed by numeric."""
        return mpmath.matrix(self.sol.P)

    @cached_property
    def norm2_J(self):
        """Spectral norm ``||J(s*)||_2 = sqrt(lambda_max(J^T J))`` (the core paper's ``||.||``)."""
        return spectral_norm(self.J)

    @cached_property
    def norm2_P(self):
        """Spectral norm of the symmetric positive definite ``P``: its largest eigenvalue."""
        return spectral_norm(self.P)

    @cached_property
    def eigenvalues_J(self) -> list:
        """Eigenvalues of ``J(s*)`` by an independent route (:func:`tridiagonal_eigenvalues`)."""
        return tridiagonal_eigenvalues(self.J)

    @cached_property
    def hessian(self) -> tuple[list[tuple[int, int, int]], list]:
        """Hessian of ``f`` at ``s*`` from derive's mpmath kernels: ``(index, values)``."""
        from derive import supermarket

        k = supermarket(self.b_used, self.d).kernels("mpmath")
        vals = k.hess_values(list(self.sol.s_star), [mpmath.mpf(self.lam)])
        index = [tuple(int(v) for v in row) for row in k.hess_index.tolist()]
        return index, list(vals)

    @cached_property
    def hessian_maximum(self) -> tuple[Any, int]:
        """Lemma 8's ``max_x ||<x, Hess f(s*) x>|| / ||x||^2`` and the ``j`` of the
        maximiser ``x = e_j`` (:func:`numeric.lemmas.hessian.max_quadratic_ratio`)."""
        index, values = self.hessian
        return max_quadratic_ratio(index, values, self.b_used)


def spectral_norm(A: mpmath.matrix):
    """``||A||_2``: the square root of the largest eigenvalue of ``A^T A`` (mpmath.eigsy)."""
    AtA = A.T * A
    AtA = (AtA + AtA.T) / 2
    ev = mpmath.eigsy(AtA, eigvals_only=True)
    return mpmath.sqrt(max(ev[i] for i in range(A.cols)))


def tridiagonal_eigenvalues(J: mpmath.matrix) -> list:
    """Eigenvalues of a tridiagonal ``J`` with positive off-diagonal products, ascending.

    ``J = D^-1 T D`` with ``T`` symmetric tridiagonal, ``T_kk = J_kk`` and
    ``T_{k,k+1} = T_{k+1,k} = sqrt(J_{k,k+1} J_{k+1,k})``; the eigenvalues of ``T``
    (mpmath.eigsy, Jacobi) are those of ``J``.  This is a route independent of the
    one numeric uses, and shows the eigenvalues are real.
    """
    n = J.rows
    T = mpmath.zeros(n, n)
    for k in range(n):
        T[k, k] = J[k, k]
    for k in range(n - 1):
        prod = J[k, k + 1] * J[k + 1, k]
        if prod <= 0:
            raise ParameterError(
                "J must have positive off-diagonal products for the symmetrisation; "
                f"J[{k},{k + 1}] * J[{k + 1},{k}] = {mpmath.nstr(prod, 5)}."
            )
        T[k, k + 1] = T[k + 1, k] = mpmath.sqrt(prod)
    ev = mpmath.eigsy(T, eigvals_only=True)
    return sorted(ev[i] for i in range(n))
