"""Numeric layer of mfstein (mpmath, NumPy, SciPy).

Equilibrium ``s*``, Jacobian, Stein/Lyapunov solutions ``P`` and ``W``, refined
mean-field bias ``V`` and Theorem 1's constant at any precision and buffer size,
plus a float64 fast path for sweeps.
"""

from numeric.bound import auto_buffer, bound, solve
from numeric.equilibrium import equilibrium, reference_point
from numeric.precision import (
    IllConditionedWarning,
    NumericalError,
    heavy_traffic_lambda,
)
from numeric.solution import MeanFieldSolution
from numeric.sweep import constant_float64

__all__ = [
    "IllConditionedWarning",
    "MeanFieldSolution",
    "NumericalError",
    "auto_buffer",
    "bound",
    "constant_float64",
    "equilibrium",
    "heavy_traffic_lambda",
    "reference_point",
    "solve",
]
