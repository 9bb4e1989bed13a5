"""Parsing and validating numeric inputs, working precision and digit counting.

Every public function of :mod:`numeric` validates its arguments here, once, and
raises :class:`mfstein.ground.errors.ParameterError` with one sentence naming the
parameter and its allowed range.  Numbers given as strings are parsed exactly in
the working precision (never through a binary float).

It is also the one home of "earning the digits": :func:`earn_digits` computes a
result at two working precisions (:func:`guard_ladder`) and keeps the digits on
which they agree (:func:`agreeing_digits`); every working-precision route calls it.
"""

from __future__ import annotations

import copyreg
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Generic, TypeVar

import mpmath
from mpmath import mpf

import mfstein.ground.limits as _limits
from mfstein.ground.blas import blas_thread_limit, limited_blas
from mfstein.ground.errors import IllConditionedWarning, NumericalError, ParameterError, check_int

__all__ = [
    "MIN_DPS",
    "PRECISIONS",
    "Earned",
    "IllConditionedWarning",
    "NumericalError",
    "ParameterError",
    "agreeing_digits",
    "arrival_rate",
    "blas_thread_limit",
    "check_dps",
    "check_heavy_traffic_below_one",
    "check_precision",
    "earn_digits",
    "guard_ladder",
    "heavy_traffic_lambda",
    "limited_blas",
    "parse_lam",
    "parse_size",
    "to_mpf",
    "to_str",
]

_Low = TypeVar("_Low")
_High = TypeVar("_High")

#: Smallest accepted number of significant digits (declared in :mod:`mfstein.ground.limits`).
MIN_DPS = _limits.MIN_DPS


def check_dps(dps: Any) -> int:
    """Return ``dps`` as an int in ``MIN_DPS .. MAX_DPS`` or raise :class:`ParameterError`."""
    from mfstein.ground.limits import MAX_DPS

    return check_int("dps", dps, MIN_DPS, MAX_DPS)


#: Values of ``precision=`` in every task that has it (``solve``, ``sweep``,
#: ``transient``, ``certify``): ``"dps"`` (``dps`` significant digits earned by two
#: working precisions) or ``"float64"`` (machine numbers; ``dps`` ignored).  The
#: defaults: ``"dps"``, except the transient's ``None`` (``"dps"`` when ``dps`` is
#: given, else ``"float64"``; ``docs/design.md``, "One rule for choosing float64").
PRECISIONS = ("dps", "float64")


def check_precision(precision: Any) -> str:
    """Return ``precision`` if it is one of :data:`PRECISIONS`, else raise
    :class:`ParameterError` in one sentence."""
    if not (isinstance(precision, str) and precision in PRECISIONS):
        raise ParameterError(f"precision must be 'dps' or 'float64', got {precision!r}.")
    return precision


#: The bits of a double's significand: at this working precision or more every float
#: is read exactly.
_DOUBLE_BITS = 53
_make_mpf = mpmath.mp.make_mpf


def to_mpf(name: str, value: Any) -> mpf:
    """Convert ``value`` to an ``mpf`` in the *current* working precision.

    Every value is read by the one number parser, :func:`mfstein.ground.numbers.parse_real`
    (so ``"9/10"``, NumPy scalars and ASCII-only text are accepted or refused
    alike by every route), then rounded once, correctly, to the working precision:
    strings (``"0.9109"``, ``"1e-3"``, ``"91/100"``) are exact, fractions are
    divided exactly, and floats (NumPy's included) are taken at their exact
    binary value.  ``mpf`` values (and SymPy floats) are kept as they are.

    A finite Python float at a working precision of at least 53 bits is its own
    exact value (:func:`mpmath.libmp.from_float`), the number the exact fraction
    rounds to, taken without the fraction.
    """
    from mfstein.ground.numbers import parse_real

    if type(value) is float and mpmath.mp.prec >= _DOUBLE_BITS and math.isfinite(value):
        return _make_mpf(mpmath.libmp.from_float(value))
    if isinstance(value, mpf) or (hasattr(value, "_mpf_") and not isinstance(value, bool)):
        out = mpf(value)
        if not mpmath.isfinite(out):
            raise ParameterError(f"{name} must be a finite real number, got {_show(value)}.")
        return out
    exact = parse_real(name, value)
    prec = mpmath.mp.prec
    return mpf(mpmath.libmp.from_rational(exact.numerator, exact.denominator, prec, "n"))


#: Largest system size accepted in a grid of N (declared in :mod:`mfstein.ground.limits`).
MAX_GRID_EXPONENT = _limits.MAX_GRID_EXPONENT


def parse_size(name: str, text: Any) -> int:
    """A system size given as ``100``, ``1e8``, ``1E+16`` or ``10**6``: an exact integer
    from 1 to ``10**MAX_GRID_EXPONENT``.

    Read exactly by :func:`mfstein.ground.numbers.parse_integer` (the one integer
    parser: ``1e16`` is ``10**16``, with no binary float in between, and a
    size beyond the limit is refused before any integer is built).
    """
    from mfstein.ground.numbers import parse_integer

    return parse_integer(name, text, 1, 10**MAX_GRID_EXPONENT)


def parse_lam(lam: Any) -> mpf:
    """Arrival rate per server ``lam > 0`` as an ``mpf`` at the working precision."""
    from mfstein.ground.limits import MAX_LAM

    out = to_mpf("lam", lam)
    if out <= 0:
        raise ParameterError(f"lam must be > 0, got {_show(lam)}.")
    if out > MAX_LAM:
        raise ParameterError(
            f"lam must be <= {MAX_LAM:g} (the rates lam s^d must stay finite in float64), "
            f"got {_show(lam)}."
        )
    return out


def _show(value: Any) -> str:
    """A value as the user wrote it (decimal text for mpf, never ``mpf('...')``)."""
    if isinstance(value, mpf):
        return mpmath.nstr(value, 15)
    return repr(value)


def heavy_traffic_lambda(gamma: Any, alpha: Any, N: Any, *, dps: int = 30) -> mpf:
    """The heavy-traffic arrival rate ``lam = 1 - gamma / N**alpha`` (the core paper, Section 2).

    Evaluated in ``dps`` significant digits (plus guard digits, then rounded),
    with ``gamma`` and ``alpha`` parsed exactly when given as decimal strings.

    Parameters
    ----------
    gamma:
        ``0 < gamma <= 1``.
    alpha:
        ``alpha >= 0``.
    N:
        Number of servers, an integer ``>= 1``.
    dps:
        Working precision in significant decimal digits, ``>= 5``.
    """
    dps = check_dps(dps)
    N = check_int("N", N, 1)
    with mpmath.workdps(dps + 10):
        g = to_mpf("gamma", gamma)
        a = to_mpf("alpha", alpha)
        if not 0 < g <= 1:
            raise ParameterError(f"gamma must lie in (0, 1], got {gamma!r}.")
        if a < 0:
            raise ParameterError(f"alpha must be >= 0, got {alpha!r}.")
        lam = 1 - g / mpmath.power(N, a)
        if lam <= 0:
            raise ParameterError(
                f"gamma = {gamma} and alpha = {alpha} give lam = 1 - gamma/N^alpha = 0 at "
                f"N = {N}; the arrival rate must be > 0 (take gamma < 1, or alpha > 0 with N > 1)."
            )
    with mpmath.workdps(dps):
        return +lam


def arrival_rate(lam: Any, gamma: Any, alpha: Any, N: Any, *, dps: int = 30) -> mpf:
    """The arrival rate from either form a user may give: ``lam`` itself, or the
    heavy-traffic pair ``(gamma, alpha)`` giving ``lam = 1 - gamma / N**alpha``.

    Exactly one form must be given; the command-line tools all resolve
    ``--lam | --gamma --alpha`` through this function.
    """
    if lam is not None:
        if gamma is not None or alpha is not None:
            raise ParameterError("give either --lam or --gamma with --alpha, not both.")
        with mpmath.workdps(check_dps(dps)):
            return parse_lam(lam)
    if gamma is None or alpha is None:
        raise ParameterError("give --lam, or both --gamma and --alpha.")
    return heavy_traffic_lambda(gamma, alpha, N, dps=dps)


def check_heavy_traffic_below_one(
    gamma: Any, alpha: Any, Ns: list[int], dps: int, *, b: Any = "auto"
) -> None:
    """Refuse a grid where ``lam = 1 - gamma/N^alpha`` is 1 at ``dps`` digits,
    i.e. ``gamma/N^alpha < 10^-dps``.

    A buffer of ``b = auto`` (or ``inf``) needs ``lam < 1``; when ``gamma/N^alpha``
    is below the working precision, the rate rounds to (about) 1 and the solver
    could only say "lam must be < mu", which hides the cause (``N`` too large
    for ``alpha``, ``gamma`` and ``dps``).  The sentence names the first such
    ``N``, the value of ``gamma/N^alpha`` and the largest ``N`` that still works.

    Parameters
    ----------
    gamma, alpha:
        The heavy-traffic pair as given (decimal strings), already range-checked.
    Ns:
        The sizes of the grid.
    dps:
        Working precision (significant decimal digits) of the rate.
    b:
        The buffer option, for the sentence.
    """
    with mpmath.workdps(max(int(dps), 15) + 30):
        g, a = mpmath.mpf(str(gamma)), mpmath.mpf(str(alpha))
        floor = mpmath.power(10, -int(dps))
        for n in Ns:
            eps = g / mpmath.power(n, a)
            if eps >= floor:
                continue
            largest = mpmath.power(g * mpmath.power(10, int(dps)), 1 / a) if a > 0 else None
            most = f" (N <= {mpmath.nstr(largest, 3)} here)" if largest is not None else ""
            shown = str(n) if n < 10**9 else f"{n:.3g}"
            raise ParameterError(
                f"b = {b} needs lam < 1, but gamma = {gamma} and alpha = {alpha} give "
                f"lam = 1 - gamma/N^alpha = 1 - {mpmath.nstr(eps, 3)} at N = {shown}, which is 1 "
                f"to {dps} digits: give an integer b, or sizes with gamma/N^alpha above "
                f"10^-{dps}{most}."
            )


def agreeing_digits(x: Any, y: Any) -> int:
    """Number of significant decimal digits on which ``x`` and ``y`` agree.

    ``floor(-log10(max_i |x_i - y_i| / max_i max(|x_i|, |y_i|)))`` for two
    sequences of the same length (norm-wise: relative to the largest entry, so
    a small entry's disagreement counts only at the scale of the largest), and
    the same with one entry for two numbers.  A huge number (``10**6``) when they
    are equal or both zero.
    """
    xs = list(x) if isinstance(x, Sequence) else [x]
    ys = list(y) if isinstance(y, Sequence) else [y]
    diff = max((abs(a - c) for a, c in zip(xs, ys, strict=True)), default=0)
    if diff == 0:
        return 10**6
    scale = max(abs(v) for v in xs + ys)
    return max(0, int(mpmath.floor(-mpmath.log10(diff / scale))))


def guard_ladder(
    dps: int, guard: int = 10, *, attempts: int = 3, raise_by: int | None = None
) -> list[tuple[int, int]]:
    """The pairs of working precisions ``(wp_low, wp_high)`` a route tries in turn.

    ``wp_low = dps + guard`` and ``wp_high = wp_low + max(10, dps // 10)``; after
    each failed attempt the guard grows by ``raise_by`` (default ``dps + 20``),
    ``attempts`` times in all.
    """
    step = dps + 20 if raise_by is None else raise_by
    out = []
    for _ in range(attempts):
        wp_low = dps + guard
        out.append((wp_low, wp_low + max(10, dps // 10)))
        guard += step
    return out


@dataclass(frozen=True)
class Earned(Generic[_Low, _High]):
    """The outcome of :func:`earn_digits`: both computations, the digits on which
    they agree and the two working precisions they ran at."""

    #: The computation at the lower working precision ``wp_low``.
    low: _Low
    #: The computation at the higher working precision ``wp_high``.
    high: _High
    #: The digits on which the two agree.
    digits: int
    #: The lower working precision, in decimal digits.
    wp_low: int
    #: The higher working precision, in decimal digits.
    wp_high: int

    def errors(self, high: Sequence[Any], low: Sequence[Any]) -> list[Any]:
        """:func:`entry_errors` of matching entries of the two results (evaluated at
        ``wp_high`` digits, the floor at ``wp_low``)."""
        with mpmath.workdps(self.wp_high):
            return entry_errors(high, low, self.wp_low)


def earn_digits(
    dps: int,
    precisions: Sequence[tuple[int, int]],
    low: Callable[[int], _Low],
    high: Callable[[int], _High],
    agreement: Callable[[_Low, _High], int],
    *,
    who: str,
    where: str,
) -> Earned[_Low, _High]:
    """Compute at two working precisions and keep the digits on which they agree.

    The contract every working-precision route of :mod:`numeric` shares (mean
    field, order 2, transient, supermarket).  For each pair
    ``(wp_low, wp_high)`` of ``precisions`` (:func:`guard_ladder`), in turn,
    ``low(wp_low)`` and then ``high(wp_high)`` are computed -- each recomputes
    everything, from the fixed point on, at its own precision -- and
    ``agreement(low, high)`` (evaluated at ``wp_high`` digits, so the difference
    of the results is not rounded) counts the significant digits on which they
    agree (:func:`agreeing_digits`, taken over every route and every reported
    object).  When the only errors are rounding errors amplified by the
    conditioning ``G``, the error at ``wp`` digits is about ``G 10^-wp``: the two
    results then agree on about ``wp_low - log10 G`` digits, which are also
    correct in the higher one, while an error of a route or a lost precision
    shows as a disagreement.  The first pair on which at least ``dps`` digits
    agree is returned (the digits uncapped); if none does,
    :class:`NumericalError` is raised with the sentence "``who`` agree on only
    ``k`` of the ``dps`` requested digits (``where``); no result is reported."
    """
    digits = 0
    for wp_low, wp_high in precisions:
        lo = low(wp_low)
        hi = high(wp_high)
        with mpmath.workdps(wp_high):
            digits = agreement(lo, hi)
        if digits >= dps:
            return Earned(lo, hi, digits, wp_low, wp_high)
    raise NumericalError(
        f"{who} agree on only {digits} of the {dps} requested digits ({where}); "
        "no result is reported."
    )


def to_str(x: mpf, dps: int) -> str:
    """A decimal string of ``x`` with ``dps`` significant digits (JSON safe)."""
    return mpmath.nstr(x, dps, min_fixed=-5, max_fixed=dps + 1, strip_zeros=False)


def entry_errors(high: Sequence[Any], low: Sequence[Any], wp_low: int) -> list[Any]:
    """Per-entry absolute error estimates of values computed at two working precisions.

    ``high`` is what is reported, ``low`` the same computation at ``wp_low < wp_high``
    digits.  When the only error is rounding amplified by the conditioning, the error
    at ``wp`` digits is about ``G 10^-wp``, so ``|high_i - low_i|`` estimates the
    error of ``low_i`` and bounds that of ``high_i`` with room ``10^(wp_high -
    wp_low)``.  Each estimate is at least ``|high_i| 10^-wp_low`` (the lower
    precision's own rounding), so entries that agree by chance claim no more than
    the lower precision carries.  Entry by entry, not norm-wise: a small entry's
    error is its own, not a fraction of the largest entry.
    """
    floor = mpmath.mpf(10) ** (-wp_low)
    return [max(abs(h - lo), abs(h) * floor) for h, lo in zip(high, low, strict=True)]


def round_up(x: Any, n: int = 3) -> str:
    """``x >= 0`` as a decimal string of ``n`` significant digits rounded upwards
    (never below ``x``): the form of a stated error bound.

    Exact: ``x`` (an ``mpf``, int or float) is read as the rational number it is
    and rounded up to ``n`` digits, so ``2.5e-13 + 10^-40`` gives ``2.51e-13``
    (a decimal string of ``x`` rounded to nearest first could round it down to
    ``2.50e-13``, below ``x``).
    """
    if x == 0:
        return "0"
    exact = _exact_fraction(x)
    if exact < 0:
        raise ValueError(f"round_up needs x >= 0, got {x!r}.")
    # the exponent of the leading digit: 10^top <= exact < 10^(top + 1)
    top = len(str(exact.numerator)) - len(str(exact.denominator))
    if Fraction(10) ** top > exact:
        top -= 1
    unit = Fraction(10) ** (top - n + 1)
    digits = -((-exact) // unit)  # ceil(exact / unit): n digits (n + 1 when it carries)
    return f"{Decimal(digits).scaleb(top - n + 1).normalize():.{n - 1}e}"


def _exact_fraction(x: Any) -> Fraction:
    """The exact rational value of an ``mpf``, int, float or ``Fraction``."""
    if isinstance(x, int | float | Fraction):
        return Fraction(x)
    man, exp = mpmath.mpf(x).man_exp
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def format_entries(
    values: Sequence[Any], errors: Sequence[Any], digits: int
) -> tuple[list[str], str]:
    """Decimal strings of ``values`` keeping only correct digits, and an absolute
    error bound that holds for every string, rounding included.

    Entry ``x`` with error estimate ``e`` (:func:`entry_errors`) is printed with
    the most significant digits ``k <= digits`` for which ``e`` is at most half a
    unit of the ``k``-th digit, so the string is within one unit of its last
    digit of the value; when not even one digit is correct (``|x| <= 2e``) it
    prints as ``0``.  The returned bound, ``max_i (u_i/2 + e_i)`` with ``u_i`` the
    unit of the last printed digit (at least ``|string_i - x_i| + e_i``), rounded
    upwards to three digits, holds for every entry; it depends on the digits
    printed and the errors only, not on the last bits of the values, so two runs
    whose values differ below the claimed digits print the same bound.
    """
    strings: list[str] = []
    worst = mpmath.mpf(0)
    with mpmath.workdps(digits + 30):
        for x, e in zip(values, errors, strict=True):
            x, e = +x, abs(+e)
            if x == 0:
                strings.append("0")
                worst = max(worst, e)
                continue
            k = digits
            if e > 0:
                top = int(mpmath.floor(mpmath.log10(abs(x))))
                k = min(digits, int(mpmath.floor(top + 1 - mpmath.log10(2 * e))))
            if k < 1:
                strings.append("0")
                worst = max(worst, abs(x) + e)
                continue
            text = to_str(x, k)
            strings.append(text)
            # rounding to nearest moves x by at most half a unit of its k-th digit
            top = int(mpmath.floor(mpmath.log10(abs(x))))
            half_unit = mpmath.mpf(10) ** (top - k + 1) / 2
            worst = max(worst, max(half_unit, abs(mpmath.mpf(text) - x)) + e)
    return strings, round_up(worst)


def solution_entries(sol: Any, name: str, digits: int, index: Sequence[int] | None = None):
    """``format_entries`` of the array ``name`` (``s_star``, ``V``, ``W``, ``A`` or
    ``B``; matrices row-major) of a :class:`numeric.MeanFieldSolution`, restricted
    to the flat positions ``index`` when given, with the per-entry errors its
    route earned (``sol.errors``)."""
    value = getattr(sol, name)
    if isinstance(value, mpmath.matrix):
        flat = row_major(value)
    else:
        flat = list(value)
    errs = sol.errors.get(name)
    if errs is None:
        raise NumericalError(f"the route that computed this solution earned no error for {name}.")
    if index is not None:
        flat = [flat[i] for i in index]
        errs = [errs[i] for i in index]
    return format_entries(flat, errs, digits)


def row_major(X: Any) -> list[Any]:
    """The entries of an ``mpmath.matrix`` (or any object with ``rows``, ``cols`` and
    ``X[i, j]``), row-major: the order of every flat error list of a matrix."""
    return [X[i, j] for i in range(X.rows) for j in range(X.cols)]


def matrix_rows(flat: Sequence[str], n: int) -> list[list[str]]:
    """A row-major flat list of ``n * n`` strings as ``n`` rows."""
    return [list(flat[i * n : (i + 1) * n]) for i in range(n)]


def mp_matrix_from_entries(rows: int, cols: int, entries: Sequence[Any]) -> Any:
    """The ``rows x cols`` mpmath matrix with ``entries`` in row-major order, each kept as it
    is (an ``mpf``/``mpc`` is not rounded to the working precision): what a pickled mpmath
    matrix is rebuilt with (:func:`_reduce_mp_matrix`)."""
    m = mpmath.matrix(rows, cols)
    for k, value in enumerate(entries):
        m[k // cols, k % cols] = value
    return m


def _reduce_mp_matrix(m: Any) -> tuple:
    """``pickle``'s reduction of an mpmath matrix: its shape and its entries (mpmath makes
    its matrix class per context, which ``pickle`` cannot find by name; a solution at
    working precision holds such matrices)."""
    entries = [m[i, j] for i in range(m.rows) for j in range(m.cols)]
    return mp_matrix_from_entries, (m.rows, m.cols, entries)


copyreg.pickle(type(mpmath.matrix(1, 1)), _reduce_mp_matrix)
