"""Certified numbers: rigorous enclosures of ``s*``, ``J``, ``P``, ``W``, ``V`` and ``c``.

``solution.certify()`` (:func:`certify_float_solution`; ``numeric.certify(model,
params)`` is ``numeric.solve(model, params).certify()``) takes a
:class:`numeric.MeanFieldSolution` from
:func:`numeric.solve` (any model of :mod:`derive.models`, or a user
:class:`derive.Model`) and returns a :class:`CertifiedSolution` whose numbers
are Arb balls (python-flint's ``arb``: midpoint and radius, every operation
rounded outward) that provably contain the exact values.  The float routes of
:mod:`numeric` stay the default and their ``digits`` are *evidence* (agreement
of independent routes); the enclosures here are *proofs*, conditional only on
the correctness of Arb and of the generated kernels, which are printed from
the same SymPy expressions as the float kernels (``derive.kernels(model, "arb")``).

The mathematics (notation of "Beyond Scaling: Calculable Error Bound of the
Power-of-Two-Choices Mean-Field Model in Heavy-Traffic", Section 3 and
Theorem 1 with the sign of the Kronecker form corrected):

1. *Fixed point (Krawczyk).*  Conservation laws ``C s = q`` are removed
   exactly (:mod:`numeric.invariants`): ``s = s(x)`` is affine in the free
   coordinates ``x`` with rational coefficients, and ``F(x) = f_F(s(x))``.  For a
   box ``X`` around the float solution ``x~``, an approximate inverse ``Y`` of
   ``DF(x~)`` (float64) and the ball Jacobian ``DF(X)`` from the Arb kernels,
   the Krawczyk operator is

       K(X) = x~ - Y F(x~) + (I - Y DF(X)) (X - x~).

   If ``K(X)`` lies in the interior of ``X``, then ``F`` has exactly one zero
   in ``X`` (Krawczyk 1969; Moore 1977), for every parameter value in the
   parameter balls.  The first box is ``x~ +/- r`` with ``r`` about four times
   the Newton correction ``|Y F(x~)|``; when that ``r`` exceeds ``10^-dps``
   (relative to the largest coordinate) the solution handed in is *refused*:
   its ``s*`` is not a fixed point to the requested precision.  Then
   ``X <- K(X) /\\ X`` (re-centred) shrinks the box to the working precision.
2. *Lyapunov equations (residual plus a Lyapunov certificate).*  With
   ``J = DF(s*)`` (a ball matrix containing the exact one),
   ``L(X) = J X + X J^T`` and ``L*(X) = J^T X + X J``:

   * a float64 ``Z~`` with ``R_Z = J Z~ + Z~ J^T + I`` and
     ``eps_Z = ||R_Z||_F < 1`` (upper bound over the ball), and ``Z~ > 0``
     (checked by a float64 Cholesky factor ``L``: ``lambda_min(Z~) >=
     1/||L^-1||^2 - ||L L^T - Z~||_F``, with ``||L^-1||`` bounded through an
     approximate inverse ``G``: ``||L^-1|| <= ||G||_F / (1 - ||I - L G||_F)``),
     prove that ``J`` is Hurwitz (Lyapunov's theorem) and that
     ``Z~ = int e^{Jt} (I - R_Z) e^{J^T t} dt >= (1 - eps_Z) int e^{Jt} e^{J^T t} dt``;
   * for a symmetric ``C``, ``X = L^{-1}(-C) = int_0^inf e^{Jt} C e^{J^T t} dt``
     satisfies ``-||C||_2 Z~/(1 - eps_Z) <= X <= ||C||_2 Z~/(1 - eps_Z)``
     (Loewner order), hence ``|X_ij| <= ||C||_F sqrt(Z~_ii Z~_jj)/(1 - eps_Z)``;
   * likewise ``P~_I`` with ``J^T P~_I + P~_I J + I`` of norm ``eps_I < 1``
     bounds ``L*^{-1}``.

   ``P~`` (``J^T P + P J + M = 0``) and ``W~`` (``J W + W J^T + Q = 0``) are
   computed to the working precision by iterative refinement (float64
   Bartels--Stewart corrections, residuals in Arb); their errors solve the
   same equations with the residual (a symmetric ball matrix) as right-hand
   side, so every entry of ``P`` and ``W`` is enclosed by the bounds above.
3. *Constant.*  ``c = tr(P Q) = tr(P~ Q) + tr(E_P Q)`` with
   ``|tr(E_P Q)| <= eps_P/(1 - eps_I) sum_ij sqrt(P~_I,ii P~_I,jj) |Q_ij|``, and
   independently ``c = tr(M W) = tr(M W~) + tr(M E_W)``.  Both balls contain
   ``c``; the reported ball is their intersection (disjoint balls would be a
   contradiction and raise :class:`mfstein.ground.errors.NumericalError`).
4. *Refined bias.*  ``V = -J^{-1} h``, ``h_i = 1/2 sum_jk H_ijk W_jk``, by
   Arb's verified linear solve with the ball ``W``; conservation laws map
   ``W = T W_r T^T`` and ``V = T V_r`` exactly.

``certified_digits`` is the number of significant digits every point of the
ball of ``c`` shares with its midpoint (``floor(-log10(rad/|c|))``).  When it
falls short of the requested ``dps`` the working precision is raised (twice);
if it still falls short, or a certificate fails, a
:class:`mfstein.ground.errors.NumericalError` says what failed and what to raise.

Parameters are taken exactly: decimal strings and fractions become balls one
rounding wide, ``mpf`` and floats are exact binary numbers, and an ``arb``
ball (e.g. ``1 - gamma/N^alpha`` enclosed in Arb) is used as given -- the
enclosures then hold for every parameter value in the ball.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from mfstein.ground.arguments import check_keywords, renamed_attribute
from mfstein.ground.display import Presentable, heading_rows
from mfstein.ground.errors import NumericalError, ParameterError, caller_level
from numeric.certified.arb import (
    ball,
    bits_for_digits,
    decimal_outward,
    frobenius_upper,
    from_numpy,
    identity,
    max_exponent,
    power_of_two,
    sci,
    significant_digits,
    to_arb,
    to_numpy,
    working_precision,
)

__all__ = [
    "CertifiedSolution",
    "certify_float_solution",
    "certify_solution",
    "heavy_traffic_ball",
]

#: Guard digits of the first working precision (raised on a shortfall).
GUARD_DIGITS = 15
#: Working-precision attempts before giving up.
ATTEMPTS = 3
#: Most Krawczyk tightening steps and Lyapunov refinement sweeps.
MAX_STEPS = 40


@dataclass(frozen=True, repr=False)
class CertifiedSolution(Presentable):
    """Rigorous enclosures (Arb balls) of the mean-field objects of one model.

    A frozen record (assigning a field raises ``dataclasses.FrozenInstanceError``).
    """

    #: The model's name.
    model: str
    #: The parameter values used (decimal strings of the balls).
    params: dict[str, str]
    #: The start whose conserved values the enclosures hold for, as given, else the
    #: solution's own; ``None`` for the model's reference point.
    start: Any = field(default=None, kw_only=True, repr=False, compare=False)
    #: Dimension (``b`` is its deprecated name, warns).
    n: int
    #: Requested significant digits.
    dps: int
    #: Working precision in bits of the successful attempt.
    prec: int
    #: Balls ``s*_1 .. s*_b`` (by Krawczyk's test, exactly one fixed point in the box).
    s_star: list[Any]
    #: ``J(s*)`` (``arb_mat``, ``b x b``).
    J: Any
    #: ``Q(s*)`` (``arb_mat``, ``b x b``).
    Q: Any
    #: ``f~(s*)``.
    ftilde: list[Any]
    #: ``P J + J^T P = -M`` on the free coordinates (zero rows and columns for
    #: the others, as in :class:`numeric.MeanFieldSolution`), ``arb_mat``.
    P: Any
    #: The covariance ``W`` solving ``J W + W J^T + Q = 0``, in all coordinates.
    W: Any
    #: The refined bias ``V``, in all coordinates.
    V: list[Any]
    #: ``c = tr(P Q) = tr(M W)``, the intersection of the balls of both routes.
    constant: Any
    #: ``{"stein": tr(P Q), "covariance": tr(M W)}`` balls before intersecting.
    routes: dict[str, Any]
    #: Significant digits of ``constant`` proved by its ball.
    certified_digits: int
    #: The free coordinates (as in the float solution).
    free: list[int]
    #: The conservation laws (as in the float solution).
    conservation: list[list[str]] = field(default_factory=list)
    #: The numbers the proofs rest on (Krawczyk radius, Lyapunov residual norms).
    certificates: dict[str, str] = field(default_factory=dict)
    #: Remarks (parameter sources, truncations undone).
    notes: list[str] = field(default_factory=list)
    #: The observable whose constant ``c = tr(M W)`` is enclosed, as exact
    #: rationals (``b x b`` rows): always the ``M`` of the solution certified.
    M: list[list[Fraction]] = field(default_factory=list, repr=False, compare=False)
    #: The :class:`numeric.MeanFieldSolution` certified (``None`` for a
    #: certificate built by hand); :meth:`to_dict` begins with its keys, so the
    #: JSON of a certificate is the solution's with the proofs added.
    solution: Any = field(default=None, repr=False, compare=False)

    b = renamed_attribute("CertifiedSolution", "b", "n")

    def observable_text(self) -> str:
        """``M`` in words: ``"identity"``, ``"diag:a,b,..."`` (trailing zeros
        dropped) or ``"b x b matrix"``."""
        b = len(self.M)
        diag = [self.M[i][i] for i in range(b)]
        if any(self.M[i][j] for i in range(b) for j in range(b) if i != j):
            return f"{b} x {b} matrix"
        if all(v == 1 for v in diag):
            return "identity"
        while diag and diag[-1] == 0:
            diag.pop()
        return "diag:" + ",".join(str(v) for v in diag)

    def enclosure(self, digits: int | None = None) -> tuple[str, str]:
        """``(lo, hi)``: decimal strings with ``lo <= c <= hi`` (rounded outward).

        By default with two digits more than ``certified_digits`` (at most what
        the working precision holds), so the printed interval is as narrow as the
        ball: it shows every digit it certifies, not the requested ``dps``.
        """
        if digits is None:
            held = int(self.prec * math.log10(2))
            digits = min(self.certified_digits, held) + 2
        return decimal_outward(self.constant, max(5, digits))

    def interval(self, digits: int | None = None) -> str:
        """``"[lo, hi]"`` for display."""
        lo, hi = self.enclosure(digits)
        return f"[{lo}, {hi}]"

    def decide(self, value: Any, digits: int) -> str:
        """Is ``value`` correct to ``digits`` significant digits?

        In the sense of :func:`numeric.precision.agreeing_digits`: the claim is
        ``|value - c| <= 10^-digits max(|value|, |c|)``.  Returns ``"proved"``
        when it holds for every ``c`` in the ball, ``"refuted"`` when it fails
        for every ``c`` in the ball, else ``"undecided"``.
        """
        from flint import arb

        with working_precision(self.prec + 64):
            v = to_arb("value", value)
            tol = arb(10) ** (-int(digits))
            diff = abs(v - self.constant)
            scale_lo = max(abs(v).lower(), self.constant.abs_lower())
            scale_hi = max(abs(v).upper(), self.constant.abs_upper())
            if diff.upper() <= tol * scale_lo:
                return "proved"
            if diff.lower() > tol * scale_hi:
                return "refuted"
            return "undecided"

    def to_dict(self) -> dict[str, Any]:
        """The certified solution's keys (:meth:`numeric.MeanFieldSolution.to_dict`,
        the keys of ``mfstein solve --certify --json``), then ``constant_enclosure``
        (outward-rounded decimal strings), the digits it proves and the proofs."""
        lo, hi = self.enclosure()
        own = {} if self.solution is None else self.solution.to_dict()
        return {
            **own,
            "constant_enclosure": {"lo": lo, "hi": hi},
            "certified_digits": self.certified_digits,
            "working_precision_bits": self.prec,
            "certificates": dict(self.certificates),
            "certified_M": self.observable_text(),
        }

    def _rows(self) -> list[tuple[str, str]]:
        return [
            *heading_rows(f"{self.model} ({self.n} states)", self.params),
            ("c in", self.interval()),
            ("M", self.observable_text()),
            ("certified digits", f"{self.certified_digits} (requested {self.dps})"),
            ("working precision", f"{self.prec} bits"),
            ("balls", "s_star, V (vectors); J, Q, P, W (arb_mat)"),
            ("certificates", ", ".join(self.certificates) or "-"),
        ]

    _MORE = "proofs: .certificates; balls: .constant, .s_star, .P, .W; .to_dict() for JSON"

    def _repr_latex_(self) -> str:
        """``c`` enclosed: ``lo <= c <= hi``."""
        lo, hi = self.enclosure()
        return f"${lo} \\le c \\le {hi}$"


# --------------------------------------------------------------------------
# the model and its parameters
# --------------------------------------------------------------------------
def heavy_traffic_ball(gamma: Any, alpha: Any, N: int) -> Any:
    """``lam = 1 - gamma/N^alpha`` as a parameter for :func:`numeric.certify`.

    Returns a function that encloses the (generally irrational) arrival rate of
    the heavy-traffic scaling of "Beyond Scaling: Calculable Error Bound of the
    Power-of-Two-Choices Mean-Field Model in Heavy-Traffic" in an Arb ball at
    the working precision (``gamma`` and ``alpha`` read exactly as decimals), so
    the certificate holds for the exact ``lam``, not for a rounding of it.
    """
    from mfstein.ground.errors import check_int

    n = check_int("N", N, 1)
    g = Fraction(str(gamma))
    a = Fraction(str(alpha))

    def lam() -> Any:
        from flint import arb

        return 1 - to_arb("gamma", g) / arb(n) ** to_arb("alpha", a)

    return lam


def _parameter_values(model: Any, solution: Any, params: Mapping[str, Any] | None) -> dict:
    """Parameter name -> raw value (exact source preferred) and a note on the source."""
    from numeric.params import parameter_names

    names = parameter_names(model)
    if params is not None:
        given = {str(k): v for k, v in params.items()}
        missing = [n for n in names if n not in given]
        extra = sorted(set(given) - set(names))
        if missing or extra:
            raise ParameterError(
                f"params must give exactly the parameters {', '.join(names) or 'none'} of model "
                f"{model.name}; missing {missing or 'none'}, unknown {extra or 'none'}."
            )
        return {n: given[n] for n in names}
    # the values as the solution was given them (exact: ``1/3``, not its 30-digit
    # decimal string in ``params``), else its decimal strings
    given = dict(getattr(solution, "inputs", {}) or {})
    recorded = dict(getattr(solution, "params", {}) or {})
    out = {}
    for n in names:
        if n in given:
            out[n] = given[n]
        elif n in recorded:
            out[n] = recorded[n]
        elif n == "lam" and getattr(solution, "lam", None) is not None:
            out[n] = solution.lam  # the exact binary number the float routes used
        else:
            raise ParameterError(
                f"params must give a value for {n} (the solution does not record it)."
            )
    return out


def _observable_of(solution: Any, M: Any, b: int) -> list[list[Fraction]]:
    """The ``M`` to certify, as exact rationals: the one ``solution`` was computed
    with (its ``M``; the identity for a solution that records none), which an ``M``
    given here must equal -- the certificate is of the constant the solution holds."""
    used = _matrix_spec(getattr(solution, "M", None), b)
    if M is None:
        return used
    given = _matrix_spec(M, b)
    if given != used:
        raise ParameterError(
            "M must be the observable the solution was computed with (certify encloses "
            "that solution's constant); leave M out, or solve again with this M."
        )
    return given


def _matrix_spec(M: Any, b: int) -> list[list[Fraction]]:
    """The observable ``M`` as exact rationals (``None``/``"identity"``, ``"diag:..."``,
    a symmetric ``b x b`` matrix of exact numbers, or a callable ``b -> matrix`` as
    :func:`numeric.quadratic_form.quadratic_form` takes it)."""
    if callable(M) and not isinstance(M, str):
        M = M(b)
    if M is None or (isinstance(M, str) and M.strip().lower() == "identity"):
        return [[Fraction(int(i == j)) for j in range(b)] for i in range(b)]
    if isinstance(M, str):
        from mfstein.ground.numbers import parse_diagonal

        items = parse_diagonal("M", M) or []  # the one parser of the observable's text form
        if len(items) > b:
            raise ParameterError(f"M = diag:... needs 1 to b = {b} entries, got {len(items)}.")
        vals = items + [Fraction(0)] * (b - len(items))
        return [[vals[i] if i == j else Fraction(0) for j in range(b)] for i in range(b)]
    rows = [list(r) for r in (M.tolist() if hasattr(M, "tolist") else M)]
    if len(rows) != b or any(len(r) != b for r in rows):
        raise ParameterError(f"M must be a {b} x {b} matrix.")
    out = [[_fraction_of(v) for v in r] for r in rows]
    if any(out[i][j] != out[j][i] for i in range(b) for j in range(i)):
        raise ParameterError("M must be symmetric.")
    return out


def _fraction_of(v: Any) -> Fraction:
    if isinstance(v, int | Fraction):
        return Fraction(v)
    if isinstance(v, float):
        return Fraction(v)
    if type(v).__module__.startswith("mpmath") or hasattr(v, "_mpf_"):
        sign, man, exp, _ = v._mpf_  # exact (mpmath.mpf(v) would round)
        return (-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp)
    try:
        return Fraction(str(v))
    except (ValueError, ZeroDivisionError):
        raise ParameterError(f"M entries must be exact numbers, got {v!r}.") from None


def _reference_at(model: Any, values: Mapping[str, Any]) -> list[Any]:
    """The reference point of a model whose reference depends on the parameters, at
    ``values``: accepted only when every coordinate is an exact rational (as the
    bike-sharing model's whole stations are), so the conserved values are exact."""
    import mpmath

    from numeric.precision import to_mpf

    refuse = ParameterError(
        f"start must be given to certify model {model.name} (its reference point depends "
        "on the parameters and is not an exact rational point at these values)."
    )
    try:
        with mpmath.workdps(60):
            point = list(model.info.reference({n: to_mpf(n, v) for n, v in values.items()}))
    except (ParameterError, TypeError, ValueError):
        raise refuse from None
    plain = [_sympy_plain(v) for v in point]
    if not all(isinstance(v, int | Fraction) and not isinstance(v, bool) for v in plain):
        raise refuse
    return plain


def _conserved_values(
    model: Any,
    red: Any,
    solution: Any,
    start: Any,
    values: Mapping[str, Any],
    problem: Any = None,
) -> tuple[Fraction | Any, ...]:
    """Exact values ``q = C s(0)`` of the conservation laws: the start (or the fixed
    reference point) as the prepared ``problem`` read it exactly, else read here
    (a parameter ball, a reference that depends on the parameters)."""
    if not red.laws:
        return ()
    exact = None
    if problem is not None:  # the caller's start, or the fixed reference, as the problem read it
        exact = problem.start_exact if start is not None else problem.reference_exact
    s0 = list(exact) if exact is not None else _start_exact(model, red, start, values)
    q = tuple(sum((c * s0[j] for j, c in enumerate(row) if c), Fraction(0)) for row in red.laws)
    # the solution must lie on the same invariant set
    s = [float(v) for v in solution.s_star]
    for row, qi in zip(red.laws, q, strict=True):
        val = sum(float(c) * s[j] for j, c in enumerate(row))
        if abs(val - float(qi)) > 1e-8 * max(1.0, abs(float(qi))):
            raise ParameterError(
                f"start must fix the conserved values of the solution (c . s* = {val:.10g}, "
                f"but c . start = {float(qi):.10g}); pass the start the solution was computed from."
            )
    return q


def _start_exact(model: Any, red: Any, start: Any, values: Mapping[str, Any]) -> list[Fraction]:
    """The start (else the model's reference point at ``values``) as exact fractions,
    read here when no prepared problem holds it."""
    if start is None:
        ref = model.info.reference
        if callable(ref):
            ref = _reference_at(model, values)
        if ref is None:
            raise ParameterError(
                f"start must be given to certify model {model.name} (it conserves "
                f"{len(red.laws)} quantities and declares no reference point)."
            )
        raw = list(ref)
    else:
        raw = [t for t in start.split(",") if t.strip()] if isinstance(start, str) else list(start)
    if len(raw) != model.n:
        raise ParameterError(f"start must have {model.n} coordinates, got {len(raw)}.")
    return [_fraction_of(_sympy_plain(v)) for v in raw]


def _sympy_plain(v: Any) -> Any:
    if type(v).__module__.startswith("sympy"):
        import sympy as sp

        e = sp.sympify(v)
        if isinstance(e, sp.Rational):
            return Fraction(int(e.p), int(e.q))
        return str(e)
    return v


# --------------------------------------------------------------------------
# the certifier
# --------------------------------------------------------------------------
@dataclass
class _Certificate:
    """Lyapunov certificate (step 2): residual norms ``eps`` of ``Z~`` and ``P~_I``,
    ``d = 1 - eps`` and the upper bounds ``u_i >= sqrt(Z~_ii)``, ``sqrt(P~_I,ii)``."""

    eps_Z: Any
    eps_I: Any
    dZ: Any
    dI: Any
    uZ: list[Any]
    uI: list[Any]


@dataclass
class _Enclosures:
    """Step 2's approximations ``P~``, ``W~`` (reduced), their residual norms, error
    factors ``k = eps / d`` and the ball matrices ``P_r``, ``W_r``."""

    Pt: Any
    Wt: Any
    P_r: Any
    W_r: Any
    kP: Any
    kW: Any
    eps_P: Any
    eps_W: Any


def _trace_and_weight(
    mid: Any, exact: Any, u: Sequence[Any], size: Callable[[Any], Any]
) -> tuple[Any, Any]:
    """``tr(X A) = sum_ij X_ij A_ij`` and its error weight ``sum_ij u_i u_j size(A_ij)``.

    ``X`` is a refined midpoint matrix whose entries are each enclosed by
    ``k u_i u_j`` (``u_i = sqrt(Z~_ii)`` from the Lyapunov certificate) and ``A``
    the exact data matrix; only the nonzero ``A_ij`` are summed.  The ball
    ``tr(X A) +/- k * weight`` then encloses the constant (either duality route:
    ``tr(P Q)`` or ``tr(M W)``).
    """
    from flint import arb

    n = len(u)
    total = arb(0)
    weight = arb(0)
    for i in range(n):
        for j in range(n):
            a = exact[i, j]
            if not a.is_zero():
                total += mid[i, j] * a
                weight += u[i] * u[j] * size(a)
    return total, weight


@dataclass(frozen=True)
class CertifierInputs:
    """What the certifier reads at one parameter point (:func:`certifier_inputs`)."""

    #: The finite :class:`derive.model.Model`.
    model: Any
    #: Parameter name -> exact value or Arb ball, in kernel order.
    values: Mapping[str, Any]
    #: The conservation laws and the free coordinates
    #: (:class:`numeric.invariants.Reduction`): the prepared problem's.
    red: Any
    #: The exact conserved values ``q = C s(0)``.
    q: tuple[Any, ...]
    #: The free coordinates of the float solution's ``s*`` (Krawczyk's centre).
    x0: tuple[Any, ...]
    #: The observable as exact rationals (``b x b``).
    M: list[list[Fraction]]
    #: Significant digits to certify for ``c``.
    dps: int


def certifier_inputs(
    solution: Any, model: Any, params: Mapping[str, Any] | None, start: Any, M: Any, dps: int
) -> CertifierInputs:
    """The :class:`CertifierInputs` of a solution: the values it records (or
    ``params``), the conservation laws and the exact start from the problem every
    route starts from (:func:`_prepared`, the one :func:`numeric.solve` prepared);
    a parameter ball, which no prepared problem holds, is read here."""
    from numeric.invariants import model_reduction

    values = _parameter_values(model, solution, params)
    problem = _prepared(model, values, start)
    red = problem.reduction if problem is not None else model_reduction(model)  # (balls too)
    return CertifierInputs(
        model=model,
        values=values,
        red=red,
        q=_conserved_values(model, red, solution, start, values, problem),
        x0=tuple(list(solution.s_star)[j] for j in red.free),
        M=_observable_of(solution, M, model.n),
        dps=dps,
    )


class _Certifier:
    """One model at one parameter point (:class:`CertifierInputs`); :meth:`run`
    certifies at a working precision."""

    def __init__(self, inputs: CertifierInputs) -> None:
        from derive.kernels import kernels

        model, red, M = inputs.model, inputs.red, inputs.M
        self.model = model
        self.values = inputs.values
        self.q = inputs.q
        self.red = red
        self.k = kernels(model, "arb")
        self.x0 = inputs.x0  # free coordinates of the float solution (mpf or float)
        self.M = M
        self.dps = inputs.dps
        self.b = model.n
        self.free = list(red.free)
        self.n = len(self.free)
        self.T = red.T()
        # M_r = T^T M T (exact rationals)
        b, n, T = self.b, self.n, self.T
        if not red.laws:
            self.Mr = M
            return
        MT = [
            [
                sum((M[i][a] * T[a][j] for a in range(b) if M[i][a] and T[a][j]), Fraction(0))
                for j in range(n)
            ]
            for i in range(b)
        ]
        self.Mr = [
            [sum((T[a][i] * MT[a][j] for a in range(b) if T[a][i]), Fraction(0)) for j in range(n)]
            for i in range(n)
        ]

    # -- coordinates --------------------------------------------------------
    def full(self, x: Sequence[Any]) -> list[Any]:
        """Full state from free coordinates (exact rational maps, Arb balls)."""
        from flint import arb

        s: list[Any] = [arb(0)] * self.b
        for i, j in enumerate(self.free):
            s[j] = x[i]
        for row, qi, d in zip(self.red.laws, self.q, self.red.dependent, strict=True):
            acc = to_arb("q", qi)
            for j in self.free:
                if row[j]:
                    acc = acc - to_arb("c", row[j]) * s[j]
            s[d] = acc
        return s

    def F(self, s: list[Any], p: list[Any]) -> list[Any]:
        f = self.k.f(s, p)
        return [f[j] for j in self.free]

    def Jr(self, s: list[Any], p: list[Any]) -> Any:
        """Reduced Jacobian ``J[F, :] T`` (``arb_mat``)."""
        from flint import arb_mat

        J = self.k.jac(s, p)
        if not self.red.laws:
            return J
        n = self.n
        out = arb_mat(n, n)
        for r, i in enumerate(self.free):
            for m in range(n):
                acc = None
                for a in range(self.b):
                    t = self.T[a][m]
                    if t:
                        term = J[i, a] * to_arb("T", t)
                        acc = term if acc is None else acc + term
                out[r, m] = acc
        return out

    def exact_matrix(self, A: list[list[Fraction]]) -> Any:
        from flint import arb_mat

        out = arb_mat(len(A), len(A[0]) if A else 0)
        for i, row in enumerate(A):
            for j, v in enumerate(row):
                if v:
                    out[i, j] = to_arb("M", v)
        return out

    # -- step 1: Krawczyk ---------------------------------------------------
    def krawczyk(self, p: list[Any], prec: int) -> tuple[list[Any], dict[str, str]]:
        from flint import arb, arb_mat

        n = self.n
        x = [to_arb("s*", v) for v in self.x0]
        # the error arithmetic of this step is in Arb (exact points, any exponent):
        # float64 would flush a Newton correction below 1e-308 (dps > 308) to zero
        scale = max([arb(1)] + [abs(v.mid()) for v in x])
        A64 = to_numpy(self.Jr(self.full(x), p).mid())
        try:
            Y64 = np.linalg.inv(A64)
        except np.linalg.LinAlgError:
            raise NumericalError(
                "Krawczyk's test cannot start: the Jacobian at the given s* is singular "
                "in float64 (the fixed point is not hyperbolic)."
            ) from None
        if not np.all(np.isfinite(Y64)):
            raise NumericalError("Krawczyk's test cannot start: the Jacobian is singular.")
        Y = from_numpy(Y64)

        def newton(xc: list[Any]) -> list[Any]:
            Fx = arb_mat([[v] for v in self.F(self.full(xc), p)])
            yf = Y * Fx
            return [yf[i, 0] for i in range(n)]

        yf = newton(x)
        step = max(abs(v).upper() for v in yf)
        r = max(4 * step, scale * power_of_two(-(prec - 30)))
        tol = (scale * arb(10) ** (-self.dps)).lower()
        if r > tol:
            raise NumericalError(
                f"Krawczyk's test refuses the given s*: its Newton correction is {sci(step)}, "
                f"larger than the 10^-{self.dps} the requested precision allows, so s* is not "
                "a fixed point to dps digits; recompute the solution with numeric.solve (at "
                "this or a higher dps) before certifying it."
            )
        X = [ball(v, r) for v in x]
        first = True
        history = []
        for _ in range(MAX_STEPS):
            JX = self.Jr(self.full(X), p)
            C = identity(n) - Y * JX
            D = arb_mat([[X[i] - x[i]] for i in range(n)])
            CD = C * D
            K = [x[i] - yf[i] + CD[i, 0] for i in range(n)]
            if first:
                bad = [i for i in range(n) if not X[i].contains_interior(K[i])]
                if bad:
                    raise NumericalError(
                        "Krawczyk's test fails: K(X) is not inside the box X around the given s* "
                        f"(coordinate {self.free[bad[0]] + 1}; radius {r:.3g}); the fixed point "
                        "could not be isolated at this precision -- raise dps."
                    )
                first = False
            X = [K[i].intersection(X[i]) for i in range(n)]
            rad = max(arb(v.rad()).upper() for v in X)
            history.append(rad)
            if rad <= scale * power_of_two(-(prec - 24)) or (
                len(history) > 1 and rad > history[-2] / 4
            ):
                break
            x = [arb(v.mid()) for v in X]
            yf = newton(x)
        cert = {
            "krawczyk_first_radius": sci(r, 3),
            "krawczyk_radius": sci(history[-1], 3),
            "krawczyk_steps": str(len(history)),
        }
        return X, cert

    # -- step 2: Lyapunov ---------------------------------------------------
    @staticmethod
    def _residual(J: Any, X: Any, C: Any, kind: str) -> Any:
        """``J X + X J^T + C`` (``kind="W"``) or ``J^T X + X J + C`` (``"P"``), for symmetric X."""
        A = J * X if kind == "W" else X * J
        return A + A.transpose() + C

    def refine(self, Jmid: Any, C: Any, schur: Any, kind: str, prec: int) -> Any:
        """Symmetric ``X`` (exact midpoints) solving the Lyapunov equation to ~``prec`` bits."""
        from flint import arb_mat

        n = self.n
        X = arb_mat(n, n)
        R = C.mid()
        top = max_exponent(C)
        prev = None
        for _ in range(MAX_STEPS):
            if all(v.is_zero() for v in R.entries()):
                break
            e = max_exponent(R)
            if e < top - prec + 8 or (prev is not None and e > prev - 8):
                break
            prev = e
            d64 = schur.correction(to_numpy(R, -e), dual=(kind == "W"))
            X = (X + from_numpy(d64, e)).mid()
            R = self._residual(Jmid, X, C, kind).mid()
        return X

    def posdef(self, Z64: np.ndarray) -> bool:
        """Prove ``Z64 > 0`` (exact float64 entries): Cholesky factor plus norm bounds."""
        from flint import arb

        try:
            L64 = np.linalg.cholesky(Z64)
        except np.linalg.LinAlgError:
            return False
        G64 = np.linalg.inv(L64)
        L, G, Z = from_numpy(L64), from_numpy(G64), from_numpy(Z64)
        e = frobenius_upper(L * L.transpose() - Z)
        g = frobenius_upper(identity(Z.nrows()) - L * G)
        if not g < 1:
            return False
        inv_norm = frobenius_upper(G) / (1 - g)
        lam_min = arb(1) / (inv_norm * inv_norm)
        return bool(lam_min > e)

    # -- step 2: Lyapunov certificates and enclosures ------------------------
    def reduced(self, A: Any) -> Any:
        """The free-coordinate block ``A[F, F]`` of a ``b x b`` ``arb_mat``."""
        from flint import arb_mat

        n, F = self.n, self.free
        out = arb_mat(n, n)
        for a, i in enumerate(F):
            for c_, j in enumerate(F):
                out[a, c_] = A[i, j]
        return out

    def hurwitz(self, Jr: Any, schur: Any) -> _Certificate:
        """Float64 ``Z~`` and ``P~_I`` with residual norms ``eps_Z, eps_I < 1`` and
        ``Z~ > 0``: ``J`` is Hurwitz and the inverse Lyapunov operators are bounded."""
        n = self.n
        eye = identity(n)
        Z64 = schur.correction(np.eye(n), dual=True)
        PI64 = schur.correction(np.eye(n), dual=False)
        Z, PI = from_numpy(Z64), from_numpy(PI64)
        eps_Z = frobenius_upper(self._residual(Jr, Z, eye, "W"))
        eps_I = frobenius_upper(self._residual(Jr, PI, eye, "P"))
        if not (eps_Z < 1 and eps_I < 1 and self.posdef(Z64)):
            raise NumericalError(
                "the Lyapunov certificate failed (J(s*) could not be proved Hurwitz with "
                f"residuals {float(eps_Z):.3g}, {float(eps_I):.3g}); the Jacobian is too "
                "ill-conditioned for a float64 certificate -- raise dps or reduce b."
            )
        return _Certificate(
            eps_Z=eps_Z,
            eps_I=eps_I,
            dZ=1 - eps_Z,
            dI=1 - eps_I,
            uZ=[Z[i, i].abs_upper().sqrt().upper() for i in range(n)],
            uI=[PI[i, i].abs_upper().sqrt().upper() for i in range(n)],
        )

    def enclose(
        self, Jr: Any, Mr: Any, Qr: Any, schur: Any, cert: _Certificate, prec: int
    ) -> _Enclosures:
        """``P`` and ``W`` (reduced) to the working precision, enclosed entrywise by the
        certificate: ``|E_ij| <= eps / (1 - eps_cert) sqrt(Z~_ii Z~_jj)``."""
        from flint import arb_mat

        n = self.n
        Jmid = Jr.mid()
        Pt = self.refine(Jmid, Mr, schur, "P", prec)
        Wt = self.refine(Jmid, Qr.mid(), schur, "W", prec)
        eps_P = frobenius_upper(self._residual(Jr, Pt, Mr, "P"))
        eps_W = frobenius_upper(self._residual(Jr, Wt, Qr, "W"))
        kP = (eps_P / cert.dI).upper()
        kW = (eps_W / cert.dZ).upper()
        uI, uZ = cert.uI, cert.uZ
        P_r = arb_mat(n, n)
        W_r = arb_mat(n, n)
        for i in range(n):
            for j in range(n):
                P_r[i, j] = ball(Pt[i, j], (kP * uI[i] * uI[j]).upper())
                W_r[i, j] = ball(Wt[i, j], (kW * uZ[i] * uZ[j]).upper())
        return _Enclosures(Pt=Pt, Wt=Wt, P_r=P_r, W_r=W_r, kP=kP, kW=kW, eps_P=eps_P, eps_W=eps_W)

    # -- step 3: the constant by both routes ---------------------------------
    def constant(
        self, Qr: Any, Mr: Any, cert: _Certificate, enc: _Enclosures
    ) -> tuple[Any, Any, Any]:
        """``(c_stein, c_cov, c)``: ``tr(P Q)`` and ``tr(M W)`` as balls and their
        intersection (disjoint balls contradict the duality and raise)."""
        c_stein, err_stein = _trace_and_weight(enc.Pt, Qr, cert.uI, lambda q: q.abs_upper())
        c_stein = ball(c_stein, (enc.kP * err_stein).upper())
        c_cov, err_cov = _trace_and_weight(enc.Wt, Mr, cert.uZ, abs)
        c_cov = ball(c_cov, (enc.kW * err_cov.upper()).upper())
        if not c_stein.overlaps(c_cov):
            raise NumericalError(
                "the two certified routes for c (tr(P Q) and tr(M W)) do not overlap; "
                "this contradicts the duality tr(P Q) = tr(M W) -- please report it."
            )
        return c_stein, c_cov, c_stein.intersection(c_cov)

    # -- step 4: full coordinates and the refined bias -------------------------
    def full_matrices(self, enc: _Enclosures) -> tuple[Any, Any, Any]:
        """``(T, W, P)``: ``W = T W_r T^T`` and ``P`` on the free block (``T`` is
        ``None`` without conservation laws)."""
        from flint import arb_mat

        Tm = self.exact_matrix(self.T) if self.red.laws else None
        W = Tm * enc.W_r * Tm.transpose() if Tm is not None else enc.W_r
        P = arb_mat(self.b, self.b)
        for a, i in enumerate(self.free):
            for c_, j in enumerate(self.free):
                P[i, j] = enc.P_r[a, c_]
        return Tm, W, P

    def refined_bias(self, s: list[Any], p: list[Any], Jr: Any, W: Any, Tm: Any) -> list[Any]:
        """``V = T V_r`` with ``J_r V_r = -h[F]``, ``h_i = 1/2 sum_jk H_ijk W_jk``
        (Arb's verified solve)."""
        from flint import arb, arb_mat

        b, F = self.b, self.free
        h = [arb(0)] * b
        hv = self.k.hess_values(s, p)
        for (i, j, k_), v in zip(self.k.hess_index.tolist(), hv, strict=True):
            h[i] += v * W[j, k_] / 2
        rhs = arb_mat([[-h[i]] for i in F])
        try:
            Vr = Jr.solve(rhs)
        except ZeroDivisionError:
            raise NumericalError(
                "the verified solve for V failed (J(s*) numerically singular at this "
                "precision) -- raise dps."
            ) from None
        if Tm is not None:
            Vm = Tm * Vr
            return [Vm[i, 0] for i in range(b)]
        return [Vr[i, 0] for i in range(b)]

    def run(self, prec: int) -> CertifiedSolution:
        """Steps 1-4 at ``prec`` bits: the :class:`CertifiedSolution`."""
        from numeric.linalg.tridiagonal import Schur64

        with working_precision(prec):
            p = [to_arb(name, v) for name, v in self.values.items()]
            X, cert = self.krawczyk(p, prec)
            s = self.full(X)
            Jr = self.Jr(s, p)
            Qfull = self.k.Q(s, p)
            Qr = self.reduced(Qfull)
            Mr = self.exact_matrix(self.Mr)
            schur = Schur64(to_numpy(Jr.mid()))
            lyap = self.hurwitz(Jr, schur)
            enc = self.enclose(Jr, Mr, Qr, schur, lyap, prec)
            c_stein, c_cov, c = self.constant(Qr, Mr, lyap, enc)
            Tm, W, P = self.full_matrices(enc)
            V = self.refined_bias(s, p, Jr, W, Tm)
            cert.update(
                lyapunov_eps_Z=sci(lyap.eps_Z, 3),
                lyapunov_eps_I=sci(lyap.eps_I, 3),
                residual_P=sci(enc.eps_P, 3),
                residual_W=sci(enc.eps_W, 3),
                hurwitz="proved (Lyapunov certificate Z > 0, J Z + Z J^T < 0)",
            )
            params = {
                name: raw if isinstance(raw, str) else v.str(self.dps + 5, radius=True)
                for (name, raw), v in zip(self.values.items(), p, strict=True)
            }
            return CertifiedSolution(
                model=self.model.name,
                params=params,
                n=self.b,
                dps=self.dps,
                prec=prec,
                s_star=s,
                J=self.k.jac(s, p),
                Q=Qfull,
                ftilde=self.k.ftilde(s, p),
                P=P,
                W=W,
                V=V,
                constant=c,
                routes={"stein": c_stein, "covariance": c_cov},
                certified_digits=significant_digits(c),
                free=list(self.free),
                conservation=self.red.laws_as_text(),
                certificates=cert,
                M=[list(row) for row in self.M],
            )


def _model_of(solution: Any, model: Any) -> Any:
    """The finite :class:`derive.Model` a solution belongs to (its own, or ``model``
    for a solution built by hand; a truncated family at the solution's dimension)."""
    from derive.model import Model
    from derive.spec import Truncated

    if not hasattr(solution, "s_star") or not hasattr(solution, "dps"):
        raise ParameterError(
            "solution must be a numeric.MeanFieldSolution (from numeric.solve or numeric.bound), "
            f"got {type(solution).__name__}."
        )
    if model is None:
        get = getattr(solution, "get_model", None)
        model = get() if get is not None else None
    if model is None:
        raise ParameterError(
            f"model must be given to certify a solution that carries none (model "
            f"{getattr(solution, 'model', '?')!r}; pass model=, the derive.Model it belongs to)."
        )
    if isinstance(model, Truncated):
        model = model.build(len(solution.s_star))  # the dimension the solution used
    if not isinstance(model, Model):
        raise ParameterError(
            f"model must be a derive.Model (a resolved, finite model), got {type(model).__name__}."
        )
    if len(solution.s_star) != model.n:
        raise ParameterError(
            f"model must match the solution: it has {model.n} states, the solution "
            f"{len(solution.s_star)}."
        )
    return model


def _prepared(model: Any, values: Mapping[str, Any], start: Any) -> Any:
    """The problem every route starts from (:func:`numeric.prepared.problem.prepare_problem`)
    at these inputs -- the one :func:`numeric.solve` prepared -- when every value and
    coordinate of the start is a plain number; ``None`` for a parameter ball or a start
    the prepared problem refuses (then the certificate's own reading of the inputs
    speaks, in its own sentence)."""
    from numeric.prepared.problem import prepare_problem

    plain = (str, int, float, Fraction)
    raw = start.split(",") if isinstance(start, str) else (start or ())
    if not all(type(v) in plain for v in [*values.values(), *raw]):
        return None
    try:
        return prepare_problem(model, values, start)
    except ParameterError:
        return None


def _raise_precision(cert: _Certifier, model: Any, target: int) -> CertifiedSolution:
    """Certify at a working precision of ``target`` plus guard digits, raising it
    (up to :data:`ATTEMPTS` times) until ``c`` has ``target`` certified digits."""
    guard = GUARD_DIGITS
    best = None
    for _attempt in range(ATTEMPTS):
        prec = bits_for_digits(target + guard + int(math.log10(max(model.n, 1)) * 2))
        best = cert.run(prec)
        if best.certified_digits >= target:
            return best
        guard += target + 20
    assert best is not None
    raise NumericalError(
        f"the enclosure of c proves only {best.certified_digits} of the {target} requested "
        f"digits at {best.prec} bits (model {model.name}, b = {model.n}); raise dps in "
        "numeric.solve and certify again, or request fewer digits."
    )


@check_keywords
def certify_solution(solution: Any, **options: Any) -> CertifiedSolution:
    """Deprecated: ``solution.certify(**options)``
    (:meth:`numeric.MeanFieldSolution.certify`), the one certification entry."""
    import warnings

    warnings.warn(
        "numeric.certify_solution(solution, ...) is deprecated; use solution.certify(...).",
        DeprecationWarning,
        stacklevel=caller_level(),  # the caller's line, past check_keywords' wrapper
    )
    return certify_float_solution(solution, **options)


@check_keywords
def certify_float_solution(
    solution: Any,
    *,
    params: Mapping[str, Any] | None = None,
    dps: int | None = None,
    M: Any = None,
    start: Sequence[Any] | str | None = None,
    model: Any = None,
) -> CertifiedSolution:
    """Rigorous Arb enclosures of the objects of a :class:`numeric.MeanFieldSolution`
    (what :meth:`numeric.MeanFieldSolution.certify` runs).

    Parameters
    ----------
    solution:
        The float solution from :func:`numeric.solve` or :func:`numeric.bound`;
        it carries its model.  Its ``s*`` is the centre of the Krawczyk box.
    params:
        Parameter name -> value.  Decimal strings, fractions, ``mpf`` and
        ``flint.arb`` balls are taken exactly (a ball: every value in it).
        Default: the values the solution records (as given to
        :func:`numeric.solve`, its ``inputs``; else its ``params`` strings, or
        ``lam`` as the binary number the float routes used).
    dps:
        Significant digits to certify for ``c`` (default ``solution.dps``).
    M:
        The observable; default the one the solution was computed with (its
        ``M``, recorded by :func:`numeric.solve`).  Given (``"diag:a,b,..."`` or
        a symmetric matrix of exact numbers), it must equal that one: anything
        else is refused in one sentence.  The certificate records it
        (:attr:`CertifiedSolution.M`).
    start:
        State fixing the conserved quantities of a model with conservation
        laws (default the solution's own start, else the model's reference
        point, as in :func:`numeric.solve`).
    model:
        Only for a solution built by hand, which carries no model: the
        :class:`derive.Model` it belongs to.

    Returns
    -------
    CertifiedSolution
        Balls for ``s*``, ``J``, ``Q``, ``f~``, ``P``, ``W``, ``V`` and
        ``c``, with ``certified_digits`` and the certificates used.

    Raises
    ------
    mfstein.ground.errors.NumericalError
        When Krawczyk's test refuses the given ``s*``, the Lyapunov
        certificate fails, or ``c`` cannot be enclosed to ``dps`` digits after
        raising the working precision twice; the message says what to raise.
    mfstein.ground.errors.ParameterError
        Bad input (missing parameters, no model, wrong ``M`` or ``start``).

    Notes
    -----
    The mathematics is in the module docstring; the constant is Theorem 1's
    ``c`` of "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices
    Mean-Field Model in Heavy-Traffic" (sign corrected) for ``M = I``.  A
    supermarket solution whose tail levels were truncated by the float route
    is certified on all ``b`` levels.
    """
    from numeric.precision import check_dps

    model = _model_of(solution, model)
    if start is None:
        start = getattr(solution, "start", None)
    target = check_dps(solution.dps if dps is None else dps)
    inputs = certifier_inputs(solution, model, params, start, M, target)
    best = _raise_precision(_Certifier(inputs), model, target)
    notes = [
        "parameters: "
        + ("as given" if params is not None else "as recorded by the solution")
        + "; the enclosures hold for every value in the parameter balls."
    ]
    trunc = getattr(solution, "truncated_at", None)
    if trunc:
        notes.append(
            f"the float route truncated levels {trunc + 1}..{model.n}; the enclosures are "
            f"for all {model.n} levels."
        )
    return replace(best, notes=[*best.notes, *notes], solution=solution, start=start)
