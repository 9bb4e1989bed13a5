"""The numeric claims of the core paper, each with its certified check, registered on import.

The paper: F. Hairi, X. Liu and L. Ying, "Beyond Scaling: Calculable Error
Bound of the Power-of-Two-Choices Mean-Field Model in Heavy-Traffic"
(power-of-two-choices in heavy traffic, ``lam = 1 - gamma / N^alpha``).  Every
claim is declared once, with both of its evaluators: the decorated function
computes ``(lhs, rhs)`` at the working precision (mpmath) from
:class:`numeric.lemmas.context.Context`, and its ``certified=`` evaluator
computes the same two sides as Arb balls from
:class:`numeric.certified.claim_context.CertifiedContext` (``mfstein lemmas
--certify``).  Lemma 12's claims are exact (rational arithmetic) and decide
themselves; Lemma 4 compares two floating-point routes and has no certified
form.

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
from typing import TYPE_CHECKING, Any

import mpmath

from mfstein.ground.errors import NumericalError
from numeric.certified.arb import max_ball, min_ball
from numeric.lemmas.context import Context
from numeric.lemmas.hessian import max_quadratic_ratio
from numeric.lemmas.parameters import lemma12_parameters, to_fraction, xi_supremum
from numeric.lemmas.quadrature import lyapunov_integral
from numeric.lemmas.registry import Point, claim, judge
from numeric.linalg.kronecker import kronecker_solve_identity

if TYPE_CHECKING:
    from numeric.certified.claim_context import CertifiedContext

#: Largest buffer for which Theorem 1's Kronecker system (b^2 x b^2) is solved
#: literally; above it, the equivalent Lyapunov equation is solved by Lemma 4's
#: quadrature (still independent of numeric's P).
KRONECKER_MAX_B = 20

#: The remark after Lemma 12: alpha = 0.05, r = 32, epsilon = 24.54.
REMARK_ALPHA = Fraction(1, 20)
REMARK_R = 32
REMARK_EPSILON = Fraction("24.54")


def _mp(x) -> mpmath.mpf:
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(x)


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
    ft = [_mp(v) for v in ctx.sol.ftilde]
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


def _rel_tol(ctx: Context, *values) -> mpmath.mpf:
    scale = max([mpmath.mpf(1)] + [abs(_mp(v)) for v in values])
    return mpmath.mpf(10) ** (-ctx.digits) * scale


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
def _lemma5_arb(c: CertifiedContext):
    P = c.P
    return min_ball([P[i, i] for i in range(c.b)]), 1 / (2 * c.norm2_J())


@claim(
    id="lemma5",
    statement="min_i P_ii >= 1 / (2 ||J(s*)||)",
    equation="Lemma 5",
    relation=">=",
    certified=_lemma5_arb,
)
def _lemma5(ctx: Context):
    P = ctx.P
    return min(P[i, i] for i in range(P.rows)), 1 / (2 * ctx.norm2_J)


def _lemma5_18_arb(c: CertifiedContext):
    return 1 / (2 * c.norm2_J()), c.frac(Fraction(1, 18))


@claim(
    id="lemma5.eighteenth",
    statement="1 / (2 ||J(s*)||) >= 1/18, i.e. ||J(s*)|| <= 9",
    equation="Lemma 5",
    relation=">=",
    certified=_lemma5_18_arb,
)
def _lemma5_18(ctx: Context):
    return 1 / (2 * ctx.norm2_J), mpmath.mpf(1) / 18


def _norm_1_inf(J: mpmath.matrix) -> tuple[mpmath.mpf, mpmath.mpf]:
    n = J.rows
    one = max(mpmath.fsum(abs(J[i, j]) for i in range(n)) for j in range(n))
    inf = max(mpmath.fsum(abs(J[i, j]) for j in range(n)) for i in range(n))
    return one, inf


def _norms_1_inf_arb(c: CertifiedContext) -> tuple[Any, Any]:
    J, b = c.J, c.b
    cols = [sum((abs(J[i, j]) for i in range(b)), c.num(0)) for j in range(b)]
    rows = [sum((abs(J[i, j]) for j in range(b)), c.num(0)) for i in range(b)]
    return max_ball(cols), max_ball(rows)


def _lemma5_norm_arb(c: CertifiedContext):
    one, inf = _norms_1_inf_arb(c)
    return c.norm2_J(), (one * inf).sqrt()


@claim(
    id="lemma5.norm_J",
    statement="||J(s*)|| <= sqrt(||J(s*)||_1 ||J(s*)||_inf) (spectral norm; proof of Lemma 5)",
    equation="Lemma 5 (proof)",
    certified=_lemma5_norm_arb,
)
def _lemma5_norm(ctx: Context):
    one, inf = _norm_1_inf(ctx.J)
    return ctx.norm2_J, mpmath.sqrt(one * inf)


def _lemma5_norm9_arb(c: CertifiedContext):
    one, inf = _norms_1_inf_arb(c)
    return (one * inf).sqrt(), c.num(9)


@claim(
    id="lemma5.norm_J_9",
    statement="sqrt(||J(s*)||_1 ||J(s*)||_inf) <= 9 (proof of Lemma 5)",
    equation="Lemma 5 (proof)",
    certified=_lemma5_norm9_arb,
)
def _lemma5_norm9(ctx: Context):
    one, inf = _norm_1_inf(ctx.J)
    return mpmath.sqrt(one * inf), mpmath.mpf(9)


def _lemma5_entries_arb(c: CertifiedContext):
    J, b = c.J, c.b
    return max_ball([abs(J[i, j]) for i in range(b) for j in range(b)]), c.num(3)


@claim(
    id="lemma5.entries",
    statement="max_ij |J(s*)_ij| <= 3 (proof of Lemma 5)",
    equation="Lemma 5 (proof)",
    certified=_lemma5_entries_arb,
)
def _lemma5_entries(ctx: Context):
    J = ctx.J
    return max(abs(J[i, j]) for i in range(J.rows) for j in range(J.cols)), mpmath.mpf(3)


# -- Lemma 6 and the spectral gap ------------------------------------------------------
def _lemma6_arb(c: CertifiedContext):
    ex = 2 * c.frac(c.ctx.alpha) + 3 * c.frac(c.ctx.xi)
    return c.norm2_P(), c.N**ex


@claim(
    id="lemma6",
    statement="||P|| <= N^(2 alpha + 3 xi) (for sufficiently large N)",
    equation="Lemma 6",
    requires=("alpha",),
    asymptotic=True,
    certified=_lemma6_arb,
)
def _lemma6(ctx: Context):
    return ctx.norm2_P, mpmath.mpf(ctx.N) ** (2 * _mp(ctx.alpha) + 3 * _mp(ctx.xi))


def _lemma6_last_arb(c: CertifiedContext):
    N, a, x = c.N, c.frac(c.ctx.alpha), c.frac(c.ctx.xi)
    return 54 * c.b * N ** (2 * a + 2 * x) / c.frac(c.ctx.gamma), N ** (2 * a + 3 * x)


@claim(
    id="lemma6.last_step",
    statement=(
        "54 b N^(2 alpha + 2 xi) / gamma <= N^(2 alpha + 3 xi), i.e. 54 b / gamma <= N^xi "
        "(last step of the proof of Lemma 6, for sufficiently large N)"
    ),
    equation="Lemma 6 (proof)",
    requires=("gamma", "alpha"),
    asymptotic=True,
    certified=_lemma6_last_arb,
)
def _lemma6_last(ctx: Context):
    N, a, x = mpmath.mpf(ctx.N), _mp(ctx.alpha), _mp(ctx.xi)
    return 54 * ctx.b_used * N ** (2 * a + 2 * x) / _mp(ctx.gamma), N ** (2 * a + 3 * x)


def _spectral_gap_arb(c: CertifiedContext):
    ev = c.eig("J", c.J)
    ex = 2 * c.frac(c.ctx.alpha) + 2 * c.frac(c.ctx.xi)
    return min_ball([abs(e) for e in ev]), c.N ** (-ex)


@claim(
    id="spectral_gap",
    statement=(
        "min_i |mu_i(J(s*))| >= N^-(2 alpha + 2 xi): the decay rate delta_0 >= N^-(2 alpha + 2 xi) "
        "used in Lemma 6 cannot exceed the spectral gap (for sufficiently large N)"
    ),
    equation="Lemma 6 (proof; Ying 2017, Lemma C.4)",
    relation=">=",
    requires=("alpha",),
    asymptotic=True,
    certified=_spectral_gap_arb,
)
def _spectral_gap(ctx: Context):
    gap = min(abs(_mp(m)) for m in ctx.sol.eigenvalues)
    return gap, mpmath.mpf(ctx.N) ** (-(2 * _mp(ctx.alpha) + 2 * _mp(ctx.xi)))


# -- Lemma 8 ---------------------------------------------------------------------
def _lemma8_arb(c: CertifiedContext):
    """Lemma 8 in balls: the Hessian is diagonal in ``(j, k)`` for the supermarket
    model, so the maximum of ``||<x, H x>|| / ||x||^2`` is the largest column norm."""
    from derive.kernels import kernels

    k = kernels(c.ctx.sol.get_model(), "arb")
    vals = k.hess_values(c.cs.s_star, [c.lam])
    cols: dict[int, list[Any]] = {}
    for (_i, j, kk), v in zip(k.hess_index.tolist(), vals, strict=True):
        if j != kk and not v.is_zero():
            raise NumericalError("the Hessian is not diagonal in (j, k)")
        cols.setdefault(j, []).append(v)
    norms = [sum((v * v for v in col), c.num(0)).sqrt() for col in cols.values()]
    return max_ball(norms), 2 * c.num(2).sqrt() * c.lam


@claim(
    id="lemma8",
    statement=(
        "max over x != 0 of ||<x, Hess f(s*) x>|| / ||x||^2 <= 2 sqrt(2) lam "
        "(exact maximum: vertex enumeration over y = x o x in the simplex)"
    ),
    equation="Lemma 8, eq. (16)",
    certified=_lemma8_arb,
)
def _lemma8(ctx: Context) -> Point:
    index, values = ctx.hessian
    best, j = max_quadratic_ratio(index, values, ctx.b_used)
    p = judge(best, 2 * mpmath.sqrt(2) * _mp(ctx.lam), "<=", ctx.digits)
    tight = abs(p.margin) <= mpmath.mpf(10) ** (-(ctx.digits - 3)) * p.rhs
    p.note = f"maximiser x = e_{j + 1}" + ("; the bound is attained (tight)" if tight else "")
    return p


# -- Lemma 9 ---------------------------------------------------------------------
def _dominant_sum(ctx: Context) -> mpmath.mpf:
    """``(2/N) sum_i P_ii f~_i(s*)`` from numeric's P and f~."""
    P, ft = ctx.P, ctx.sol.ftilde
    return 2 * mpmath.fsum(P[i, i] * _mp(ft[i]) for i in range(P.rows)) / ctx.N


def _dominant_arb(c: CertifiedContext) -> Any:
    P, ft = c.P, c.cs.ftilde
    return 2 * sum((P[i, i] * ft[i] for i in range(c.b)), c.num(0)) / c.N


def _lemma9_arb(c: CertifiedContext):
    lam = c.lam
    return _dominant_arb(c), lam * (1 - lam) / (9 * c.N)


@claim(
    id="lemma9",
    statement="(2/N) sum_i P_ii f~_i(s*) >= lam gamma / (9 N^(1+alpha)) = lam (1 - lam) / (9 N)",
    equation="Lemma 9, eq. (17)",
    relation=">=",
    certified=_lemma9_arb,
)
def _lemma9(ctx: Context):
    lam = _mp(ctx.lam)
    return _dominant_sum(ctx), lam * (1 - lam) / (9 * ctx.N)


def _lemma9_nonneg_arb(c: CertifiedContext):
    return min_ball(list(c.cs.ftilde)), c.num(0)


@claim(
    id="lemma9.ftilde_nonneg",
    statement="min_i f~_i(s*) >= 0",
    equation="Lemma 9 (proof)",
    relation=">=",
    certified=_lemma9_nonneg_arb,
)
def _lemma9_nonneg(ctx: Context):
    return min(_mp(v) for v in ctx.sol.ftilde), mpmath.mpf(0)


def _lemma9_posdef_arb(c: CertifiedContext):
    return min_ball(c.eig("P", c.P)), c.num(0)


@claim(
    id="lemma9.P_posdef",
    statement="P is positive definite, so P_ii >= 0: lambda_min(P) > 0",
    equation="Lemma 9 (proof)",
    relation=">",
    certified=_lemma9_posdef_arb,
)
def _lemma9_posdef(ctx: Context):
    P = ctx.P
    ev = mpmath.eigsy((P + P.T) / 2, eigvals_only=True)
    return min(ev[i] for i in range(P.rows)), mpmath.mpf(0)


def _lemma9_f1_arb(c: CertifiedContext):
    lam = c.lam
    return c.cs.ftilde[0], lam * (1 - lam**2)


@claim(
    id="lemma9.f1",
    statement="f~_1(s*) = lam (1 - (s*_1)^2) >= lam (1 - lam^2)",
    equation="Lemma 9 (proof)",
    relation=">=",
    certified=_lemma9_f1_arb,
)
def _lemma9_f1(ctx: Context):
    lam = _mp(ctx.lam)
    return _mp(ctx.sol.ftilde[0]), lam * (1 - lam**2)


def _lemma9_chain_arb(c: CertifiedContext):
    lam = c.lam
    return lam * (1 - lam**2), lam * (1 - lam)


@claim(
    id="lemma9.lam_chain",
    statement="lam (1 - lam^2) >= lam (1 - lam) = lam gamma / N^alpha",
    equation="Lemma 9 (proof)",
    relation=">=",
    certified=_lemma9_chain_arb,
)
def _lemma9_chain(ctx: Context):
    lam = _mp(ctx.lam)
    return lam * (1 - lam**2), lam * (1 - lam)


def _lemma9_p11_arb(c: CertifiedContext):
    lam = c.lam
    return 2 * c.P[0, 0] * c.cs.ftilde[0] / c.N, lam * (1 - lam) / (9 * c.N)


@claim(
    id="lemma9.P11",
    statement="(2/N) P_11 f~_1(s*) >= lam gamma / (9 N^(1+alpha)) = lam (1 - lam) / (9 N)",
    equation="Lemma 9 (proof)",
    relation=">=",
    certified=_lemma9_p11_arb,
)
def _lemma9_p11(ctx: Context):
    lam = _mp(ctx.lam)
    return 2 * ctx.P[0, 0] * _mp(ctx.sol.ftilde[0]) / ctx.N, lam * (1 - lam) / (9 * ctx.N)


# -- Lemma 10 --------------------------------------------------------------------
def _lemma10_arb(c: CertifiedContext):
    return _dominant_arb(c), 2 * c.b * c.norm2_P() / c.N


@claim(
    id="lemma10",
    statement="(2/N) sum_i P_ii f~_i(s*) <= (2 b / N) ||P|| (the bound in the proof of eq. (18))",
    equation="Lemma 10, eq. (18)",
    certified=_lemma10_arb,
)
def _lemma10(ctx: Context):
    return _dominant_sum(ctx), 2 * ctx.b_used * ctx.norm2_P / ctx.N


def _lemma10_ft_arb(c: CertifiedContext):
    return max_ball(list(c.cs.ftilde)), c.num(1)


@claim(
    id="lemma10.ftilde_le_1",
    statement="max_i f~_i(s*) <= 1",
    equation="Lemma 10 (proof)",
    certified=_lemma10_ft_arb,
)
def _lemma10_ft(ctx: Context):
    return max(_mp(v) for v in ctx.sol.ftilde), mpmath.mpf(1)


def _lemma10_pii_arb(c: CertifiedContext):
    P = c.P
    return max_ball([P[i, i] for i in range(c.b)]), c.norm2_P()


@claim(
    id="lemma10.Pii_le_normP",
    statement="max_i P_ii <= ||P||",
    equation="Lemma 10 (proof)",
    certified=_lemma10_pii_arb,
)
def _lemma10_pii(ctx: Context):
    P = ctx.P
    return max(P[i, i] for i in range(P.rows)), ctx.norm2_P


def _lemma10_order_arb(c: CertifiedContext):
    a, x = c.frac(c.ctx.alpha), c.frac(c.ctx.xi)
    return _dominant_arb(c), c.N ** (-(1 - 2 * a - 4 * x))


@claim(
    id="lemma10.order",
    statement=(
        "(2/N) sum_i P_ii f~_i(s*) <= N^-(1 - 2 alpha - 4 xi) "
        "(eq. (18) with the O-constant 1, for sufficiently large N)"
    ),
    equation="Lemma 10, eq. (18)",
    requires=("alpha",),
    asymptotic=True,
    certified=_lemma10_order_arb,
)
def _lemma10_order(ctx: Context):
    a, x = _mp(ctx.alpha), _mp(ctx.xi)
    return _dominant_sum(ctx), mpmath.mpf(ctx.N) ** (-(1 - 2 * a - 4 * x))


# -- Lemma 12 (exact rationals) -------------------------------------------------------
@claim(
    id="lemma12.r",
    statement="(21) admits an integer r: 3 (1 + alpha + xi) / (1 - 18 alpha - 27 xi) < r_min",
    equation="Lemma 12, eq. (21)",
    relation="<",
    requires=("alpha",),
    exact=True,
)
def _lemma12_r(ctx: Context) -> Point:
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


@claim(
    id="lemma12.epsilon",
    statement=(
        "(22) is non-empty at r = r_min: 2 r (1 + 3 alpha + 3 xi) / 3 < "
        "r (1 - 4 alpha - 7 xi) - 1 - alpha - xi"
    ),
    equation="Lemma 12, eq. (22)",
    relation="<",
    requires=("alpha",),
    exact=True,
)
def _lemma12_eps(ctx: Context) -> Point:
    p = lemma12_parameters(ctx.alpha, ctx.xi)
    if p.r_min is None:
        return Point(mpmath.inf, mpmath.inf, -mpmath.inf, False, 0, "no r satisfies (21)")
    return _exact_point(
        p.eps_low, p.eps_high, "<", f"r = {p.r_min}: epsilon in ({p.eps_low}, {p.eps_high})"
    )


@claim(
    id="lemma12.remark_r",
    statement="remark after Lemma 12: for alpha = 0.05 and xi -> 0 the least r in (21) is 32",
    equation="Lemma 12 (remark)",
    relation="==",
    exact=True,
)
def _lemma12_remark_r(ctx: Context) -> Point:
    p = lemma12_parameters(REMARK_ALPHA, 0)
    return _exact_point(
        p.r_min, REMARK_R, "==", f"bound {p.r_bound}; epsilon in ({p.eps_low}, {p.eps_high})"
    )


@claim(
    id="lemma12.remark_epsilon",
    statement=(
        "remark after Lemma 12: r = 32, epsilon = 24.54 satisfy (21)-(22) at alpha = 0.05 "
        "for the given xi: xi < xi_sup (xi_sup exact)"
    ),
    equation="Lemma 12 (remark)",
    relation="<",
    exact=True,
)
def _lemma12_remark_eps(ctx: Context) -> Point:
    sup = xi_supremum(REMARK_ALPHA, REMARK_R, REMARK_EPSILON)
    return _exact_point(to_fraction("xi", ctx.xi), sup, "<", f"xi_sup = {sup}")


# -- Lemma 13 --------------------------------------------------------------------
def _lemma13_arb(c: CertifiedContext):
    return max_ball(c.eig("J", c.J)), c.num(0)


@claim(
    id="lemma13",
    statement="J(s*) is Hurwitz: max_i mu_i < 0 (eigenvalues by symmetrising the tridiagonal J)",
    equation="Lemma 13",
    relation="<",
    certified=_lemma13_arb,
)
def _lemma13(ctx: Context):
    return max(ctx.eigenvalues_J), mpmath.mpf(0)


def _lemma13_kron_arb(c: CertifiedContext):
    ev = c.eig("J", c.J)
    return min_ball([abs(a + b) for a in ev for b in ev]), c.num(0)


@claim(
    id="lemma13.kronecker",
    statement="J^T (x) I + I (x) J^T is invertible: min_ij |mu_i + mu_j| > 0",
    equation="Lemma 13",
    relation=">",
    certified=_lemma13_kron_arb,
)
def _lemma13_kron(ctx: Context):
    ev = ctx.eigenvalues_J
    return min(abs(a + b) for a in ev for b in ev), mpmath.mpf(0)


# -- equilibrium identity, Theorem 1, eq. (6), Remark 2 ------------------------------------
def _equilibrium_identity_arb(c: CertifiedContext):
    s = [c.num(1), *c.cs.s_star]
    lam, d, ft = c.lam, c.ctx.d, c.cs.ftilde
    diff = max_ball([abs(ft[i] - lam * (s[i] ** d - s[i + 1] ** d)) for i in range(c.b)])
    return diff, c.tol(max_ball(list(ft)))


@claim(
    id="equilibrium_identity",
    statement=(
        "f~_i(s*) = lam ((s*_{i-1})^d - (s*_i)^d) for every i: "
        "max_i |difference| <= 10^-digits max_i f~_i"
    ),
    equation="Lemma 9 (proof), eq. (1b)",
    certified=_equilibrium_identity_arb,
)
def _equilibrium_identity(ctx: Context) -> Point:
    s = [mpmath.mpf(1)] + [_mp(v) for v in ctx.sol.s_star]
    lam, d = _mp(ctx.lam), ctx.d
    ft = [_mp(v) for v in ctx.sol.ftilde]
    diff = max(abs(ft[i] - lam * (s[i] ** d - s[i + 1] ** d)) for i in range(len(ft)))
    tol = mpmath.mpf(10) ** (-ctx.digits) * max(ft)
    return judge(diff, tol, "<=", ctx.digits, tol=0)


def _kron_value_arb(c: CertifiedContext) -> Any:
    """``vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I) = sum_i f~_i X_ii`` with
    ``X J + J^T X = I``, i.e. ``X = -P``: equal to ``-c/2``."""
    P, ft = c.P, c.cs.ftilde
    return -sum((ft[i] * P[i, i] for i in range(c.b)), c.num(0))


def _theorem1_sign_arb(c: CertifiedContext):
    return 2 * _kron_value_arb(c), c.num(0)


@claim(
    id="theorem1.sign",
    statement=(
        "as printed: 2 vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I) > 0 "
        "(the leading coefficient of E||S - s*||^2 in eq. (5))"
    ),
    equation="Theorem 1, eq. (5)",
    relation=">",
    corrected_statement=(
        "c = -2 vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I) = 2 tr(P F~) > 0; "
        "the printed expression equals -c"
    ),
    certified=_theorem1_sign_arb,
)
def _theorem1_sign(ctx: Context) -> Point:
    val, route = kronecker_form(ctx)
    p = judge(2 * val, mpmath.mpf(0), ">", ctx.digits)
    p.note = route
    return p


def _theorem1_constant_arb(c: CertifiedContext):
    lhs, rhs = -2 * _kron_value_arb(c), c.cs.constant
    return lhs, rhs, c.tol(abs(rhs))


@claim(
    id="theorem1.constant",
    statement=(
        "corrected Theorem 1: -2 vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I) = c = 2 tr(P F~) "
        "(numeric's constant), to 10^-digits relative"
    ),
    equation="Theorem 1 (proof, Step 2)",
    relation="==",
    certified=_theorem1_constant_arb,
)
def _theorem1_constant(ctx: Context) -> Point:
    val, route = kronecker_form(ctx)
    c = _mp(ctx.sol.constant)
    p = judge(-2 * val, c, "==", ctx.digits, tol=_rel_tol(ctx, c))
    p.note = route
    return p


def _theorem1_eq6_arb(c: CertifiedContext):
    lhs, rhs = 2 * _kron_value_arb(c) / c.N, c.cs.constant
    return lhs, rhs, c.tol(abs(rhs))


@claim(
    id="theorem1.eq6",
    statement=(
        "as printed: lim N E||S - s*||^2 = (2/N) vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I), "
        "compared with the limit c computed directly"
    ),
    equation="eq. (6)",
    relation="==",
    corrected_statement=(
        "lim N E||S - s*||^2 = c = -2 vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I): "
        "no factor 1/N, and a minus sign"
    ),
    certified=_theorem1_eq6_arb,
)
def _theorem1_eq6(ctx: Context) -> Point:
    val, route = kronecker_form(ctx)
    printed = 2 * val / ctx.N
    c = _mp(ctx.sol.constant)
    p = judge(printed, c, "==", ctx.digits, tol=_rel_tol(ctx, c))
    p.note = f"printed / c = {mpmath.nstr(printed / c, 8)} (= -1/N); {route}"
    return p


def _remark2_arb(c: CertifiedContext):
    a, x = c.frac(c.ctx.alpha), c.frac(c.ctx.xi)
    return c.cs.constant / c.N, c.N ** (-(1 - 2 * a - 4 * x))


@claim(
    id="remark2",
    statement=(
        "c / N <= N^-(1 - 2 alpha - 4 xi): Remark 2's order bound on E||S - s*||^2 "
        "applied to its dominant term c/N (for sufficiently large N)"
    ),
    equation="Remark 2",
    requires=("alpha",),
    asymptotic=True,
    certified=_remark2_arb,
)
def _remark2(ctx: Context):
    a, x = _mp(ctx.alpha), _mp(ctx.xi)
    return _mp(ctx.sol.constant) / ctx.N, mpmath.mpf(ctx.N) ** (-(1 - 2 * a - 4 * x))
