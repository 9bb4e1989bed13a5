"""Linear conservation laws of a model and the reduced coordinates they give.

A vector ``c`` with ``c . l = 0`` for every jump ``l`` makes ``c . S(t)``
constant along every path of the finite-N chain and of the mean-field ODE.
The invariants form the left null space of the jump matrix (rows = jumps);
it is computed exactly over the rationals (SymPy's ``DomainMatrix``).  With a
basis in reduced row echelon form, the pivot coordinates ``D`` are affine
functions of the others ``F``:

    s_D = q - C_F s_F,      q = C s(0),

so ``s = s0 + T x`` with ``x = s_F`` and ``T = [I; -C_F]`` (rows in model
order).  The reduced model has drift ``f_F(s(x))``, Jacobian
``J_r = J_FF - J_FD C_F``, diffusion ``Q_FF`` and second derivatives
``sum_ab H_{i a b} T_aj T_bk``; its covariance ``W_r`` and bias ``V_r`` give
the model's own ``W = T W_r T^T`` and ``V = T V_r`` exactly (the chain lives on
the affine set, so no approximation is involved).  The Jacobian of the full
drift is singular exactly when such a ``c`` exists: ``c^T J = 0``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from derive.conservation import conservation_laws
from mfstein.ground.errors import ParameterError


@dataclass(frozen=True)
class Reduction:
    """Conservation laws (RREF basis) and the free/dependent split they give."""

    b: int
    laws: tuple[tuple[Fraction, ...], ...]
    free: tuple[int, ...]
    dependent: tuple[int, ...]

    @property
    def n(self) -> int:
        """Number of free coordinates."""
        return len(self.free)

    def values(self, s: list[mpf]) -> list[mpf]:
        """``c . s`` for every law (the conserved quantities at ``s``)."""
        return [mpmath.fsum(_mp(c) * s[j] for j, c in enumerate(row) if c) for row in self.laws]

    def complete(self, x: list[mpf], q: list[mpf]) -> list[mpf]:
        """The full state whose free part is ``x`` and whose laws take the values ``q``."""
        s: list[Any] = [mpf(0)] * self.b
        for i, j in enumerate(self.free):
            s[j] = x[i]
        for row, qi, d in zip(self.laws, q, self.dependent, strict=True):
            s[d] = qi - mpmath.fsum(_mp(row[j]) * s[j] for j in self.free if row[j])
        return s

    def T(self) -> list[list[Fraction]]:
        """``ds/dx`` (``b x n``): identity on free rows, ``-C_F`` on dependent rows."""
        out = [[Fraction(0)] * self.n for _ in range(self.b)]
        for i, j in enumerate(self.free):
            out[j][i] = Fraction(1)
        for row, d in zip(self.laws, self.dependent, strict=True):
            for i, j in enumerate(self.free):
                out[d][i] = -row[j]
        return out

    def laws_as_text(self) -> list[list[str]]:
        """The laws as rows of decimal/fraction strings (for reports and JSON)."""
        return [[str(c) for c in row] for row in self.laws]


def _mp(c: Fraction) -> mpf:
    return mpf(c.numerator) / c.denominator if c.denominator != 1 else mpf(c.numerator)


#: Reductions already computed, by model and jump matrix (a :class:`Reduction` is
#: immutable and depends on nothing else): a warm call skips the exact nullspace.
_REDUCTIONS: dict[tuple, Reduction] = {}


def jump_matrix(model: Any) -> np.ndarray:
    """The ``(transitions, n)`` integer matrix of ``model``'s jumps ``l``, read from its
    transitions (no kernel module is generated for it)."""
    rows = [[int(x) for x in t.jump] for t in model.transitions]
    return np.array(rows, dtype=np.int64).reshape(len(rows), model.n)


def model_reduction(model: Any) -> Reduction:
    """:func:`reduction` of ``model``'s own jumps (:func:`jump_matrix`): the same for
    every parameter point and start."""
    return reduction(model, jump_matrix(model))


def reduction(model: Any, jumps: Any) -> Reduction:
    """The :class:`Reduction` of ``model`` (checks its declared laws against the
    jumps); computed once per model and jump matrix."""
    L = np.asarray(jumps, dtype=np.int64)
    key = (model, L.shape, L.tobytes(), repr(model.info.conservation))
    red = _REDUCTIONS.get(key)
    if red is None:
        if len(_REDUCTIONS) >= 256:  # a sweep over many models: keep the memory bounded
            _REDUCTIONS.clear()
        red = _REDUCTIONS[key] = _reduction(model, jumps)
    return red


def _reduction(model: Any, jumps: Any) -> Reduction:
    b = model.n
    laws = conservation_laws(jumps, b)
    for declared in model.info.conservation:
        bad = [
            n
            for n, row in enumerate(jumps)
            if sum(int(c) * int(v) for c, v in zip(declared, row, strict=True))
        ]
        if len(declared) != b or bad:
            raise ParameterError(
                f"the declared conservation law {tuple(declared)} of model {model.name} is "
                "not conserved by its jumps (it needs length b and c . l = 0 for every jump)."
            )
    dependent = []
    for row in laws:
        dependent.append(next(j for j, c in enumerate(row) if c))
    free = tuple(j for j in range(b) if j not in dependent)
    if not free:
        raise ParameterError(
            f"model {model.name} conserves every coordinate: its state cannot move."
        )
    return Reduction(b=b, laws=laws, free=free, dependent=tuple(dependent))
