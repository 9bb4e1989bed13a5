"""Registry of numeric claims, checked at high precision over a grid of N.

Importing this package registers the claims of the core paper (Lemmas 4, 5, 6, 8, 9,
10, 12, 13, Theorem 1, eq. (6), Remark 2, the equilibrium identity and the
spectral-gap bound used in Lemma 6; see
:mod:`numeric.lemmas.power_of_two_heavy_traffic`).  Each
claim computes a left side, a right side and a margin (non-negative exactly
when the claim holds) from numeric's mean-field objects at one grid point;
:func:`check` runs claims over a grid of N and reports, per claim, the smallest
grid N from which it holds at every larger grid point.  The command line is
``mfstein lemmas`` (:mod:`mfstein.cli.lemmas`).

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

A claim may carry its proof-grade check: ``certified=f`` where ``f(cctx)``
returns the same two sides as Arb balls (``(lhs, rhs, tol)`` for ``==``) from a
:class:`numeric.certified.claim_context.CertifiedContext` (``cctx.P``, ``cctx.J``,
``cctx.cs.ftilde``, ``cctx.cs.constant``, ``cctx.lam``, ``cctx.N``,
``cctx.norm2_J()``, ...); ``mfstein lemmas --certify`` (or
:func:`numeric.lemmas.certified_claims.check_certified`) then proves or refutes it::

    @claim(id="mine.trace", statement=..., relation=">=",
           certified=lambda c: (sum((c.P[i, i] for i in range(c.b)), c.num(0)),
                                c.b / (2 * c.norm2_J())))
    def _trace(ctx): ...

A claim written once over :class:`numeric.lemmas.sides.Sides` runs in both
arithmetics: :func:`numeric.lemmas.sides.stated` registers it with its docstring as
the statement, and the same evaluator gives the working-precision sides and the Arb
balls (the names ``x`` offers, and how each arithmetic reads them, are
:data:`numeric.lemmas.sides.READERS`):

>>> from numeric.lemmas import REGISTRY
>>> from numeric.lemmas.sides import stated
>>> from numeric.lemmas.certified_claims import check_certified
>>> @stated("mine.trace", "my note, eq. (1)", ">=")
... def _trace(x):
...     "tr(P) >= b / (2 ||J||), the sum of Lemma 5 over i"
...     return x.sum(x.P[i, i] for i in range(x.b)), x.b / (2 * x.norm2_J)
>>> rep = check_certified(["mine"], gamma="0.1", alpha="0.05", N=[10, 100], b=2)
>>> [p.verdict for p in rep.rows[0][2]], REGISTRY["mine.trace"].statement
(['proved', 'proved'], 'tr(P) >= b / (2 ||J||), the sum of Lemma 5 over i')
>>> unregister("mine.trace")

The same claim can be built without the decorator as
``register(Claim(id=..., statement=..., equation=..., function=f, relation=">="))``.
A function may also return a ready :class:`Point` (see :func:`judge`) when it
wants its own tolerance.

References
----------
F. Hairi, X. Liu and L. Ying, "Beyond Scaling: Calculable Error Bound of the
Power-of-Two-Choices Mean-Field Model in Heavy-Traffic", arXiv:2012.06613
(2020): the core paper.
"""

from __future__ import annotations

from mfstein.ground.lazy import lazy_package


def _register() -> None:
    """Import the core paper's claims, which register themselves in the registry."""
    import numeric.lemmas.power_of_two_heavy_traffic  # noqa: F401


__all__, __getattr__, __dir__ = lazy_package(
    __name__,
    {
        "numeric.lemmas.claim_list": ("ClaimList", "registered_claims"),
        "numeric.lemmas.context": ("Context",),
        "numeric.lemmas.hessian": ("max_quadratic_ratio",),
        "numeric.lemmas.parameters": ("Lemma12Parameters", "lemma12_parameters", "xi_supremum"),
        "numeric.lemmas.quadrature": ("lyapunov_integral",),
        "numeric.lemmas.registry": (
            "Claim",
            "Point",
            "REGISTRY",
            "claim",
            "get_claims",
            "judge",
            "register",
            "unregister",
        ),
        "numeric.lemmas.runner": ("ClaimResult", "Report", "check"),
    },
    before=_register,
)
