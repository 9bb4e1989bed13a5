"""The certified objects of one grid point: what a claim's certified evaluator reads.

:class:`CertifiedContext` is the Arb counterpart of the float
:class:`numeric.lemmas.context.Context`.  It lives apart from the verdicts and
the runner of :mod:`numeric.lemmas.certified_claims` (which re-exports it) so that the
claims of :mod:`numeric.lemmas`, which annotate their evaluators with it, do not
import the module that runs them.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from mfstein.ground.errors import NumericalError
from numeric.certified.arb import max_ball, to_arb, working_precision

__all__ = ["CertifiedContext"]


class CertifiedContext:
    """The certified objects of one grid point, the input of a claim's ``certified`` evaluator.

    ``ctx`` is the float :class:`numeric.lemmas.context.Context` of the point
    (``N``, ``b``, ``d``, ``xi``, ``gamma``, ``alpha``, ``digits``); ``cs`` the
    :class:`numeric.certified.enclosures.CertifiedSolution` of its mean-field solution, whose
    ``s_star``, ``ftilde``, ``constant`` (and ``J``, ``P`` here) are Arb balls
    containing the exact values; ``lam`` the exact arrival rate as a ball.  An
    evaluator runs at the working precision ``prec`` (bits) and may use the
    helpers below; everything it returns must be an Arb ball.
    """

    def __init__(self, ctx: Any, lam_exact: Any, heavy: bool) -> None:
        self.ctx = ctx
        self.heavy = heavy
        self.cs = ctx.sol.certify(params={"lam": lam_exact})
        self.prec = self.cs.prec
        with working_precision(self.prec):
            self.lam = to_arb("lam", lam_exact)
        self._cache: dict[str, Any] = {}

    def num(self, x: Any) -> Any:
        """``x`` (an integer, ``Fraction``, ``mpf``, float or decimal string) as an exact ball."""
        return to_arb("x", x)

    def frac(self, x: Any) -> Any:
        """``x`` read as the exact rational ``Fraction(x)`` (``xi``, ``alpha``, ``gamma``)."""
        return to_arb("x", Fraction(x) if not isinstance(x, Fraction) else x)

    @property
    def N(self) -> Any:
        """The grid point's ``N`` as an exact ball."""
        return to_arb("N", int(self.ctx.N))

    @property
    def b(self) -> int:
        """The buffer size of the certified solution."""
        return self.cs.n

    def tol(self, scale: Any) -> Any:
        """``10^-digits * scale``: the tolerance of an equality to the point's trusted digits."""
        from flint import arb

        return arb(10) ** (-int(self.ctx.digits)) * scale

    @property
    def J(self) -> Any:
        """``J(s*)`` as an ``arb_mat``."""
        return self.cs.J

    @property
    def P(self) -> Any:
        """``P`` (``J^T P + P J + I = 0``) as an ``arb_mat``."""
        return self.cs.P

    def eig(self, name: str, A: Any) -> list[Any]:
        """Real parts of Arb's rigorous eigenvalue enclosures of ``A`` (cached by ``name``)."""
        if name not in self._cache:
            try:
                ev = A.eig()
            except (ValueError, ZeroDivisionError):
                raise NumericalError(f"eigenvalues of {name} could not be isolated") from None
            self._cache[name] = [e.real for e in ev]
        return self._cache[name]

    def norm2_J(self) -> Any:
        """``||J||_2 = sqrt(lambda_max(J^T J))``."""
        J = self.J
        return max_ball(self.eig("J^T J", J.transpose() * J)).sqrt()

    def norm2_P(self) -> Any:
        """``||P||_2 = lambda_max(P)`` (``P`` symmetric positive definite)."""
        return max_ball(self.eig("P", self.P))
