"""Symbolic layer of mfstein (SymPy): models, derived objects, LaTeX, kernels.

>>> from derive import supermarket
>>> m = supermarket(b=3, d=2)
>>> m.jacobian[0, 0]
-2*lam*s1 - 1
"""

from derive.closed_forms import ClosedForm, closed_form, equilibrium_closed_form
from derive.errors import ParameterError
from derive.generator import (
    generator_apply,
    lemma7_difference,
    lemma7_rhs,
    quadratic_test_function,
)
from derive.kernels import Kernels, kernels
from derive.latex import latex_objects
from derive.model import LAM, MU, Model, N, SupermarketModel, Transition, supermarket
from derive.stein import (
    KroneckerSystem,
    SteinLyapunovCheck,
    dominant_term,
    equilibrium_equations,
    jacobian_at_equilibrium,
    kronecker_system,
    linearised_drift,
    lyapunov_equation,
    lyapunov_residual,
    p_matrix,
    solve_kronecker,
    solve_lyapunov,
    sstar_symbols,
    stein_equation,
    stein_lyapunov_check,
    stein_solution,
)

__all__ = [
    "LAM",
    "MU",
    "ClosedForm",
    "Kernels",
    "KroneckerSystem",
    "Model",
    "N",
    "ParameterError",
    "SteinLyapunovCheck",
    "SupermarketModel",
    "Transition",
    "closed_form",
    "dominant_term",
    "equilibrium_closed_form",
    "equilibrium_equations",
    "generator_apply",
    "jacobian_at_equilibrium",
    "kernels",
    "kronecker_system",
    "latex_objects",
    "lemma7_difference",
    "lemma7_rhs",
    "linearised_drift",
    "lyapunov_equation",
    "lyapunov_residual",
    "p_matrix",
    "quadratic_test_function",
    "solve_kronecker",
    "solve_lyapunov",
    "sstar_symbols",
    "stein_equation",
    "stein_lyapunov_check",
    "stein_solution",
    "supermarket",
]
