"""Observables of a solved model: the expansion of ``E[g(S_N)]`` in ``1/N``, their
exact finite-N values, and the rows of the accuracy table.

Expansion.  With ``Y = S_N - s*`` and the stationary moment expansion of
Gast, Bortolussi and Tribastone ("Size expansions of mean field approximation:
transient and steady-state analysis", Performance Evaluation 129, 2019), whose
coefficients solve the equations (C), (B), (A) of :mod:`derive.expansion` and
are computed by :mod:`numeric.meanfield.general` (``V``, ``W``) and
:mod:`numeric.meanfield.stationary` (``A``, ``B``, ``C``)

    E[Y]           = V/N + A/N^2 + O(1/N^3),
    E[Y Y^T]       = W/N + B/N^2 + O(1/N^3),
    E[Y (x) Y (x) Y] = C/N^2 + O(1/N^3),
    E[Y_i Y_j Y_k Y_l] = (W_ij W_kl + W_ik W_jl + W_il W_jk)/N^2 + O(1/N^3),

and higher moments ``O(1/N^3)``, a smooth ``g`` expanded by Taylor's formula at
``s*`` (``g_i, g_ij, g_ijk, g_ijkl`` its derivatives there, sums over repeated
indices) gives

    E[g(S_N)] = g0 + g1/N + g2/N^2 + O(1/N^3),
    g0 = g(s*),
    g1 = g_i V_i + 1/2 g_ij W_ij,
    g2 = g_i A_i + 1/2 g_ij B_ij + 1/6 g_ijk C_ijk + 1/8 g_ijkl W_ij W_kl,

(the last term: ``1/24 g_ijkl`` against the three Gaussian pairings, equal by the
symmetry of ``g_ijkl``), and, from ``Var g = g_i g_j Cov(Y_i, Y_j) + O(1/N^2)``,

    lim_{N -> infinity} N Var g(S_N) = g_i W_ij g_j.

For a linear ``g = a . s`` this is ``a . s* + a . V/N + a . A/N^2``. The
quadratic observable of the core paper ("Beyond Scaling", Theorem 1),
``N E[Y^T M Y] = tr(M W) + tr(M B)/N + O(1/N^2)``, is reported with
``g0 = tr(M W)`` (Theorem 1's ``c``), ``g1 = tr(M B)`` and no ``g2``.

Digits.  The derivatives of ``g`` are evaluated at ``s*`` at the solution's
working precision (``s*`` carries its full working precision); each input
carries the norm-wise error its digits claim (``V``, ``W``: ``solution.digits``;
``A``, ``B``, ``C``: ``solution.digits2``; ``s*``: ``solution.digits``), the
error bound of each term is the sum of the absolute contributions, and the
digits reported are those the bound leaves (at most the requested ``dps``), so
cancellation in a sum costs digits instead of hiding.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import permutations
from typing import Any, ClassVar

import mpmath
from mpmath import mpf

from mfstein.ground.display import Presentable, params_text
from mfstein.ground.errors import ParameterError


# --------------------------------------------------------------------------
# result types
# --------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class ObservableExpansion(Presentable):
    """``E[g(S_N)] = g0 + g1/N + g2/N^2 + O(1/N^3)`` and ``lim N Var g(S_N)``."""

    #: The name (declared or the expression's text).
    observable: str
    #: The expression (``None`` for the quadratic observable).
    expression: str | None
    #: The model's name.
    model: str
    #: The parameter values (decimal strings).
    params: dict[str, str]
    #: The leading coefficient ``g0`` of ``E[g(S_N)]`` (``mpf``).
    g0: mpf
    #: The ``1/N`` coefficient ``g1`` (``mpf``).
    g1: mpf
    #: The ``1/N^2`` coefficient ``g2`` (``mpf``); ``None`` without ``order=2``.
    g2: mpf | None
    #: ``lim N Var g(S_N)`` (``mpf``); ``None`` for the quadratic observable.
    variance: mpf | None
    #: Term name -> significant digits claimed (see the module docstring).
    digits: dict[str, int]
    #: The solution's requested digits (the most any term claims).
    dps: int
    #: Why a term is missing (the ``1/N^2`` term, or the quadratic observable's ``1/N`` term,
    #: without a solution of ``order=2`` or without the third moment ``C``); empty when none is.
    notes: list[str] = field(default_factory=list)
    #: Term name -> the bound of its absolute error the digits come from
    #: (rounding in evaluating ``g`` and its derivatives included).
    errors: dict[str, mpf] | None = None

    @property
    def order(self) -> int:
        """``2`` when ``g2`` is known, else ``1``."""
        return 1 if self.g2 is None else 2

    def value(self, N: Any, order: int = 0) -> mpf:
        """``g0`` (order 0), ``g0 + g1/N`` (1) or ``g0 + g1/N + g2/N^2`` (2)."""
        if order not in (0, 1, 2):
            raise ParameterError(f"order must be 0, 1 or 2, got {order!r}.")
        if order == 2 and self.g2 is None:
            raise ParameterError("order 2 needs a solution with order=2 (A, B, C).")
        if order >= 1 and self.g1 is None:
            raise ParameterError("order 1 of this observable needs a solution with order=2.")
        with mpmath.workdps(self.dps + 10):
            n = mpf(N)
            out = self.g0
            if order >= 1:
                out = out + self.g1 / n
            if order >= 2:
                out = out + self.g2 / n**2
        return out

    def value_digits(self, N: Any, order: int = 0) -> int:
        """Digits of :meth:`value`: from the terms' absolute error bounds."""
        terms = [("g0", self.g0, 1)]
        if order >= 1:
            terms.append(("g1", self.g1, N))
        if order >= 2:
            terms.append(("g2", self.g2, N * N))
        with mpmath.workdps(self.dps + 10):
            err = mpmath.fsum(self.error(k) / m for k, _, m in terms)
            return _digits(self.value(N, order), err, self.dps)

    def error(self, name: str) -> mpf:
        """The bound of the absolute error of term ``name`` (from its digits when
        the bounds themselves were not kept)."""
        if self.errors is not None and name in self.errors:
            return self.errors[name]
        return _abs_err(getattr(self, name), self.digits[name])

    def text(self, name: str, N: Any = None, order: int = 0) -> str:
        """One term (``g0``, ``g1``, ``g2``, ``variance``) or, with ``N``, the
        value at order ``order``, as a decimal string with its claimed digits
        (``None`` when the term is absent or not one digit of it is earned)."""
        from numeric.precision import to_str

        if N is not None:
            digits = self.value_digits(N, order)
            return to_str(self.value(N, order), digits) if digits >= 1 else None
        v = getattr(self, name)
        if v is None or self.digits.get(name, 0) < 1:
            return None
        return to_str(v, self.digits[name])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: numbers as decimal strings (their claimed digits),
        ``None`` where a term is absent."""
        return {
            "observable": self.observable,
            "expression": self.expression,
            "model": self.model,
            "params": dict(self.params),
            "order": self.order,
            "g0": self.text("g0"),
            "g1": self.text("g1"),
            "g2": self.text("g2"),
            "variance": self.text("variance"),
            "digits": dict(self.digits),
            "notes": list(self.notes),
        }

    _MORE: ClassVar[str] = "notes in to_dict(); value(N, order) for g0 + g1/N + g2/N^2"

    def _title(self) -> str:
        return f"ObservableExpansion: {self.observable} ({self.model})"

    def _rows(self) -> list[tuple[str, str]]:
        rows = [("params", params_text(self.params))]
        for k, label in (
            ("g0", "g0 = g(s*)"),
            ("g1", "g1 (1/N term)"),
            ("g2", "g2 (1/N^2 term)"),
            ("variance", "lim N Var g"),
        ):
            if getattr(self, k) is not None:
                text = self.text(k)
                if text is None:  # not one digit earned: say how large it may be
                    bound = mpmath.nstr(abs(getattr(self, k)) + self.error(k), 2)
                    text = f"- (0 digits: |value| <= {bound})"
                else:
                    text = f"{text} ({self.digits[k]} digits)"
                rows.append((label, text))
        return rows


#: Significant digits an exact (float64) stationary value is claimed to at most:
#: the balance equations are solved to a relative residual of at most ``1e-10``.
EXACT_DIGITS = 10


@dataclass(frozen=True, repr=False)
class ExactExpectation(Presentable):
    """``E[g(S_N)]`` and ``Var g(S_N)`` under the exact stationary law (float64;
    the chain's residual ``||pi Q||_1``, when known, bounds their precision).

    ``error`` bounds the absolute error of ``mean``: the law's half unit in the
    ``EXACT_DIGITS``-th digit, relative to ``E|g|``, plus the rounding of
    evaluating ``g`` on the states (the disagreement of float64 with NumPy's
    ``longdouble``); ``digits`` are those it leaves (at most
    :data:`EXACT_DIGITS`; ``0`` when cancellation took them all).
    """

    #: The observable's name (declared, the expression's text, or a function's ``__name__``).
    observable: str
    #: The population size of the chain.
    N: int
    #: ``E[g(S_N)]`` under the exact stationary law (float64).
    mean: float
    #: ``Var g(S_N)`` under the exact stationary law (float64).
    variance: float
    #: The chain's residual ``||pi Q||_1``; ``None`` when the result does not record it.
    residual: float | None = None
    #: The bound of the absolute error of ``mean``, ``E|g|`` times half a unit in the
    #: :data:`EXACT_DIGITS`-th digit, plus the rounding of ``g`` on the states (class docstring).
    error: float = 0.0

    _MORE: ClassVar[str] = "float64 under the exact stationary law"

    @property
    def n_variance(self) -> float:
        """``N Var g(S_N)`` (tends to ``g_i W_ij g_j``)."""
        return self.N * self.variance

    @property
    def digits(self) -> int:
        """Significant digits of ``mean`` that ``error`` leaves (``0`` .. ``EXACT_DIGITS``)."""
        return exact_digits(self.mean, self.error)

    def text(self) -> str | None:
        """``mean`` with its :attr:`digits` (``None`` when not one digit is earned)."""
        d = self.digits
        return f"{self.mean:.{d}g}" if d >= 1 else None

    def __float__(self) -> float:
        return float(self.mean)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``mean`` with the ``digits`` it earns and ``variance``
        with at most :data:`EXACT_DIGITS` (the law's), as the ``repr`` of such floats
        (:func:`mfstein.ground.display.claimed`); the chain's ``residual`` and the
        ``error`` bound of ``mean`` with 3 digits, rounded up; ``mean_text``: the mean
        with its ``digits`` (``None`` for none)."""
        from mfstein.ground.display import claimed, error_figure

        return {
            "observable": self.observable,
            "N": self.N,
            "mean": repr(claimed(float(self.mean), self.digits)),
            "variance": repr(claimed(float(self.variance), EXACT_DIGITS)),
            "residual": error_figure(self.residual),
            "mean_text": self.text(),
            "digits": self.digits,
            "error": error_figure(self.error),
        }

    def _rows(self) -> list[tuple[str, str]]:
        from mfstein.ground.display import claimed

        text = self.text()
        bound = abs(self.mean) + self.error
        mean = f"{text} ({self.digits} digits)" if text else f"- (0 digits: |mean| <= {bound:.2g})"
        rows = [
            ("observable", f"{self.observable}, N = {self.N}"),
            ("mean", mean),
            ("variance", repr(claimed(float(self.variance), EXACT_DIGITS))),
            ("N variance", repr(claimed(float(self.n_variance), EXACT_DIGITS))),
        ]
        if self.residual is not None:
            rows.append(("residual", f"{self.residual:.3g} = ||pi Q||_1"))
        return rows


def exact_digits(mean: float, error: float) -> int:
    """The significant digits of an exact (float64) ``mean`` whose absolute error is
    at most ``error``: at most :data:`EXACT_DIGITS`, ``0`` when ``error`` is not
    below ``|mean|``."""
    if not math.isfinite(error):
        return 0
    if error <= 0:
        return EXACT_DIGITS
    if mean == 0:
        return 0
    return max(0, min(EXACT_DIGITS, math.floor(-math.log10(error / abs(mean)))))


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def _abs_err(value: Any, digits: int) -> mpf:
    return abs(mpf(value)) * mpf(10) ** (-digits) if value is not None else mpf(0)


def _digits(value: mpf, err: mpf, cap: int) -> int:
    if err == 0:
        return cap
    if value == 0 or not mpmath.isfinite(err):
        return 0
    return max(0, min(cap, int(mpmath.floor(-mpmath.log10(err / abs(value))))))


def _scale(values: Sequence[Any], digits: int) -> mpf:
    """The norm-wise absolute error of a vector whose digits are ``digits``."""
    return max([abs(mpf(v)) for v in values] + [mpf(0)]) * mpf(10) ** (-digits)


def resolve_model(model: Any, b: int) -> Any:
    """A finite :class:`derive.model.Model` of dimension ``b`` from ``model`` (a
    :class:`derive.spec.Truncated` family is built at ``b``)."""
    from derive.spec import Truncated

    if isinstance(model, Truncated):
        model = model.build(b)
    if model.n != b:
        raise ParameterError(
            f"the solution has {b} coordinates but model {model.name} has {model.n}."
        )
    return model


def _param_values(model: Any, params: Mapping[str, Any] | None, fallback: Mapping[str, str]):
    from numeric.params import parse_params

    given = dict(fallback if params is None else params)
    known = {str(p) for p in model.params}
    return parse_params(model, {k: v for k, v in given.items() if k in known})


def _quadratic_M(g: Any, b: int) -> mpmath.matrix:
    from numeric.quadratic_form import quadratic_form

    return quadratic_form(g.M)(b)


# --------------------------------------------------------------------------
# the expansion
# --------------------------------------------------------------------------
def expand(solution: Any, model: Any, g: Any, params: Mapping[str, Any] | None = None):
    """The expansion of ``E[g(S_N)]`` for a solved model.

    Parameters
    ----------
    solution:
        A :class:`numeric.meanfield.solution.MeanFieldSolution` of ``model``
        (:func:`numeric.solve`, ``order=1`` or ``2``).
    model:
        The model that was solved (a :class:`derive.model.Model` or a
        :class:`derive.spec.Truncated` family).
    g:
        An observable (:func:`derive.observables.observable`): a declared name,
        an expression, a string, ``"quadratic"`` or ``("quadratic", M)``.
    params:
        Parameter values for a ``g`` that involves parameters (default: the
        solution's own, as decimal strings).

    Returns
    -------
    ObservableExpansion
    """
    from derive.observables import observable

    model = resolve_model(model, solution.n)

    def read() -> tuple[dict[str, Any], dict[str, Any]]:
        given = dict(solution.params if params is None else params)
        return _param_values(model, params, solution.params), given

    return _expansion(solution, model, observable(model, g), read)


def expand_prepared(solution: Any, problem: Any, g: Any) -> ObservableExpansion:
    """:func:`expand` for the solution of a prepared problem
    (:class:`numeric.prepared.problem.PreparedProblem`, ``numeric.solve``'s): its
    parameter values are the problem's, read at the expansion's precision without
    checking the names again."""
    from derive.observables import observable

    model = resolve_model(problem.model, solution.n)

    def read() -> tuple[dict[str, Any], dict[str, Any]]:
        return problem.values_now(), dict(problem.params)

    return _expansion(solution, model, observable(model, g), read)


def _expansion(solution: Any, model: Any, obs: Any, read: Any) -> ObservableExpansion:
    """The expansion of the observable ``obs`` of ``model`` at ``solution``; ``read()``
    gives the parameter values (at the working precision, by name) and the values
    as given."""
    if obs.quadratic:
        return _expand_quadratic(solution, model, obs)
    notes: list[str] = []
    with mpmath.workdps(solution.dps + 10):
        values, given = read()
        exact = {  # decimal strings read exactly by the balls, not via mpf
            k: given[k] if isinstance(given.get(k), str | int) else v for k, v in values.items()
        }
        taylor = _Taylor.at(solution, model, obs, exact)
        g0, g1, variance, digits, errors = taylor.first_order()
        g2 = None
        if solution.A is None:
            notes.append("the 1/N^2 term needs a solution with order=2.")
        elif solution.C is None and taylor.at_s[3]:
            notes.append(
                "the 1/N^2 term of a g with third derivatives needs the third moment C, "
                "which this solution (the float64 route) does not carry."
            )
        else:
            g2, digits["g2"], errors["g2"] = taylor.second_order()
    return ObservableExpansion(
        observable=obs.name,
        expression=str(obs.expr),
        model=model.name,
        params={k: mpmath.nstr(v, solution.dps) for k, v in values.items()},
        g0=g0,
        g1=g1,
        g2=g2,
        variance=variance,
        digits=digits,
        dps=solution.dps,
        notes=notes,
        errors=errors,
    )


def _expand_quadratic(solution: Any, model: Any, obs: Any) -> ObservableExpansion:
    """``N E[Y^T M Y] = tr(M W) + tr(M B)/N + O(1/N^2)`` (``g1`` with ``order=2``)."""
    dps, b = solution.dps, model.n
    notes: list[str] = []
    with mpmath.workdps(dps + 10):
        W = solution.W
        errW = _scale([W[i, j] for i in range(b) for j in range(b)], solution.digits)
        M = _quadratic_M(obs, b)
        pairs = [(i, j) for i in range(b) for j in range(b) if M[i, j]]
        g0 = mpmath.fsum(M[i, j] * W[j, i] for i, j in pairs)
        e0 = mpmath.fsum(abs(M[i, j]) for i, j in pairs) * errW
        g1 = e1 = None
        if solution.A is not None:
            B = solution.B
            errB = _scale([B[i, j] for i in range(b) for j in range(b)], solution.digits2)
            g1 = mpmath.fsum(M[i, j] * B[j, i] for i, j in pairs)
            e1 = mpmath.fsum(abs(M[i, j]) for i, j in pairs) * errB
        else:
            notes.append("the 1/N term tr(M B) needs order=2.")
        digits = {"g0": _digits(g0, e0, dps)}
        errors = {"g0": e0}
        if g1 is not None:
            digits["g1"] = _digits(g1, e1, dps)
            errors["g1"] = e1
    return ObservableExpansion(
        observable=str(obs),
        expression=None,
        model=model.name,
        params=dict(solution.params),
        g0=g0,
        g1=g1,
        g2=None,
        variance=None,
        digits=digits,
        dps=dps,
        notes=notes,
        errors=errors,
    )


def _dot(terms: Any) -> tuple[mpf, mpf]:
    """``sum v x`` over ``terms`` ``(v, err_v, x, err_x)`` and a bound of its error
    (``|v| err_x + err_v (|x| + err_x)`` summed; ``inf`` when an ``err_v`` is)."""
    terms = list(terms)
    total = mpmath.fsum(v * x for v, _, x, _ in terms)
    if any(not mpmath.isfinite(ev) for _, ev, _, _ in terms):
        return total, mpf("inf")
    err = mpmath.fsum(abs(v) * ex + ev * (abs(x) + ex) for v, ev, x, ex in terms)
    return total, err


@dataclass
class _Taylor:
    """The derivatives of ``g`` at ``s*`` with their error bounds
    (:mod:`numeric.meanfield.observable_bounds`) and the moment coefficients they
    are contracted with (the formulas of the module docstring), with the
    norm-wise error of each moment; built by :meth:`at` inside the working
    precision."""

    solution: Any
    b: int
    at_s: list[dict[tuple[int, ...], mpf]]  # derivative tensors of g at s*, orders 0..4
    err: list[dict[tuple[int, ...], mpf]]  # their error bounds
    errW: mpf

    @classmethod
    def at(cls, solution: Any, model: Any, obs: Any, values: Mapping[str, Any]) -> _Taylor:
        from numeric.meanfield.observable_bounds import derivative_bounds

        s = list(solution.s_star)
        err_s = _scale(s, solution.digits)
        bounds = derivative_bounds(model, obs, s, err_s, values, solution.dps)
        W, b = solution.W, model.n
        return cls(
            solution=solution,
            b=b,
            at_s=bounds.values,
            err=bounds.errors,
            errW=_scale([W[i, j] for i in range(b) for j in range(b)], solution.digits),
        )

    def terms(self, order: int) -> list[tuple[tuple[int, ...], mpf, mpf]]:
        """``(index, value, error)`` of the ``order``-th derivatives over all index orders."""
        return [
            (p, v, self.err[order][idx])
            for idx, v in self.at_s[order].items()
            for p in sorted(set(permutations(idx)))
        ]

    def first_order(self) -> tuple[mpf, mpf, mpf, dict[str, int], dict[str, mpf]]:
        """``g0 = g(s*)``, ``g1 = g_i V_i + g_ij W_ij / 2``, ``g_i W_ij g_j``, their
        digits and their error bounds."""
        sol, dps = self.solution, self.solution.dps
        V, W, errW = sol.V, sol.W, self.errW
        errV = _scale(V, sol.digits)
        g0, e0 = self.at_s[0][()], self.err[0][()]
        lin = self.terms(1)
        g1a, e1a = _dot((v, e, V[i], errV) for (i,), v, e in lin)
        g1b, e1b = _dot((v, e, W[p], errW) for p, v, e in self.terms(2))
        g1, e1 = g1a + g1b / 2, e1a + e1b / 2
        variance = mpmath.fsum(
            vi * W[i, j] * vj for (i,), vi, _ in lin for (j,), vj, _ in lin
        )
        evar = mpmath.fsum(
            (abs(vi) + ei) * (abs(vj) + ej) * (abs(W[i, j]) + errW) - abs(vi * vj * W[i, j])
            for (i,), vi, ei in lin
            for (j,), vj, ej in lin
        )
        errors = {"g0": e0, "g1": e1, "variance": evar}
        digits = {
            "g0": _digits(g0, e0, dps),
            "g1": _digits(g1, e1, dps),
            "variance": _digits(variance, evar, dps),
        }
        return g0, g1, variance, digits, errors

    def second_order(self) -> tuple[mpf, int, mpf]:
        """``g2 = g_i A_i + g_ij B_ij/2 + g_ijk C_ijk/6 + g_ijkl W_ij W_kl/8``, its
        digits and its error bound."""
        sol, b = self.solution, self.b
        d2, dps = sol.digits2, sol.dps
        W, A, B, errW = sol.W, sol.A, sol.B, self.errW
        errA = _scale(A, d2)
        errB = _scale([B[i, j] for i in range(b) for j in range(b)], d2)
        third = self.terms(3)
        if third:  # (without third derivatives C is not needed, nor always present)
            Cfull = _full_third_moment(sol.C, sol.free_map)
            errC = _scale([v for _, v in _flat_reduced(sol.C)], d2) * _map_gain(sol.free_map)
        else:
            Cfull, errC = None, mpf(0)
        parts = [
            (_dot((v, e, A[i], errA) for (i,), v, e in self.terms(1)), 1),
            (_dot((v, e, B[p], errB) for p, v, e in self.terms(2)), 2),
            (_dot((v, e, Cfull(p), errC) for p, v, e in third), 6),
            (
                _dot(
                    (
                        v,
                        e,
                        W[p[0], p[1]] * W[p[2], p[3]],
                        (abs(W[p[0], p[1]]) + abs(W[p[2], p[3]]) + errW) * errW,
                    )
                    for p, v, e in self.terms(4)
                ),
                8,
            ),
        ]
        g2 = mpmath.fsum(total / k for (total, _), k in parts)
        e2 = mpmath.fsum(err / k for (_, err), k in parts)
        return g2, _digits(g2, e2, min(dps, d2 if d2 is not None else dps)), e2


def _flat_reduced(C: Any) -> list[tuple[tuple[int, int, int], mpf]]:
    return [
        ((a, b, c), v)
        for a, plane in enumerate(C)
        for b, row in enumerate(plane)
        for c, v in enumerate(row)
    ]


def _map_gain(T: list[list[Any]]) -> mpf:
    """``max_i sum_a |T_ia|`` cubed: how much the map to all coordinates can grow
    a norm-wise error of the reduced third moment."""
    return max(mpmath.fsum(abs(mpf(t)) for t in row) for row in T) ** 3


def _full_third_moment(C: Any, T: list[list[Any]]):
    """``(i, j, k) -> sum_abc T_ia T_jb T_kc C_abc`` (the model's coordinates)."""
    rows = [[(a, mpf(t)) for a, t in enumerate(row) if t] for row in T]
    cache: dict[tuple[int, int, int], mpf] = {}

    def entry(p: tuple[int, ...]) -> mpf:
        key = tuple(sorted(p))
        if key not in cache:
            i, j, k = key
            cache[key] = mpmath.fsum(
                ta * tb * tc * C[a][bb][c]
                for a, ta in rows[i]
                for bb, tb in rows[j]
                for c, tc in rows[k]
            )
        return cache[key]

    return entry


# --------------------------------------------------------------------------
# exact chains
# --------------------------------------------------------------------------
def expect_exact(result: Any, g: Any, model: Any = None) -> ExactExpectation:
    """``E[g(S_N)]`` and ``Var g(S_N)`` under an exact stationary law.

    ``result`` is a :class:`numeric.exact.ExactResult` (either entry) or a
    supermarket :class:`numeric.exact.result.ExactResult` (``pi`` over the states
    ``state_array``, ``S = n/N``); ``model`` the model it was solved for (default:
    the model the result records, or the supermarket model it describes).
    ``g`` as in :func:`expand`, or a function of the ``(states, b)`` array of
    ``S`` returning one value per state. The quadratic observable is
    ``N E[(S - s*)^T M (S - s*)]`` at the result's ``s*``.
    """
    import numpy as np

    from derive.observables import evaluate, observable

    N = int(result.N)
    states = np.asarray(result.state_array)
    X = states.astype(float) / N
    pi = np.asarray(result.pi, dtype=float)
    rounding = None
    if callable(g) and not hasattr(g, "free_symbols"):
        vals = np.asarray(g(X), dtype=float)
        name = getattr(g, "__name__", "g")
    else:
        model = _exact_model(result, model)
        obs = observable(model, g)
        name = obs.name
        if obs.quadratic:
            M = _quadratic_M(obs, model.n)
            Mf = np.array([[float(M[i, j]) for j in range(model.n)] for i in range(model.n)])
            Y = X - np.asarray(result.s_star, dtype=float)
            vals = N * np.einsum("ni,ij,nj->n", Y, Mf, Y)
        else:
            params = _exact_params(result)
            vals = evaluate(model, obs.expr, params, "numpy")(X)
            # the same states in longdouble: their disagreement is g's rounding error
            wide = evaluate(model, obs.expr, params, "longdouble")(states, N)
            rounding = np.abs(vals.astype(np.longdouble) - wide).astype(float)
    if vals.shape != pi.shape or not np.all(np.isfinite(vals)):
        raise ParameterError(
            f"observable {name!r} is not a finite real number on every state of the chain."
        )
    mean = float(pi @ vals)
    variance = float(pi @ (vals - mean) ** 2)
    residual = getattr(result, "residual", None)
    residual = None if residual is None else float(residual)
    error = float(np.abs(pi) @ np.abs(vals)) * 10.0**-EXACT_DIGITS / 2
    if rounding is not None:
        error += float(np.abs(pi) @ rounding)
    return ExactExpectation(name, N, mean, variance, residual, error)


def _exact_params(result: Any) -> dict[str, str]:
    params = dict(getattr(result, "params", None) or {})
    if not params and hasattr(result, "lam"):
        params = {"lam": result.lam}
        if not getattr(result, "replacement", True):
            params["N"] = str(result.N)
    return params


def _exact_model(result: Any, model: Any) -> Any:
    if model is not None:
        return resolve_model(model, result.n)
    stored = getattr(result, "source_model", None)
    if stored is not None:
        return stored
    raise ParameterError(
        "model must be given to evaluate an observable on this exact result "
        f"(model {getattr(result, 'model', '?')})."
    )
