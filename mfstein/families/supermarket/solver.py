"""Theorem 1's constant ``c`` (E||S - s*||^2 ~ c/N) at any precision and any buffer.

:func:`solve_supermarket` computes, for one buffer size, the fixed point ``s*``, ``J(s*)``,
``Q(s*)``, ``P`` (``P J + J^T P = -M``), ``W`` (``J W + W J^T + Q = 0``), the
refined bias ``V`` and ``c = tr(P Q)`` by independent routes.  Up to
:data:`DIRECT_MAX_B` levels:

``shooting``    ``tr(P Q)`` with ``P`` from the structure-aware column shooting;
``covariance``  ``tr(M W)`` with ``W`` from the dual shooting (the duality
                ``tr(P Q) = tr(M W)``: both equal ``int_0^inf tr(M e^{Jt} Q
                e^{J^T t}) dt``);
``spectral``    ``tr(P Q)`` via the symmetrised eigen-decomposition, when its
                cancellation (``2 log10(max D / min D)`` digits) stays moderate;
``kronecker``   ``tr(P Q)`` from the paper's vectorised ``b^2 x b^2`` system
                (Theorem 1 of the core paper), for small ``b``.

Above it the shooting's ``O(b^3)`` recursion and its ``~ b`` guard digits are
replaced by mixed-precision iterative refinement
(:func:`numeric.linalg.tridiagonal.solve_iterative`,
``O(b^2)`` big-number operations per sweep):

``iterative``   ``tr(P Q)`` with ``P`` refined at the higher working precision;
``covariance``  ``tr(M W)`` with ``W`` refined from the dual equation at the
                lower one.

The reference value (``shooting`` or ``iterative``, reported as ``constant``)
is computed at ``wp + extra`` digits and every other route at ``wp`` digits
(``wp`` = requested digits + the guard digits the routes need), the fixed point
being recomputed at each precision; ``digits`` is the number of significant
digits on which all of them agree, capped at the requested ``dps`` -- so a
precision loss in either working precision or an error in any route shows up
as a disagreement.  If that falls short of ``dps`` after raising the guard
twice, :class:`numeric.precision.NumericalError` is raised.

Tail truncation (``lam < mu``, ``d >= 2``, sampling with replacement).  The
levels of the fixed point fall doubly exponentially,
``s*_k <= rho^((d^k - 1)/(d - 1))``, so beyond a level ``K`` they no longer
influence anything at the requested precision.  The argument: write the
``b``-level Jacobian in blocks (head ``1..K``, tail ``K+1..b``)::

    J = [[J_h, E], [F, J_t]],   E = mu e_K e_1^T,   F = lam d s_K^(d-1) e_1 e_K^T.

``J_h`` is exactly the Jacobian of the ``K``-level model at the same point
(row ``K`` does not contain ``s_{K+1}``), and ``F``, the only coupling from
head to tail, has size ``eps = lam d (s*_K)^(d-1)``.  The ``K``-level and
``b``-level fixed points differ, on the head, only through the ``s_{K+1}``
term of ``f_K`` (``s_{K+1} <= rho s_K^d = s_K eps / (d mu)``) and ``y^d`` terms
smaller still; ``Q``'s tail and the difference of ``Q_KK`` are of the same
order ``s_K eps``.  Setting ``eps`` to zero makes ``J`` block upper triangular:
then ``W`` (driven by ``Q``) vanishes on the tail up to ``O(eps)``, the head
blocks of ``W``, ``P`` and ``V`` are those of the ``K``-level model, and
``c = tr(P Q) = tr(M W)`` loses only ``O(eps)`` terms.  A perturbation of
relative size ``eps`` in ``J`` and ``Q`` moves the solution of a stable
Lyapunov equation by at most ``2 eps ||J|| ||X|| ||L^-1||`` with
``||L^-1|| <= ||P_I||_2 <= tr(P_I)`` (``P_I`` solves ``P J + J^T P = -I``;
``C -> X`` is monotone), and the tail's own operator (``J_t ~ -mu (I - N)``,
``N`` the shift) has ``||L_t^-1|| <= (b - K) / mu``.  So :func:`truncation_level`
takes the first ``K`` with
``eps <= 10^-(wp + 2 log10 b + log10(tr(P_I) ||J||) + 10)``, ``tr(P_I)``
estimated in float64 on the head; the change of ``c``, ``s*``, ``W`` and ``V``
is then below ``10^-wp`` relative to their scale.  The result is reported for
the requested ``b``: ``s*`` continues with the tail recursion
``s_k = rho s_{k-1}^d`` (the ``y^d`` correction is below the working precision),
``W``, ``V`` and ``ftilde`` are padded with zeros (negligible to the same
precision), and :attr:`MeanFieldSolution.truncated_at` says where the levels
were cut; ``J``, ``Q``, ``P`` and ``eigenvalues`` are those of the ``K``
leading levels (``P``'s tail is not negligible -- it solves the tail's own
equation -- but it does not enter ``c`` or ``V``).

:func:`solve_supermarket` also takes ``b = "inf"``, and the short form
``numeric.bound`` (:func:`mfstein.families.supermarket.short_form.bound`) adds
``b = "auto"`` (:func:`auto_buffer`: the smallest buffer beyond which ``c`` no longer
changes at the requested precision).

References
----------
.. [1] "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices
   Mean-Field Model in Heavy-Traffic", Theorem 1 (the constant, with the sign
   of its Kronecker form corrected) and Lemma 13.
.. [2] N. Gast and B. Van Houdt, "A Refined Mean Field Approximation",
   Proc. ACM Meas. Anal. Comput. Syst. 1(2), 2017 (the bias ``V``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import mpmath
from mpmath import mpf

from derive.models.open_buffers import buffer_levels
from derive.models.supermarket import occupancy_exponent
from derive.models.supermarket_structure import SupermarketStructure
from mfstein.families.supermarket.equilibrium import (
    check_b,
    equilibrium,
    fixed_point_at,
    verified_shooting,
)
from mfstein.families.supermarket.member import Member, supermarket_member
from mfstein.families.supermarket.refined import refined_bias
from mfstein.ground.errors import ParameterError, check_bool, check_int
from mfstein.ground.limits import MAX_D
from numeric.linalg import tridiagonal as lyapunov
from numeric.meanfield.result_tasks import SOLUTION_TASKS
from numeric.meanfield.solution import MeanFieldSolution, family_fields
from numeric.precision import (
    Earned,
    NumericalError,
    agreeing_digits,
    check_dps,
    earn_digits,
    guard_ladder,
    parse_lam,
    row_major,
    to_mpf,
    to_str,
)
from numeric.quadratic_form import MSpec, quadratic_form

#: The dense Kronecker route is run for b up to this size inside :func:`solve_supermarket`.
KRONECKER_MAX_B = 8
#: The spectral route is run when it needs at most this many extra digits ...
SPECTRAL_MAX_GUARD = 400
#: ... and b is at most this (mpmath's dense symmetric eigensolver is O(b^3)).
SPECTRAL_MAX_B = 24
#: Up to this many (untruncated) levels the shooting routes run; above, the
#: iterative-refinement routes (O(b^2) big-number operations, no growth).
DIRECT_MAX_B = 40
#: Largest buffer ``b = "auto"`` will try.
AUTO_MAX_B = 2000

ALL_ROUTES = ("shooting", "covariance", "spectral", "kronecker", "iterative")


def _routes_at(
    member: Member,
    b: int,
    Mf: Callable[[int], mpmath.matrix],
    wp: int,
    routes: tuple[str, ...],
    full: bool,
    shared: dict | None = None,
) -> dict[str, Any]:
    """Compute the requested routes at ``wp`` significant digits on the member's
    ``b`` leading levels.

    ``shared`` carries objects both working precisions can reuse (the float64
    Schur form of ``J`` for the iterative routes).
    """
    shared = {} if shared is None else shared
    with mpmath.workdps(wp):
        at_wp = member.rounded()
    s = fixed_point_at(at_wp, b, wp)
    out: dict[str, Any] = {}
    direct = b <= DIRECT_MAX_B
    with mpmath.workdps(wp):
        lam, p = at_wp.lam, at_wp.params()
        k = at_wp.kernels(b)
        s = [+x for x in s]
        J = k.jac(s, p)
        Q = k.Q(s, p)
        M = Mf(b)
        out.update(lam=lam, s=s, J=J, Q=Q, M=M, kernels=k, p=p)

        def schur() -> lyapunov.Schur64:
            if "schur" not in shared:
                shared["schur"] = lyapunov.Schur64(lyapunov.float64_matrix(J))
            return shared["schur"]

        if direct and ("shooting" in routes or full):
            P = lyapunov.solve_shooting(J, M)
            out["P"] = P
            out["shooting"] = _trace_product(P, Q)
        if "iterative" in routes:
            P, _ = lyapunov.solve_iterative(J, M, schur=schur())
            out["P"] = P
            out["iterative"] = _trace_product(P, Q)
        if "covariance" in routes or full:
            if direct:
                W = lyapunov.solve_dual_shooting(J, Q)
            else:
                W, _ = lyapunov.solve_iterative(J, Q, dual=True, schur=schur())
            out["W"] = W
            out["covariance"] = _trace_product(M, W)
    if "spectral" in routes:
        extra = lyapunov.spectral_guard_digits(J)
        if extra <= SPECTRAL_MAX_GUARD and b <= SPECTRAL_MAX_B:
            wps = wp + math.ceil(extra) + 10
            s2 = fixed_point_at(at_wp, b, wps)
            with mpmath.workdps(wps):
                J2, Q2 = k.jac(s2, p), k.Q(s2, p)
                out["spectral"] = _trace_product(lyapunov.solve_spectral(J2, Mf(b)), Q2)
    if "kronecker" in routes and b <= KRONECKER_MAX_B:
        with mpmath.workdps(wp):
            out["kronecker"] = _trace_product(lyapunov.solve_vectorised(J, M), Q)
    return out


def _trace_product(A: mpmath.matrix, B: mpmath.matrix) -> mpf:
    """``tr(A B)`` over the stored entries of the sparser factor (``O(nnz)``)."""
    ea, eb = lyapunov.stored_entries(A), lyapunov.stored_entries(B)
    if len(eb) < len(ea):
        ea, eb = eb, ea
    return mpmath.fsum(v * eb[j, i] for (i, j), v in ea.items() if (j, i) in eb)


def _validate(lam: Any, d: Any, dps: Any, mu: Any, N: Any, replacement: bool):
    dps = check_dps(dps)
    d = check_int("d", d, 1, MAX_D)
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


def _coupling_log10(lam: mpf, mu: mpf, d: int, k: int) -> float:
    """``log10(lam d s_k^(d-1))`` with the infinite-buffer bound ``s_k <= rho^(e_k)``
    (:func:`derive.models.supermarket.occupancy_exponent`; ``(d - 1) e_k = d^k - 1``)."""
    with mpmath.workdps(20):
        log_rho = float(mpmath.log10(lam / mu))
        head = float(mpmath.log10(lam * d))
    if k >= 4000:
        return -math.inf
    return head + float((d - 1) * occupancy_exponent(d, k)) * log_rho


def coupled_levels(lam: mpf, mu: mpf, b: int, d: int, N: int | None, dps: int) -> int:
    """A cheap estimate (no kernels, no solves) of the levels :func:`solve_supermarket` will couple.

    All ``b`` when nothing can be truncated (``N`` given, ``d = 1``, ``lam >= mu``),
    else the first level whose coupling is below the truncation target.
    """
    if N is not None or d < 2 or lam >= mu:
        return b
    target = dps + 10 + 2 * math.log10(b) + 10
    k = 1
    while k < b and _coupling_log10(lam, mu, d, k) > -target:
        k += 1
    return k


def auto_levels(lam: mpf, mu: mpf, d: int, dps: int) -> int:
    """Predicted ``b = "auto"``: the first level ``k`` with ``s*_k`` below ``10^-(dps + 2)``
    (the infinite-buffer bound ``s*_k <= rho^(e_k)``): one more than the
    :func:`derive.models.occupancy_levels.levels_above` ``10^-(dps + 2)``
    (:func:`derive.models.open_buffers.buffer_levels`, the rule of ``b = "auto"``)."""
    with mpmath.workdps(30):
        gap = (mu - lam) / mu  # relative rounding only: exact enough for any tiny gap
        if gap <= 0:
            raise ParameterError(
                f"b = auto needs lam < mu (got lam/mu = {mpmath.nstr(lam / mu, 8)})."
            )
    with mpmath.workdps(30 + max(0, -int(mpmath.floor(mpmath.log10(gap))))):
        rho = 1 - gap  # digits enough that rho - 1 gives the gap back to 30 digits
    return buffer_levels("auto", rho, d, dps)


def check_cost(lam: mpf, mu: mpf, b: int, d: int, N: int | None, dps: int) -> None:
    """Refuse (ParameterError) a solve whose estimated time exceeds the budget."""
    from mfstein.ground.limits import check_time, mean_field_seconds

    n = coupled_levels(lam, mu, b, d, N, dps)
    what = f"b = {b} at {dps} digits"
    if n < b:
        what += f" ({n} coupled levels after truncation)"
    check_time(f"solving {what}", mean_field_seconds(n, dps), "lower dps or b.")


def truncation_level(
    lam: Any, b: int, d: int = 2, *, wp: int, mu: Any = 1, N: int | None = None
) -> int | None:
    """:func:`head_levels` of the supermarket model with buffer ``b`` (the short form)."""
    with mpmath.workdps(30):
        lam_, mu_ = to_mpf("lam", lam), to_mpf("mu", mu)
    if N is not None or d < 2 or lam_ >= mu_:
        return None
    return head_levels(supermarket_member(b, d, lam_, mu_, N), wp=wp)


def head_levels(member: Member, *, wp: int) -> int | None:
    """The number ``K < b`` of the member's leading levels that determine the
    solution to ``wp`` digits.

    ``None`` when nothing can be cut: sampling without replacement (``N``
    given), ``d = 1`` (the coupling ``lam d s_k^(d-1) = lam`` never decays) or
    ``lam >= mu``.  Otherwise the first ``K`` whose head-to-tail coupling
    ``eps = lam d s_K^(d-1)`` is below
    ``10^-(wp + 2 log10 b + log10(tr(P_I) ||J||) + 10)`` (module docstring),
    with ``tr(P_I) ||J||_inf`` estimated in float64 on a first cut.
    """
    b, d = member.b, member.d
    with mpmath.workdps(30):
        at30 = member.rounded()
    lam_, mu_ = at30.lam, at30.mu
    if member.N is not None or d < 2 or lam_ >= mu_:
        return None

    def first_below(target: float) -> int:
        k = 1
        while k < b and _coupling_log10(lam_, mu_, d, k) > -target:
            k += 1
        return k

    base = wp + 2 * math.log10(b) + 10
    K0 = first_below(base)
    if K0 >= b:
        return None
    with mpmath.workdps(30):
        s = fixed_point_at(at30, K0, 20)
        J = at30.kernels(K0).jac(s, at30.params())
        J64 = lyapunov.float64_matrix(J)
    import numpy as np

    P_I = lyapunov.Schur64(J64).correction(np.eye(K0), dual=False)
    kappa = float(np.trace(P_I)) * float(np.max(np.sum(np.abs(J64), axis=1)))
    K = first_below(base + max(0.0, math.log10(max(kappa, 1.0))))
    return K if K < b else None


def _pad(sol: dict, b: int, K: int, rho: mpf, d: int) -> dict:
    """Extend ``s*``, ``W``, ``V`` and ``ftilde`` of the ``K``-level solution to ``b`` levels."""
    s = list(sol["s"])
    while len(s) < b:
        s.append(rho * s[-1] ** d)
    W = mpmath.matrix(b, b)
    W._matrix__data.update(lyapunov.stored_entries(sol["W"]))
    zeros = [mpf(0)] * (b - K)
    return {
        "s": s,
        "W": W,
        "V": list(sol["V"]) + zeros,
        "ftilde": list(sol["ftilde"]) + zeros,
    }


def _pad_errors(errors: dict, parts: dict, b: int, K: int, dps: int) -> dict:
    """Per-entry errors of the padded solution (:func:`_pad`).

    A head entry keeps its own error.  A tail entry of ``V`` or ``W`` is printed
    as the padded ``0`` and is charged the truncation's bound, ``10^-(dps + 10)``
    relative to the head's largest entry (module docstring, "Tail truncation");
    a continued ``s*_k = rho s*_(k-1)^d`` is charged the same fraction of itself
    plus of ``s*_K``.
    """
    small = mpf(10) ** (-dps - 10)
    top_v = max((abs(x) for x in parts["V"][:K]), default=mpf(0))
    top_w = max(abs(parts["W"][i, j]) for i in range(K) for j in range(K))
    s = parts["s"]
    s_err = list(errors["s_star"]) + [small * (abs(x) + abs(s[K - 1])) for x in s[K:]]
    v_err = list(errors["V"]) + [small * top_v] * (b - K)
    w_err = []
    for i in range(b):
        for j in range(b):
            w_err.append(errors["W"][i * K + j] if i < K and j < K else small * top_w)
    return {"s_star": s_err, "V": v_err, "W": w_err}


def solve_supermarket(
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
    truncate: bool = True,
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
        Subset of :data:`ALL_ROUTES`; the reference route (``shooting`` up to
        :data:`DIRECT_MAX_B` levels, else ``iterative``) and ``covariance``
        always run.
    truncate:
        Cut the levels beyond :func:`truncation_level` (default); ``False``
        solves all ``b`` levels.

    Returns
    -------
    MeanFieldSolution
        A :class:`numeric.MeanFieldSolution` for the requested ``b``, plus
        ``truncated_at`` and ``note``.
    """
    replacement = check_bool("replacement", replacement)
    truncate = check_bool("truncate", truncate)
    lam_, d, dps, mu_, N = _validate(lam, d, dps, mu, N, replacement)
    b = _check_buffer(b, lam_, mu_, d, dps, N)
    member = supermarket_member(b, d, lam_, mu_, N)
    sol = solve_member(member, dps=dps, M=M, routes=routes, truncate=truncate)
    return replace(sol, M=M)


def solve(*args: Any, **kwargs: Any) -> MeanFieldSolution:
    """Deprecated name of :func:`solve_supermarket` (issue 31: ``numeric.solve`` and
    ``numeric.exact.solve`` are the general entries; the family's own solver is named
    for its family)."""
    warnings.warn(
        "mfstein.families.supermarket.solver.solve is deprecated; use solve_supermarket "
        "(the same arguments).",
        DeprecationWarning,
        stacklevel=2,
    )
    return solve_supermarket(*args, **kwargs)


def solve_member(
    member: Member,
    *,
    dps: int,
    M: MSpec = None,
    routes: tuple[str, ...] = ALL_ROUTES,
    truncate: bool = True,
) -> MeanFieldSolution:
    """:func:`solve_supermarket` on a family member whose rates are validated (``dps`` checked):
    the model travels down to where its kernels are evaluated."""
    lam_, mu_, b, d, N = member.lam, member.mu, member.b, member.d, member.N
    unknown = set(routes) - set(ALL_ROUTES)
    if unknown:
        raise ParameterError(
            f"routes must be among {', '.join(ALL_ROUTES)}, got {sorted(unknown)}."
        )
    Mfull = quadratic_form(M)
    Mfull(b)  # validate now
    check_cost(lam_, mu_, b, d if truncate else 1, N, dps)  # d = 1: every level is solved
    K = head_levels(member, wp=dps + 10) if truncate else None
    n = b if K is None else K
    direct = n <= DIRECT_MAX_B
    reference = "shooting" if direct else "iterative"
    others = tuple(r for r in routes if r not in ("shooting", reference))
    if not direct:
        others = tuple(r for r in others if r not in ("spectral", "kronecker"))
    Mf = _leading_block(Mfull, b)
    growth = _shooting_growth(member, n, dps) if direct else 0
    shared: dict = {}

    def route_values(low: dict) -> dict[str, mpf]:
        return {r: v for r, v in low.items() if r in ALL_ROUTES and r != reference}

    earned = earn_digits(
        dps,
        guard_ladder(dps, growth + 10),
        lambda wp: _routes_at(
            member, n, Mf, wp, ("covariance", *others), full=False, shared=shared
        ),
        # W (hence V) at both precisions too: their entries' errors are measured
        lambda wp: _routes_at(
            member, n, Mf, wp, (reference, "covariance"), full=False, shared=shared
        ),
        lambda low, high: min(
            agreeing_digits(high[reference], v) for v in route_values(low).values()
        ),
        who="the routes",
        where=f"b = {n}, lam = {mpmath.nstr(lam_, 12)}",
    )
    low, high = earned.low, earned.high
    eig = _hurwitz_eigenvalues(high["J"], direct, lam_, dps)
    parts, errors = _bias_and_errors(earned)
    note = ""
    if K is not None:
        with mpmath.workdps(earned.wp_low):
            parts = _pad(parts, b, K, lam_ / mu_, d)
            errors = _pad_errors(errors, parts, b, K, dps)
            note = _truncation_note(K, b, dps, high["s"][-1])
    ref = high[reference]
    methods = {reference: to_str(ref, dps)}
    methods.update({r: to_str(v, dps) for r, v in route_values(low).items()})
    return MeanFieldSolution(
        model="supermarket",
        params={},
        dps=dps,
        n=b,
        s_star=parts["s"],
        J=high["J"],
        ftilde=parts["ftilde"],
        Q=high["Q"],
        P=high["P"],
        W=parts["W"],
        V=parts["V"],
        eigenvalues=eig,
        constant=ref,
        digits=min(earned.digits, dps),
        routes=methods,
        truncated_at=K,
        note=note,
        errors=errors,
        family_fields=family_fields(lam=high["lam"], d=d),
        source_model=member.model,
        tasks=SOLUTION_TASKS,
    )


def _check_buffer(b: Any, lam: mpf, mu: mpf, d: int, dps: int, N: int | None) -> int:
    """The buffer ``b`` as an integer (``"inf"``: where ``s*_k`` falls below ``10^-dps``)."""
    b = check_b(b)
    if b == "inf":
        if N is not None:
            raise ParameterError("b must be a finite integer >= 1 when replacement is False.")
        b = _inf_buffer(lam, mu, d, dps)
    return b


def _leading_block(Mfull: Callable[[int], mpmath.matrix], b: int) -> Callable[[int], mpmath.matrix]:
    """``size -> M``'s leading ``size x size`` block: the observable of the ``K``
    kept levels when the tail is truncated (module docstring)."""

    def Mf(size: int) -> mpmath.matrix:
        full = Mfull(b)
        if size == b:
            return full
        head = mpmath.matrix(size, size)
        for (i, j), v in lyapunov.stored_entries(full).items():
            if i < size and j < size:
                head[i, j] = v
        return head

    return Mf


def _shooting_growth(member: Member, n: int, dps: int) -> int:
    """Digits the column shooting of ``P`` and ``W`` loses on the member's ``n``-level
    Jacobian (:func:`numeric.linalg.tridiagonal.shooting_growth_digits`, from a 20-digit probe)."""
    with mpmath.workdps(dps + 20):
        s_probe = fixed_point_at(member, n, 20)
        probe = member.rounded()
        J_probe = probe.kernels(n).jac(s_probe, probe.params())
        return max(lyapunov.shooting_growth_digits(J_probe), 0)


def _hurwitz_eigenvalues(J: mpmath.matrix, direct: bool, lam: mpf, dps: int) -> list:
    """The eigenvalues of ``J`` (mpmath up to :data:`DIRECT_MAX_B` levels, else
    float64), refusing (:class:`ParameterError`) a ``J`` that is not Hurwitz."""
    with mpmath.workdps(dps + 10):
        eig = lyapunov.eigenvalues(J) if direct else lyapunov.eigenvalues_float64(J)
        if not eig[-1] < 0:
            raise ParameterError(
                f"lam = {mpmath.nstr(lam, 12)} gives a Jacobian that is not Hurwitz "
                f"(largest eigenvalue {mpmath.nstr(eig[-1], 5)})."
            )
    return eig


def _bias_and_errors(earned: Earned) -> tuple[dict, dict]:
    """``s*``, ``W``, the refined bias ``V`` and ``ftilde`` of the higher precision,
    with the per-entry errors of ``s*``, ``V`` and ``W`` from the two precisions
    (:meth:`numeric.precision.Earned.errors`)."""
    low, high = earned.low, earned.high
    with mpmath.workdps(earned.wp_low):
        kl = low["kernels"]
        V_low = refined_bias(low["J"], low["W"], kl.hess_index, kl.hess_values(low["s"], low["p"]))
    with mpmath.workdps(earned.wp_high):
        k = high["kernels"]
        V = refined_bias(high["J"], high["W"], k.hess_index, k.hess_values(high["s"], high["p"]))
        ftilde = k.ftilde(high["s"], high["p"])
        parts = {"s": high["s"], "W": high["W"], "V": V, "ftilde": ftilde}
        errors = {
            "s_star": earned.errors(high["s"], low["s"]),
            "V": earned.errors(V, V_low),
            "W": earned.errors(row_major(high["W"]), row_major(low["W"])),
        }
    return parts, errors


def _truncation_note(K: int, b: int, dps: int, s_K: mpf) -> str:
    """The sentence :attr:`MeanFieldSolution.note` carries for a truncated solve."""
    return (
        f"levels {K + 1}..{b} truncated: their coupling to the first {K} levels is "
        f"below 10^-{dps + 10} relative (s*_{K} = {mpmath.nstr(s_K, 3)}); "
        "J, Q, P and the eigenvalues are of the first "
        f"{K} levels, s*, V, W and ftilde padded to b = {b}."
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
    Mf = quadratic_form(M)
    predicted = auto_levels(lam_, mu_, d, dps)
    if predicted > DIRECT_MAX_B:
        fall = "geometrically (s*_k ~ rho^k)" if d == 1 else "doubly exponentially"
        raise ParameterError(
            f"b = auto at 1 - lam/mu = {mpmath.nstr((mu_ - lam_) / mu_, 3)}, d = {d} and {dps} "
            "digits would "
            f"need about {min(predicted, 10**6)} levels (they fall only {fall}); b = auto scans "
            f"at most {DIRECT_MAX_B} levels: give an integer b, or lower dps."
        )
    wp = dps + 15
    member = supermarket_member(DIRECT_MAX_B, d, lam_, mu_)
    prev_c, prev_delta = None, None
    for b in range(1, DIRECT_MAX_B + 1):
        with mpmath.workdps(wp + 20):
            probe = member.rounded()
            s = fixed_point_at(member, b, 20)
            growth = lyapunov.shooting_growth_digits(probe.kernels(b).jac(s, probe.params()))
        c = _routes_at(member, b, Mf, wp + growth, ("shooting",), full=False)["shooting"]
        if prev_c is not None:
            delta = abs(c - prev_c)
            r = delta / prev_delta if prev_delta else mpf(0)
            tail = delta / (1 - r) if r < 1 else mpmath.inf
            if tail <= mpf(10) ** (-dps - 2) * abs(c):
                return b - 1
            prev_delta = delta
        prev_c = c
    raise NumericalError(
        f"b = auto did not settle within b = {DIRECT_MAX_B} levels; give b explicitly."
    )


def solve_model(
    problem: Any, params: Mapping[str, Any] | None = None, *, dps: int, M: MSpec
) -> MeanFieldSolution:
    """The mean-field fast path of the supermarket family (and JSQ(L)) on the prepared
    problem ``numeric.solve`` gives it (:class:`numeric.prepared.problem.PreparedProblem`,
    the protocol of :mod:`numeric.meanfield.fast_paths`): :func:`solve_supermarket` on the rates
    the model's ``info.structure`` names, read from the problem's values (names checked
    and values read once there, :func:`problem_member`), reported in the model's terms.
    ``solve_model(model, params, dps=, M=)`` (the old protocol) prepares the problem
    first and warns."""
    if params is not None:
        from numeric.prepared.problem import prepare_problem

        warnings.warn(
            "solve_model(model, params, ...) is deprecated; pass the prepared problem "
            "(numeric.prepared.problem.prepare_problem(model, params)).",
            DeprecationWarning,
            stacklevel=2,
        )
        problem = prepare_problem(problem, params)
    model = problem.model
    member, dps = problem_member(problem, dps)
    sol = solve_member(member, dps=dps, M=M)
    with mpmath.workdps(dps + 10):
        values = problem.values_now()
    params_text = {k: mpmath.nstr(v, dps) for k, v in values.items()}
    return replace(sol, model=model.name, params=params_text, free=list(range(model.n)))


def problem_member(problem: Any, dps: int) -> tuple[Member, int]:
    """The :class:`mfstein.families.supermarket.member.Member` of a prepared problem
    (:class:`numeric.prepared.problem.PreparedProblem`) of a supermarket-family model,
    and ``dps`` checked: the arrival and service rates are the problem's values at
    ``dps + 20`` digits (:meth:`~numeric.prepared.problem.PreparedProblem.values_now`,
    the same correctly rounded reading as parsing them afresh), validated as the short
    forms validate theirs; ``N`` (sampling without replacement) the integer given."""
    model = problem.model
    st = SupermarketStructure.read(model.info.structure)
    service, replacement = st.service, st.replacement
    with mpmath.workdps(check_dps(dps) + 20):
        values = problem.values_now()
    mu = values[service] if service else str(st.mu)
    N = None if replacement else problem.params["N"]
    lam_, _, dps, mu_, N = _validate(values[st.arrival], st.d, dps, mu, N, replacement)
    check_b(model.n)
    return Member(model, lam_, mu_, N), dps


def problem_rates(problem: Any) -> Callable[[], tuple[mpf, mpf]]:
    """The arrival and service rates of a prepared problem of a supermarket-family
    model (:class:`numeric.prepared.problem.PreparedProblem`), read at the working
    precision of each call: the problem's values there
    (:meth:`~numeric.prepared.problem.PreparedProblem.values_now`, the same correctly
    rounded reading as parsing the rates afresh), ``mu`` from the model's structure
    when it is built in."""
    st = SupermarketStructure.read(problem.model.info.structure)
    service = st.service

    def now() -> tuple[mpf, mpf]:
        values = problem.values_now()
        return values[st.arrival], values[service] if service else to_mpf("mu", str(st.mu))

    return now


def shooting_point64(problem: Any, params: Mapping[str, Any] | None = None) -> Any:
    """``s*`` of the prepared problem of a supermarket-family model
    (:class:`numeric.prepared.problem.PreparedProblem`, the fast fixed point's
    protocol, :mod:`numeric.meanfield.fast_paths`) by the O(b) shooting
    (:func:`mfstein.families.supermarket.equilibrium.verified_shooting` on the problem's rates,
    :func:`problem_rates`, the residual checked on the model's own kernels), 20 digits
    rounded to float64; ``None`` for sampling without replacement.
    ``shooting_point64(model, params)`` (the old protocol) prepares the problem first
    and warns."""
    import numpy as np

    if params is not None:
        from numeric.prepared.problem import prepare_problem

        warnings.warn(
            "shooting_point64(model, params) is deprecated; pass the prepared problem "
            "(numeric.prepared.problem.prepare_problem(model, params)).",
            DeprecationWarning,
            stacklevel=2,
        )
        problem = prepare_problem(problem, params)
    st = SupermarketStructure.read(problem.model.info.structure)
    if not st.replacement:
        return None
    rates = problem_rates(problem)
    with mpmath.workdps(30):
        lam, mu = rates()
        lam_ = parse_lam(lam)
    if mu <= 0:
        service = st.service
        raise ParameterError(
            f"{service or 'mu'} must be > 0, got {problem.params.get(service, st.mu)!r}."
        )
    s = verified_shooting(Member(problem.model, lam_, mu), rates, 20)
    return np.array([float(v) for v in s])
