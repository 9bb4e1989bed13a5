"""Exact stationary distribution of small finite-N systems (the ground truth).

``numeric.exact.solve(model, params, *, N, ...)`` for any model (``model`` a
:class:`derive.Model` or a name :func:`derive.models.load_model` takes) is the
one implementation; the supermarket family's fast path
(:func:`mfstein.families.supermarket.exact.supermarket_fast`, its ``exact`` route in
:data:`mfstein.ground.fast_paths.FAST_PATHS`, found by :mod:`numeric.exact.fast_paths`)
is chosen by it, and the paper's short form
``solve_exact(N, lam, b, d)`` (added to this package by the ``short_forms`` of the
family's entry in :data:`mfstein.ground.fast_paths.FAST_PATHS`) builds the supermarket
model and calls it.  Both
return :class:`ExactResult`.

>>> from numeric.exact import solve_exact
>>> r = solve_exact(4, "0.7", 3, 2)
>>> r.states, r.residual < 1e-12
(35, True)
"""

from __future__ import annotations

from mfstein.ground.fast_paths import short_forms
from mfstein.ground.lazy import lazy_package

__all__, __getattr__, __dir__ = lazy_package(
    __name__,
    {
        "numeric.exact.fast_paths": ("register_fast_path",),
        "numeric.exact.general": ("solve",),
        "numeric.exact.result": ("ExactResult",),
        **short_forms(__name__),  # a family's own short form (solve_exact)
    },
)
