"""The matrix ``M`` of a quadratic observable ``(S - s*)^T M (S - s*)``.

Every working-precision route takes ``M`` in the same forms: ``None`` or
``"identity"`` (``M = I``: the paper's ``E||S - s*||^2``), ``"diag:a,b,..."``
(a diagonal padded with zeros), a symmetric ``b x b`` matrix (anything
:class:`mpmath.matrix` reads, NumPy arrays included) or a callable
``b -> matrix``.  :func:`quadratic_form` turns it into a function of the
dimension, checked once: bad input is a :class:`mfstein.ground.errors.ParameterError`
naming ``M``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mpmath
from mpmath import mpf

from mfstein.ground.errors import ParameterError

MSpec = Any  # None | "identity" | "diag:a,b,..." | square matrix | callable b -> matrix


def quadratic_form(M: MSpec) -> Callable[[int], mpmath.matrix]:
    """Turn the ``M`` argument into a function ``b -> symmetric b x b mpmath.matrix``
    (entries parsed at the working precision of each call)."""
    if M is None or (isinstance(M, str) and M.strip().lower() == "identity"):
        return lambda b: mpmath.eye(b)
    if isinstance(M, str):
        from mfstein.ground.numbers import parse_diagonal

        entries = parse_diagonal("M", M)  # the one parser of the observable's text form
        assert entries is not None  # "identity" is handled above

        def diag(b: int) -> mpmath.matrix:
            if len(entries) > b:
                raise ParameterError(
                    f"M has {len(entries)} diagonal entries but b = {b}; give at most b entries."
                )
            vals = [mpf(x.numerator) / x.denominator for x in entries]
            return mpmath.diag(vals + [mpf(0)] * (b - len(entries)))

        return diag
    if callable(M):
        return lambda b: _check_m(_as_matrix(M(b)), b)
    fixed = M

    def given(b: int) -> mpmath.matrix:
        return _check_m(_as_matrix(fixed), b)

    return given


def _as_matrix(M: Any) -> mpmath.matrix:
    """``M`` as an mpmath matrix; anything that is not a real matrix is a ParameterError."""
    try:
        if hasattr(M, "tolist") and not isinstance(M, mpmath.matrix):
            M = M.tolist()
        out = mpmath.matrix(M)
        for i in range(out.rows):
            for j in range(out.cols):
                if not isinstance(out[i, j], mpf):
                    raise TypeError
        return out
    except (TypeError, ValueError, IndexError):
        raise ParameterError(
            "M must be 'identity', 'diag:a,b,...' or a square matrix of real numbers."
        ) from None


def _check_m(M: mpmath.matrix, b: int) -> mpmath.matrix:
    """``M`` itself, once it is a finite symmetric ``b x b`` matrix."""
    if M.rows != b or M.cols != b:
        raise ParameterError(f"M must be a {b} x {b} matrix (b = {b}), got {M.rows} x {M.cols}.")
    for i in range(b):
        for j in range(b):
            if not mpmath.isfinite(M[i, j]):
                raise ParameterError(f"M must have finite entries, got M[{i}, {j}] = {M[i, j]}.")
    for i in range(b):
        for j in range(i):
            if M[i, j] != M[j, i]:
                raise ParameterError("M must be symmetric.")
    return M
