"""Equilibrium, linearisation, Stein's equation and the Lyapunov system (core paper, Secs. 4, 6.2).

Everything here is symbolic.  The equilibrium point is kept as symbols
``sstar1 .. sstarb`` (printed ``s^*_k``), the Stein solution's matrix as a
symmetric matrix of symbols ``P_i_j`` (``P_i_j`` and ``P_j_i`` are the same
symbol, named with ``i <= j``), so every object parses back with
:func:`sympy.sympify`.

The chain of facts implemented (with ``x = s - s^*``):

* equilibrium (eqs. (1a)-(1c)): ``f(s^*) = 0`` with ``s_0 = 1``, ``s_{b+1} = 0``;
* linear model (eq. (8)): ``l(s) = J(s^*) (s - s^*)``;
* Stein's equation for it (eq. (10), general weight ``M``):
  ``grad g(s) . J(s^*) x = x^T M x``;
* its quadratic solution (Lemma 4): ``g(s) = -x^T P x`` with
  ``P J(s^*) + J(s^*)^T P = -M`` (eq. (23); ``M = I`` in the paper);
* vectorised (Section 6.4): ``(J^T (x) I + I (x) J^T) vec P = -vec M``,
  ``vec`` stacking columns;
* dominant term: ``E[x^T M x] ~ tr(P Q(s^*)) / N``; with ``M = I`` this is
  ``2 tr(P F~) / N`` (Theorem 1 with its sign corrected).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import sympy as sp

from derive.model import N
from mfstein.ground.display import Presentable
from mfstein.ground.errors import ParameterError, check_int

if TYPE_CHECKING:
    from derive.model import Model


def sstar_symbols(b: int) -> tuple[sp.Symbol, ...]:
    """The equilibrium symbols ``sstar1 .. sstarb`` (``s^*_k`` in the paper)."""
    b = check_int("b", b, 1)
    return tuple(sp.Symbol(f"sstar{k}") for k in range(1, b + 1))


def symmetric_symbols(name: str, b: int) -> sp.Matrix:
    """A symmetric ``b x b`` matrix of symbols ``{name}_i_j`` (1-based, ``i <= j``).

    Entry ``(i, j)`` and ``(j, i)`` hold the same symbol ``{name}_min_max``.
    """
    b = check_int("b", b, 1)
    return sp.Matrix(b, b, lambda i, j: sp.Symbol(f"{name}_{min(i, j) + 1}_{max(i, j) + 1}"))


def p_matrix(b: int) -> sp.Matrix:
    """The symmetric unknown ``P`` of Lemma 4, entries ``P_i_j``."""
    return symmetric_symbols("P", b)


def weight_matrix(b: int, M: object = None) -> sp.Matrix:
    """The weight ``M`` of the observable ``x^T M x``.

    Parameters
    ----------
    b:
        Dimension.
    M:
        ``None`` or ``"I"`` for the identity (the paper's ``||s - s^*||^2``),
        ``"symbolic"`` for a symmetric matrix of symbols ``M_i_j``, or any
        symmetric ``b x b`` matrix-like object.
    """
    b = check_int("b", b, 1)
    if M is None or (isinstance(M, str) and M == "I"):
        return sp.eye(b)
    if isinstance(M, str):
        if M == "symbolic":
            return symmetric_symbols("M", b)
        raise ParameterError(f"M must be None, 'I', 'symbolic' or a symmetric matrix, got {M!r}.")
    Mm = sp.Matrix(M)
    if Mm.shape != (b, b):
        raise ParameterError(f"M must be a {b} x {b} matrix, got shape {Mm.shape}.")
    if not (Mm - Mm.T).is_zero_matrix:
        raise ParameterError("M must be symmetric (M = M^T).")
    return Mm


def _star(model: Model) -> dict[sp.Symbol, sp.Symbol]:
    return dict(zip(model.states, sstar_symbols(model.n), strict=True))


def deviation(model: Model) -> sp.Matrix:
    """``x = s - s^*`` as a ``b x 1`` matrix."""
    return deviation_of(model.states)


def deviation_of(states: Sequence[sp.Symbol]) -> sp.Matrix:
    """``x = s - s^*`` for the state symbols ``s`` (:func:`sstar_symbols` for ``s^*``)."""
    return sp.Matrix(states) - sp.Matrix(sstar_symbols(len(states)))


def equilibrium_equations(model: Model) -> list[sp.Equality]:
    """The equilibrium conditions ``f_k(s^*) = 0``, ``k = 1..b`` (core paper, eqs. (1a)-(1c)).

    The boundary values ``s^*_0 = 1`` (1a) and ``s^*_{b+1} = 0`` are already
    substituted by the model, so for the supermarket model row ``k < b`` is (1b),
    ``lam ((s^*_{k-1})^d - (s^*_k)^d) - mu (s^*_k - s^*_{k+1}) = 0``, and row ``b`` is (1c).
    """
    sub = _star(model)
    return [sp.Eq(fk.xreplace(sub), 0) for fk in model.drift]


def jacobian_at_equilibrium(model: Model) -> sp.Matrix:
    """``J(s^*)``: the Jacobian with ``s`` replaced by the symbols ``s^*``."""
    return model.jacobian.xreplace(_star(model))


def diffusion_at_equilibrium(model: Model) -> sp.Matrix:
    """``Q(s^*)`` in the symbols ``s^*``."""
    return model.diffusion.xreplace(_star(model))


def ftilde_at_equilibrium(model: Model) -> sp.Matrix:
    """``f~(s^*)`` in the symbols ``s^*``; ``F~ = diag(f~(s^*))`` in Theorem 1."""
    return model.ftilde.xreplace(_star(model))


def linearised_drift(model: Model) -> sp.Matrix:
    """The linear mean-field model ``l(s) = J(s^*) (s - s^*)`` (core paper, eq. (8))."""
    return (jacobian_at_equilibrium(model) * deviation(model)).applyfunc(sp.expand)


def stein_solution(model: Model, P: sp.Matrix | None = None) -> sp.Expr:
    """The quadratic solution ``g(s) = -(s - s^*)^T P (s - s^*)`` (Lemma 4)."""
    P = p_matrix(model.n) if P is None else sp.Matrix(P)
    x = deviation(model)
    return sp.expand((-(x.T * P * x))[0, 0])


def gradient(expr: sp.Expr, model: Model) -> sp.Matrix:
    """``grad_s expr`` as a ``b x 1`` matrix."""
    return sp.Matrix([sp.diff(expr, s) for s in model.states])


def stein_equation(model: Model, M: object = None, g: sp.Expr | None = None) -> sp.Equality:
    """Stein's equation for the linear model (core paper, eq. (10), weight ``M``).

    ``grad g(s) . J(s^*) (s - s^*) = (s - s^*)^T M (s - s^*)``; ``g`` defaults to
    :func:`stein_solution`.  Returned unevaluated as ``Eq(lhs, rhs)`` with both
    sides expanded.
    """
    Mm = weight_matrix(model.n, M)
    g = stein_solution(model) if g is None else g
    x = deviation(model)
    lhs = sp.expand((gradient(g, model).T * linearised_drift(model))[0, 0])
    rhs = sp.expand((x.T * Mm * x)[0, 0])
    return sp.Eq(lhs, rhs, evaluate=False)


def lyapunov_residual(model: Model, M: object = None, P: sp.Matrix | None = None) -> sp.Matrix:
    """``R = P J(s^*) + J(s^*)^T P + M``; the Lyapunov equation (eq. (23)) is ``R = 0``."""
    Mm = weight_matrix(model.n, M)
    P = p_matrix(model.n) if P is None else sp.Matrix(P)
    J = jacobian_at_equilibrium(model)
    return (P * J + J.T * P + Mm).applyfunc(sp.expand)


def lyapunov_equation(model: Model, M: object = None) -> sp.Equality:
    """The matrix equation ``P J(s^*) + J(s^*)^T P = -M`` (unevaluated ``Eq``)."""
    Mm = weight_matrix(model.n, M)
    P = p_matrix(model.n)
    J = jacobian_at_equilibrium(model)
    return sp.Eq((P * J + J.T * P).applyfunc(sp.expand), -Mm, evaluate=False)


def vec(A: sp.Matrix) -> sp.Matrix:
    """Column-major vectorisation ``vec(A)`` (columns stacked), core paper Section 6.4."""
    return sp.Matrix(A).vec()


@dataclass(frozen=True)
class KroneckerSystem:
    """The vectorised Lyapunov equation ``K vec(P) = rhs``."""

    #: ``K = J(s^*)^T (x) I + I (x) J(s^*)^T`` (``b^2 x b^2``).
    matrix: sp.Matrix
    #: ``vec(P)`` (column-major) in the symbols ``P_i_j``.
    unknowns: sp.Matrix
    #: ``-vec(M)``.
    rhs: sp.Matrix


def kronecker_system(model: Model, M: object = None) -> KroneckerSystem:
    """``(J^T (x) I + I (x) J^T) vec P = -vec M`` (core paper, Section 6.4).

    Uses ``vec(A B C) = (C^T (x) A) vec(B)`` on ``P J = I P J`` and ``J^T P = J^T P I``.
    """
    b = model.n
    Mm = weight_matrix(b, M)
    Jt = jacobian_at_equilibrium(model).T
    eye = sp.eye(b)
    K = sp.kronecker_product(Jt, eye) + sp.kronecker_product(eye, Jt)
    return KroneckerSystem(K, vec(p_matrix(b)), -vec(Mm))


def solve_lyapunov(model: Model, M: object = None, J: sp.Matrix | None = None) -> sp.Matrix:
    """Solve ``P J + J^T P = -M`` for symmetric ``P`` by linear elimination.

    Solves the ``b (b + 1) / 2`` scalar equations of the upper triangle for the
    distinct symbols ``P_i_j`` with :func:`sympy.linsolve`.  ``J`` defaults to
    ``J(s^*)`` in the symbols ``s^*``; pass an explicit matrix to get explicit
    entries.  Practical for small ``b`` only.
    """
    b = model.n
    Mm = weight_matrix(b, M)
    J = jacobian_at_equilibrium(model) if J is None else sp.Matrix(J)
    P = p_matrix(b)
    R = P * J + J.T * P + Mm
    unknowns = [P[i, j] for i in range(b) for j in range(i, b)]
    eqs = [R[i, j] for i in range(b) for j in range(i, b)]
    (sol,) = sp.linsolve(eqs, unknowns)
    table = dict(zip(unknowns, sol, strict=True))
    return P.xreplace(table).applyfunc(sp.factor)


def solve_kronecker(model: Model, M: object = None, J: sp.Matrix | None = None) -> sp.Matrix:
    """Solve the vectorised system for ``vec P`` with LU and fold it back to ``P``.

    An independent route to :func:`solve_lyapunov` (``b^2`` unknowns, symmetry
    not imposed); practical for small ``b`` only.
    """
    b = model.n
    Mm = weight_matrix(b, M)
    Jt = (jacobian_at_equilibrium(model) if J is None else sp.Matrix(J)).T
    eye = sp.eye(b)
    K = sp.kronecker_product(Jt, eye) + sp.kronecker_product(eye, Jt)
    v = K.LUsolve(-vec(Mm))
    # vec is column-major: entry (i, j) sits at position j * b + i.
    return sp.Matrix(b, b, lambda i, j: sp.factor(v[j * b + i]))


def dominant_term(model: Model, P: sp.Matrix | None = None) -> sp.Expr:
    """``tr(P Q(s^*)) / N``: the leading term of ``E[(S - s^*)^T M (S - s^*)]``.

    With ``M = I`` and the supermarket model (``Q = 2 diag(f~)``) this is
    ``2 tr(P F~) / N`` -- Theorem 1's constant with the sign of eq. (5)
    corrected and eq. (6)'s spurious ``1/N`` removed.
    """
    P = p_matrix(model.n) if P is None else sp.Matrix(P)
    Q = diffusion_at_equilibrium(model)
    return sp.expand((P * Q).trace()) / N


@dataclass(frozen=True, repr=False)
class SteinLyapunovCheck(Presentable):
    """Outcome of :func:`stein_lyapunov_check`."""

    #: ``(lhs - rhs of Stein's equation) + x^T R x`` simplified; ``0`` proves
    #: that Stein's residual equals ``-x^T R x`` with ``R`` the Lyapunov residual.
    identity: sp.Expr
    #: ``(1/2) Hess_s(Stein residual) + R`` simplified entrywise; the zero
    #: matrix proves the residual's coefficient matrix is exactly ``-R``.
    coefficient_gap: sp.Matrix
    #: Whether ``R - R^T`` simplifies to zero; with the two facts above, the
    #: quadratic form vanishes for every ``x`` iff ``R = 0``.
    symmetric: bool

    _MORE: ClassVar[str] = "exact (symbolic); the expressions: .identity, .coefficient_gap"

    @property
    def holds(self) -> bool:
        """True when all three facts were verified."""
        return self.identity == 0 and self.coefficient_gap.is_zero_matrix and self.symmetric

    def to_dict(self) -> dict[str, Any]:
        """The verdict and the simplified expressions as SymPy text (``exact``: the
        check is symbolic, no rounding)."""
        gap = self.coefficient_gap
        return {
            "holds": bool(self.holds),
            "exact": True,
            "identity": str(self.identity),
            "coefficient_gap": [[str(gap[i, j]) for j in range(gap.cols)] for i in range(gap.rows)],
            "symmetric": bool(self.symmetric),
        }

    def _rows(self) -> list[tuple[str, str]]:
        zero = self.coefficient_gap.is_zero_matrix
        return [
            ("holds", str(bool(self.holds))),
            ("identity", f"{self.identity} (0: Stein's residual is -x^T R x)"),
            ("coefficient gap", "zero" if zero else "not zero (see .coefficient_gap)"),
            ("R symmetric", str(bool(self.symmetric))),
        ]


def stein_lyapunov_check(model: Model, M: object = None) -> SteinLyapunovCheck:
    """Verify that ``g = -x^T P x`` solves Stein's equation iff ``P J + J^T P = -M``.

    With ``x = s - s^*``: ``grad g . J x - x^T M x = -2 x^T P J x - x^T M x
    = -x^T (P J + J^T P + M) x = -x^T R x``.  ``R`` is symmetric (``P``, ``M``
    symmetric), and a symmetric quadratic form vanishes identically iff its
    matrix is zero; so Stein's equation holds for all ``s`` iff ``R = 0``.
    """
    eq = stein_equation(model, M)
    residual = sp.expand(eq.lhs - eq.rhs)
    R = lyapunov_residual(model, M)
    x = deviation(model)
    identity = sp.simplify(sp.expand(residual + (x.T * R * x)[0, 0]))
    states = model.states
    b = model.n
    half_hess = sp.Matrix(b, b, lambda i, j: sp.diff(residual, states[i], states[j]) / 2)
    gap = (half_hess + R).applyfunc(lambda e: sp.simplify(sp.expand(e)))
    symmetric = (R - R.T).applyfunc(sp.expand).is_zero_matrix
    return SteinLyapunovCheck(identity, gap, bool(symmetric))
