"""Symbolic layer of mfstein (SymPy): models, derived objects, LaTeX, kernels.

>>> from derive import supermarket
>>> m = supermarket(b=3, d=2)
>>> m.jacobian[0, 0]
-2*lam*s1 - 1
"""

from __future__ import annotations

from mfstein.ground.lazy import VERSION, lazy_package

__all__, __getattr__, __dir__ = lazy_package(
    __name__,
    {
        "derive.chain_operator": (
            "generator_apply",
            "lemma7_difference",
            "lemma7_rhs",
            "quadratic_test_function",
        ),
        "derive.heterogeneous_population": (
            "HeterogeneousModel",
            "heterogeneous",
            "heterogeneous_classes",
            "occupancy",
        ),
        "derive.models.closed_forms": ("ClosedForm", "closed_form", "equilibrium_closed_form"),
        "derive.kernels": ("Kernels", "kernels"),
        "derive.latex": ("latex_objects",),
        "derive.model": ("LAM", "MU", "Model", "N", "Transition"),
        "derive.models": ("load_model",),
        "derive.models.supermarket": ("SupermarketModel", "supermarket"),
        "derive.population": ("population",),
        "derive.spec": ("ModelInfo", "Parameter", "StateSpace", "Truncated"),
        "derive.stein": (
            "KroneckerSystem",
            "SteinLyapunovCheck",
            "dominant_term",
            "equilibrium_equations",
            "jacobian_at_equilibrium",
            "kronecker_system",
            "linearised_drift",
            "lyapunov_equation",
            "lyapunov_residual",
            "p_matrix",
            "solve_kronecker",
            "solve_lyapunov",
            "sstar_symbols",
            "stein_equation",
            "stein_lyapunov_check",
            "stein_solution",
        ),
        "mfstein.ground.errors": ("ParameterError",),
    },
    unlisted=VERSION,
)
