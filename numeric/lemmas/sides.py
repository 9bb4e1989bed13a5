"""The two arithmetics a claim's sides are computed in: the working precision and Arb balls.

A claim of the core paper is written once, as an evaluator ``f(x) -> (lhs, rhs)`` (or
``(lhs, rhs, tol)``) over :class:`Sides`: the numbers of one grid point and the operations
the proofs use, by the names of :data:`READERS`.  ``f`` runs twice: on the sides at the
working precision (mpmath numbers read from :class:`numeric.lemmas.context.Context`) for
``mfstein lemmas``, and on the sides in Arb balls (read from
:class:`numeric.certified.claim_context.CertifiedContext`) for ``mfstein lemmas --certify``.
:data:`READERS` says, name by name, how each arithmetic reads it; the two agree but in

* ``eigenvalues_J``: by symmetrising the tridiagonal ``J`` (a route independent of
  numeric's) at the working precision, where ``solution_eigenvalues_J`` are numeric's own;
  in balls both are Arb's enclosures of the eigenvalues of the certified ``J``;
* ``equality_tol(v)``: ``10^-digits max(1, |v|)`` at the working precision,
  ``10^-digits |v|`` in balls;
* ``sum``: ``mpmath.fsum`` at the working precision, left to right in balls.

``x.balls`` tells the two apart, for the few quantities whose route differs by design
(Theorem 1's Kronecker form: the literal system at the working precision, ``-tr(F~ P)``
in balls).  The working-precision readers keep the order of operations the claims had
when they were written in mpmath alone, so their values are the same to the bit.

:func:`stated` registers such an evaluator as a :class:`numeric.lemmas.registry.Claim`
whose statement is the evaluator's docstring: its ``function`` judges the working
sides, its ``certified`` returns the balls.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import mpmath

from mfstein.ground.errors import ParameterError
from numeric.certified.arb import max_ball, min_ball
from numeric.lemmas.hessian import max_column_norm
from numeric.lemmas.registry import Claim, Point, judge, register

if TYPE_CHECKING:
    from numeric.certified.claim_context import CertifiedContext
    from numeric.lemmas.context import Context

__all__ = ["READERS", "Sides", "stated", "to_mpf"]


def to_mpf(x: Any) -> mpmath.mpf:
    """``x`` as an mpmath number at the working precision (a ``Fraction`` as ``p / q``)."""
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(x)


def _eigenvalues_P(ctx: Context) -> list[mpmath.mpf]:
    """The eigenvalues of the symmetric part of numeric's ``P`` (``mpmath.eigsy``)."""
    P = ctx.P
    ev = mpmath.eigsy((P + P.T) / 2, eigvals_only=True)
    return [ev[i] for i in range(P.rows)]


def _hessian_ratio_in_balls(c: CertifiedContext) -> Any:
    """Lemma 8's maximum from Arb's Hessian kernels at the certified ``s*``."""
    from derive.kernels import kernels

    k = kernels(c.ctx.sol.get_model(), "arb")
    values = k.hess_values(c.cs.s_star, [c.lam])
    return max_column_norm(k.hess_index.tolist(), values, c.num(0))


def _working_tol(ctx: Context) -> Callable[[Any], mpmath.mpf]:
    return lambda scale: mpmath.mpf(10) ** (-ctx.digits) * scale


#: Every name of :class:`Sides`: how it is read at the working precision from a
#: ``Context`` (first) and in balls from a ``CertifiedContext`` (second).  The
#: operations (``num`` .. ``equality_tol``) are read as functions.
READERS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "N": (lambda ctx: mpmath.mpf(ctx.N), attrgetter("N")),
    "b": (attrgetter("b_used"), attrgetter("b")),
    "d": (attrgetter("d"), attrgetter("ctx.d")),
    "lam": (lambda ctx: to_mpf(ctx.lam), attrgetter("lam")),
    "gamma": (lambda ctx: to_mpf(ctx.gamma), lambda c: c.frac(c.ctx.gamma)),
    "alpha": (lambda ctx: to_mpf(ctx.alpha), lambda c: c.frac(c.ctx.alpha)),
    "xi": (lambda ctx: to_mpf(ctx.xi), lambda c: c.frac(c.ctx.xi)),
    # numeric's solution: J(s*), P (P J + J^T P = -I), f~(s*), s*, c = 2 tr(P F~)
    "J": (attrgetter("J"), attrgetter("J")),
    "P": (attrgetter("P"), attrgetter("P")),
    "ftilde": (lambda ctx: [to_mpf(v) for v in ctx.sol.ftilde], attrgetter("cs.ftilde")),
    "s_star": (lambda ctx: [to_mpf(v) for v in ctx.sol.s_star], attrgetter("cs.s_star")),
    "constant": (lambda ctx: to_mpf(ctx.sol.constant), attrgetter("cs.constant")),
    # spectral norms ||J|| = sqrt(lambda_max(J^T J)), ||P|| = lambda_max(P), eigenvalues
    "norm2_J": (attrgetter("norm2_J"), lambda c: c.norm2_J()),
    "norm2_P": (attrgetter("norm2_P"), lambda c: c.norm2_P()),
    "eigenvalues_J": (attrgetter("eigenvalues_J"), lambda c: c.eig("J", c.J)),
    "solution_eigenvalues_J": (
        lambda ctx: [to_mpf(m) for m in ctx.sol.eigenvalues],
        lambda c: c.eig("J", c.J),
    ),
    "eigenvalues_P": (_eigenvalues_P, lambda c: c.eig("P", c.P)),
    # Lemma 8: max over x != 0 of ||<x, Hess f(s*) x>|| / ||x||^2 (numeric.lemmas.hessian)
    "hessian_ratio": (lambda ctx: ctx.hessian_maximum[0], _hessian_ratio_in_balls),
    # operations
    "num": (lambda ctx: to_mpf, attrgetter("num")),
    "sqrt": (lambda ctx: mpmath.sqrt, lambda c: lambda v: v.sqrt()),
    "sum": (lambda ctx: mpmath.fsum, lambda c: lambda xs: sum(xs, c.num(0))),
    "max": (lambda ctx: max, lambda c: lambda xs: max_ball(list(xs))),
    "min": (lambda ctx: min, lambda c: lambda xs: min_ball(list(xs))),
    "tol": (_working_tol, attrgetter("tol")),
    "equality_tol": (
        lambda ctx: lambda v: _working_tol(ctx)(max(mpmath.mpf(1), abs(v))),
        lambda c: lambda v: c.tol(abs(v)),
    ),
}


class Sides:
    """One grid point's names (:data:`READERS`) in one arithmetic, each read on first use.

    ``Sides(ctx)`` reads at the working precision from a
    :class:`numeric.lemmas.context.Context`; ``Sides(c, balls=True)`` in Arb balls from
    a :class:`numeric.certified.claim_context.CertifiedContext`.  Built inside the
    claim's precision block (one instance per evaluation), so a name once read keeps
    its value.  ``ctx`` is the point's float ``Context`` in both.
    """

    def __init__(self, source: Any, balls: bool = False) -> None:
        self.source = source
        self.balls = balls
        self.ctx = source.ctx if balls else source

    def __getattr__(self, name: str) -> Any:
        readers = READERS.get(name)
        if readers is None or "source" not in self.__dict__:  # (or not built by __init__)
            raise AttributeError(f"Sides has no {name!r}; the names are READERS'")
        value = readers[self.balls](self.source)
        setattr(self, name, value)
        return value


#: ``f(x) -> (lhs, rhs)`` or ``(lhs, rhs, tol)`` over :class:`Sides`.
Evaluator = Callable[[Any], tuple]
#: ``note(x, point) -> str``: a remark on the working-precision point.
Note = Callable[[Sides, Point], str]


def stated(
    id: str,
    equation: str,
    relation: str = "<=",
    *,
    requires: tuple[str, ...] = (),
    asymptotic: bool = False,
    corrected_statement: str | None = None,
    exact: bool = False,
    note: Note | None = None,
) -> Callable[[Callable], Callable]:
    """Decorator registering a claim whose statement is the function's docstring
    (white space folded to single spaces); the other fields are those of
    :class:`numeric.lemmas.registry.Claim`.

    The function is an evaluator ``f(x) -> (lhs, rhs)`` over :class:`Sides`, or
    ``(lhs, rhs, tol)`` with ``tol`` the tolerance of an equality (always given for
    ``==``) or the rounding allowance of a non-strict inequality at the working
    precision (balls need none).  It becomes the claim's ``function`` (run on
    the working sides, judged by :func:`numeric.lemmas.registry.judge`; ``note``
    adds a remark) and its ``certified`` evaluator (run on the sides in balls).  With
    ``exact=True`` the function is the claim's own exact function of the
    :class:`numeric.lemmas.context.Context` (``int``/``Fraction`` sides).  Returns the
    function unchanged.
    """

    def deco(f: Callable) -> Callable:
        statement = " ".join((f.__doc__ or "").split())
        if not statement:
            raise ParameterError(f"claim {id} needs a docstring: it is the claim's statement.")
        register(
            Claim(
                id=id,
                statement=statement,
                equation=equation,
                function=f if exact else _working(f, relation, note),
                relation=relation,
                requires=tuple(requires),
                corrected_statement=corrected_statement,
                asymptotic=asymptotic,
                certified=None if exact else _in_balls(f, relation),
                exact=exact,
            )
        )
        return f

    return deco


def _working(f: Evaluator, relation: str, note: Note | None) -> Callable[[Context], Point]:
    """The claim's function: ``f`` on the working sides, judged at the point's digits."""

    def function(ctx: Context) -> Point:
        x = Sides(ctx)
        lhs, rhs, *tol = f(x)
        p = judge(lhs, rhs, relation, ctx.digits, tol=tol[0] if tol else None)
        if note is not None:
            p.note = note(x, p)
        return p

    return function


def _in_balls(f: Evaluator, relation: str) -> Callable[[CertifiedContext], tuple]:
    """The claim's certified evaluator: ``f`` on the sides in balls; the tolerance is
    kept only for ``==`` (an inequality of balls needs no rounding allowance)."""

    def certified(c: CertifiedContext) -> tuple:
        out = f(Sides(c, balls=True))
        return out if relation == "==" else out[:2]

    return certified
