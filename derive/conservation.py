"""Linear conservation laws of a model's jumps, exactly.

A vector ``c`` with ``c . l = 0`` for every jump ``l`` makes ``c . S(t)`` constant
along every path of the finite-N chain and of the mean-field ODE.  The laws form the
left null space of the jump matrix (rows = jumps), computed here over the rationals
(SymPy's ``DomainMatrix``) and returned as a basis in reduced row echelon form.  The
derive layer reads them to infer a state space (:func:`derive.model.infer_state_space`)
and to check faces on the slice through a start; :mod:`numeric.invariants`
builds the reduced coordinates on them.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any


def conservation_laws(jumps: Any, b: int) -> tuple[tuple[Fraction, ...], ...]:
    """A basis (reduced row echelon form) of ``{c : c . l = 0 for every jump l}``
    (``jumps``: rows of integers, a list or an array), computed once per jump matrix."""
    return _laws(tuple(tuple(int(v) for v in row) for row in jumps), b)


@lru_cache(maxsize=256)
def _laws(jumps: tuple[tuple[int, ...], ...], b: int) -> tuple[tuple[Fraction, ...], ...]:
    from sympy import Matrix
    from sympy.polys.domains import QQ
    from sympy.polys.matrices import DomainMatrix

    rows = [[int(v) for v in row] for row in jumps]
    if not rows:
        return tuple(tuple(Fraction(int(i == j)) for j in range(b)) for i in range(b))
    L = DomainMatrix.from_Matrix(Matrix(rows)).convert_to(QQ)
    null = L.nullspace()  # rows spanning {c : L c = 0}
    if null.shape[0] == 0:
        return ()
    rref, _ = null.rref()
    out = []
    for row in rref.to_list():
        vals = tuple(Fraction(int(v.numerator), int(v.denominator)) for v in row)
        if any(vals):
            out.append(vals)
    return tuple(out)
