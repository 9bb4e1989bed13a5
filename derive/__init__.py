"""Symbolic layer of mfstein (SymPy): models, derived objects, LaTeX, kernels.

>>> from derive import supermarket
>>> m = supermarket(b=3, d=2)
>>> m.jacobian[0, 0]
-2*lam*s1 - 1
"""

from derive.errors import ParameterError
from derive.kernels import Kernels, kernels
from derive.model import LAM, MU, Model, N, SupermarketModel, Transition, supermarket

__all__ = [
    "LAM",
    "MU",
    "Kernels",
    "Model",
    "N",
    "ParameterError",
    "SupermarketModel",
    "Transition",
    "kernels",
    "supermarket",
]
