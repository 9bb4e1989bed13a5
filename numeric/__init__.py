"""Numeric layer of mfstein (mpmath, NumPy, SciPy).

Equilibrium ``s*``, Jacobian, Stein/Lyapunov solutions ``P`` and ``W``, refined
mean-field bias ``V`` and Theorem 1's constant at any precision and buffer size,
plus a float64 fast path for sweeps.
"""

from __future__ import annotations

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
        "mfstein.families.supermarket.equilibrium": ("equilibrium", "reference_point"),
        "mfstein.families.supermarket.short_form": ("bound",),
        "mfstein.families.supermarket.solver": ("auto_buffer",),
        "mfstein.families.supermarket.sweep": ("constant_float64",),
    },
    unlisted=VERSION,
)
