"""LaTeX for every derived object of a model, in the core paper's notation.

The printing itself -- the paper's symbol names, ``amsmath`` only -- is
:mod:`derive.latex_print` (:func:`object_latex`, :func:`latex`, :func:`symbol_latex`,
re-exported here); the functions below derive the object of a model first
(:mod:`derive.named_objects`) and print it.  :func:`latex_objects` returns one
display-ready string per object name of a model.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from derive import stein
from derive.latex_print import (
    aligned,
    dominant_block,
    generator_block,
    kronecker_block,
    latex,
    lyapunov_block,
    object_latex,
    stein_block,
    symbol_latex,
)
from derive.named_objects import model_object

__all__ = [
    "aligned",
    "diffusion_latex",
    "dominant_latex",
    "drift_latex",
    "ftilde_latex",
    "generator_latex",
    "hessian_latex",
    "jacobian_latex",
    "kronecker_latex",
    "latex",
    "latex_objects",
    "lyapunov_latex",
    "object_latex",
    "stein_latex",
    "symbol_latex",
]

if TYPE_CHECKING:
    from derive.model import Model


def drift_latex(model: Model) -> str:
    """``f_k(s) = ...`` for ``k = 1..b``."""
    return object_latex("f", model.drift)


def jacobian_latex(model: Model) -> str:
    """``J(s) = (...)``."""
    return object_latex("J", model.jacobian)


def hessian_latex(model: Model) -> str:
    """``nabla^2 f_i(s)`` for each ``i`` (Section 6.3); entry ``(j, k)`` is ``d2 f_i/ds_j ds_k``."""
    return object_latex("hessian", model.hessian)


def diffusion_latex(model: Model) -> str:
    """``Q(s) = sum_l l l^T beta_l(s) = (...)``."""
    return object_latex("Q", model.diffusion)


def ftilde_latex(model: Model) -> str:
    """``\\tilde f_i(s) = ...`` (Theorem 1)."""
    return object_latex("ftilde", model.ftilde)


def stein_latex(model: Model, M: object = None) -> str:
    """Equilibrium equations, linear model, Stein's equation and its quadratic solution."""
    return stein_block(model_object(model, "stein", M), stein.deviation(model), M)


def lyapunov_latex(model: Model, M: object = None) -> str:
    """``P J(s^*) + J(s^*)^T P = -M`` written out entrywise."""
    return lyapunov_block(model_object(model, "lyapunov", M))


def kronecker_latex(model: Model, M: object = None) -> str:
    """``(J^T (x) I + I (x) J^T) vec P = -vec M`` with the matrices written out."""
    return kronecker_block(model_object(model, "kron", M))


def dominant_latex(model: Model) -> str:
    """``E[(S - s^*)^T M (S - s^*)] ~ tr(P Q(s^*)) / N``."""
    return dominant_block(stein.dominant_term(model))


def generator_latex(model: Model) -> str:
    """Lemma 7 for a general quadratic ``g``: both sides and their difference."""
    return generator_block(model_object(model, "generator"))


def latex_objects(model: Model, names: Iterable[str], M: object = None) -> dict[str, str]:
    """LaTeX of each named object (names as in ``mfstein derive --show``, but the
    supermarket's ``closed-form``: :func:`derive.models.closed_forms.closed_form_latex`)."""
    x = stein.deviation(model)
    return {name: object_latex(name, model_object(model, name, M), x, M) for name in names}
