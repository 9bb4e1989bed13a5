"""Numeric layer of mfstein (mpmath, NumPy, SciPy).

Equilibrium ``s*``, Jacobian, Stein/Lyapunov solutions ``P`` and ``W``, refined
mean-field bias ``V`` and Theorem 1's constant at any precision and buffer size,
plus a float64 fast path for sweeps.
"""

from __future__ import annotations

from mfstein import __version__ as __version__
from mfstein.lazy import lazy_exports

_EXPORTS = {
    "CertifiedSolution": "numeric.certify",
    "certify": "numeric.certify",
    "certify_solution": "numeric.certify",
    "heavy_traffic_ball": "numeric.certify",
    "second_order": "numeric.expansion",
    "second_order_float64": "numeric.expansion",
    "IllConditionedWarning": "numeric.precision",
    "MeanFieldSolution": "numeric.solution",
    "NumericalError": "numeric.precision",
    "auto_buffer": "numeric.supermarket",
    "bound": "numeric.mean_field",
    "constant_float64": "numeric.sweep",
    "equilibrium": "numeric.equilibrium",
    "heavy_traffic_lambda": "numeric.precision",
    "reference_point": "numeric.equilibrium",
    "solve": "numeric.mean_field",
    "register_fast_path": "numeric.fast_paths",
    "transient": "numeric.transient",
    "TransientResult": "numeric.transient",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
