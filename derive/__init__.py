"""Symbolic layer of mfstein (SymPy): models, derived objects, LaTeX, kernels.

>>> from derive import supermarket
>>> m = supermarket(b=3, d=2)
>>> m.jacobian[0, 0]
-2*lam*s1 - 1
"""

from __future__ import annotations

from mfstein import __version__ as __version__
from mfstein.lazy import lazy_exports

_EXPORTS = {
    "ClosedForm": "derive.closed_forms",
    "Kernels": "derive.kernels",
    "KroneckerSystem": "derive.stein",
    "LAM": "derive.model",
    "MU": "derive.model",
    "Model": "derive.model",
    "ModelInfo": "derive.spec",
    "Parameter": "derive.spec",
    "StateSpace": "derive.spec",
    "Truncated": "derive.spec",
    "load_model": "derive.models",
    "N": "derive.model",
    "ParameterError": "mfstein.errors",
    "SteinLyapunovCheck": "derive.stein",
    "SupermarketModel": "derive.models.supermarket",
    "Transition": "derive.model",
    "closed_form": "derive.closed_forms",
    "dominant_term": "derive.stein",
    "equilibrium_closed_form": "derive.closed_forms",
    "equilibrium_equations": "derive.stein",
    "generator_apply": "derive.chain_operator",
    "jacobian_at_equilibrium": "derive.stein",
    "kernels": "derive.kernels",
    "kronecker_system": "derive.stein",
    "latex_objects": "derive.latex",
    "lemma7_difference": "derive.chain_operator",
    "lemma7_rhs": "derive.chain_operator",
    "linearised_drift": "derive.stein",
    "lyapunov_equation": "derive.stein",
    "lyapunov_residual": "derive.stein",
    "p_matrix": "derive.stein",
    "quadratic_test_function": "derive.chain_operator",
    "solve_kronecker": "derive.stein",
    "solve_lyapunov": "derive.stein",
    "sstar_symbols": "derive.stein",
    "stein_equation": "derive.stein",
    "stein_lyapunov_check": "derive.stein",
    "stein_solution": "derive.stein",
    "supermarket": "derive.models.supermarket",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
