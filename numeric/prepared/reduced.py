"""A model's drift and Jacobian on its free coordinates, in float64 and at working
precision, made once per model.

The conservation laws ``C s = q`` (:mod:`numeric.invariants`) leave the free
coordinates ``x = s_F``; the full state is ``s = T x + (q - C_F x)`` on the dependent
ones, and the reduced Jacobian is ``J_r = J[F, :] T`` (Section 3 of "Beyond Scaling:
Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic": the expansion is computed on the free coordinates).
:class:`ReducedModel` holds the kernels and the map ``T``; it depends on the model
alone, so :func:`reduced_model` keeps one per model and every parameter point and
start reads it (:attr:`numeric.prepared.problem.PreparedProblem.reduced`).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from numeric.invariants import Reduction
from numeric.linalg.mp_entries import matrix_of

#: Up to this many states the float64 kernels (``f``, ``J``, the rates, ``Q``) are
#: lambdified NumPy code (:class:`derive.sparse.LambdaKernels`: milliseconds to
#: build, about 20 us a call) instead of numba's (a few seconds of compiling on a
#: first call with an empty cache, about 1 us a call): the fixed-point search makes
#: a few hundred calls (docs/design.md, "Compiling").
LAMBDA_MAX_B = 12


def float64_kernels(model: Any) -> Any:
    """The float64 base kernels of ``model``: lambdified NumPy code up to
    :data:`LAMBDA_MAX_B` states, numba's above."""
    if model.n <= LAMBDA_MAX_B:
        stored = getattr(model, "float64_kernels", None)  # read from disk (derive.models.stored)
        if stored is not None:
            return stored()
        from derive.sparse import lambda_kernels

        return lambda_kernels(model, "base")
    return model.kernels("numba")


class ReducedModel:
    """The drift and Jacobian of a model on its free coordinates (float64 and mpmath)."""

    def __init__(self, model: Any, red: Reduction, k64: Any = None) -> None:
        self.model = model
        self.red = red
        # float64 kernels: the caller's (numba's for ODE right-hand sides evaluated
        # thousands of times), else chosen by size (:func:`float64_kernels`)
        self.k64 = float64_kernels(model) if k64 is None else k64
        self.kmp = model.kernels("mpmath")
        T = red.T()
        self.T64 = np.array([[float(v) for v in row] for row in T])
        self.Tmp = [[mpf(v.numerator) / v.denominator for v in row] for row in T]
        self.free = list(red.free)
        # s_D = q - C_F s_F as float arrays (full64 runs at every ODE evaluation)
        self._free_idx = np.array(self.free, dtype=np.int64)
        self._dep_idx = np.array(red.dependent, dtype=np.int64)
        self._C = np.array(
            [[float(row[j]) for j in self.free] for row in red.laws], dtype=float
        ).reshape(len(red.laws), len(self.free))

    # float64 ---------------------------------------------------------------
    def full64(self, x: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Full state from free coordinates ``x`` and conserved values ``q``."""
        s = np.zeros(self.red.b)
        s[self._free_idx] = x
        if self._dep_idx.size:
            s[self._dep_idx] = np.asarray(q, dtype=float) - self._C @ np.asarray(x, dtype=float)
        return s

    def f64(self, x: np.ndarray, q: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Drift on the free coordinates ``x`` (conserved quantities ``q``), float64;
        NaN where a rate divides by zero (the compiled kernel raises)."""
        try:
            return self.k64.f(self.full64(x, q), p)[self.free]
        except ZeroDivisionError:
            return np.full(len(self.free), np.nan)

    def jac64(self, x: np.ndarray, q: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Reduced Jacobian ``J[F, :] T`` at the free coordinates ``x``, float64; NaN
        where a derivative divides by zero (``sqrt(y)`` at ``y = 0``): the searches
        treat a non-finite Jacobian as a failed step, not as an internal error."""
        try:
            J = self.k64.jac(self.full64(x, q), p)
        except ZeroDivisionError:
            return np.full((len(self.free), self.T64.shape[1]), np.nan)
        return J[self.free, :] @ self.T64

    # working precision -------------------------------------------------------
    def jac_mp(self, s: list[mpf], p: list[mpf]) -> mpmath.matrix:
        """Reduced Jacobian ``J_r = J[F, :] T`` at full state ``s`` (sparse evaluation)."""
        n = self.red.n
        pos = {j: i for i, j in enumerate(self.free)}
        zero = mpmath.mp.zero
        acc: dict[tuple[int, int], mpf] = {}  # the entries, summed as ``out[r, c] += v``
        vals = self.kmp.jac_values(s, p)
        for (i, j), v in zip(self.k64.jac_index.tolist(), vals, strict=True):
            r = pos.get(i)
            if r is None or not v:
                continue
            col = pos.get(j)
            if col is not None:
                acc[r, col] = acc.get((r, col), zero) + v
            else:
                for m in range(n):
                    t = self.Tmp[j][m]
                    if t:
                        acc[r, m] = acc.get((r, m), zero) + v * t
        return matrix_of(n, n, acc)


#: Models whose :class:`ReducedModel` is kept (least recently used dropped first).
MODELS = 64
#: The reduced model of each model, by model object (held with its reduction, so that
#: its id is not reused and new declared laws make a new one).
_REDUCED: OrderedDict[int, tuple[Any, Reduction, ReducedModel]] = OrderedDict()


def reduced_model(model: Any, red: Reduction) -> ReducedModel:
    """The :class:`ReducedModel` of ``model`` and its reduction ``red``, made once
    (its float64 kernels chosen by size, :func:`float64_kernels`)."""
    seen = _REDUCED.get(id(model))
    if seen is not None and seen[0] is model and seen[1] is red:
        _REDUCED.move_to_end(id(model))
        return seen[2]
    rm = ReducedModel(model, red)
    _REDUCED[id(model)] = (model, red, rm)
    while len(_REDUCED) > MODELS:
        _REDUCED.popitem(last=False)
    return rm
