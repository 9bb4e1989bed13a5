"""Proof-grade checks of the registered claims: ``mfstein lemmas --certify``.

Each registered claim of :mod:`numeric.lemmas` (the numeric claims of "Beyond
Scaling: Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic") is re-evaluated here with certified inputs: the arrival rate
``lam = 1 - gamma/N^alpha`` enclosed exactly in Arb, and ``s*``, ``J(s*)``,
``P``, ``f~(s*)`` and ``c`` from :func:`numeric.certify.certify`.  Every side is
an Arb ball, so the margin (oriented as in :mod:`numeric.lemmas.registry`:
non-negative exactly when the claim holds) is a ball too, and the verdict is

``proved``   the ball excludes the failing side (``lower >= 0``; ``> 0`` for a
             strict relation);
``refuted``  the ball lies entirely on the failing side (``upper < 0``);
``not decided at this precision``  the ball straddles the boundary (a claim
             that holds with equality, such as Lemma 8's attained constant, can
             never be proved by balls), or the claim has no certified evaluator.

A claim is never reported "holds" here.  Spectral quantities use Arb's
rigorous eigenvalue enclosures (``acb_mat.eig``, simple eigenvalues): the
spectral norms ``||J||_2 = sqrt(lambda_max(J^T J))`` and ``||P||_2 =
lambda_max(P)``, and the eigenvalues of ``J``.  Exact claims (Lemma 12's
rational parameters) are decided in exact arithmetic by their own functions.
Claims without a certified evaluator (``lemma4``, which compares two
floating-point routes) are reported as not decided, with that reason.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from mfstein.errors import NumericalError
from numeric.certify_arb import decimal_outward, to_arb, working_precision

__all__ = ["CERTIFIED", "CertifiedPoint", "CertifiedReport", "check_certified"]

VERDICTS = ("proved", "refuted", "not decided at this precision")


@dataclass
class CertifiedPoint:
    """One claim at one grid point: margin ball and verdict."""

    margin: Any  # arb ball, Fraction (exact) or None
    verdict: str
    note: str = ""

    def margin_strings(self, digits: int = 12) -> tuple[str, str] | None:
        """Outward-rounded decimal ends ``(lo, hi)`` of the margin (``None`` if absent)."""
        if self.margin is None:
            return None
        if isinstance(self.margin, Fraction | int):
            text = str(self.margin)
            return text, text
        return decimal_outward(self.margin, digits)


class _CCtx:
    """Certified objects of one grid point, computed on first use."""

    def __init__(self, ctx: Any, lam_exact: Any, heavy: bool) -> None:
        from numeric.certify import certify_solution

        self.ctx = ctx
        self.heavy = heavy
        self.cs = certify_solution(ctx.sol, params={"lam": lam_exact})
        self.prec = self.cs.prec
        with working_precision(self.prec):
            self.lam = to_arb("lam", lam_exact)
        self._cache: dict[str, Any] = {}

    def num(self, x: Any) -> Any:
        return to_arb("x", x)

    @property
    def J(self) -> Any:
        return self.cs.J

    @property
    def P(self) -> Any:
        return self.cs.P

    def eig(self, name: str, A: Any) -> list[Any]:
        """Real parts of Arb's rigorous eigenvalue enclosures of ``A`` (cached)."""
        if name not in self._cache:
            try:
                ev = A.eig()
            except (ValueError, ZeroDivisionError):
                raise NumericalError(f"eigenvalues of {name} could not be isolated") from None
            self._cache[name] = [e.real for e in ev]
        return self._cache[name]

    def norm2_J(self) -> Any:
        J = self.J
        return max_ball(self.eig("J^T J", J.transpose() * J)).sqrt()

    def norm2_P(self) -> Any:
        return max_ball(self.eig("P", self.P))


def max_ball(xs: list[Any]) -> Any:
    """A ball enclosing the largest of the Arb balls ``xs``."""
    out = xs[0]
    for x in xs[1:]:
        out = out.max(x)
    return out


def min_ball(xs: list[Any]) -> Any:
    """A ball enclosing the smallest of the Arb balls ``xs``."""
    out = xs[0]
    for x in xs[1:]:
        out = out.min(x)
    return out


def _frac(x: Any) -> Any:
    return to_arb("x", Fraction(x) if not isinstance(x, Fraction) else x)


def _N(c: _CCtx) -> Any:
    return to_arb("N", int(c.ctx.N))


def _tol(c: _CCtx, scale: Any) -> Any:
    from flint import arb

    return arb(10) ** (-int(c.ctx.digits)) * scale


# -- evaluators: (lhs, rhs) balls, or a margin ball directly ----------------------------
def _lemma5(c: _CCtx):
    P = c.P
    return min_ball([P[i, i] for i in range(c.cs.b)]), 1 / (2 * c.norm2_J())


def _lemma5_18(c: _CCtx):
    return 1 / (2 * c.norm2_J()), _frac(Fraction(1, 18))


def _norms_1_inf(c: _CCtx) -> tuple[Any, Any]:
    J, b = c.J, c.cs.b
    cols = [sum((abs(J[i, j]) for i in range(b)), c.num(0)) for j in range(b)]
    rows = [sum((abs(J[i, j]) for j in range(b)), c.num(0)) for i in range(b)]
    return max_ball(cols), max_ball(rows)


def _lemma5_norm(c: _CCtx):
    one, inf = _norms_1_inf(c)
    return c.norm2_J(), (one * inf).sqrt()


def _lemma5_norm9(c: _CCtx):
    one, inf = _norms_1_inf(c)
    return (one * inf).sqrt(), c.num(9)


def _lemma5_entries(c: _CCtx):
    J, b = c.J, c.cs.b
    return max_ball([abs(J[i, j]) for i in range(b) for j in range(b)]), c.num(3)


def _lemma6(c: _CCtx):
    ex = 2 * _frac(c.ctx.alpha) + 3 * _frac(c.ctx.xi)
    return c.norm2_P(), _N(c) ** ex


def _lemma6_last(c: _CCtx):
    N, a, x = _N(c), _frac(c.ctx.alpha), _frac(c.ctx.xi)
    return 54 * c.cs.b * N ** (2 * a + 2 * x) / _frac(c.ctx.gamma), N ** (2 * a + 3 * x)


def _spectral_gap(c: _CCtx):
    ev = c.eig("J", c.J)
    ex = 2 * _frac(c.ctx.alpha) + 2 * _frac(c.ctx.xi)
    return min_ball([abs(e) for e in ev]), _N(c) ** (-ex)


def _lemma8(c: _CCtx):
    k = _arb_kernels(c.ctx.sol.get_model())
    vals = k.hess_values(c.cs.s_star, [c.lam])
    cols: dict[int, list[Any]] = {}
    for (_i, j, kk), v in zip(k.hess_index.tolist(), vals, strict=True):
        if j != kk and not v.is_zero():
            raise NumericalError("the Hessian is not diagonal in (j, k)")
        cols.setdefault(j, []).append(v)
    norms = [sum((v * v for v in col), c.num(0)).sqrt() for col in cols.values()]
    return max_ball(norms), 2 * c.num(2).sqrt() * c.lam


def _arb_kernels(model: Any) -> Any:
    from derive.kernels import kernels

    return kernels(model, "arb")


def _dominant(c: _CCtx) -> Any:
    P, ft = c.P, c.cs.ftilde
    return 2 * sum((P[i, i] * ft[i] for i in range(c.cs.b)), c.num(0)) / _N(c)


def _lemma9(c: _CCtx):
    lam = c.lam
    return _dominant(c), lam * (1 - lam) / (9 * _N(c))


def _lemma9_nonneg(c: _CCtx):
    return min_ball(list(c.cs.ftilde)), c.num(0)


def _lemma9_posdef(c: _CCtx):
    return min_ball(c.eig("P", c.P)), c.num(0)


def _lemma9_f1(c: _CCtx):
    lam = c.lam
    return c.cs.ftilde[0], lam * (1 - lam**2)


def _lemma9_chain(c: _CCtx):
    lam = c.lam
    return lam * (1 - lam**2), lam * (1 - lam)


def _lemma9_p11(c: _CCtx):
    lam = c.lam
    return 2 * c.P[0, 0] * c.cs.ftilde[0] / _N(c), lam * (1 - lam) / (9 * _N(c))


def _lemma10(c: _CCtx):
    return _dominant(c), 2 * c.cs.b * c.norm2_P() / _N(c)


def _lemma10_ft(c: _CCtx):
    return max_ball(list(c.cs.ftilde)), c.num(1)


def _lemma10_pii(c: _CCtx):
    P = c.P
    return max_ball([P[i, i] for i in range(c.cs.b)]), c.norm2_P()


def _lemma10_order(c: _CCtx):
    a, x = _frac(c.ctx.alpha), _frac(c.ctx.xi)
    return _dominant(c), _N(c) ** (-(1 - 2 * a - 4 * x))


def _lemma13(c: _CCtx):
    return max_ball(c.eig("J", c.J)), c.num(0)


def _lemma13_kron(c: _CCtx):
    ev = c.eig("J", c.J)
    return min_ball([abs(a + b) for a in ev for b in ev]), c.num(0)


def _equilibrium_identity(c: _CCtx):
    s = [c.num(1), *c.cs.s_star]
    lam, d, ft = c.lam, c.ctx.d, c.cs.ftilde
    diff = max_ball([abs(ft[i] - lam * (s[i] ** d - s[i + 1] ** d)) for i in range(c.cs.b)])
    return diff, _tol(c, max_ball(list(ft)))


def _kron_value(c: _CCtx) -> Any:
    """``vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I) = sum_i f~_i X_ii`` with
    ``X J + J^T X = I``, i.e. ``X = -P``: equal to ``-c/2``."""
    P, ft = c.P, c.cs.ftilde
    return -sum((ft[i] * P[i, i] for i in range(c.cs.b)), c.num(0))


def _theorem1_sign(c: _CCtx):
    return 2 * _kron_value(c), c.num(0)


def _theorem1_constant(c: _CCtx):
    lhs, rhs = -2 * _kron_value(c), c.cs.constant
    return lhs, rhs, _tol(c, abs(rhs))


def _theorem1_eq6(c: _CCtx):
    lhs, rhs = 2 * _kron_value(c) / _N(c), c.cs.constant
    return lhs, rhs, _tol(c, abs(rhs))


def _remark2(c: _CCtx):
    a, x = _frac(c.ctx.alpha), _frac(c.ctx.xi)
    return c.cs.constant / _N(c), _N(c) ** (-(1 - 2 * a - 4 * x))


#: Claim id -> certified evaluator (``(lhs, rhs)`` balls, or ``(lhs, rhs, tol)`` for ``==``).
CERTIFIED: dict[str, Callable[[_CCtx], tuple]] = {
    "lemma5": _lemma5,
    "lemma5.eighteenth": _lemma5_18,
    "lemma5.norm_J": _lemma5_norm,
    "lemma5.norm_J_9": _lemma5_norm9,
    "lemma5.entries": _lemma5_entries,
    "lemma6": _lemma6,
    "lemma6.last_step": _lemma6_last,
    "spectral_gap": _spectral_gap,
    "lemma8": _lemma8,
    "lemma9": _lemma9,
    "lemma9.ftilde_nonneg": _lemma9_nonneg,
    "lemma9.P_posdef": _lemma9_posdef,
    "lemma9.f1": _lemma9_f1,
    "lemma9.lam_chain": _lemma9_chain,
    "lemma9.P11": _lemma9_p11,
    "lemma10": _lemma10,
    "lemma10.ftilde_le_1": _lemma10_ft,
    "lemma10.Pii_le_normP": _lemma10_pii,
    "lemma10.order": _lemma10_order,
    "lemma13": _lemma13,
    "lemma13.kronecker": _lemma13_kron,
    "equilibrium_identity": _equilibrium_identity,
    "theorem1.sign": _theorem1_sign,
    "theorem1.constant": _theorem1_constant,
    "theorem1.eq6": _theorem1_eq6,
    "remark2": _remark2,
}


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


def evaluate(claim: Any, c: _CCtx | None, ctx: Any) -> CertifiedPoint:
    """The certified verdict of one claim at one grid point."""
    if claim.id.startswith("lemma12"):  # exact rationals: the claim's own function decides
        p = claim.evaluate(ctx)
        if p.digits == 0 and isinstance(p.margin, Fraction | int):
            return CertifiedPoint(p.margin, _verdict(p.margin, claim.relation), "exact arithmetic")
        return CertifiedPoint(None, VERDICTS[2], "no finite exact margin")
    fn = CERTIFIED.get(claim.id)
    if fn is None:
        return CertifiedPoint(None, VERDICTS[2], "no certified evaluator for this claim")
    if c is None:
        return CertifiedPoint(None, VERDICTS[2], "the mean-field objects could not be certified")
    with working_precision(c.prec):
        try:
            out = fn(c)
        except NumericalError as exc:
            return CertifiedPoint(None, VERDICTS[2], str(exc))
        if claim.relation == "==":
            lhs, rhs, tol = out
            margin = tol - abs(lhs - rhs)
        else:
            lhs, rhs = out
            margin = rhs - lhs if claim.relation in ("<=", "<") else lhs - rhs
        return CertifiedPoint(margin, _verdict(margin, claim.relation))


@dataclass
class CertifiedReport:
    """Certified verdicts of claims over a grid of N."""

    params: dict[str, Any]
    rows: list[tuple[Any, list[int], list[CertifiedPoint], str]] = field(default_factory=list)

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

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data (margins as decimal enclosures)."""
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

    def format(self) -> str:
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
    ids: list[str] | None = None,
    *,
    N: Any,
    gamma: Any = None,
    alpha: Any = None,
    lam: Any = None,
    xi: Any = "0.00001",
    b: int | str = "auto",
    d: int = 2,
    dps: int = 30,
    progress: bool = False,
) -> CertifiedReport:
    """Certified counterpart of :func:`numeric.lemmas.check` (same parameters).

    The float solution of each grid point is certified with the exact arrival
    rate (``1 - gamma/N^alpha`` as an Arb ball when ``gamma``/``alpha`` are
    given); claims are then evaluated in ball arithmetic (module docstring).
    """
    import mpmath

    from numeric.certify import heavy_traffic_ball
    from numeric.lemmas import get_claims
    from numeric.lemmas.context import Context
    from numeric.lemmas.parameters import to_fraction
    from numeric.lemmas.runner import grid_params, parse_grid

    claims = get_claims(ids)
    _, params, _, _, _ = grid_params(N, gamma=gamma, alpha=alpha, lam=lam, xi=xi, b=b, d=d, dps=dps)
    params = dict(params, b_used={})
    Ns = parse_grid(N)
    dps_i, d_i = int(params["dps"]), int(params["d"])
    heavy = lam is None
    xi_f = to_fraction("xi", xi)
    g_f = to_fraction("gamma", gamma) if heavy else None
    a_f = to_fraction("alpha", alpha) if heavy else None
    report = CertifiedReport(params=params)
    per_claim: dict[str, list[CertifiedPoint]] = {c.id: [] for c in claims}
    skipped = {
        c.id: "needs gamma, alpha (run with --gamma/--alpha instead of --lam)"
        for c in claims
        if not heavy and c.requires
    }
    for n in Ns:
        with mpmath.workdps(dps_i):
            if heavy:
                from numeric import heavy_traffic_lambda

                lam_n = heavy_traffic_lambda(str(gamma), str(alpha), n, dps=dps_i + 20)
            else:
                lam_n = mpmath.mpf(lam)
        ctx = Context(
            lam=lam_n, N=n, b=params["b"], d=d_i, xi=xi_f, dps=dps_i, gamma=g_f, alpha=a_f
        )
        exact = heavy_traffic_ball(gamma, alpha, n) if heavy else str(lam)
        cctx: _CCtx | None
        try:
            cctx = _CCtx(ctx, exact, heavy)
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
