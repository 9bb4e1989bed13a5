"""Symbolic objects derived from a model's transitions (core paper, Sections 3 and 6).

All functions take a :class:`derive.model.Model` and return SymPy objects in the
model's symbols.  Sparsity is used throughout: a derivative is only taken with
respect to the symbols an expression actually contains, so ``b = 100`` costs
``O(b)`` derivatives for the supermarket model, not ``O(b^3)``.

References
----------
"Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices Mean-Field
Model in Heavy-Traffic" (the core paper; cited by section, lemma and equation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy as sp

if TYPE_CHECKING:
    from derive.model import Model


def drift(model: Model) -> sp.Matrix:
    """Mean-field drift ``f(s) = sum_l l beta_l(s)`` (core paper, Section 3).

    For the supermarket model with d = 2 this is
    ``f_k = lam (s_{k-1}^2 - s_k^2) - (s_k - s_{k+1})``, ``s_0 = 1``, ``s_{b+1} = 0``.
    """
    b = model.b
    comps = [sp.Integer(0)] * b
    for t in model.transitions:
        for i, li in enumerate(t.jump):
            if li:
                comps[i] += li * t.rate
    return sp.Matrix(b, 1, [sp.expand(c) for c in comps])


def _grad_sparse(expr: sp.Expr, states: tuple[sp.Symbol, ...]) -> dict[int, sp.Expr]:
    # Differentiate an expanded sum term by term, touching only the terms that
    # contain the symbol: at b = 100 this is ~4x faster than diff() on the whole
    # expression (which re-canonicalises every term for every symbol).
    terms = sp.Add.make_args(expr)
    present = expr.free_symbols
    out = {}
    for j, s in enumerate(states):
        if s in present:
            g = sp.expand(sp.Add(*[t.diff(s) for t in terms if s in t.free_symbols]))
            if g != 0:
                out[j] = g
    return out


def jacobian(model: Model) -> sp.Matrix:
    """Jacobian ``J_ij(s) = df_i/ds_j``.

    Supermarket model (core paper, Theorem 1, generalised to d): tridiagonal with
    ``J_{k,k-1} = lam d s_{k-1}^{d-1}``, ``J_kk = -lam d s_k^{d-1} - mu``,
    ``J_{k,k+1} = mu``.
    """
    b = model.b
    f = model.drift
    J = sp.zeros(b, b)
    for i in range(b):
        for j, g in _grad_sparse(f[i], model.states).items():
            J[i, j] = g
    return J


def hessian(model: Model) -> sp.MutableSparseNDimArray:
    """Hessian ``H[i, j, k] = d^2 f_i / ds_j ds_k`` (core paper, Section 6.3).

    For the supermarket model with replacement only ``H[k, k-1, k-1] =
    lam d (d-1) s_{k-1}^{d-2}`` and ``H[k, k, k] = -lam d (d-1) s_k^{d-2}`` are
    non-zero (both vanish for d = 1).
    """
    b = model.b
    J = model.jacobian
    H = sp.MutableSparseNDimArray.zeros(b, b, b)
    for i in range(b):
        for j in range(b):
            if J[i, j] == 0:
                continue
            for k, g in _grad_sparse(J[i, j], model.states).items():
                H[i, j, k] = g
    return H


def diffusion(model: Model) -> sp.Matrix:
    """Diffusion matrix ``Q(s) = sum_l l l^T beta_l(s)``.

    The generator of the finite-N chain acts on a quadratic ``g`` as
    ``grad g . f + (1/2N) sum_ij Q_ij d_ij g`` (core paper, Lemma 7).
    """
    b = model.b
    Q = sp.zeros(b, b)
    for t in model.transitions:
        nz = [(i, li) for i, li in enumerate(t.jump) if li]
        for i, li in nz:
            for j, lj in nz:
                Q[i, j] += li * lj * t.rate
    return Q.applyfunc(sp.expand)


def ftilde(model: Model) -> sp.Matrix:
    """``f~_i(s) = Q_ii(s) / 2`` (core paper, Theorem 1).

    For the supermarket model, ``f~_i = 1/2 [lam (s_{i-1}^d - s_i^d) + mu (s_i - s_{i+1})]``
    and ``Q = 2 diag(f~)``.
    """
    Q = model.diffusion
    return sp.Matrix(model.b, 1, [sp.expand(Q[i, i] / 2) for i in range(model.b)])
