"""Proof-grade checks of the registered claims: ``mfstein lemmas --certify``.

Each registered claim of :mod:`numeric.lemmas` (the numeric claims of "Beyond
Scaling: Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic") is re-evaluated here with certified inputs: the arrival rate
``lam = 1 - gamma/N^alpha`` enclosed exactly in Arb, and ``s*``, ``J(s*)``,
``P``, ``f~(s*)`` and ``c`` from :func:`numeric.certify`.  Every side is
an Arb ball, so the margin (oriented as in :mod:`numeric.lemmas.registry`:
non-negative exactly when the claim holds) is a ball too, and the verdict is

``proved``   the ball excludes the failing side (``lower >= 0``; ``> 0`` for a
             strict relation);
``refuted``  the ball lies entirely on the failing side (``upper < 0``);
``not decided at this precision``  the ball straddles the boundary (a claim
             that holds with equality, such as Lemma 8's attained constant, can
             never be proved by balls), or the claim has no certified evaluator.

A claim is never reported "holds" here.  Each claim declares its certified
evaluator with itself (``certified=`` of :func:`numeric.lemmas.claim`; the core
paper's are in :mod:`numeric.lemmas.power_of_two_heavy_traffic`), so a user's
claim is certified the same way; this module provides the point they read,
:class:`CertifiedContext`, and the verdicts.  Spectral quantities use Arb's
rigorous eigenvalue enclosures (``acb_mat.eig``, simple eigenvalues): the
spectral norms ``||J||_2 = sqrt(lambda_max(J^T J))`` and ``||P||_2 =
lambda_max(P)``, and the eigenvalues of ``J``.  Exact claims (``exact=True``,
Lemma 12's rational parameters) are decided in exact arithmetic by their own
functions.  Claims without a certified evaluator (``lemma4``, which compares
two floating-point routes) are reported as not decided, with that reason.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from mfstein.ground.display import Presentable, params_text, renamed_to_text
from mfstein.ground.errors import NumericalError
from numeric.certified.arb import decimal_outward, working_precision
from numeric.certified.claim_context import CertifiedContext

__all__ = ["CertifiedContext", "CertifiedPoint", "CertifiedReport", "check_certified"]

VERDICTS = ("proved", "refuted", "not decided at this precision")


@dataclass
class CertifiedPoint:
    """One claim at one grid point: margin ball and verdict."""

    #: The margin, oriented as in :mod:`numeric.lemmas.registry` (non-negative exactly when the
    #: claim holds): an Arb ball, an exact ``Fraction``/``int``, or ``None`` when not computed.
    margin: Any  # arb ball, Fraction (exact) or None
    #: ``"proved"``, ``"refuted"`` or ``"not decided at this precision"`` (:data:`VERDICTS`).
    verdict: str
    #: Why no margin was computed (no certified evaluator, objects not certified, ...), or
    #: ``"exact arithmetic"`` for a claim decided by its exact function; ``""`` otherwise.
    note: str = ""

    def margin_strings(self, digits: int = 12) -> tuple[str, str] | None:
        """Outward-rounded decimal ends ``(lo, hi)`` of the margin (``None`` if absent)."""
        if self.margin is None:
            return None
        if isinstance(self.margin, Fraction | int):
            text = str(self.margin)
            return text, text
        return decimal_outward(self.margin, digits)


def _verdict(margin: Any, relation: str) -> str:
    if isinstance(margin, Fraction | int):
        ok = margin > 0 if relation in ("<", ">") else margin >= 0
        return "proved" if ok else "refuted"
    if margin.is_nan() if hasattr(margin, "is_nan") else False:
        return VERDICTS[2]
    strict = relation in ("<", ">")
    lo = margin.lower()
    if (lo > 0) if strict else (lo >= 0):
        return "proved"
    if margin.upper() < 0:
        return "refuted"
    return VERDICTS[2]


def evaluate(claim: Any, c: CertifiedContext | None, ctx: Any) -> CertifiedPoint:
    """The certified verdict of one claim at one grid point.

    An exact claim is decided by its own function; any other by its ``certified``
    evaluator in ball arithmetic at ``c.prec`` bits.
    """
    if claim.exact:
        p = claim.evaluate(ctx)
        if p.digits == 0 and isinstance(p.margin, Fraction | int):
            return CertifiedPoint(p.margin, _verdict(p.margin, claim.relation), "exact arithmetic")
        return CertifiedPoint(None, VERDICTS[2], "no finite exact margin")
    if claim.certified is None:
        return CertifiedPoint(None, VERDICTS[2], "no certified evaluator for this claim")
    if c is None:
        return CertifiedPoint(None, VERDICTS[2], "the mean-field objects could not be certified")
    with working_precision(c.prec):
        try:
            out = claim.certified(c)
        except NumericalError as exc:
            return CertifiedPoint(None, VERDICTS[2], str(exc))
        if claim.relation == "==":
            lhs, rhs, tol = out
            margin = tol - abs(lhs - rhs)
        else:
            lhs, rhs = out
            margin = rhs - lhs if claim.relation in ("<=", "<") else lhs - rhs
        return CertifiedPoint(margin, _verdict(margin, claim.relation))


@dataclass(frozen=True, repr=False)
class CertifiedReport(Presentable):
    """Certified verdicts of claims over a grid of N: a row per claim."""

    #: The grid's parameters as :func:`numeric.lemmas.runner.grid_params` checked them (``gamma``,
    #: ``alpha``, ``lam`` as strings, ``None`` when not given; ``xi`` as a string; ``b``, ``d``,
    #: ``dps``) and an empty ``b_used``.
    params: dict[str, Any]
    #: A row per claim, ``(claim, Ns, points, skipped)``; the claim, the grid's ``N`` (empty when
    #: skipped), the :class:`CertifiedPoint` at each ``N`` and why the claim was skipped (``""``
    #: when it ran).
    rows: list[tuple[Any, list[int], list[CertifiedPoint], str]] = field(default_factory=list)

    _MORE: ClassVar[str] = "every grid point's margin enclosure in to_dict()"

    def summary(self, claim: Any, Ns: list[int], points: list[CertifiedPoint]) -> str:
        """One line: at which N the claim is proved, refuted or undecided."""
        proved = [n for n, p in zip(Ns, points, strict=True) if p.verdict == "proved"]
        refuted = [n for n, p in zip(Ns, points, strict=True) if p.verdict == "refuted"]
        parts = []
        if proved:
            parts.append("proved at N = " + ", ".join(map(str, proved)))
        if refuted:
            parts.append("refuted at N = " + ", ".join(map(str, refuted)))
        undecided = len(Ns) - len(proved) - len(refuted)
        if undecided:
            parts.append(f"not decided at this precision at {undecided} grid N")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data: margins as decimal enclosures ``lo``/``hi``
        (the interval the margin is certified to lie in states its precision)."""
        claims = []
        for claim, Ns, points, skipped in self.rows:
            entry: dict[str, Any] = {"id": claim.id, "relation": claim.relation}
            if skipped:
                entry["skipped"] = skipped
                claims.append(entry)
                continue
            pts = []
            for n, p in zip(Ns, points, strict=True):
                m = p.margin_strings(self.params.get("dps", 30))
                item: dict[str, Any] = {"N": n, "certified": p.verdict}
                if m is not None:
                    item["margin_enclosure"] = {"lo": m[0], "hi": m[1]}
                if p.note:
                    item["note"] = p.note
                pts.append(item)
            entry["points"] = pts
            entry["verdict"] = self.summary(claim, Ns, points)
            claims.append(entry)
        return {"params": self.params, "certified": True, "claims": claims}

    def _rows(self) -> list[tuple[str, str]]:
        return [("params", params_text(self.params))] + [
            (claim.id, f"skipped: {skipped}" if skipped else self.summary(claim, Ns, points))
            for claim, Ns, points, skipped in self.rows
        ]

    format = renamed_to_text("format")

    def to_text(self) -> str:
        """The report as text, one block per claim."""
        p = self.params
        head = (
            f"lam = {p['lam']}"
            if p.get("lam") is not None
            else f"gamma = {p['gamma']}, alpha = {p['alpha']} (lam = 1 - gamma/N^alpha, exact)"
        )
        lines = [
            f"{head}; xi = {p['xi']}; b = {p['b']}; d = {p['d']}; dps = {p['dps']}; certified "
            "(Arb balls: 'proved' only when the margin ball excludes the failing side)",
            "",
        ]
        for claim, Ns, points, skipped in self.rows:
            lines.append(f"== {claim.id}  [{claim.equation}]  {claim.statement[:90]}")
            if skipped:
                lines.append(f"   skipped: {skipped}")
                lines.append("")
                continue
            for n, pt in zip(Ns, points, strict=True):
                m = pt.margin_strings(12)
                ms = f"[{m[0]}, {m[1]}]" if m is not None else "-"
                note = f"  ({pt.note})" if pt.note else ""
                lines.append(f"   N = {n:>10}  margin in {ms:>44}  {pt.verdict}{note}")
            lines.append(f"   certified: {self.summary(claim, Ns, points)}")
            lines.append("")
        return "\n".join(lines)


def check_certified(
    ids: list[str] | None = None, *, progress: bool = False, **grid: Any
) -> CertifiedReport:
    """Certified counterpart of :func:`numeric.lemmas.check` (same parameters; the
    ``grid`` keywords are checked by :func:`numeric.lemmas.runner.grid_params`).

    The float solution of each grid point is certified with the exact arrival
    rate (``1 - gamma/N^alpha`` as an Arb ball when ``gamma``/``alpha`` are
    given); claims are then evaluated in ball arithmetic (module docstring).
    """
    from numeric.certified.enclosures import heavy_traffic_ball
    from numeric.lemmas import get_claims
    from numeric.lemmas.runner import grid_params

    claims = get_claims(ids)
    checked = grid_params(**grid)
    Ns, params = checked.Ns, dict(checked.params, b_used={})
    heavy, gamma, alpha, lam = checked.heavy, checked.gamma, checked.alpha, checked.lam
    report = CertifiedReport(params=params)
    per_claim: dict[str, list[CertifiedPoint]] = {c.id: [] for c in claims}
    skipped = {
        c.id: "needs gamma, alpha (run with --gamma/--alpha instead of --lam)"
        for c in claims
        if not heavy and c.requires
    }
    for n in Ns:
        ctx = checked.context(n, lam_guard=20)
        exact = heavy_traffic_ball(gamma, alpha, n) if heavy else str(lam)
        cctx: CertifiedContext | None
        try:
            cctx = CertifiedContext(ctx, exact, heavy)
        except NumericalError as exc:
            cctx = None
            if progress:
                print(f"N = {n}: {exc}", file=sys.stderr)
        for c in claims:
            if c.id in skipped:
                continue
            per_claim[c.id].append(evaluate(c, cctx, ctx))
    for c in claims:
        report.rows.append(
            (c, [] if c.id in skipped else Ns, per_claim[c.id], skipped.get(c.id, ""))
        )
    return report
