"""Numeric layer of mfstein (mpmath, NumPy, SciPy).

Equilibrium ``s*``, Jacobian, Stein/Lyapunov solutions ``P`` and ``W``, refined
mean-field bias ``V`` and Theorem 1's constant at any precision and buffer size,
plus a float64 fast path for sweeps.
"""

from __future__ import annotations

from mfstein import __version__ as __version__
from mfstein.lazy import lazy_exports

_EXPORTS = {
    "CertifiedSolution": "numeric.certified.enclosures",
    "certify": "numeric.certified.enclosures",
    "certify_solution": "numeric.certified.enclosures",
    "heavy_traffic_ball": "numeric.certified.enclosures",
    "second_order": "numeric.expansion.stationary",
    "second_order_float64": "numeric.expansion.stationary",
    "IllConditionedWarning": "numeric.precision",
    "MeanFieldSolution": "numeric.solution",
    "NumericalError": "numeric.precision",
    "auto_buffer": "numeric.supermarket.solver",
    "bound": "numeric.meanfield.entry",
    "constant_float64": "numeric.supermarket.sweep",
    "equilibrium": "numeric.supermarket.equilibrium",
    "heavy_traffic_lambda": "numeric.precision",
    "reference_point": "numeric.supermarket.equilibrium",
    "solve": "numeric.meanfield.entry",
    "register_fast_path": "numeric.meanfield.fast_paths",
    "transient": "numeric.expansion.transient",
    "TransientResult": "numeric.expansion.transient",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
