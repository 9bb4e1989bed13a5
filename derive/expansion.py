"""Symbolic objects of the second-order system-size expansion (order 1/N^2).

With ``Y = S - s*`` the stationary moments of a density-dependent population
process expand as

    E[Y]         = V/N + A/N^2 + O(1/N^3),
    E[Y Y^T]     = W/N + B/N^2 + O(1/N^3),
    E[Y (x) Y (x) Y] = C/N^2 + O(1/N^3),

and ``E[Y_i Y_j Y_k Y_l] = (W_ij W_kl + W_ik W_jl + W_il W_jk)/N^2 + O(1/N^3)``
(Gaussian fourth moment).  The coefficients follow from ``E[L g] = 0`` for
``g = y_i, y_i y_j, y_i y_j y_k`` with the generator expanded one order beyond
Lemma 7 of "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices
Mean-Field Model in Heavy-Traffic":

    L g = f . grad g + (1/2N) Q : grad^2 g + (1/6N^2) R : grad^3 g + ...,

with ``f = sum_l l beta_l``, ``Q = sum_l l l^T beta_l`` and the third jump
moment ``R = sum_l l (x) l (x) l beta_l``.  Writing ``D^n f`` for the n-th
derivative tensor of the drift at ``s*`` (``J``, ``H``, ``T3``, ``T4``) and
``Q1``, ``Q2`` for the first two derivatives of ``Q`` (all summations over
repeated indices):

    (C)  J_il C_ljk + J_jl C_ilk + J_kl C_ijl
           + 1/2 (H_ilm E4_lmjk + H_jlm E4_ilmk + H_klm E4_ijlm)
           + Q_ij V_k + Q_ik V_j + Q_jk V_i
           + Q1_ijl W_lk + Q1_ikl W_lj + Q1_jkl W_li + R_ijk = 0,
    (B)  J B + B J^T + G = 0,
         G_ij = 1/2 (H_ikl C_klj + H_jkl C_kli) + 1/6 (T3_iklm E4_klmj + T3_jklm E4_klmi)
                + Q1_ijk V_k + 1/2 Q2_ijkl W_kl,
    (A)  J A + 1/2 H : B + 1/6 T3 : C + 1/24 T4 : E4 = 0,

where ``E4`` is the Gaussian fourth moment of ``W`` above.  Then
``N E[(S - s*)^T M (S - s*)] = tr(M W) + tr(M B)/N + O(1/N^2)``, so
``c2 = tr(M B)``.  The functions below return the derivative tensors and the
jump moment as sparse dictionaries ``{index tuple: expression}`` (only
non-zero entries; symmetric tensors keep one representative per orbit of
their symmetric indices, listed in :data:`SYMMETRY`), and
:func:`order2_equations_latex` prints the three equations.
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from typing import TYPE_CHECKING

import sympy as sp

if TYPE_CHECKING:
    from derive.model_protocol import ModelLike

#: How each tensor's indices are stored: the first ``k`` indices are free, the
#: rest are sorted (one representative per permutation class of those indices).
SYMMETRY = {"d3f": 1, "d4f": 1, "dQ": 2, "d2Q": 2, "R": 0}


def _grad(expr: sp.Expr, states: tuple[sp.Symbol, ...]) -> dict[int, sp.Expr]:
    present = expr.free_symbols
    out = {}
    for j, s in enumerate(states):
        if s in present:
            g = sp.expand(sp.diff(expr, s))
            if g != 0:
                out[j] = g
    return out


def _higher(base: dict[tuple, sp.Expr], states, free: int, extra: int) -> dict[tuple, sp.Expr]:
    """Differentiate ``base`` (entries indexed by ``free`` indices plus sorted
    derivative indices) ``extra`` more times, keeping derivative indices sorted."""
    current = dict(base)
    for _ in range(extra):
        nxt: dict[tuple, sp.Expr] = {}
        for idx, expr in current.items():
            last = idx[-1] if len(idx) > free else -1
            for j, g in _grad(expr, states).items():
                if j >= last:
                    nxt[(*idx, j)] = g
        current = nxt
    return current


def drift_derivatives(model: ModelLike, order: int) -> dict[tuple, sp.Expr]:
    """``{(i, j1 <= ... <= jn): d^n f_i / ds_j1 ... ds_jn}`` for ``n = order``."""
    f = model.drift
    base = {(i,): f[i] for i in range(model.n) if f[i] != 0}
    return _higher(base, model.states, 1, order)


def diffusion_derivatives(model: ModelLike, order: int) -> dict[tuple, sp.Expr]:
    """``{(i <= j, k1 <= ... <= kn): d^n Q_ij / ds_k1 ... ds_kn}``."""
    Q = model.diffusion
    base = {(i, j): Q[i, j] for i in range(model.n) for j in range(i, model.n) if Q[i, j] != 0}
    return _higher(base, model.states, 2, order)


def third_jump_moment(model: ModelLike) -> dict[tuple, sp.Expr]:
    """``{(i <= j <= k): R_ijk = sum_l l_i l_j l_k beta_l(s)}`` (non-zero entries)."""
    out: dict[tuple, sp.Expr] = {}
    for t in model.transitions:
        nz = [i for i, v in enumerate(t.jump) if v]
        for i, j, k in combinations_with_replacement(nz, 3):
            out[(i, j, k)] = out.get((i, j, k), 0) + t.jump[i] * t.jump[j] * t.jump[k] * t.rate
    return {k: sp.expand(v) for k, v in out.items() if sp.expand(v) != 0}


def order2_objects(model: ModelLike) -> dict[str, dict[tuple, sp.Expr]]:
    """Every object the 1/N^2 equations need, by name (see :data:`SYMMETRY`)."""
    return {
        "d3f": drift_derivatives(model, 3),
        "d4f": drift_derivatives(model, 4),
        "dQ": diffusion_derivatives(model, 1),
        "d2Q": diffusion_derivatives(model, 2),
        "R": third_jump_moment(model),
    }


def order2_equations_latex() -> str:
    """The three moment equations (C), (B), (A) of the module docstring, in LaTeX."""
    return r"""\begin{aligned}
0 &= \sum_{l}\bigl(J_{il}C_{ljk} + J_{jl}C_{ilk} + J_{kl}C_{ijl}\bigr)
   + \tfrac12\sum_{l,m}\bigl(H_{ilm}E_{lmjk} + H_{jlm}E_{ilmk} + H_{klm}E_{ijlm}\bigr) \\
  &\quad + Q_{ij}V_k + Q_{ik}V_j + Q_{jk}V_i
   + \sum_l\bigl(Q'_{ijl}W_{lk} + Q'_{ikl}W_{lj} + Q'_{jkl}W_{li}\bigr) + R_{ijk}, \\
0 &= JB + BJ^{\mathsf T} + G,\quad
G_{ij} = \tfrac12\sum_{k,l}\bigl(H_{ikl}C_{klj} + H_{jkl}C_{kli}\bigr)
   + \tfrac16\sum_{k,l,m}\bigl(T_{iklm}E_{klmj} + T_{jklm}E_{klmi}\bigr)
   + \sum_k Q'_{ijk}V_k + \tfrac12\sum_{k,l} Q''_{ijkl}W_{kl}, \\
0 &= JA + \tfrac12 H\!:\!B + \tfrac16 T\!:\!C + \tfrac1{24} T^{(4)}\!:\!E,\qquad
E_{ijkl} = W_{ij}W_{kl} + W_{ik}W_{jl} + W_{il}W_{jk}, \\
N\,\mathbb E\bigl[(S-s^*)^{\mathsf T}M(S-s^*)\bigr] &= \operatorname{tr}(MW)
   + \frac{\operatorname{tr}(MB)}{N} + O(N^{-2}).
\end{aligned}"""
