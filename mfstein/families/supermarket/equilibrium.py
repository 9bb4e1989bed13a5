"""The mean-field equilibrium ``s*`` of the supermarket model, at any precision.

With replacement and service rate ``mu``, summing the drift equations
``f_j(s*) = 0`` of the core paper, eq. (1), over ``j >= k`` telescopes to

    s_k = rho (s_{k-1}^d - s_b^d),   k = 1..b,   s_0 = 1,   rho = lam / mu,

so the whole fixed point is a function of the single unknown ``y = s_b``
(shooting).  For ``rho < 1`` the recursion runs forwards from ``s_0 = 1``;
``y -> s_b(y) - y`` is decreasing, and a safeguarded Newton / bisection
iteration on ``y`` converges quadratically.  The forward recursion amplifies
rounding by up to ``d rho s_{k-1}^{d-1} <= d rho`` per level, so it is carried
out with ``~ b log10(d rho)`` guard digits.  For ``rho >= 1`` the levels sit
near 1 for most ``k`` and the forward recursion would amplify rounding by
``~ d rho`` per level over the whole buffer; there the recursion runs
*backwards*, ``s_{k-1} = (s_k / rho + y^d)^(1/d)`` from ``s_b = y``, which
contracts by ``1 / (d rho s_{k-1}^{d-1})`` per level, and ``y`` solves
``s_0(y) = 1`` (``s_0`` increases with ``y``).  The result is then checked
against ``derive``'s generated drift kernel (``||f(s*)||_inf``) at the working
precision.  The infinite-buffer fixed point is ``s_k = rho^((d^k - 1)/(d - 1))``
(``rho^k`` for ``d = 1``).  Sampling without replacement makes the drift depend
on ``N``; its fixed point is found by Newton's method on derive's kernels.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
from mpmath import mpf

from derive.models.occupancy_levels import levels_above, occupancy_exponent
from mfstein.families.supermarket.member import Member, supermarket_member
from mfstein.ground.errors import ParameterError, check_int
from mfstein.ground.limits import MAX_D
from numeric.precision import NumericalError, check_dps, parse_lam, to_mpf

#: Above this buffer size the drift residual is checked with the telescoped
#: identity instead of derive's generated kernel (whose first symbolic
#: derivation costs ~50 s at b = 1000; it is cached on disk afterwards).
KERNEL_CHECK_MAX_B = 300
#: Largest number of levels the truncated infinite-buffer fixed point may have.
INF_MAX_LEVELS = 2000


def check_b(b: Any, *, allow: tuple[str, ...] = ("inf",)) -> int | str:
    """Validate the buffer size: an integer ``>= 1`` or one of the words in ``allow``
    (the one rule, :func:`mfstein.ground.numbers.parse_integer_or_word`, which the
    command line's ``--b`` also reads)."""
    from mfstein.ground.limits import NUMERIC_MAX_B
    from mfstein.ground.numbers import parse_integer_or_word

    return parse_integer_or_word("b", b, 1, NUMERIC_MAX_B, tuple(allow))


def guard_digits(b: int, d: int, rho: mpf) -> int:
    """Guard digits for the shooting recursion (forward for ``rho < 1``, else backward).

    Forward: ``b log10(max(d rho, 1))`` plus margin.  Backward: the sum over the
    levels of ``log10 max(1, 1 / (d rho s_{k-1}^{d-1}))``, from a 30-digit probe
    (only the few levels near the top, where ``s`` falls towards ``s_b``, expand).
    """
    if rho < 1:
        return int(b * math.log10(max(float(d * rho), 1.0))) + 15
    with mpmath.workdps(30):
        s = _backward_shooting(+rho, b, d)
        total = sum(
            max(0.0, -math.log10(float(d * rho * s[k] ** (d - 1)))) for k in range(b - 1) if d > 1
        )
    return int(total) + 15


def _shoot(y: mpf, rho: mpf, b: int, d: int) -> tuple[list[mpf] | None, mpf, mpf]:
    """Run ``s_k = rho (s_{k-1}^d - y^d)``; return (s, s_b - y, d(s_b - y)/dy).

    ``s`` is None when some ``s_k``, ``k < b``, drops below ``y`` (then ``y`` is
    too large and ``s_b - y`` is not defined); ``s_b < y`` alone is a negative
    residual, on which Newton's step is still valid.
    """
    t = y**d
    dt = d * y ** (d - 1) if d > 1 else mpf(1)
    s_prev, ds_prev = mpf(1), mpf(0)
    out = []
    for k in range(b):
        s = rho * (s_prev**d - t)
        ds = rho * (d * s_prev ** (d - 1) * ds_prev - dt) if d > 1 else rho * (ds_prev - dt)
        if s < y and k < b - 1:
            return None, s - y, ds - 1
        out.append(s)
        s_prev, ds_prev = s, ds
    return out, s_prev - y, ds_prev - 1


def _shooting(rho: mpf, b: int, d: int) -> list[mpf]:
    """Safeguarded Newton on the scalar unknown ``y = s_b`` (current precision)."""
    if rho >= 1:
        return _backward_shooting(rho, b, d)
    lo, hi = mpf(0), mpf(1)
    y = mpf(0)
    tol = mpf(2) ** (-mpmath.mp.prec + 4)
    best = None
    for _ in range(20 * mpmath.mp.prec):
        s, r, dr = _shoot(y, rho, b, d)
        if s is None or r < 0:
            hi = y
        else:
            lo = y
            best = s
            if r == 0:
                return s
        step = -r / dr if (s is not None and dr != 0) else None
        if step is not None and abs(step) <= tol * y:
            return s  # Newton has converged (approached from either side)
        y_new = y + step if step is not None else None
        if y_new is None or not lo < y_new < hi:
            y_new = (lo + hi) / 2
        if hi - lo <= tol * max(hi, mpf(2) ** (-mpmath.mp.prec * 4)) or abs(y_new - y) <= tol * y:
            s, r, _ = _shoot(y_new, rho, b, d)
            if s is not None:
                return s
            return best if best is not None else _shoot(lo, rho, b, d)[0]
        y = y_new
    raise NumericalError(f"the equilibrium shooting did not converge for b = {b}, d = {d}.")


def _shoot_back(y: mpf, rho: mpf, b: int, d: int) -> tuple[list[mpf], mpf, mpf]:
    """Run ``s_{k-1} = (s_k / rho + y^d)^(1/d)`` from ``s_b = y``; return
    ``(s_1..s_b, s_0 - 1, d s_0 / dy)``."""
    t = y**d
    dt = d * y ** (d - 1) if d > 1 else mpf(1)
    s, ds = y, mpf(1)
    out = [y]
    inv_d = mpf(1) / d
    for _ in range(b):
        inner = s / rho + t
        s_new = inner**inv_d if d > 1 else inner
        dinner = ds / rho + dt
        ds = dinner / (d * s_new ** (d - 1)) if d > 1 else dinner
        s = s_new
        out.append(s)
    out.pop()  # s_0
    out.reverse()
    return out, s - 1, ds


def _backward_shooting(rho: mpf, b: int, d: int) -> list[mpf]:
    """``s*`` for ``rho >= 1``: bracketed Newton on ``s_0(y) = 1`` (current precision)."""
    lo, hi = mpf(0), mpf(1)
    guess = (1 - 1 / rho) ** (mpf(1) / d) if d > 1 else mpf(1) / (b + 1)
    y = min(max(guess, mpf(2) ** -20), mpf(1) - mpf(2) ** -20)
    tol = mpf(2) ** (-mpmath.mp.prec + 4)
    last_width = hi - lo
    for it in range(20 * mpmath.mp.prec):
        s, g, dg = _shoot_back(y, rho, b, d)
        if g == 0:
            return s
        if g < 0:
            lo = y
        else:
            hi = y
        y_new = y - g / dg if dg > 0 else None
        if y_new is None or not lo < y_new < hi or (it % 4 == 3 and hi - lo > last_width / 2):
            y_new = (lo + hi) / 2
        if it % 4 == 3:
            last_width = hi - lo
        if abs(y_new - y) <= tol * y or hi - lo <= tol * hi:
            return _shoot_back(y_new, rho, b, d)[0]
        y = y_new
    raise NumericalError(f"the equilibrium shooting did not converge for b = {b}, d = {d}.")


def infinite_buffer_equilibrium(rho: mpf, d: int, floor: mpf) -> list[mpf]:
    """``s_k = rho^(e_k)``, ``e_k = (d^k - 1)/(d - 1)`` (``k`` if ``d = 1``;
    :func:`derive.models.supermarket.occupancy_exponent`), while ``s_k >= floor``."""
    out = []
    k = 1
    while True:
        s = rho ** occupancy_exponent(d, k)
        if s < floor:
            return out
        out.append(s)
        k += 1


def equilibrium(
    lam: Any,
    b: int | str,
    d: int = 2,
    *,
    dps: int = 30,
    mu: Any = 1,
    replacement: bool = True,
    N: int | None = None,
) -> list[mpf]:
    """The mean-field fixed point ``s*_1 .. s*_b`` (``f(s*) = 0``, the core paper, eq. (1)).

    Parameters
    ----------
    lam:
        Arrival rate per server, ``> 0`` (str parsed exactly, or int/float/mpf).
    b:
        Buffer size, an integer ``>= 1``, or ``"inf"`` for the infinite-buffer
        fixed point truncated where ``s_k < 10^-dps`` (needs ``lam < mu``).
    d:
        Servers sampled per arrival, ``>= 1``.
    dps:
        Significant decimal digits of the result, ``>= 5``.
    mu:
        Service rate ``> 0``.
    replacement:
        ``False`` samples ``d`` distinct servers; then ``N`` (``>= d``) is required.
    N:
        Number of servers for the N-dependent drift without replacement.

    Returns
    -------
    list of mpf
        ``s*_k`` with at least ``dps`` correct significant digits each (the
        shooting runs with guard digits and the drift residual is verified).
    """
    dps = check_dps(dps)
    d = check_int("d", d, 1, MAX_D)
    b = check_b(b)
    with mpmath.workdps(dps + 10):
        lam_ = parse_lam(lam)
        mu_ = to_mpf("mu", mu)
        if mu_ <= 0:
            raise ParameterError(f"mu must be > 0, got {mu!r}.")
        rho = lam_ / mu_
    if not replacement:
        if N is None:
            raise ParameterError("N must be given (an integer >= d) when replacement is False.")
        N = check_int("N", N, max(d, 1))
        if b == "inf":
            raise ParameterError("b must be a finite integer >= 1 when replacement is False.")
        return _newton_equilibrium(supermarket_member(b, d, lam_, mu_, N), b, dps)
    if b == "inf":
        if rho >= 1:
            raise ParameterError(
                f"lam must be < mu for the infinite buffer (b = inf), got lam/mu = "
                f"{mpmath.nstr(rho, 8)}."
            )
        with mpmath.workdps(dps + 10):
            rho = lam_ / mu_
            levels = levels_above(rho, d, dps + 5)
            if levels > INF_MAX_LEVELS:
                raise ParameterError(
                    f"b = inf would need {levels} levels at lam/mu = {mpmath.nstr(rho, 8)} "
                    f"(more than {INF_MAX_LEVELS}); give an integer b."
                )
            s = infinite_buffer_equilibrium(rho, d, mpf(10) ** (-dps - 5))
        if not s:
            raise ParameterError(f"lam is so small that s*_1 < 10^-{dps}; raise lam or dps.")
        return s
    return verified_shooting(supermarket_member(b, d, lam_, mu_), given_rates(lam, mu), dps)


def given_rates(lam: Any, mu: Any) -> Callable[[], tuple[mpf, mpf]]:
    """The rates ``(lam, mu)`` as given, read at the working precision of each call
    (:func:`numeric.precision.to_mpf`: strings exactly, then rounded once)."""
    return lambda: (to_mpf("lam", lam), to_mpf("mu", mu))


def verified_shooting(member: Member, rates: Callable[[], tuple[mpf, mpf]], dps: int) -> list[mpf]:
    """``s*`` of a member sampling with replacement, to ``dps`` digits: the shooting
    at ``dps`` + :func:`guard_digits` digits on ``rho = lam / mu``, the rates
    ``rates()`` read at that precision (the rates as given, :func:`given_rates`, or
    a prepared problem's values,
    :func:`mfstein.families.supermarket.solver.problem_rates`), then the drift residual
    checked on the member's kernels (:func:`verify_equilibrium`).  ``member.lam``
    and ``member.mu`` are the rates at ``dps + 10`` digits."""
    b, d = member.b, member.d
    with mpmath.workdps(dps + 10):
        rho = member.lam / member.mu
    guard = guard_digits(b, d, rho)
    with mpmath.workdps(dps + guard):
        lam, mu = rates()
        rho = lam / mu
        s = _shooting(rho, b, d)
    verify_equilibrium(s, member, dps)
    return s


def drift_residual(s: list[mpf], member: Member) -> mpf:
    """``||f(s)||_inf`` with the member's generated mpmath drift kernel."""
    return max(abs(v) for v in member.kernels(len(s), "base").f(s, member.params()))


def telescoped_residual(s: list[mpf], rho: mpf, d: int) -> mpf:
    """``max_k |s_k - rho (s_{k-1}^d - s_b^d)|``: the summed form of eq. (1)."""
    t = s[-1] ** d
    prev = mpf(1)
    worst = mpf(0)
    for v in s:
        worst = max(worst, abs(v - rho * (prev**d - t)))
        prev = v
    return worst


def verify_equilibrium(s: list[mpf], member: Member, dps: int) -> None:
    """Raise :class:`NumericalError` unless the drift vanishes to ``10^-(dps+2)``."""
    b = len(s)
    with mpmath.workdps(dps + 10):
        if b <= KERNEL_CHECK_MAX_B:
            res = drift_residual(s, member)
        else:
            res = telescoped_residual(s, member.lam / member.mu, member.d)
        if res > mpf(10) ** (-dps - 2):
            raise NumericalError(
                f"the equilibrium residual {mpmath.nstr(res, 3)} exceeds 10^-{dps + 2} (b = {b})."
            )


def _newton_equilibrium(member: Member, b: int, dps: int) -> list[mpf]:
    """Newton's method on the member's N-dependent drift (``b`` leading levels),
    started at the with-replacement s*."""
    lam, mu, d, N = member.lam, member.mu, member.d, member.N
    guard = guard_digits(b, d, lam / mu)
    with mpmath.workdps(dps + guard):
        p = member.rounded().params()
        k = member.kernels(b, "base")
        s = _shooting(lam / mu, b, d)
        for _ in range(200):
            f = k.f(s, p)
            step = mpmath.lu_solve(k.jac(s, p), mpmath.matrix(f))
            s = [s[i] - step[i] for i in range(b)]
            if max(abs(step[i]) for i in range(b)) <= mpf(10) ** (-dps - guard + 5):
                break
        else:
            raise NumericalError(f"Newton's method did not converge (b = {b}, N = {N}).")
    with mpmath.workdps(dps + 10):
        res = max(abs(v) for v in k.f(s, p))
        if res > mpf(10) ** (-dps - 2):
            raise NumericalError(f"the equilibrium residual {mpmath.nstr(res, 3)} is too large.")
        # C(N s, d)/C(N, d) is a sampling probability only where N s >= d - 1 (or s = 0);
        # extended to all s it can push the fixed point out of 1 >= s_1 >= ... >= s_b >= 0.
        if min(s) < 0 or any(s[i] < s[i + 1] for i in range(b - 1)) or s[0] > 1:
            raise ParameterError(
                f"b = {b} is too large for the without-replacement mean field at N = {N}: "
                "its fixed point leaves 1 >= s_1 >= ... >= s_b >= 0 (some N s*_k < d - 1), "
                "so use a smaller b or sampling with replacement."
            )
    return s


def fixed_point_at(member: Member, b: int, wp: int) -> list[mpf]:
    """``s*`` of the member's ``b`` leading levels with ``wp`` correct digits: the
    shooting with its own guard digits (:func:`guard_digits`) with replacement,
    Newton's method on the N-dependent drift without (``N`` given); no residual
    check (the callers compare two working precisions)."""
    if member.N is not None:
        return _newton_equilibrium(member, b, wp)
    lam, mu, d = member.lam, member.mu, member.d
    with mpmath.workdps(wp + guard_digits(b, d, lam / mu)):
        return _shooting(lam / mu, b, d)


def reference_point(
    lam: Any, b: int, d: int = 2, *, replacement: bool = True, N: int | None = None, dps: int = 30
) -> tuple[list[mpf], str | None]:
    """The point finite-N statistics are centred at, and a note when it is a fallback.

    With replacement this is :func:`equilibrium`.  Without replacement it is the
    fixed point of the N-dependent drift when that lies in
    ``1 >= s_1 >= ... >= s_b >= 0``; otherwise (large b, small N) the N-dependent
    mean field has no meaning and the with-replacement fixed point -- the common
    ``N -> infinity`` limit of both samplings -- is returned, with a note saying so.
    """
    if replacement:
        return equilibrium(lam, b, d, dps=dps), None
    try:
        return equilibrium(lam, b, d, dps=dps, replacement=False, N=N), None
    except ParameterError as exc:
        note = f"{exc} Statistics are centred at the with-replacement fixed point instead."
        return equilibrium(lam, b, d, dps=dps), note
