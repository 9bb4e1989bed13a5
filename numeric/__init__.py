"""Numeric layer of mfstein (mpmath, NumPy, SciPy).

Equilibrium ``s*``, Jacobian, Stein/Lyapunov solutions ``P`` and ``W``, refined
mean-field bias ``V`` and Theorem 1's constant at any precision and buffer size,
plus a float64 fast path for sweeps.
"""

from __future__ import annotations

from mfstein.ground.fast_paths import short_forms
from mfstein.ground.lazy import VERSION, lazy_package

__all__, __getattr__, __dir__ = lazy_package(
    __name__,
    {
        "numeric.certified.enclosures": (
            "CertifiedSolution",
            "certify_solution",
            "heavy_traffic_ball",
        ),
        "numeric.certified.old_names": ("certify_float_solution",),
        "numeric.expansion.transient": ("TransientResult", "transient"),
        "numeric.meanfield.entry": ("certify", "solve"),
        "numeric.meanfield.fast_paths": ("register_fast_path",),
        "numeric.meanfield.solution": ("MeanFieldSolution",),
        "numeric.meanfield.stationary": ("second_order", "second_order_float64"),
        "numeric.meanfield.sweep": ("sweep",),
        "numeric.meanfield.sweep_result": ("SweepResult",),
        "numeric.precision": ("IllConditionedWarning", "NumericalError", "heavy_traffic_lambda"),
        # a family's own short forms (bound, equilibrium, ...): its registration
        **short_forms(__name__),
    },
    unlisted=VERSION,
)
