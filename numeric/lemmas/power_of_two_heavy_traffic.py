"""The numeric claims of the core paper, each with its certified check, registered on import.

The paper: F. Hairi, X. Liu and L. Ying, "Beyond Scaling: Calculable Error
Bound of the Power-of-Two-Choices Mean-Field Model in Heavy-Traffic"
(power-of-two-choices in heavy traffic, ``lam = 1 - gamma / N^alpha``).  Every
claim is one function: :func:`numeric.lemmas.sides.stated` registers it under its
id and the paper's place (lemma, equation), with its docstring as the statement
``lhs REL rhs``, and the function computes the two sides over
:class:`numeric.lemmas.sides.Sides` -- once at the working precision (mpmath, from
:class:`numeric.lemmas.context.Context`; ``mfstein lemmas``) and once in Arb balls
(from :class:`numeric.certified.claim_context.CertifiedContext`; ``mfstein lemmas
--certify``).  Lemma 12's claims are exact (rational arithmetic) and decide
themselves; Lemma 4 compares two floating-point routes and has no certified form.

Notation: ``||.||`` is the Euclidean norm and the matrix norm it induces (the
spectral norm), as the paper states at the start of Section 6; ``||.||_1`` and
``||.||_inf`` are the induced max-column-sum and max-row-sum norms used in the
proof of Lemma 5.  ``mu_i`` are the eigenvalues of ``J(s*)``; ``c = 2 tr(P F~)``
is the Theorem-1 constant (``E||S - s*||^2 ~ c / N``).  In heavy traffic
``lam = 1 - gamma / N^alpha``, so ``lam gamma / N^alpha = lam (1 - lam)``; claims
written that way also run when ``lam`` is given directly.

Two printed statements are wrong and are reported as failing, with the
corrected statement beside them: Theorem 1's sign (the printed expression
``2 vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I)`` equals ``-c < 0``) and eq. (6)
(its extra factor ``1/N``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import mpmath

from numeric.lemmas.context import Context
from numeric.lemmas.parameters import lemma12_parameters, to_fraction, xi_supremum
from numeric.lemmas.quadrature import lyapunov_integral
from numeric.lemmas.registry import Point, claim, judge
from numeric.lemmas.sides import Sides, stated, to_mpf
from numeric.linalg.kronecker import kronecker_solve_identity

#: Largest buffer for which Theorem 1's Kronecker system (b^2 x b^2) is solved
#: literally; above it, the equivalent Lyapunov equation is solved by Lemma 4's
#: quadrature (still independent of numeric's P).
KRONECKER_MAX_B = 20

#: The remark after Lemma 12: alpha = 0.05, r = 32, epsilon = 24.54.
REMARK_ALPHA = Fraction(1, 20)
REMARK_R = 32
REMARK_EPSILON = Fraction("24.54")


def _exact_point(lhs, rhs, relation: str, note: str = "") -> Point:
    p = judge(lhs, rhs, relation, 0)
    p.digits = 0  # exact
    p.note = note
    return p


# -- shared derived quantities (cached on the context) ------------------------
def p_quadrature(ctx: Context) -> mpmath.matrix:
    """``int_0^inf e^{J^T t} e^{J t} dt`` by quadrature (Lemma 4), cached per context."""
    if "P_quad" not in ctx._cache:
        ctx._cache["P_quad"] = lyapunov_integral(ctx.J)
    return ctx._cache["P_quad"]


def kronecker_form(ctx: Context) -> tuple[mpmath.mpf, str]:
    """``vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I)`` and the route that computed it.

    For ``b <= KRONECKER_MAX_B`` the ``b^2 x b^2`` system is solved literally
    (banded elimination, :mod:`numeric.linalg.kronecker`); above,
    ``(J^T (x) I + I (x) J^T) vec(X) = vec(I)`` is the Lyapunov equation
    ``X J + J^T X = I`` whose solution is ``X = -int_0^inf e^{J^T t} e^{J t} dt``
    (Lemma 4's quadrature).  Neither route uses numeric's ``P``.
    """
    if "kron" in ctx._cache:
        return ctx._cache["kron"]
    J, b = ctx.J, ctx.J.rows
    ft = [to_mpf(v) for v in ctx.sol.ftilde]
    if b <= KRONECKER_MAX_B:
        x = kronecker_solve_identity(J)
        val = mpmath.fsum(ft[i] * x[i + b * i] for i in range(b))
        route = f"b^2 x b^2 Kronecker system solved by banded elimination (b = {b})"
    else:
        X = -p_quadrature(ctx)
        val = mpmath.fsum(ft[i] * X[i, i] for i in range(b))
        route = (
            f"Kronecker system as the Lyapunov equation X J + J^T X = I, by quadrature (b = {b})"
        )
    ctx._cache["kron"] = (val, route)
    return val, route


def _kronecker(x: Sides) -> Any:
    """``vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I)`` (Theorem 1): at the working
    precision by :func:`kronecker_form` (independent of numeric's ``P``); in balls as
    ``sum_i f~_i X_ii`` with ``X J + J^T X = I``, i.e. ``X = -P``: ``-tr(F~ P) = -c/2``."""
    if x.balls:
        return -x.sum(x.ftilde[i] * x.P[i, i] for i in range(x.b))
    return kronecker_form(x.ctx)[0]


def _route(x: Sides, p: Point) -> str:
    """The note of Theorem 1's claims: which route solved the Kronecker system."""
    return kronecker_form(x.ctx)[1]


def _dominant(x: Sides) -> Any:
    """``(2/N) sum_i P_ii f~_i(s*)``: the dominant term of ``E||S - s*||^2`` (eqs. (17), (18))."""
    return 2 * x.sum(x.P[i, i] * x.ftilde[i] for i in range(x.b)) / x.N


def _norms_1_inf(x: Sides) -> tuple[Any, Any]:
    """``(||J||_1, ||J||_inf)``: the largest column and row sums of ``|J_ij|`` (Lemma 5's proof)."""
    J, b = x.J, x.b
    one = x.max(x.sum(abs(J[i, j]) for i in range(b)) for j in range(b))
    inf = x.max(x.sum(abs(J[i, j]) for j in range(b)) for i in range(b))
    return one, inf


# -- Lemma 4 ---------------------------------------------------------------------
@claim(
    id="lemma4",
    statement=(
        "P solving the Lyapunov equation P J + J^T P = -I equals int_0^inf e^{J^T t} e^{J t} dt: "
        "max_ij |P_quad - P|_ij / max_ij |P_ij| <= 10^-digits (quadrature, no eigenvectors)"
    ),
    equation="Lemma 4",
)
def _lemma4(ctx: Context) -> Point:
    Pq, P = p_quadrature(ctx), ctx.P
    n = P.rows
    scale = max(abs(P[i, j]) for i in range(n) for j in range(n))
    err = max(abs(Pq[i, j] - P[i, j]) for i in range(n) for j in range(n)) / scale
    p = judge(err, mpmath.mpf(10) ** (-ctx.digits), "<=", ctx.digits, tol=0)
    p.note = f"b = {n}"
    return p


# -- Lemma 5 ---------------------------------------------------------------------
@stated("lemma5", "Lemma 5", ">=")
def _lemma5(x: Sides):
    """min_i P_ii >= 1 / (2 ||J(s*)||)"""
    return x.min(x.P[i, i] for i in range(x.b)), 1 / (2 * x.norm2_J)


@stated("lemma5.eighteenth", "Lemma 5", ">=")
def _lemma5_18(x: Sides):
    """1 / (2 ||J(s*)||) >= 1/18, i.e. ||J(s*)|| <= 9"""
    return 1 / (2 * x.norm2_J), x.num(Fraction(1, 18))


@stated("lemma5.norm_J", "Lemma 5 (proof)")
def _lemma5_norm(x: Sides):
    """||J(s*)|| <= sqrt(||J(s*)||_1 ||J(s*)||_inf) (spectral norm; proof of Lemma 5)"""
    one, inf = _norms_1_inf(x)
    return x.norm2_J, x.sqrt(one * inf)


@stated("lemma5.norm_J_9", "Lemma 5 (proof)")
def _lemma5_norm9(x: Sides):
    """sqrt(||J(s*)||_1 ||J(s*)||_inf) <= 9 (proof of Lemma 5)"""
    one, inf = _norms_1_inf(x)
    return x.sqrt(one * inf), x.num(9)


@stated("lemma5.entries", "Lemma 5 (proof)")
def _lemma5_entries(x: Sides):
    """max_ij |J(s*)_ij| <= 3 (proof of Lemma 5)"""
    J = x.J
    return x.max(abs(J[i, j]) for i in range(x.b) for j in range(x.b)), x.num(3)


# -- Lemma 6 and the spectral gap ------------------------------------------------------
@stated("lemma6", "Lemma 6", requires=("alpha",), asymptotic=True)
def _lemma6(x: Sides):
    """||P|| <= N^(2 alpha + 3 xi) (for sufficiently large N)"""
    return x.norm2_P, x.N ** (2 * x.alpha + 3 * x.xi)


@stated("lemma6.last_step", "Lemma 6 (proof)", requires=("gamma", "alpha"), asymptotic=True)
def _lemma6_last(x: Sides):
    """54 b N^(2 alpha + 2 xi) / gamma <= N^(2 alpha + 3 xi), i.e. 54 b / gamma <= N^xi
    (last step of the proof of Lemma 6, for sufficiently large N)"""
    N, a, xi = x.N, x.alpha, x.xi
    return 54 * x.b * N ** (2 * a + 2 * xi) / x.gamma, N ** (2 * a + 3 * xi)


@stated(
    "spectral_gap",
    "Lemma 6 (proof; Ying 2017, Lemma C.4)",
    ">=",
    requires=("alpha",),
    asymptotic=True,
)
def _spectral_gap(x: Sides):
    """min_i |mu_i(J(s*))| >= N^-(2 alpha + 2 xi): the decay rate delta_0 >= N^-(2 alpha + 2 xi)
    used in Lemma 6 cannot exceed the spectral gap (for sufficiently large N)"""
    gap = x.min(abs(m) for m in x.solution_eigenvalues_J)
    return gap, x.N ** (-(2 * x.alpha + 2 * x.xi))


# -- Lemma 8 ---------------------------------------------------------------------
def _maximiser(x: Sides, p: Point) -> str:
    """Lemma 8's note: the maximising ``x = e_j`` and whether the bound is attained."""
    tight = abs(p.margin) <= mpmath.mpf(10) ** (-(x.ctx.digits - 3)) * p.rhs
    return f"maximiser x = e_{x.ctx.hessian_maximum[1] + 1}" + (
        "; the bound is attained (tight)" if tight else ""
    )


@stated("lemma8", "Lemma 8, eq. (16)", note=_maximiser)
def _lemma8(x: Sides):
    """max over x != 0 of ||<x, Hess f(s*) x>|| / ||x||^2 <= 2 sqrt(2) lam
    (exact maximum: vertex enumeration over y = x o x in the simplex)"""
    return x.hessian_ratio, 2 * x.sqrt(x.num(2)) * x.lam


# -- Lemma 9 ---------------------------------------------------------------------
def _eq17_bound(x: Sides) -> Any:
    """The lower bound of eq. (17): ``lam gamma / (9 N^(1+alpha)) = lam (1 - lam) / (9 N)``."""
    return x.lam * (1 - x.lam) / (9 * x.N)


@stated("lemma9", "Lemma 9, eq. (17)", ">=")
def _lemma9(x: Sides):
    """(2/N) sum_i P_ii f~_i(s*) >= lam gamma / (9 N^(1+alpha)) = lam (1 - lam) / (9 N)"""
    return _dominant(x), _eq17_bound(x)


@stated("lemma9.ftilde_nonneg", "Lemma 9 (proof)", ">=")
def _lemma9_nonneg(x: Sides):
    """min_i f~_i(s*) >= 0"""
    return x.min(x.ftilde), x.num(0)


@stated("lemma9.P_posdef", "Lemma 9 (proof)", ">")
def _lemma9_posdef(x: Sides):
    """P is positive definite, so P_ii >= 0: lambda_min(P) > 0"""
    return x.min(x.eigenvalues_P), x.num(0)


@stated("lemma9.f1", "Lemma 9 (proof)", ">=")
def _lemma9_f1(x: Sides):
    """f~_1(s*) = lam (1 - (s*_1)^2) >= lam (1 - lam^2)"""
    return x.ftilde[0], x.lam * (1 - x.lam**2)


@stated("lemma9.lam_chain", "Lemma 9 (proof)", ">=")
def _lemma9_chain(x: Sides):
    """lam (1 - lam^2) >= lam (1 - lam) = lam gamma / N^alpha"""
    lam = x.lam
    return lam * (1 - lam**2), lam * (1 - lam)


@stated("lemma9.P11", "Lemma 9 (proof)", ">=")
def _lemma9_p11(x: Sides):
    """(2/N) P_11 f~_1(s*) >= lam gamma / (9 N^(1+alpha)) = lam (1 - lam) / (9 N)"""
    return 2 * x.P[0, 0] * x.ftilde[0] / x.N, _eq17_bound(x)


# -- Lemma 10 --------------------------------------------------------------------
@stated("lemma10", "Lemma 10, eq. (18)")
def _lemma10(x: Sides):
    """(2/N) sum_i P_ii f~_i(s*) <= (2 b / N) ||P|| (the bound in the proof of eq. (18))"""
    return _dominant(x), 2 * x.b * x.norm2_P / x.N


@stated("lemma10.ftilde_le_1", "Lemma 10 (proof)")
def _lemma10_ft(x: Sides):
    """max_i f~_i(s*) <= 1"""
    return x.max(x.ftilde), x.num(1)


@stated("lemma10.Pii_le_normP", "Lemma 10 (proof)")
def _lemma10_pii(x: Sides):
    """max_i P_ii <= ||P||"""
    return x.max(x.P[i, i] for i in range(x.b)), x.norm2_P


@stated("lemma10.order", "Lemma 10, eq. (18)", requires=("alpha",), asymptotic=True)
def _lemma10_order(x: Sides):
    """(2/N) sum_i P_ii f~_i(s*) <= N^-(1 - 2 alpha - 4 xi)
    (eq. (18) with the O-constant 1, for sufficiently large N)"""
    return _dominant(x), x.N ** (-(1 - 2 * x.alpha - 4 * x.xi))


# -- Lemma 12 (exact rationals) -------------------------------------------------------
@stated("lemma12.r", "Lemma 12, eq. (21)", "<", requires=("alpha",), exact=True)
def _lemma12_r(ctx: Context) -> Point:
    """(21) admits an integer r: 3 (1 + alpha + xi) / (1 - 18 alpha - 27 xi) < r_min"""
    p = lemma12_parameters(ctx.alpha, ctx.xi)
    if p.r_min is None:
        return Point(
            lhs=mpmath.inf,
            rhs=mpmath.inf,
            margin=-mpmath.inf,
            holds=False,
            digits=0,
            note="1 - 18 alpha - 27 xi <= 0: no r satisfies (21)",
        )
    return _exact_point(p.r_bound, p.r_min, "<", f"least r = {p.r_min}, bound = {p.r_bound}")


@stated("lemma12.epsilon", "Lemma 12, eq. (22)", "<", requires=("alpha",), exact=True)
def _lemma12_eps(ctx: Context) -> Point:
    """(22) is non-empty at r = r_min: 2 r (1 + 3 alpha + 3 xi) / 3 <
    r (1 - 4 alpha - 7 xi) - 1 - alpha - xi"""
    p = lemma12_parameters(ctx.alpha, ctx.xi)
    if p.r_min is None:
        return Point(mpmath.inf, mpmath.inf, -mpmath.inf, False, 0, "no r satisfies (21)")
    return _exact_point(
        p.eps_low, p.eps_high, "<", f"r = {p.r_min}: epsilon in ({p.eps_low}, {p.eps_high})"
    )


@stated("lemma12.remark_r", "Lemma 12 (remark)", "==", exact=True)
def _lemma12_remark_r(ctx: Context) -> Point:
    """remark after Lemma 12: for alpha = 0.05 and xi -> 0 the least r in (21) is 32"""
    p = lemma12_parameters(REMARK_ALPHA, 0)
    return _exact_point(
        p.r_min, REMARK_R, "==", f"bound {p.r_bound}; epsilon in ({p.eps_low}, {p.eps_high})"
    )


@stated("lemma12.remark_epsilon", "Lemma 12 (remark)", "<", exact=True)
def _lemma12_remark_eps(ctx: Context) -> Point:
    """remark after Lemma 12: r = 32, epsilon = 24.54 satisfy (21)-(22) at alpha = 0.05
    for the given xi: xi < xi_sup (xi_sup exact)"""
    sup = xi_supremum(REMARK_ALPHA, REMARK_R, REMARK_EPSILON)
    return _exact_point(to_fraction("xi", ctx.xi), sup, "<", f"xi_sup = {sup}")


# -- Lemma 13 --------------------------------------------------------------------
@stated("lemma13", "Lemma 13", "<")
def _lemma13(x: Sides):
    """J(s*) is Hurwitz: max_i mu_i < 0 (eigenvalues by symmetrising the tridiagonal J)"""
    return x.max(x.eigenvalues_J), x.num(0)


@stated("lemma13.kronecker", "Lemma 13", ">")
def _lemma13_kron(x: Sides):
    """J^T (x) I + I (x) J^T is invertible: min_ij |mu_i + mu_j| > 0"""
    ev = x.eigenvalues_J
    return x.min(abs(a + b) for a in ev for b in ev), x.num(0)


# -- equilibrium identity, Theorem 1, eq. (6), Remark 2 ------------------------------------
@stated("equilibrium_identity", "Lemma 9 (proof), eq. (1b)")
def _equilibrium_identity(x: Sides):
    """f~_i(s*) = lam ((s*_{i-1})^d - (s*_i)^d) for every i:
    max_i |difference| <= 10^-digits max_i f~_i"""
    s = [x.num(1), *x.s_star]
    lam, d, ft = x.lam, x.d, x.ftilde
    diff = x.max(abs(ft[i] - lam * (s[i] ** d - s[i + 1] ** d)) for i in range(x.b))
    return diff, x.tol(x.max(ft)), 0


#: What Theorem 1 and eq. (6) should say (the printed statements are reported failing).
THEOREM1_CORRECTED = (
    "c = -2 vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I) = 2 tr(P F~) > 0; "
    "the printed expression equals -c"
)
EQ6_CORRECTED = (
    "lim N E||S - s*||^2 = c = -2 vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I): "
    "no factor 1/N, and a minus sign"
)


@stated(
    "theorem1.sign",
    "Theorem 1, eq. (5)",
    ">",
    corrected_statement=THEOREM1_CORRECTED,
    note=_route,
)
def _theorem1_sign(x: Sides):
    """as printed: 2 vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I) > 0
    (the leading coefficient of E||S - s*||^2 in eq. (5))"""
    return 2 * _kronecker(x), x.num(0)


@stated("theorem1.constant", "Theorem 1 (proof, Step 2)", "==", note=_route)
def _theorem1_constant(x: Sides):
    """corrected Theorem 1: -2 vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I) = c = 2 tr(P F~)
    (numeric's constant), to 10^-digits relative"""
    c = x.constant
    return -2 * _kronecker(x), c, x.equality_tol(c)


def _printed_ratio(x: Sides, p: Point) -> str:
    """eq. (6)'s note: the printed limit over ``c`` (``-1/N``) and Theorem 1's route."""
    return f"printed / c = {mpmath.nstr(p.lhs / p.rhs, 8)} (= -1/N); {_route(x, p)}"


@stated("theorem1.eq6", "eq. (6)", "==", corrected_statement=EQ6_CORRECTED, note=_printed_ratio)
def _theorem1_eq6(x: Sides):
    """as printed: lim N E||S - s*||^2 = (2/N) vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I),
    compared with the limit c computed directly"""
    c = x.constant
    return 2 * _kronecker(x) / x.N, c, x.equality_tol(c)


@stated("remark2", "Remark 2", requires=("alpha",), asymptotic=True)
def _remark2(x: Sides):
    """c / N <= N^-(1 - 2 alpha - 4 xi): Remark 2's order bound on E||S - s*||^2
    applied to its dominant term c/N (for sufficiently large N)"""
    return x.constant / x.N, x.N ** (-(1 - 2 * x.alpha - 4 * x.xi))
