"""Symbolic objects derived from a model's transitions (core paper, Sections 3 and 6).

All functions take a :class:`derive.model.Model` and return SymPy objects in the
model's symbols.  Sparsity is used throughout: a derivative is only taken with
respect to the symbols an expression actually contains, so ``b = 100`` costs
``O(b)`` derivatives for the supermarket model, not ``O(b^3)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy as sp

if TYPE_CHECKING:
    from derive.model_protocol import ModelLike


def drift(model: ModelLike) -> sp.Matrix:
    """Mean-field drift ``f(s) = sum_l l beta_l(s)`` (core paper, Section 3).

    For the supermarket model with d = 2 this is
    ``f_k = lam (s_{k-1}^2 - s_k^2) - (s_k - s_{k+1})``, ``s_0 = 1``, ``s_{b+1} = 0``.
    """
    b = model.n
    comps = [sp.Integer(0)] * b
    for t in model.transitions:
        for i, li in enumerate(t.jump):
            if li:
                comps[i] += li * t.rate
    return sp.Matrix(b, 1, [sp.expand(c) for c in comps])


def _grad_sparse(expr: sp.Expr, position: dict[sp.Symbol, int]) -> dict[int, sp.Expr]:
    """Non-zero ``{j: d expr / d s_j}``, ``position`` mapping each state symbol to ``j``.

    Differentiates an expanded sum term by term, only with respect to the
    symbols the expression contains and touching only the terms that contain
    each (``diff`` on the whole sum re-canonicalises every term for every
    symbol), so a row of a banded Jacobian costs ``O(band)``, not ``O(b)``.
    """
    terms = sp.Add.make_args(expr)
    out = {}
    for j, s in sorted((position[s], s) for s in expr.free_symbols if s in position):
        g = sp.expand(sp.Add(*[_term_diff(t, s) for t in terms if s in t.free_symbols]))
        if g != 0:
            out[j] = g
    return out


def _term_diff(term: sp.Expr, s: sp.Symbol) -> sp.Expr:
    """``d term / d s`` for one term of an expanded sum.

    A monomial factor ``s`` or ``s^e`` (integer ``e``) that is the term's only
    factor containing ``s`` is differentiated directly (``e s^(e-1)`` times the
    other factors), several times faster than SymPy's general ``diff``, which
    handles every other case.
    """
    factors = sp.Mul.make_args(term)
    hits = [f for f in factors if s in f.free_symbols]
    if len(hits) == 1:
        f = hits[0]
        if f == s:
            new = sp.Integer(1)
        elif f.is_Pow and f.base == s and f.exp.is_Integer:
            new = f.exp * s ** (f.exp - 1)
        else:
            return term.diff(s)
        return sp.Mul(*[g for g in factors if g is not f], new)
    return term.diff(s)


def jacobian(model: ModelLike) -> sp.Matrix:
    """Jacobian ``J_ij(s) = df_i/ds_j``.

    Supermarket model (core paper, Theorem 1, generalised to d): tridiagonal with
    ``J_{k,k-1} = lam d s_{k-1}^{d-1}``, ``J_kk = -lam d s_k^{d-1} - mu``,
    ``J_{k,k+1} = mu``.
    """
    b = model.n
    f = model.drift
    position = {s: j for j, s in enumerate(model.states)}
    J = sp.zeros(b, b)
    for i in range(b):
        for j, g in _grad_sparse(f[i], position).items():
            J[i, j] = g
    return J


def hessian(model: ModelLike) -> sp.MutableSparseNDimArray:
    """Hessian ``H[i, j, k] = d^2 f_i / ds_j ds_k`` (core paper, Section 6.3).

    For the supermarket model with replacement only ``H[k, k-1, k-1] =
    lam d (d-1) s_{k-1}^{d-2}`` and ``H[k, k, k] = -lam d (d-1) s_k^{d-2}`` are
    non-zero (both vanish for d = 1).
    """
    b = model.n
    position = {s: j for j, s in enumerate(model.states)}
    H = sp.MutableSparseNDimArray.zeros(b, b, b)
    for (i, j), Jij in sorted(model.jacobian.todok().items()):
        for k, g in _grad_sparse(Jij, position).items():
            H[i, j, k] = g
    return H


def diffusion(model: ModelLike) -> sp.Matrix:
    """Diffusion matrix ``Q(s) = sum_l l l^T beta_l(s)``.

    The generator of the finite-N chain acts on a quadratic ``g`` as
    ``grad g . f + (1/2N) sum_ij Q_ij d_ij g`` (core paper, Lemma 7).
    """
    b = model.n
    Q = sp.zeros(b, b)
    for t in model.transitions:
        nz = [(i, li) for i, li in enumerate(t.jump) if li]
        for i, li in nz:
            for j, lj in nz:
                Q[i, j] += li * lj * t.rate
    return Q.applyfunc(sp.expand)


def ftilde(model: ModelLike) -> sp.Matrix:
    """``f~_i(s) = Q_ii(s) / 2`` (core paper, Theorem 1).

    For the supermarket model, ``f~_i = 1/2 [lam (s_{i-1}^d - s_i^d) + mu (s_i - s_{i+1})]``
    and ``Q = 2 diag(f~)``.
    """
    Q = model.diffusion
    return sp.Matrix(model.n, 1, [sp.expand(Q[i, i] / 2) for i in range(model.n)])
