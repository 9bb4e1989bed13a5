"""Registry of numeric claims, checked at high precision over a grid of N.

Importing this package registers the claims of seed 000 (Lemmas 4, 5, 6, 8, 9,
10, 12, 13, Theorem 1, eq. (6), Remark 2, the equilibrium identity and the
spectral-gap bound used in Lemma 6; see :mod:`numeric.lemmas.seed000`).  Each
claim computes a left side, a right side and a margin (non-negative exactly
when the claim holds) from numeric's mean-field objects at one grid point;
:func:`check` runs claims over a grid of N and reports, per claim, the smallest
grid N from which it holds at every larger grid point.  The command line is
``mfstein lemmas`` (:mod:`numeric.lemmas.cli`).

Registering your own claim
--------------------------
A claim is a function of a :class:`Context` returning ``(lhs, rhs)``; the
decorator records it with its statement, the paper's equation and the relation
``lhs REL rhs`` that must hold.  ``ctx`` carries ``lam``, ``N``, ``b``, ``d``,
``xi``, ``dps``, ``gamma``/``alpha`` (``None`` if ``lam`` was given) and, computed
on first use, ``ctx.sol`` (numeric's ``MeanFieldSolution``: ``s_star``, ``J``,
``P``, ``ftilde``, ``constant``, ``eigenvalues``, ...), ``ctx.norm2_J``,
``ctx.norm2_P`` and ``ctx.hessian``.

>>> import mpmath
>>> from numeric.lemmas import check, claim, unregister
>>> @claim(
...     id="mine.trace",
...     statement="tr(P) >= b / (2 ||J||)  (sum of Lemma 5 over i)",
...     equation="my note, eq. (1)",
...     relation=">=",
... )
... def _trace(ctx):
...     return mpmath.fsum(ctx.P[i, i] for i in range(ctx.P.rows)), ctx.b_used / (2 * ctx.norm2_J)
>>> report = check(["mine"], gamma="0.1", alpha="0.05", N=[10, 100], b=2)
>>> [p.holds for p in report.results[0].points], report.results[0].holds_from_N
([True, True], 10)
>>> unregister("mine.trace")

The same claim can be built without the decorator as
``register(Claim(id=..., statement=..., equation=..., function=f, relation=">="))``.
A function may also return a ready :class:`Point` (see :func:`judge`) when it
wants its own tolerance.
"""

from numeric.lemmas import seed000 as _seed000  # noqa: F401  (registers seed 000's claims)
from numeric.lemmas.context import Context
from numeric.lemmas.hessian import max_quadratic_ratio
from numeric.lemmas.parameters import Lemma12Parameters, lemma12_parameters, xi_supremum
from numeric.lemmas.quadrature import lyapunov_integral
from numeric.lemmas.registry import (
    REGISTRY,
    Claim,
    Point,
    claim,
    get_claims,
    judge,
    register,
    unregister,
)
from numeric.lemmas.runner import ClaimResult, Report, check

__all__ = [
    "REGISTRY",
    "Claim",
    "ClaimResult",
    "Context",
    "Lemma12Parameters",
    "Point",
    "Report",
    "check",
    "claim",
    "get_claims",
    "judge",
    "lemma12_parameters",
    "lyapunov_integral",
    "max_quadratic_ratio",
    "register",
    "unregister",
    "xi_supremum",
]
