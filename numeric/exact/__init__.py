"""Exact stationary distribution of small finite-N systems (the ground truth).

``numeric.exact.solve(model, params, *, N, ...)`` for any model (``model`` a
:class:`derive.Model` or a name :func:`derive.models.load_model` takes), and the
supermarket's short form ``solve_exact(N, lam, b, d)`` (its own state
enumeration); both return :class:`ExactResult`.

>>> from numeric.exact import solve_exact
>>> r = solve_exact(4, "0.7", 3, 2)
>>> r.states, r.residual < 1e-12
(35, True)
"""

from __future__ import annotations

from mfstein.lazy import lazy_exports

_EXPORTS = {
    "ChainSolution": "numeric.exact.solve",
    "ExactResult": "numeric.exact.result",
    "solve_chain": "numeric.exact.solve",
    "solve": "numeric.exact.solve",
    "solve_exact": "numeric.exact.solve",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
