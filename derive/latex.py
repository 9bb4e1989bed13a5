"""LaTeX for every derived object, in the core paper's notation.

Symbols are rendered as in the paper: ``s1 -> s_{1}``, ``sstar1 -> s^*_{1}``,
``lam -> \\lambda``, ``mu -> \\mu``, ``P_1_2 -> P_{12}`` (``P_{1,12}`` once an
index has two digits), ``M_i_j``, ``A_i_j`` likewise, ``a_i -> a_{i}``.  Output
uses only ``amsmath`` (``pmatrix``, ``aligned``), so it pastes into a paper.
:func:`latex_objects` returns one display-ready string per object name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

import sympy as sp
from sympy.printing.latex import LatexPrinter

from derive import chain_operator, stein

if TYPE_CHECKING:
    from derive.model import Model

_INDEXED = re.compile(r"^([A-Za-z])_(\d+)_(\d+)$")
_STATE = re.compile(r"^s(\d+)$")
_STAR = re.compile(r"^sstar(\d+)$")
_COEF = re.compile(r"^([a-z])_(\d+)$")
_GREEK = {"lam": r"\lambda", "mu": r"\mu", "N": "N"}


def symbol_latex(name: str) -> str:
    """LaTeX of one mfstein symbol name (see the module docstring)."""
    if name in _GREEK:
        return _GREEK[name]
    if m := _STATE.match(name):
        return f"s_{{{m.group(1)}}}"
    if m := _STAR.match(name):
        return f"s^*_{{{m.group(1)}}}"
    if m := _INDEXED.match(name):
        letter, i, j = m.groups()
        sep = "," if len(i) > 1 or len(j) > 1 else ""
        return f"{letter}_{{{i}{sep}{j}}}"
    if m := _COEF.match(name):
        return f"{m.group(1)}_{{{m.group(2)}}}"
    return LatexPrinter().doprint(sp.Symbol(name))


def _names(objs: Iterable[object]) -> dict[sp.Symbol, str]:
    syms: set[sp.Symbol] = set()
    for o in objs:
        if isinstance(o, sp.Basic | sp.MatrixBase):
            syms |= o.free_symbols
        elif isinstance(o, sp.NDimArray):
            for e in o:
                syms |= sp.sympify(e).free_symbols
    return {s: symbol_latex(s.name) for s in syms}


def latex(expr: object) -> str:
    """LaTeX of a SymPy expression or matrix with the paper's symbol names."""
    e = sp.sympify(expr) if not isinstance(expr, sp.MatrixBase) else expr
    printer = LatexPrinter({"symbol_names": _names([e]), "mat_delim": "(", "mat_str": "matrix"})
    return printer.doprint(e)


def aligned(rows: list[str]) -> str:
    """Rows ``left &= right`` as one ``aligned`` block."""
    return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"


def _vector_rows(name: str, vec: sp.Matrix, arg: str = "(s)") -> list[str]:
    return [f"{name}_{{{i + 1}}}{arg} &= {latex(v)}" for i, v in enumerate(vec)]


def drift_latex(model: Model) -> str:
    """``f_k(s) = ...`` for ``k = 1..b``."""
    return aligned(_vector_rows("f", model.drift))


def jacobian_latex(model: Model) -> str:
    """``J(s) = (...)``."""
    return f"J(s) = {latex(model.jacobian)}"


def hessian_latex(model: Model) -> str:
    """``nabla^2 f_i(s)`` for each ``i`` (Section 6.3); entry ``(j, k)`` is ``d2 f_i/ds_j ds_k``."""
    b = model.n
    H = model.hessian
    rows = []
    for i in range(b):
        Hi = sp.Matrix(b, b, lambda j, k, i=i: H[i, j, k])
        rows.append(f"\\nabla^2 f_{{{i + 1}}}(s) &= {latex(Hi)}")
    return aligned(rows)


def diffusion_latex(model: Model) -> str:
    """``Q(s) = sum_l l l^T beta_l(s) = (...)``."""
    return f"Q(s) = \\sum_{{\\ell}} \\ell \\ell^\\top \\beta_\\ell(s) = {latex(model.diffusion)}"


def ftilde_latex(model: Model) -> str:
    """``\\tilde f_i(s) = ...`` (Theorem 1)."""
    return aligned(_vector_rows("\\tilde f", model.ftilde))


def stein_latex(model: Model, M: object = None) -> str:
    """Equilibrium equations, linear model, Stein's equation and its quadratic solution."""
    b = model.n
    rows = [
        f"0 &= {latex(eq.lhs)} \\quad (k = {k + 1})"
        for k, eq in enumerate(stein.equilibrium_equations(model))
    ]
    x = latex(stein.deviation(model))
    rows.append(f"J(s^*) &= {latex(stein.jacobian_at_equilibrium(model))}")
    rows.append(f"l(s) = J(s^*)(s - s^*) &= {latex(stein.linearised_drift(model))}")
    Mm = stein.weight_matrix(b, M)
    eq = stein.stein_equation(model, M)
    rows.append(f"g(s) = -(s - s^*)^\\top P (s - s^*) &= {latex(stein.stein_solution(model))}")
    rows.append(f"P &= {latex(stein.p_matrix(b))}")
    rows.append(
        f"\\nabla g(s) \\cdot J(s^*)(s - s^*) &= (s - s^*)^\\top M (s - s^*), "
        f"\\quad M = {latex(Mm)}, \\quad s - s^* = {x}"
    )
    rows.append(f"{latex(eq.lhs)} &= {latex(eq.rhs)}")
    return aligned(rows)


def lyapunov_latex(model: Model, M: object = None) -> str:
    """``P J(s^*) + J(s^*)^T P = -M`` written out entrywise."""
    eq = stein.lyapunov_equation(model, M)
    return f"P J(s^*) + J(s^*)^\\top P = {latex(eq.lhs)} = {latex(eq.rhs)}"


def kronecker_latex(model: Model, M: object = None) -> str:
    """``(J^T (x) I + I (x) J^T) vec P = -vec M`` with the matrices written out."""
    ks = stein.kronecker_system(model, M)
    return (
        "\\left(J(s^*)^\\top \\otimes I + I \\otimes J(s^*)^\\top\\right) "
        "\\operatorname{vec}(P) = -\\operatorname{vec}(M): \\quad "
        f"{latex(ks.matrix)} {latex(ks.unknowns)} = {latex(ks.rhs)}"
    )


def dominant_latex(model: Model) -> str:
    """``E[(S - s^*)^T M (S - s^*)] ~ tr(P Q(s^*)) / N``."""
    return (
        "\\mathbb{E}\\left[(S - s^*)^\\top M (S - s^*)\\right] \\approx "
        f"\\frac{{\\operatorname{{tr}}(P Q(s^*))}}{{N}} = {latex(stein.dominant_term(model))}"
    )


def generator_latex(model: Model) -> str:
    """Lemma 7 for a general quadratic ``g``: both sides and their difference."""
    g = chain_operator.quadratic_test_function(model)
    Gg = chain_operator.generator_apply(model, g)
    rhs = chain_operator.lemma7_rhs(model, g)
    diff = chain_operator.lemma7_difference(model, g)
    return aligned(
        [
            f"g(s) &= {latex(g)}",
            "G g(s) = \\sum_\\ell N \\beta_\\ell(s)\\left[g(s + \\ell/N) - g(s)\\right] "
            f"&= {latex(Gg)}",
            "\\nabla g(s) \\cdot f(s) + \\frac{1}{2N} \\sum_{i,j} Q_{ij}(s) "
            f"\\partial_{{ij}} g(s) &= {latex(rhs)}",
            f"G g(s) - \\nabla g(s) \\cdot f(s) - \\frac{{1}}{{2N}} \\sum_{{i,j}} Q_{{ij}}(s) "
            f"\\partial_{{ij}} g(s) &= {latex(diff)}",
        ]
    )


def latex_objects(model: Model, names: Iterable[str], M: object = None) -> dict[str, str]:
    """LaTeX of each named object (names as in ``mfstein derive --show``, but the
    supermarket's ``closed-form``: :func:`derive.models.closed_forms.closed_form_latex`)."""
    table = {
        "f": drift_latex,
        "J": jacobian_latex,
        "hessian": hessian_latex,
        "Q": diffusion_latex,
        "ftilde": ftilde_latex,
        "stein": lambda m: stein_latex(m, M) + "\n" + dominant_latex(m),
        "lyapunov": lambda m: lyapunov_latex(m, M),
        "kron": lambda m: kronecker_latex(m, M),
        "generator": generator_latex,
    }
    return {name: table[name](model) for name in names}
