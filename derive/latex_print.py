"""The LaTeX printer of derived objects, in the core paper's notation (printing only).

Symbols are rendered as in the paper: ``s1 -> s_{1}``, ``sstar1 -> s^*_{1}``,
``lam -> \\lambda``, ``mu -> \\mu``, ``P_1_2 -> P_{12}`` (``P_{1,12}`` once an
index has two digits), ``M_i_j``, ``A_i_j`` likewise, ``a_i -> a_{i}``.  Output
uses only ``amsmath`` (``pmatrix``, ``aligned``), so it pastes into a paper.
:func:`object_latex` writes one object as :mod:`derive.named_objects` derives it: the
one writer of each object's LaTeX, used by :mod:`derive.latex` (the model-level
functions, which derive the objects first) and by :meth:`DerivedObjects.to_latex
<derive.models.derived_objects.DerivedObjects.to_latex>` (which holds them).  This
module derives nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import sympy as sp
from sympy.printing.latex import LatexPrinter

from derive.stein import weight_matrix

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


def _hessian(H: sp.NDimArray) -> str:
    """``nabla^2 f_i(s)`` for each ``i`` (Section 6.3); entry ``(j, k)`` is ``d2 f_i/ds_j ds_k``."""
    b = H.shape[0]
    rows = []
    for i in range(b):
        Hi = sp.Matrix(b, b, lambda j, k, i=i: H[i, j, k])
        rows.append(f"\\nabla^2 f_{{{i + 1}}}(s) &= {latex(Hi)}")
    return aligned(rows)


def stein_block(parts: Mapping[str, Any], x: sp.Matrix, M: object = None) -> str:
    """Equilibrium equations, linear model, Stein's equation (eq. (10)) and its quadratic
    solution (Lemma 4), from the parts of :func:`derive.named_objects.model_object`'s
    ``stein``; ``x = s - s^*``."""
    P = parts["P"]
    rows = [f"0 &= {latex(lhs)} \\quad (k = {k + 1})" for k, lhs in enumerate(parts["equilibrium"])]
    rows.append(f"J(s^*) &= {latex(parts['J_star'])}")
    rows.append(f"l(s) = J(s^*)(s - s^*) &= {latex(parts['linearised_drift'])}")
    rows.append(f"g(s) = -(s - s^*)^\\top P (s - s^*) &= {latex(parts['g'])}")
    rows.append(f"P &= {latex(P)}")
    rows.append(
        f"\\nabla g(s) \\cdot J(s^*)(s - s^*) &= (s - s^*)^\\top M (s - s^*), "
        f"\\quad M = {latex(weight_matrix(P.shape[0], M))}, \\quad s - s^* = {latex(x)}"
    )
    rows.append(f"{latex(parts['stein_lhs'])} &= {latex(parts['stein_rhs'])}")
    return aligned(rows)


def dominant_block(term: object) -> str:
    """``E[(S - s^*)^T M (S - s^*)] ~ tr(P Q(s^*)) / N``."""
    return (
        "\\mathbb{E}\\left[(S - s^*)^\\top M (S - s^*)\\right] \\approx "
        f"\\frac{{\\operatorname{{tr}}(P Q(s^*))}}{{N}} = {latex(term)}"
    )


def lyapunov_block(parts: Mapping[str, Any]) -> str:
    """``P J(s^*) + J(s^*)^T P = -M`` written out entrywise (eq. (23))."""
    return f"P J(s^*) + J(s^*)^\\top P = {latex(parts['lhs'])} = {latex(parts['rhs'])}"


def kronecker_block(parts: Mapping[str, Any]) -> str:
    """``(J^T (x) I + I (x) J^T) vec P = -vec M`` with the matrices written out."""
    return (
        "\\left(J(s^*)^\\top \\otimes I + I \\otimes J(s^*)^\\top\\right) "
        "\\operatorname{vec}(P) = -\\operatorname{vec}(M): \\quad "
        f"{latex(parts['matrix'])} {latex(parts['vecP'])} = {latex(parts['rhs'])}"
    )


def generator_block(parts: Mapping[str, Any]) -> str:
    """Lemma 7 for a general quadratic ``g``: both sides and their difference."""
    return aligned(
        [
            f"g(s) &= {latex(parts['g'])}",
            "G g(s) = \\sum_\\ell N \\beta_\\ell(s)\\left[g(s + \\ell/N) - g(s)\\right] "
            f"&= {latex(parts['Gg'])}",
            "\\nabla g(s) \\cdot f(s) + \\frac{1}{2N} \\sum_{i,j} Q_{ij}(s) "
            f"\\partial_{{ij}} g(s) &= {latex(parts['lemma7_rhs'])}",
            f"G g(s) - \\nabla g(s) \\cdot f(s) - \\frac{{1}}{{2N}} \\sum_{{i,j}} Q_{{ij}}(s) "
            f"\\partial_{{ij}} g(s) &= {latex(parts['difference'])}",
        ]
    )


def _closed_form(parts: Mapping[str, Any]) -> str:
    """``s^*_k(lam)``, ``J(s^*)``, ``P`` and ``c = 2 tr(P F~)`` of the supermarket with
    ``b <= 2`` (:func:`derive.models.closed_forms.closed_form_parts`)."""
    rows = [f"s^*_{{{k + 1}}} &= {latex(v)}" for k, v in enumerate(parts["s_star"])]
    rows.append(f"J(s^*) &= {latex(parts['J'])}")
    rows.append(f"P &= {latex(parts['P'])}")
    rows.append(
        f"c = 2 \\operatorname{{tr}}(P \\tilde F) &= {latex(parts['c_in_sstar'])} = "
        f"{latex(parts['c'])}"
    )
    return aligned(rows)


def object_latex(name: str, obj: Any, x: sp.Matrix | None = None, M: object = None) -> str:
    """LaTeX of the object ``obj`` that ``mfstein derive --show name`` names (as
    :func:`derive.named_objects.model_object` and
    :func:`derive.models.closed_forms.closed_form_parts` give it): the one writer of
    each object's LaTeX.  ``stein`` also needs ``x = s - s^*``
    (:func:`derive.stein.deviation`) and the weight ``M`` its parts were derived with,
    and prints the dominant term under Stein's equation."""
    if name == "f":
        return aligned(_vector_rows("f", obj))
    if name == "J":
        return f"J(s) = {latex(obj)}"
    if name == "hessian":
        return _hessian(obj)
    if name == "Q":
        return f"Q(s) = \\sum_{{\\ell}} \\ell \\ell^\\top \\beta_\\ell(s) = {latex(obj)}"
    if name == "ftilde":
        return aligned(_vector_rows("\\tilde f", obj))
    if name == "stein":
        if x is None:
            raise ValueError("the LaTeX of stein needs x = s - s^* (derive.stein.deviation).")
        return stein_block(obj, x, M) + "\n" + dominant_block(obj["dominant_term"])
    writers = {
        "lyapunov": lyapunov_block,
        "kron": kronecker_block,
        "generator": generator_block,
        "closed-form": _closed_form,
    }
    return writers[name](obj)
