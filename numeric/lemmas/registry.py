"""The claim registry: what a claim is, how it is registered and how one point is judged.

A :class:`Claim` is a statement ``lhs REL rhs`` (``REL`` one of ``<=``, ``<``,
``>=``, ``>``, ``==``) whose two sides are computed, at the working precision, by
a function of a :class:`numeric.lemmas.context.Context` (one parameter point:
gamma, alpha, xi, N, b, d and the lazily solved mean-field objects).  The
function returns ``(lhs, rhs)`` -- or a ready :class:`Point` when it needs to
judge the point itself (e.g. an equality to a tolerance it chooses).

Margins are oriented so that a claim holds when its margin is non-negative:
``rhs - lhs`` for ``<=`` / ``<``, ``lhs - rhs`` for ``>=`` / ``>`` and
``tol - |lhs - rhs|`` for ``==``.  A non-strict inequality is granted a rounding
allowance of ``10^-(digits - 3) * max(1, |lhs|, |rhs|)`` (a tie computed in
floating point may land a few ulps on the wrong side); a strict one is not.

A claim carries its proof-grade check with it: ``certified`` is a function of a
:class:`numeric.certified.claim_context.CertifiedContext` (the same point with Arb
enclosures of ``s*``, ``J``, ``P``, ``f~``, ``c``) returning the two sides as
Arb balls -- ``(lhs, rhs)``, or ``(lhs, rhs, tol)`` for ``==`` -- from which
``mfstein lemmas --certify`` decides the claim (proved / refuted / not decided);
:func:`numeric.lemmas.sides.stated` makes both functions from one evaluator.
A claim whose function already computes in exact arithmetic (``int`` or
``Fraction`` sides, digits 0) declares ``exact=True`` instead and is decided by
that function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import mpmath

from mfstein.ground.errors import ParameterError

if TYPE_CHECKING:
    from numeric.certified.claim_context import CertifiedContext
    from numeric.lemmas.context import Context

#: Relations a claim may assert between its two sides.
RELATIONS: tuple[str, ...] = ("<=", "<", ">=", ">", "==")

#: Parameters a claim may need beyond lam, N, b, d, xi (absent when the user
#: gives --lam instead of --gamma/--alpha).
REQUIREMENTS: tuple[str, ...] = ("gamma", "alpha")


@dataclass
class Point:
    """The verdict of one claim at one parameter point."""

    #: The left side, as an mpmath number (or an exact ``Fraction``/``int``).
    lhs: Any
    #: The right side, as an mpmath number (or an exact ``Fraction``/``int``).
    rhs: Any
    #: Non-negative exactly when the claim holds (see the module docstring).
    margin: Any
    #: The verdict.
    holds: bool
    #: Significant digits of ``lhs``/``rhs`` that are trusted; ``0`` marks exact
    #: (integer/rational) sides.
    digits: int
    #: Optional remark (e.g. which route computed a side).
    note: str = ""


ClaimFunction = Callable[["Context"], "tuple[Any, Any] | Point"]
#: ``certified(cctx) -> (lhs, rhs)`` Arb balls (``(lhs, rhs, tol)`` for ``==``).
CertifiedFunction = Callable[["CertifiedContext"], tuple]


@dataclass
class Claim:
    """One checkable numeric claim.

    Parameters
    ----------
    id:
        Short identifier, dotted for sub-claims (``"lemma9.f1"``).
    statement:
        The claim in words, written as ``lhs REL rhs``.
    equation:
        Where it is in the paper (``"Lemma 5"``, ``"eq. (17)"``), or ``""``.
    function:
        ``function(ctx) -> (lhs, rhs)`` or ``-> Point``.
    relation:
        One of :data:`RELATIONS`; how ``lhs`` and ``rhs`` must compare.
    requires:
        Parameters from :data:`REQUIREMENTS` the function reads; the claim is
        skipped when the user supplied ``lam`` directly.
    corrected_statement:
        For a claim the paper gets wrong: the correct statement, shown beside it.
    asymptotic:
        ``True`` for claims the paper makes only "for sufficiently large N".
    certified:
        The claim's certified evaluator, ``certified(cctx) -> (lhs, rhs)`` as
        Arb balls (``(lhs, rhs, tol)`` for ``==``), computed from the certified
        objects of :class:`numeric.certified.claim_context.CertifiedContext`; ``None``
        when the claim has none (``mfstein lemmas --certify`` then reports it
        "not decided").
    exact:
        ``True`` when ``function`` computes both sides in exact arithmetic
        (``int``/``Fraction``): the function itself is then the certified check.
    """

    #: Short identifier, dotted for sub-claims (``"lemma9.f1"``).
    id: str
    #: The claim in words, written as ``lhs REL rhs``.
    statement: str
    #: Where it is in the paper (``"Lemma 5"``, ``"eq. (17)"``), or ``""``.
    equation: str
    #: ``function(ctx) -> (lhs, rhs)`` or ``-> Point``.
    function: ClaimFunction
    #: One of :data:`RELATIONS`, how ``lhs`` and ``rhs`` must compare.
    relation: str = "<="
    #: Parameters from :data:`REQUIREMENTS` the function reads (the claim is skipped when the user
    #: gave ``lam`` directly).
    requires: tuple[str, ...] = ()
    #: For a claim the paper gets wrong, the correct statement; ``None`` otherwise.
    corrected_statement: str | None = None
    #: Whether the paper makes the claim only "for sufficiently large N".
    asymptotic: bool = False
    #: Free labels of the claim (``mfstein lemmas --list --json`` lists them); empty by default.
    tags: tuple[str, ...] = field(default_factory=tuple)
    #: The certified evaluator, ``certified(cctx) -> (lhs, rhs)`` as Arb balls (``(lhs, rhs, tol)``
    #: for ``==``); ``None`` when the claim has none.
    certified: CertifiedFunction | None = None
    #: Whether ``function`` computes both sides in exact arithmetic (``int``/``Fraction``), so that
    #: it is the certified check itself.
    exact: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id or any(c.isspace() for c in self.id):
            raise ParameterError(
                f"claim id must be a non-empty string without spaces, got {self.id!r}."
            )
        if self.relation not in RELATIONS:
            raise ParameterError(
                f"relation of claim {self.id} must be one of {', '.join(RELATIONS)}, "
                f"got {self.relation!r}."
            )
        bad = [r for r in self.requires if r not in REQUIREMENTS]
        if bad:
            raise ParameterError(
                f"requires of claim {self.id} may only name {', '.join(REQUIREMENTS)}, got {bad}."
            )
        if self.certified is not None and not callable(self.certified):
            raise ParameterError(
                f"certified of claim {self.id} must be a function of a CertifiedContext, "
                f"got {type(self.certified).__name__}."
            )
        if self.certified is not None and self.exact:
            raise ParameterError(
                f"claim {self.id} is exact (decided by its own function); it takes no certified "
                "evaluator."
            )

    def to_dict(self) -> dict[str, Any]:
        """What the claim is, JSON-ready (``mfstein lemmas --list --json``): its id,
        statement, place in the paper, relation, requirements, correction, whether it
        is asymptotic, exact, or has a certified evaluator (``--certify``), and tags."""
        return {
            "id": self.id,
            "statement": self.statement,
            "equation": self.equation,
            "relation": self.relation,
            "requires": list(self.requires),
            "corrected_statement": self.corrected_statement,
            "asymptotic": self.asymptotic,
            "exact": self.exact,
            "certified": self.certified is not None,
            "tags": list(self.tags),
        }

    def evaluate(self, ctx: Context) -> Point:
        """Compute and judge this claim at the parameter point ``ctx``."""
        with mpmath.workdps(ctx.dps + ctx.guard):
            out = self.function(ctx)
            if isinstance(out, Point):
                return out
            lhs, rhs = out
            return judge(lhs, rhs, self.relation, ctx.digits)


def judge(lhs: Any, rhs: Any, relation: str, digits: int, tol: Any = None) -> Point:
    """Return the :class:`Point` for ``lhs relation rhs`` trusted to ``digits`` digits.

    ``tol`` is the absolute tolerance of an equality (default
    ``10^-(digits - 3) * max(1, |lhs|, |rhs|)``), also the rounding allowance of a
    non-strict inequality.  Exact ``int``/``Fraction`` sides are compared exactly.
    """
    exact = all(isinstance(v, int) or type(v).__name__ == "Fraction" for v in (lhs, rhs))
    if relation in ("<=", "<"):
        margin = rhs - lhs
    elif relation in (">=", ">"):
        margin = lhs - rhs
    elif relation == "==":
        margin = None
    else:
        raise ParameterError(f"relation must be one of {', '.join(RELATIONS)}, got {relation!r}.")
    if exact:
        allowance = 0
    elif tol is not None:
        allowance = mpmath.mpf(tol)
    else:
        scale = max(mpmath.mpf(1), abs(mpmath.mpf(lhs)), abs(mpmath.mpf(rhs)))
        allowance = mpmath.mpf(10) ** (-(digits - 3)) * scale
    if relation == "==":
        margin = allowance - abs(lhs - rhs)
        holds = margin >= 0
    elif relation in ("<", ">"):
        holds = margin > 0
    else:
        holds = margin >= -allowance
    return Point(lhs=lhs, rhs=rhs, margin=margin, holds=bool(holds), digits=digits)


#: The registered claims, in registration order.
REGISTRY: dict[str, Claim] = {}


def register(c: Claim, *, replace: bool = False) -> Claim:
    """Add a :class:`Claim` to the registry and return it.

    Raises :class:`ParameterError` when the id is taken and ``replace`` is false.
    """
    if not isinstance(c, Claim):
        raise ParameterError(f"register expects a Claim, got {type(c).__name__}.")
    if c.id in REGISTRY and not replace:
        raise ParameterError(f"claim id {c.id} is already registered; pass replace=True.")
    REGISTRY[c.id] = c
    return c


def unregister(claim_id: str) -> None:
    """Remove a claim from the registry (no error if absent)."""
    REGISTRY.pop(claim_id, None)


def claim(
    *,
    id: str,
    statement: str,
    equation: str = "",
    relation: str = "<=",
    requires: tuple[str, ...] = (),
    corrected_statement: str | None = None,
    asymptotic: bool = False,
    certified: CertifiedFunction | None = None,
    exact: bool = False,
    replace: bool = False,
) -> Callable[[ClaimFunction], ClaimFunction]:
    """Decorator registering ``function(ctx) -> (lhs, rhs)`` as a :class:`Claim`.

    ``certified`` is the same claim's evaluator in ball arithmetic and ``exact``
    marks a function that is exact already (see :class:`Claim`).  Returns the
    function unchanged, so it can still be called directly.
    """

    def deco(function: ClaimFunction) -> ClaimFunction:
        register(
            Claim(
                id=id,
                statement=statement,
                equation=equation,
                function=function,
                relation=relation,
                requires=tuple(requires),
                corrected_statement=corrected_statement,
                asymptotic=asymptotic,
                certified=certified,
                exact=exact,
            ),
            replace=replace,
        )
        return function

    return deco


def get_claims(ids: list[str] | None = None) -> list[Claim]:
    """The claims with the given ids (all registered ones if ``None``), in order.

    An id that names a family (``"lemma9"``) selects the claim itself and all its
    sub-claims (``"lemma9.f1"``, ...).  Unknown ids raise :class:`ParameterError`.
    """
    if ids is None:
        return list(REGISTRY.values())
    chosen: list[Claim] = []
    unknown = []
    for i in ids:
        hits = [c for c in REGISTRY.values() if c.id == i or c.id.startswith(i + ".")]
        if not hits:
            unknown.append(i)
        for c in hits:
            if c not in chosen:
                chosen.append(c)
    if unknown:
        raise ParameterError(
            f"claim ids must be registered ids or families ({', '.join(REGISTRY)}); "
            f"unknown: {', '.join(unknown)}."
        )
    return chosen
