"""Run registered claims over a grid of N and summarise each claim's verdict.

:func:`check` validates the parameters once, builds one
:class:`~numeric.lemmas.context.Context` per grid point (so the mean-field
solution is computed once per N and shared by all claims), evaluates each
claim, and reports for every claim the smallest grid N from which it holds at
every larger grid point (``holds_from_N``; ``None`` = "not within the grid").
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import mpmath

from mfstein.ground.arguments import check_keywords
from mfstein.ground.display import Presentable, params_text
from mfstein.ground.errors import ParameterError, check_int
from numeric.lemmas.context import Context
from numeric.lemmas.parameters import to_fraction
from numeric.lemmas.registry import Claim, Point, get_claims
from numeric.lemmas.report import decimal_string, report_text

#: Working-precision range accepted by :func:`check`.
DPS_RANGE = (15, 1000)


@dataclass
class ClaimResult:
    """One claim over the grid."""

    #: The claim (:class:`numeric.lemmas.registry.Claim`).
    claim: Claim
    #: The grid's sizes ``N`` it was evaluated at, in order; empty when skipped.
    Ns: list[int]
    #: Its :class:`numeric.lemmas.registry.Point` at each of ``Ns``.
    points: list[Point]
    #: Why the claim was skipped (it needs ``gamma``/``alpha`` and ``lam`` was given); ``""`` when
    #: it ran.
    skipped: str = ""

    @property
    def holds_from_N(self) -> int | None:
        """Smallest grid N from which the claim holds at every larger grid point, or None."""
        first = None
        for N, p in zip(reversed(self.Ns), reversed(self.points), strict=True):
            if not p.holds:
                break
            first = N
        return first

    @property
    def verdict(self) -> str:
        """One line summarising the claim over the grid."""
        if self.skipped:
            return f"skipped: {self.skipped}"
        n_hold = sum(p.holds for p in self.points)
        start = self.holds_from_N
        if n_hold == len(self.points):
            text = f"holds at all {len(self.points)} grid points"
        elif start is None:
            text = (
                f"does not hold from any grid N on (holds at {n_hold} of {len(self.points)} points)"
            )
            if self.claim.asymptotic:
                text += "; not within the grid"
        else:
            text = (
                f"holds from N = {start} on (fails at {len(self.points) - n_hold} smaller grid N)"
            )
        if self.claim.corrected_statement and n_hold < len(self.points):
            text += f"; corrected: {self.claim.corrected_statement}"
        return text


@dataclass(frozen=True, repr=False)
class Report(Presentable):
    """The results of :func:`check`: a row per claim (its verdict over the grid)."""

    #: A :class:`ClaimResult` per claim, in :func:`numeric.lemmas.get_claims`'s order.
    results: list[ClaimResult]
    #: The grid's parameters as :func:`grid_params` checked them (``gamma``, ``alpha``, ``lam`` as
    #: strings, ``None`` when not given; ``xi`` as a string; ``b``, ``d``, ``dps``) and, keyed by
    #: ``str(N)`` for each grid ``N`` whose claims solved the mean field, ``b_used`` (the buffer
    #: size used), ``digits`` (the significant digits trusted) and ``lam_values`` (the arrival rate
    #: at ``N``, ``dps`` digits).
    params: dict[str, Any] = field(default_factory=dict)

    _MORE: ClassVar[str] = "every grid point's lhs, rhs and margin in to_dict()"

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON form (decimal strings, never floats); each point
        states its precision (``digits``, or ``exact`` for exact arithmetic)."""
        claims = []
        skipped = []
        shown = int(self.params.get("dps", 30))
        for r in self.results:
            if r.skipped:
                skipped.append({"id": r.claim.id, "reason": r.skipped})
                continue
            entry: dict[str, Any] = {
                "id": r.claim.id,
                "statement": r.claim.statement,
                "equation": r.claim.equation,
                "relation": r.claim.relation,
                "points": [
                    {
                        "N": int(N),
                        "lhs": decimal_string(p.lhs, shown),
                        "rhs": decimal_string(p.rhs, shown),
                        "margin": decimal_string(p.margin, shown),
                        "holds": bool(p.holds),
                        **({"exact": True} if p.digits == 0 else {"digits": int(p.digits)}),
                        **({"note": p.note} if p.note else {}),
                    }
                    for N, p in zip(r.Ns, r.points, strict=True)
                ],
                "holds_from_N": r.holds_from_N,
                "verdict": r.verdict,
            }
            if r.claim.corrected_statement:
                entry["corrected_statement"] = r.claim.corrected_statement
            claims.append(entry)
        out: dict[str, Any] = {"params": self.params, "claims": claims}
        if skipped:
            out["skipped"] = skipped
        return out

    def _rows(self) -> list[tuple[str, str]]:
        return [("params", params_text(self.params))] + [
            (r.claim.id, r.verdict) for r in self.results
        ]

    def to_text(self) -> str:
        """One table per claim (N, lhs, rhs, margin, holds) and a one-line verdict
        each (:func:`numeric.lemmas.report.report_text`)."""
        return report_text(self)


def parse_grid(values: Any) -> list[int]:
    """Grid of N: ints (or a comma-separated string), each >= 1; sorted, duplicates dropped."""
    from numeric.precision import parse_size

    if isinstance(values, str):
        values = [v for v in values.replace(" ", "").split(",") if v]
    try:
        Ns = sorted({parse_size("N", v) for v in values})
    except TypeError:
        raise ParameterError("N must be a list of integers >= 1.") from None
    if not Ns:
        raise ParameterError("N must list at least one integer >= 1.")
    return Ns


@dataclass(frozen=True)
class Grid:
    """A checked grid of claim checks (what :func:`grid_params` returns)."""

    #: The sizes, sorted, without duplicates.
    Ns: list[int]
    #: The report's ``params``, which hold ``gamma``, ``alpha``, ``lam``, ``xi`` as given
    #: (decimal strings, ``None`` where absent), ``b``, ``d`` and ``dps``.
    params: dict[str, Any]
    #: The heavy-traffic rate's ``gamma`` as given (``lam = 1 - gamma / N^alpha`` when
    #: ``lam`` is ``None``).
    gamma: Any
    #: The heavy-traffic rate's exponent ``alpha`` as given (``lam = 1 - gamma / N^alpha``
    #: when ``lam`` is ``None``).
    alpha: Any
    #: The arrival rate as given; ``None`` for the heavy-traffic rate
    #: ``lam = 1 - gamma / N^alpha``.
    lam: Any
    #: ``(gamma, alpha, xi)`` as exact fractions (``None`` for gamma and alpha when
    #: ``lam`` is given).
    fractions: tuple[Any, Any, Any]

    @property
    def heavy(self) -> bool:
        """Whether the rate is the heavy-traffic scaling ``1 - gamma / N^alpha``."""
        return self.lam is None

    def context(self, n: int, *, lam_guard: int = 0) -> Context:
        """The :class:`Context` of grid point ``N = n``.

        ``lam = 1 - gamma / n^alpha`` is computed at ``dps + lam_guard`` digits (the
        heavy-traffic scaling of the core paper, Section 3), or ``lam`` is taken as
        given.
        """
        params = self.params
        dps = params["dps"]
        g_f, a_f, xi_f = self.fractions
        with mpmath.workdps(dps):
            if self.heavy:
                from numeric import heavy_traffic_lambda

                lam_n = heavy_traffic_lambda(
                    str(self.gamma), str(self.alpha), n, dps=dps + lam_guard
                )
            else:
                lam_n = mpmath.mpf(self.lam)
        return Context(
            lam=lam_n, N=n, b=params["b"], d=params["d"], xi=xi_f, dps=dps, gamma=g_f, alpha=a_f
        )


@check_keywords
def grid_params(
    N: Any,
    *,
    gamma: Any = None,
    alpha: Any = None,
    lam: Any = None,
    xi: Any = "0.00001",
    b: int | str = "auto",
    d: int = 2,
    dps: int = 30,
) -> Grid:
    """Check the grid of a claim check (one sentence per error): the keywords of
    :func:`check` and :func:`numeric.lemmas.certified_claims.check_certified`.

    Parameters
    ----------
    N:
        Grid of system sizes (ints or ``"10,100,1000"``).
    gamma, alpha:
        Heavy-traffic scaling ``lam = 1 - gamma / N^alpha`` (the core paper, Section 3);
        give both, or give ``lam`` instead.
    lam:
        A fixed arrival rate ``0 < lam < 1`` (claims that need gamma or alpha are
        then skipped).
    xi:
        The paper's small ``xi``, ``0 < xi < 1`` (decimal string for exactness).
    b:
        Buffer size, ``int >= 1`` or ``"auto"``.
    d:
        Servers sampled per arrival (the paper's claims are for d = 2).
    dps:
        Working precision, 15 to 1000 decimal digits.
    """
    Ns = parse_grid(N)
    dps = check_int("dps", dps, *DPS_RANGE)
    d = check_int("d", d, 1)
    if b != "auto":
        try:
            b = check_int("b", b, 1)
        except ParameterError:
            raise ParameterError(f"b must be an integer >= 1 or 'auto', got {b!r}.") from None
    xi_f = to_fraction("xi", xi)
    if not 0 < xi_f < 1:
        raise ParameterError(f"xi must satisfy 0 < xi < 1, got {xi!r}.")
    heavy = lam is None
    if heavy:
        if gamma is None or alpha is None:
            missing = "gamma" if gamma is None else "alpha"
            raise ParameterError(
                f"give either lam, or both gamma and alpha ({missing} is missing)."
            )
        g_f, a_f = to_fraction("gamma", gamma), to_fraction("alpha", alpha)
        if g_f <= 0:
            raise ParameterError(f"gamma must be > 0, got {gamma!r}.")
        if not 0 <= a_f < 1:
            raise ParameterError(f"alpha must satisfy 0 <= alpha < 1, got {alpha!r}.")
        bad = [n for n in Ns if _lam_not_positive(g_f, a_f, n)]
        if bad:
            raise ParameterError(
                "gamma must be < N^alpha for every N in the grid (so that "
                f"lam = 1 - gamma/N^alpha > 0); it fails at N = {bad[0]}."
            )
        if b == "auto":
            from numeric.precision import check_heavy_traffic_below_one

            check_heavy_traffic_below_one(gamma, alpha, Ns, dps, b=b)
    else:
        if gamma is not None or alpha is not None:
            raise ParameterError("give either lam, or both gamma and alpha, not both.")
        with mpmath.workdps(dps):
            lam_v = mpmath.mpf(lam)
        if not 0 < lam_v < 1:
            raise ParameterError(f"lam must satisfy 0 < lam < 1, got {lam!r}.")
        g_f = a_f = None
    params = {
        "gamma": None if g_f is None else str(gamma),
        "alpha": None if a_f is None else str(alpha),
        "lam": None if heavy else str(lam),
        "xi": str(xi),
        "b": b,
        "d": d,
        "dps": dps,
    }
    return Grid(Ns, params, gamma, alpha, lam, (g_f, a_f, xi_f))


def check(ids: list[str] | None = None, *, progress: bool = False, **grid: Any) -> Report:
    """Evaluate registered claims over a grid of N.

    Parameters
    ----------
    ids:
        Claim ids or families to run (``None``: all registered claims).
    progress:
        Show a tqdm bar on standard error.
    **grid:
        The grid, checked by :func:`grid_params`: the sizes ``N`` (required), the
        rate (``lam``, or ``gamma`` and ``alpha``), ``xi``, ``b``, ``d``, ``dps``.
    """
    if ids is not None and not list(ids):
        raise ParameterError("ids must name at least one claim id or family (see --list).")
    claims = get_claims(ids)
    checked = grid_params(**grid)
    Ns, params = checked.Ns, checked.params
    g_f, a_f, _ = checked.fractions
    dps = params["dps"]
    results = [ClaimResult(c, [], []) for c in claims]
    for r in results:
        missing = [q for q in r.claim.requires if (g_f if q == "gamma" else a_f) is None]
        if missing:
            r.skipped = f"needs {', '.join(missing)} (run with --gamma/--alpha instead of --lam)"
    active = [r for r in results if not r.skipped]
    from tqdm import tqdm

    with tqdm(
        total=len(Ns) * len(active),
        file=sys.stderr,
        disable=not progress,
        desc="claims",
        unit="check",
    ) as bar:
        for n in Ns:
            ctx = checked.context(n)
            lam_n = ctx.lam
            params.setdefault("b_used", {})
            for r in active:
                bar.set_postfix_str(f"N={n} {r.claim.id}", refresh=False)
                r.Ns.append(n)
                r.points.append(r.claim.evaluate(ctx))
                bar.update(1)
            if "sol" in ctx.__dict__:
                params["b_used"][str(n)] = ctx.b_used
                params.setdefault("digits", {})[str(n)] = ctx.digits
                params.setdefault("lam_values", {})[str(n)] = mpmath.nstr(lam_n, dps)
    return Report(results, params)


def _lam_not_positive(g: Fraction, a: Fraction, n: int) -> bool:
    """Whether ``1 - g / n^a <= 0``, i.e. ``g >= n^a`` (decided in high precision)."""
    with mpmath.workdps(50):
        return mpmath.mpf(g.numerator) / g.denominator >= mpmath.mpf(n) ** (
            mpmath.mpf(a.numerator) / a.denominator
        )
