"""The checks a fixed point must pass before any route answers with it.

One source of truth for both routes of :func:`numeric.solve` (the working-precision
route of :mod:`numeric.meanfield.general` and the float64 route of
:mod:`numeric.meanfield.float64_route`):

* *drift residual*, relative: ``max_i |f_i(s)|`` is compared with the size of the
  terms that make up ``f`` there, ``max(max_l |beta_l(s)|, max_i sum_j |J_ij| |s_j|)``
  (:func:`term_scale`), never with an absolute number (a rate ``lam (1 - x)`` at
  ``lam = 1000`` is a difference of terms of size 1000);
* *state space*: the point lies in the model's declared state space, up to
  :data:`SPACE_TOL` times its largest coordinate (or 1);
* *no kink*: :func:`check_no_kink` (the caller runs it);
* *stability*, relative to the scale of ``J``: every eigenvalue of the reduced
  Jacobian has real part below ``-STABILITY_MARGIN`` times the largest ``|J_ij|``
  at ``s*`` and at the start (:func:`stability_verdict`; the start's ``J`` gives
  the scale when ``J`` vanishes at a degenerate fixed point, the fixed point's when
  all rates are tiny).

Each check returns the words that follow "the fixed point ... " (``None`` when
it passes), and :func:`refuse` turns them into the one sentence both routes raise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mfstein.ground.errors import NumericalError, ParameterError

#: An eigenvalue must have real part below ``-STABILITY_MARGIN max |J_ij|``.
STABILITY_MARGIN = 1e-9
#: A float64 fixed point must have ``max |f| <= RESIDUAL64 * term_scale``.
RESIDUAL64 = 1e-9
#: A fixed point may leave the state space by this much relative to its size.
SPACE_TOL = 1e-9


_MAX = np.maximum.reduce
_F64 = np.dtype(np.float64)
#: A float64 vector of at most this many entries is read on Python floats by
#: :func:`max_abs` (NumPy's two ufunc calls cost more there).
SHORT = 64


def max_abs(a: np.ndarray) -> float:
    """``max |a_i|`` (0 for an empty array, NaN when an entry is NaN): the ufunc
    reduction ``np.max`` runs, without ``np.max``'s and ``ndarray.max``'s Python
    wrappers, which cost more than the work on small arrays.

    A short float64 vector (at most :data:`SHORT` entries) is read as Python floats:
    the largest of their absolute values is the same number (a maximum is exact).
    Their sum is NaN when an entry is NaN (Python's ``max`` would skip it) or when
    both infinities occur; then NumPy's reduction answers."""
    if type(a) is np.ndarray and a.ndim == 1 and a.dtype is _F64 and 0 < a.shape[0] <= SHORT:
        values = a.tolist()
        total = sum(values)
        if total == total:  # no NaN entry
            return max(map(abs, values))
    return float(_MAX(np.abs(a), axis=None)) if a.size else 0.0


def term_scale(rates: Any, J: Any, s: Any, absJ: Any = None) -> float:
    """The size of the terms of the drift at ``s``: the largest intensity
    ``|beta_l(s)|`` and the largest ``sum_j |J_ij| |s_j|`` (dense or SciPy sparse
    ``J``, float64 values; ``absJ``: ``|J|`` when the caller has taken it)."""
    r = max_abs(np.asarray(rates, dtype=float))
    if absJ is None:
        absJ = abs(J) if not isinstance(J, np.ndarray) else np.abs(J)
    js = absJ @ np.abs(np.asarray(s, dtype=float))
    return max(r, max_abs(js))


def residual_words(residual: float, scale: float, tol: float) -> str | None:
    """``None`` when ``residual <= tol * scale``, else the words saying by how much
    the drift fails to vanish, relative to the size of its terms."""
    if residual <= tol * scale:
        return None
    rel = residual / scale if scale > 0 else float("inf")
    return (
        f"is not a fixed point: the drift there is {residual:.3g}, {rel:.3g} relative to "
        f"the size of its terms ({scale:.3g}), above the tolerance {tol:.0e} (a rate may "
        "jump where the flow would stop, no fixed point may exist, or it is too "
        "ill-conditioned to be found at this precision)"
    )


def space_words(model: Any, s: Sequence[float]) -> str | None:
    """``None`` when ``s`` lies in the model's declared state space (up to
    :data:`SPACE_TOL` times ``max(1, max |s_i|)``), else the words saying where."""
    space = model.info.state_space
    plain = isinstance(s, np.ndarray) and s.dtype == np.float64  # tolist: the same floats
    vals = s.tolist() if plain else [float(v) for v in s]
    tol = SPACE_TOL * max([1.0] + [abs(v) for v in vals])
    if space.contains(vals, tol=tol):
        return None
    return f"lies outside the state space {space.describe(len(vals))}"


def stability_verdict(eig: np.ndarray, jmax: float, has_laws: bool) -> str | None:
    """``None`` when every eigenvalue in ``eig`` has real part below
    ``-STABILITY_MARGIN * jmax`` (``jmax``: the largest ``|J_ij|`` at ``s*`` and at
    the start), else the words saying which test failed: not hyperbolic (an
    eigenvalue within the margin of 0) or not stable."""
    if eig.size == 0:
        return None
    margin = STABILITY_MARGIN * jmax
    worst = eig[eig.real.argmax()]
    if worst.real < -margin:
        return None
    if abs(worst) <= margin:
        beyond = (
            " beyond the conservation laws found"
            if has_laws
            else " and the jumps conserve no linear quantity"
        )
        return (
            f"is not hyperbolic: J(s*) has an eigenvalue 0 (|{_num(worst)}| <= "
            f"{STABILITY_MARGIN:g} max|J_ij| = {margin:.3g}, J at s* and at the start){beyond}"
        )
    return (
        f"is not stable: J(s*) has an eigenvalue with real part {worst.real:.3g}, not below "
        f"-{STABILITY_MARGIN:g} max|J_ij| = {-margin:.3g} (J at s* and at the start)"
    )


def _num(z: complex) -> str:
    z = complex(z)
    return f"{z.real:.3g}" if z.imag == 0 else f"{z.real:.3g}{z.imag:+.3g}i"


def sorted_eigenvalues(J: np.ndarray) -> np.ndarray:
    """Eigenvalues of the dense ``J`` by increasing real part (largest last)."""
    if J.size == 0:
        return np.zeros(0)
    eig = np.linalg.eigvals(J)
    return eig[np.argsort(eig.real)]


def check(
    model: Any,
    s: Sequence[float],
    p64: Sequence[float],
    *,
    residual: float,
    scale: float,
    eig: np.ndarray,
    jmax: float,
    has_laws: bool,
    check_rates: Callable[[], None],
) -> None:
    """Every check of this module at the float64 point ``s`` (full coordinates), in
    order: drift residual (``residual = max |f|`` against :data:`RESIDUAL64` times
    ``scale``, :func:`term_scale`), state space, the caller's ``check_rates`` (finite
    rates >= 0), no kink, stability (``eig``: the reduced Jacobian's eigenvalues,
    ``jmax``: its largest entry); the first that fails is raised in one sentence
    (:func:`refuse`)."""
    words = residual_words(residual, scale, RESIDUAL64) or space_words(model, s)
    if words is None:
        check_rates()
        check_no_kink(model, s, p64)
        words = stability_verdict(eig, jmax, has_laws)
    if words is not None:
        raise refuse(model, s, words)


def refuse(model: Any, s: Sequence[float], words: str) -> Exception:
    """The one sentence both routes raise for a point failing a check: a
    :class:`NumericalError` for a drift that does not vanish, a
    :class:`ParameterError` otherwise (the parameters or the start must change)."""
    where = ", ".join(f"{float(v):.6g}" for v in list(s)[:12]) + (", ..." if len(s) > 12 else "")
    if words.startswith("is not a fixed point"):
        head = f"the point ({where}) where the fixed-point search of model {model.name} ended"
        return NumericalError(f"{head} {words}; no result is returned.")
    head = f"the fixed point s* = ({where}) of model {model.name} {words}"
    need = (
        "the mean-field error constants need a stable hyperbolic fixed point in the state "
        "space (change the parameters or the start)."
    )
    return ParameterError(f"{head}; {need}")


#: The kinks of each model's rates with their float64 functions, by model key.
_KINKS: dict[Any, list[tuple[Any, Any, Any]]] = {}


def _kink_functions(model: Any) -> list[tuple[Any, Any, Any]]:
    """``(transition, g, g as a float function of (states, params))`` for every kink
    ``g = 0`` of the model's rates (:func:`derive.model.kinks`), made once per model
    key: a warm check runs no SymPy."""
    if getattr(model, "kink_free", False):  # a stored model (derive.models.stored)
        return []
    hit = _KINKS.get(model.key)
    if hit is None:
        import sympy as sp

        from derive.model import kinks

        symbols = (*model.states, *model.params)
        hit = _KINKS[model.key] = [
            (t, g, sp.lambdify(symbols, g, "math"))
            for t in model.transitions
            for g in kinks(t.rate)
        ]
    return hit


def _kink_value(g: Any, fn: Any, model: Any, s: Sequence[float], p: Sequence[float]) -> complex:
    """``g`` at ``(s, p)``: its float function, or SymPy at 17 digits where that
    fails (a complex or undefined intermediate)."""
    try:
        return complex(fn(*[float(v) for v in s], *[float(v) for v in p]))
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        import sympy as sp

        point = dict(zip(model.states, [sp.Float(float(v), 17) for v in s], strict=True))
        point.update(zip(model.params, [sp.Float(float(v), 17) for v in p], strict=True))
        return complex(g.subs(point).evalf(17))


def check_no_kink(model: Any, s: Sequence[float], p: Sequence[float]) -> None:
    """Refuse a fixed point on a kink of a piecewise rate (``Min``, ``Max``,
    ``Abs``, ``Heaviside``, ``Piecewise``; :func:`derive.model.kinks`), in one
    sentence: ``J``, the Hessian and the 1/N expansion need a drift that is
    differentiable at ``s*``; away from the kinks every derivative is that of the
    branch active there."""
    items = _kink_functions(model)
    if not items:
        return
    scale = 1 + max(abs(float(v)) for v in [*s, *p])
    for t, g, fn in items:
        if abs(_kink_value(g, fn, model, s, p)) <= 1e-9 * scale:
            pairs = zip(model.states, s, strict=True)
            shown = ", ".join(f"{x} = {float(v):.10g}" for x, v in pairs)
            raise ParameterError(
                f"the fixed point ({shown}) of model {model.name} lies on the kink "
                f"{g} = 0 of the rate of transition {t.label or t.jump}: the expansion needs "
                "a drift that is differentiable at the fixed point (move the parameters "
                "off the kink)."
            )
