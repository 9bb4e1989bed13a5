"""Theorem 1's constant ``c`` (E||S - s*||^2 ~ c/N) at any precision and any buffer.

:func:`solve` computes, for one buffer size, the fixed point ``s*``, ``J(s*)``,
``Q(s*)``, ``P`` (``P J + J^T P = -M``), ``W`` (``J W + W J^T + Q = 0``), the
refined bias ``V`` and ``c = tr(P Q)`` by independent routes:

``shooting``    ``tr(P Q)`` with ``P`` from the structure-aware column shooting;
``covariance``  ``tr(M W)`` with ``W`` from the dual shooting (duality
                ``tr(P Q) = tr(M W)``, design notes);
``spectral``    ``tr(P Q)`` via the symmetrised eigen-decomposition, when its
                cancellation (``2 log10(max D / min D)`` digits) stays moderate;
``kronecker``   ``tr(P Q)`` from the paper's vectorised ``b^2 x b^2`` system
                (seed 000, Theorem 1), for small ``b``.

The reference value (``shooting``, reported as ``constant``) is computed at
``wp + extra`` digits and every other route at ``wp`` digits (``wp`` = requested
digits + the guard digits the shooting recursions need), the fixed point being
recomputed at each precision; ``digits`` is the number of significant digits on
which all of them agree, capped at the requested ``dps`` -- so a precision loss
in either working precision or an error in any route shows up as a
disagreement.  If that falls short of ``dps`` after raising the guard
twice, :class:`numeric.precision.NumericalError` is raised.

:func:`bound` adds ``b = "auto"`` (the smallest buffer beyond which ``c`` no
longer changes at the requested precision) and ``b = "inf"``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
from mpmath import mpf

from mfstein.errors import ParameterError, check_int
from numeric import lyapunov
from numeric.equilibrium import (
    _newton_equilibrium,
    _shooting,
    check_b,
    equilibrium,
    guard_digits,
    model_and_params,
)
from numeric.precision import NumericalError, agreeing_digits, check_dps, parse_lam, to_mpf, to_str
from numeric.refined import refined_bias
from numeric.solution import MeanFieldSolution

#: The dense Kronecker route is run for b up to this size inside :func:`solve`.
KRONECKER_MAX_B = 8
#: The spectral route is run when it needs at most this many extra digits ...
SPECTRAL_MAX_GUARD = 400
#: ... and b is at most this (mpmath's dense symmetric eigensolver is O(b^3)).
SPECTRAL_MAX_B = 24
#: Largest buffer ``b = "auto"`` will try.
AUTO_MAX_B = 2000

ALL_ROUTES = ("shooting", "covariance", "spectral", "kronecker")

MSpec = Any  # None | "identity" | "diag:a,b,..." | square matrix | callable b -> matrix


def _m_factory(M: MSpec) -> Callable[[int], mpmath.matrix]:
    """Turn the ``M`` argument into a function ``b -> symmetric b x b mpmath.matrix``."""
    if M is None or (isinstance(M, str) and M.strip().lower() == "identity"):
        return lambda b: mpmath.eye(b)
    if isinstance(M, str) and M.strip().lower().startswith("diag:"):
        items = [x for x in M.strip()[5:].split(",") if x.strip()]
        if not items:
            raise ParameterError("M = diag:... needs at least one entry, e.g. diag:1,0,0.")
        entries = [to_mpf("M", x) for x in items]

        def diag(b: int) -> mpmath.matrix:
            if len(entries) > b:
                raise ParameterError(
                    f"M has {len(entries)} diagonal entries but b = {b}; give at most b entries."
                )
            vals = [to_mpf("M", x) for x in items] + [mpf(0)] * (b - len(entries))
            return mpmath.diag(vals)

        return diag
    if isinstance(M, str):
        raise ParameterError(f"M must be 'identity' or 'diag:a,b,...', got {M!r}.")
    if callable(M):
        return lambda b: _check_m(mpmath.matrix(M(b)), b)
    fixed = M

    def given(b: int) -> mpmath.matrix:
        return _check_m(mpmath.matrix(fixed), b)

    return given


def _check_m(M: mpmath.matrix, b: int) -> mpmath.matrix:
    if M.rows != b or M.cols != b:
        raise ParameterError(f"M must be a {b} x {b} matrix (b = {b}), got {M.rows} x {M.cols}.")
    for i in range(b):
        for j in range(i):
            if M[i, j] != M[j, i]:
                raise ParameterError("M must be symmetric.")
    return M


def _fixed_point(lam: mpf, mu: mpf, b: int, d: int, N: int | None, wp: int) -> list[mpf]:
    """``s*`` with ``wp`` correct digits (shooting with its own guard digits)."""
    if N is not None:
        return _newton_equilibrium(lam, mu, b, d, N, wp)
    with mpmath.workdps(wp + guard_digits(b, d, lam / mu)):
        return _shooting(lam / mu, b, d)


def _routes_at(
    lam_in: Any,
    mu_in: Any,
    b: int,
    d: int,
    N: int | None,
    Mf: Callable[[int], mpmath.matrix],
    wp: int,
    routes: tuple[str, ...],
    full: bool,
) -> dict[str, Any]:
    """Compute the requested routes at ``wp`` significant digits."""
    with mpmath.workdps(wp):
        lam = to_mpf("lam", lam_in)
        mu = to_mpf("mu", mu_in)
    s = _fixed_point(lam, mu, b, d, N, wp)
    out: dict[str, Any] = {}
    with mpmath.workdps(wp):
        model, p = model_and_params(b, d, lam, mu, N)
        k = model.kernels("mpmath")
        s = [+x for x in s]
        J = k.jac(s, p)
        Q = k.Q(s, p)
        M = Mf(b)
        out.update(lam=lam, s=s, J=J, Q=Q, M=M, kernels=k, p=p)
        if "shooting" in routes or full:
            P = lyapunov.solve_shooting(J, M)
            out["P"] = P
            out["shooting"] = _trace_product(P, Q)
        if "covariance" in routes or full:
            W = lyapunov.solve_dual_shooting(J, Q)
            out["W"] = W
            out["covariance"] = _trace_product(M, W)
    if "spectral" in routes:
        extra = lyapunov.spectral_guard_digits(J)
        if extra <= SPECTRAL_MAX_GUARD and b <= SPECTRAL_MAX_B:
            wps = wp + math.ceil(extra) + 10
            s2 = _fixed_point(lam, mu, b, d, N, wps)
            with mpmath.workdps(wps):
                J2, Q2 = k.jac(s2, p), k.Q(s2, p)
                out["spectral"] = _trace_product(lyapunov.solve_spectral(J2, Mf(b)), Q2)
    if "kronecker" in routes and b <= KRONECKER_MAX_B:
        with mpmath.workdps(wp):
            out["kronecker"] = _trace_product(lyapunov.solve_kronecker(J, M), Q)
    return out


def _trace_product(A: mpmath.matrix, B: mpmath.matrix) -> mpf:
    n = A.rows
    return mpmath.fsum(A[i, j] * B[j, i] for i in range(n) for j in range(n))


def _validate(lam: Any, d: Any, dps: Any, mu: Any, N: Any, replacement: bool):
    dps = check_dps(dps)
    d = check_int("d", d, 1)
    with mpmath.workdps(dps + 20):
        lam_ = parse_lam(lam)
        mu_ = to_mpf("mu", mu)
    if mu_ <= 0:
        raise ParameterError(f"mu must be > 0, got {mu!r}.")
    if not replacement:
        if N is None:
            raise ParameterError("N must be given (an integer >= d) when replacement is False.")
        N = check_int("N", N, max(d, 1))
    else:
        N = None
    return lam_, d, dps, mu_, N


def _inf_buffer(lam: mpf, mu: mpf, d: int, dps: int) -> int:
    """Buffer size at which the infinite-buffer fixed point falls below ``10^-dps``."""
    if lam >= mu:
        raise ParameterError(
            "lam must be < mu for b = inf: the infinite-buffer Jacobian is not Hurwitz "
            f"(got lam/mu = {mpmath.nstr(lam / mu, 8)})."
        )
    return len(equilibrium(lam, "inf", d, dps=dps + 5, mu=mu)) + 1


def solve(
    lam: Any,
    b: int | str,
    d: int = 2,
    *,
    dps: int = 30,
    M: MSpec = None,
    mu: Any = 1,
    replacement: bool = True,
    N: int | None = None,
    routes: tuple[str, ...] = ALL_ROUTES,
) -> MeanFieldSolution:
    """Equilibrium, ``P``, ``W``, ``V`` and the constant ``c`` for one buffer size.

    Parameters
    ----------
    lam:
        Arrival rate per server ``> 0`` (strings parsed exactly).
    b:
        Buffer size ``>= 1``, or ``"inf"`` (truncated where ``s*_k < 10^-dps``).
    d:
        Servers sampled per arrival, ``>= 1``.
    dps:
        Requested significant digits, ``>= 5``.
    M:
        Quadratic observable ``(S - s*)^T M (S - s*)``: ``None``/``"identity"``,
        ``"diag:a,b,..."`` (padded with zeros), a symmetric ``b x b`` matrix or a
        callable ``b -> matrix``.
    mu, replacement, N:
        Service rate; sampling without replacement needs ``N``.
    routes:
        Subset of :data:`ALL_ROUTES` (``shooting`` and ``covariance`` always run).

    Returns
    -------
    MeanFieldSolution
    """
    lam_, d, dps, mu_, N = _validate(lam, d, dps, mu, N, replacement)
    b = check_b(b)
    if b == "inf":
        if N is not None:
            raise ParameterError("b must be a finite integer >= 1 when replacement is False.")
        b = _inf_buffer(lam_, mu_, d, dps)
    unknown = set(routes) - set(ALL_ROUTES)
    if unknown:
        raise ParameterError(
            f"routes must be among {', '.join(ALL_ROUTES)}, got {sorted(unknown)}."
        )
    Mf = _m_factory(M)
    Mf(b)  # validate now
    with mpmath.workdps(dps + 20):
        s_probe = _fixed_point(lam_, mu_, b, d, N, 20)
        model, p = model_and_params(b, d, +lam_, +mu_, N)
        J_probe = model.kernels("mpmath").jac(s_probe, p)
        growth = max(lyapunov.shooting_growth_digits(J_probe), 0)
    guard = growth + 10
    for _attempt in range(3):
        wp1 = dps + guard
        wp2 = wp1 + max(10, dps // 10)
        others = tuple(r for r in routes if r != "shooting")
        low = _routes_at(lam_, mu_, b, d, N, Mf, wp1, ("covariance", *others), full=False)
        high = _routes_at(lam_, mu_, b, d, N, Mf, wp2, ("shooting",), full=False)
        ref = high["shooting"]
        values = {r: v for r, v in low.items() if r in ALL_ROUTES and r != "shooting"}
        digits = min(agreeing_digits(ref, v) for v in values.values())
        if digits >= dps:
            break
        guard += dps + 20
    else:
        raise NumericalError(
            f"the routes agree on only {digits} of the {dps} requested digits "
            f"(b = {b}, lam = {mpmath.nstr(lam_, 12)}); no result is reported."
        )
    with mpmath.workdps(dps + 10):
        eig = lyapunov.eigenvalues(high["J"])
        if not eig[-1] < 0:
            raise ParameterError(
                f"lam = {mpmath.nstr(lam_, 12)} gives a Jacobian that is not Hurwitz "
                f"(largest eigenvalue {mpmath.nstr(eig[-1], 5)})."
            )
    with mpmath.workdps(wp1):
        k = high["kernels"]
        J = high["J"]
        V = refined_bias(J, low["W"], k.hess_index, k.hess_values(high["s"], high["p"]))
        ftilde = k.ftilde(high["s"], high["p"])
    methods = {"shooting": to_str(ref, dps)}
    methods.update({r: to_str(v, dps) for r, v in values.items()})
    return MeanFieldSolution(
        lam=high["lam"],
        b=b,
        d=d,
        dps=dps,
        s_star=high["s"],
        J=J,
        ftilde=ftilde,
        Q=high["Q"],
        P=high["P"],
        W=low["W"],
        V=V,
        eigenvalues=eig,
        constant=ref,
        digits=min(digits, dps),
        methods=methods,
    )


def auto_buffer(lam: Any, d: int = 2, *, dps: int = 30, M: MSpec = None, mu: Any = 1) -> int:
    """Smallest ``b`` beyond which ``c`` no longer changes at ``dps`` digits.

    Scans ``b = 1, 2, ...`` with the shooting route and stops at the first ``b``
    whose remaining change, bounded by the geometric tail
    ``|c_{b+1} - c_b| / (1 - r)`` with ``r`` the ratio of successive changes, is
    below ``10^-(dps+2) |c_b|``.  Needs ``lam < mu`` (otherwise ``c`` grows
    without limit in ``b``).
    """
    lam_, d, dps, mu_, _ = _validate(lam, d, dps, mu, None, True)
    if lam_ >= mu_:
        raise ParameterError(
            "lam must be < mu for b = auto or inf (for lam >= mu the constant grows "
            "without limit in b); give an integer b."
        )
    Mf = _m_factory(M)
    wp = dps + 15
    prev_c, prev_delta = None, None
    for b in range(1, AUTO_MAX_B + 1):
        with mpmath.workdps(wp + 20):
            model, p = model_and_params(b, d, +lam_, +mu_, None)
            s = _fixed_point(lam_, mu_, b, d, None, 20)
            growth = lyapunov.shooting_growth_digits(model.kernels("mpmath").jac(s, p))
        c = _routes_at(lam_, mu_, b, d, None, Mf, wp + growth, ("shooting",), full=False)[
            "shooting"
        ]
        if prev_c is not None:
            delta = abs(c - prev_c)
            r = delta / prev_delta if prev_delta else mpf(0)
            tail = delta / (1 - r) if r < 1 else mpmath.inf
            if tail <= mpf(10) ** (-dps - 2) * abs(c):
                return b - 1
            prev_delta = delta
        prev_c = c
    raise NumericalError(f"b = auto did not settle below b = {AUTO_MAX_B}; give b explicitly.")


def bound(
    lam: Any,
    b: int | str = "auto",
    d: int = 2,
    *,
    dps: int = 30,
    M: MSpec = None,
) -> MeanFieldSolution:
    """Theorem 1's constant with ``b = "auto"``, ``"inf"`` or an integer buffer.

    ``E[(S - s*)^T M (S - s*)] ~ c/N``; for ``M = I`` the bound is ``c/N``
    (seed 000, Theorem 1 with the sign of the Kronecker form corrected).
    ``b = "auto"`` reports the buffer it settled on in ``MeanFieldSolution.b``.
    """
    b = check_b(b, allow=("auto", "inf"))
    if b == "auto":
        b = auto_buffer(lam, d, dps=dps, M=M)
    return solve(lam, b, d, dps=dps, M=M)
