"""A model's symbolic objects by their ``mfstein derive --show`` name.

:func:`model_object` is the one place that says which SymPy objects stand behind a
name: the drift ``f``, the Jacobian ``J``, the Hessian, the diffusion ``Q`` and ``f~``
(core paper, Sections 3 and 6), Stein's equation for the linear model (eq. (10)) with
its quadratic solution (Lemma 4), the Lyapunov system (eq. (23), plain and
vectorised) and the generator identity of Lemma 7.  The composite objects are dicts
of their parts; the JSON of ``mfstein derive`` (:mod:`derive.models.derived_objects`)
and the LaTeX (:mod:`derive.latex`) both write these parts.  The supermarket's closed
forms are :func:`derive.models.closed_forms.closed_form_parts`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from derive import chain_operator, stein

if TYPE_CHECKING:
    from derive.model import Model

#: The names :func:`model_object` knows (``closed-form`` is the supermarket's own).
NAMES = ("f", "J", "hessian", "Q", "ftilde", "stein", "lyapunov", "kron", "generator")
#: The plain objects: a name and the model attribute holding it.
_ATTRIBUTES = {"f": "drift", "J": "jacobian", "hessian": "hessian", "Q": "diffusion"}


def model_object(model: Model, name: str, M: object = None) -> Any:
    """The object ``name`` (one of :data:`NAMES`) of ``model``; ``M`` is the weight of
    Stein's equation and the Lyapunov system (:func:`derive.stein.weight_matrix`,
    ``None`` the identity)."""
    if name in _ATTRIBUTES or name == "ftilde":
        return getattr(model, _ATTRIBUTES.get(name, name))
    if name == "stein":
        eq = stein.stein_equation(model, M)
        return {
            "equilibrium": [e.lhs for e in stein.equilibrium_equations(model)],
            "J_star": stein.jacobian_at_equilibrium(model),
            "linearised_drift": stein.linearised_drift(model),
            "g": stein.stein_solution(model),
            "P": stein.p_matrix(model.n),
            "stein_lhs": eq.lhs,
            "stein_rhs": eq.rhs,
            "dominant_term": stein.dominant_term(model),
        }
    if name == "lyapunov":
        eq = stein.lyapunov_equation(model, M)
        return {"lhs": eq.lhs, "rhs": eq.rhs, "residual": stein.lyapunov_residual(model, M)}
    if name == "kron":
        ks = stein.kronecker_system(model, M)
        return {"matrix": ks.matrix, "vecP": ks.unknowns, "rhs": ks.rhs}
    if name == "generator":
        g = chain_operator.quadratic_test_function(model)
        return {
            "g": g,
            "Gg": chain_operator.generator_apply(model, g),
            "lemma7_rhs": chain_operator.lemma7_rhs(model, g),
            "difference": chain_operator.lemma7_difference(model, g),
        }
    raise KeyError(name)
