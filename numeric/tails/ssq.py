"""Exact stationary law of the discrete-time single-server queue (SSQ).

Model (Section 3 of "Exponential Tail Bounds on Queues: A Confluence of
Non-Asymptotic Heavy Traffic and Large Deviations", Jhunjhunwala,
Hurtado-Lange, Maguluri): ``q(t+1) = max(q(t) + a(t) - s(t), 0)`` with i.i.d.
arrivals ``a(t)`` and potential services ``s(t)``, independent, bounded
(``a, s <= A``).  The load is ``rho = E a / E s`` and, as for JSQ and M/M/n,
``eps = 1 - rho``.  Kingman's heavy-traffic limit makes ``eps q``
approximately exponential with mean ``(sigma_a^2 + sigma_s^2) / (2 mu)``
(``mu = E s``): :attr:`SSQSolution.limit_mean`.

Roots method.  Let ``X = a - s`` with pmf ``p_x`` on ``[-S, U]`` (``U >= 1``
the largest, ``S`` the most negative increment with positive probability).
For ``k >= 1`` the balance equations are ``pi_k = sum_i pi_i p_{k-i}``.  The
characteristic equation ``E[r^{-X}] = 1``, i.e. the polynomial
``sum_x p_x r^(U - x) - r^U = 0`` of degree ``U + S``, has exactly ``U`` roots
in the open unit disk when ``E X < 0``.  With distinct roots ``r_1..r_U``,

.. math::

    \\pi_k = \\sum_{j=1}^{U} c_j r_j^k, \\qquad k \\ge 0,

satisfies every balance equation with ``k >= U``; the ``U - 1`` equations
``1 <= k <= U - 1`` read ``sum_j c_j sum_{x > k} p_x r_j^(k - x) = 0`` and the
normalisation ``sum_j c_j / (1 - r_j) = 1`` closes the linear system.

Cramér root.  The unique root ``r* in (0, 1)`` of ``E[r^{-X}] = 1`` (found by
bracketing, independently of the polynomial roots, and matched against them)
gives the exact tail decay ``P(q > k) ~ C r*^k``; the Cramér exponent is
``gamma = -log r*`` (``E e^{gamma X} = 1``) and the scaled rate is
``gamma / eps``.

Checks (``NumericalError`` naming the residual when one fails): the roots are
polished by Newton steps on the polynomial and must be pairwise separated;
the law is evaluated on ``0 .. 4 (U + S) + 50`` and must satisfy the balance
equations there and have total mass 1 to ``1e-10``, with imaginary parts and
negative values below ``1e-12``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from mfstein.ground.display import Presentable, error_figure, printed_to_error
from mfstein.ground.errors import NumericalError, ParameterError
from numeric.tails.errors import (
    UNIT,
    LawError,
    law_statistic_errors,
    mixture_error,
    printed_accuracy,
    root_errors,
)
from numeric.tails.statistics import TotalQueueLaw

__all__ = ["SSQSolution", "binomial_pmfs", "check_pmf", "solve_ssq"]

#: Largest support (pmf entries, values 0..25) accepted for an arrival or service pmf: with
#: binomial pmfs on more values the roots are too ill-conditioned for the 1e-10 checks.
MAX_SUPPORT = 26


def check_pmf(name: str, pmf) -> np.ndarray:
    """``pmf`` as a float array: finite, ``>= 0``, summing to 1 within ``1e-9``."""
    try:
        p = np.asarray([float(v) for v in pmf], dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a list of probabilities, got {pmf!r}.") from None
    if p.ndim != 1 or not 1 <= p.size <= MAX_SUPPORT:
        raise ParameterError(
            f"{name} must list between 1 and {MAX_SUPPORT} probabilities (values 0, 1, ...), "
            f"got {p.size}."
        )
    if not np.all(np.isfinite(p)) or np.any(p < 0) or abs(p.sum() - 1.0) > 1e-9:
        raise ParameterError(
            f"{name} must hold non-negative probabilities summing to 1, got {pmf!r}."
        )
    return p / p.sum()


def binomial_pmfs(n: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """The default SSQ family: ``a ~ Bin(n, (1 - eps)/2)``, ``s ~ Bin(n, 1/2)``.

    ``n`` potential arrivals and ``n`` half-speed servers per slot: ``A = n``,
    ``rho = 1 - eps``.
    """
    from scipy import stats

    k = np.arange(n + 1)
    return stats.binom.pmf(k, n, (1.0 - eps) / 2), stats.binom.pmf(k, n, 0.5)


@dataclass(frozen=True, repr=False)
class SSQSolution(Presentable):
    """Exact stationary law of the SSQ."""

    #: Law of ``q`` (head ``pi_0``, then the mixture of the ``U`` roots).
    law: TotalQueueLaw
    #: ``1 - E a / E s``.
    eps: float
    #: ``E a / E s``.
    rho: float
    #: ``E s - E a``.
    drift: float
    #: ``r*`` -- ``P(q > k)`` decays like ``r*^k``; ``cramer_exponent = -log r*``.
    cramer_root: float
    #: The heavy-traffic mean of ``eps q``, ``(Var a + Var s) / (2 E s)``.
    limit_mean: float
    #: The ``U`` roots in the unit disk.
    roots: np.ndarray
    #: The largest violation of the balance equations on ``0 .. 4 (U + S) + 50`` (the
    #: checks of the module docstring).
    balance_residual: float
    #: ``|total mass - 1|`` of the law (the checks of the module docstring).
    mass_residual: float
    #: The largest imaginary part of the law on ``0 .. 4 (U + S) + 50`` (the checks of the
    #: module docstring).
    imaginary_residual: float
    #: The law's error (:class:`numeric.tails.errors.LawError`, from the roots'), an input
    #: of :meth:`errors`.
    law_error: LawError | None = None
    #: The absolute errors of the roots (``"roots"``, ``"cramer_root"``) and of the
    #: numbers computed from the pmfs (``"eps"``, ``"rho"``, ``"drift"``,
    #: ``"limit_mean"``), the other input of :meth:`errors`.
    abs_errors: dict[str, Any] = field(default_factory=dict)

    _MORE: ClassVar[str] = "the law of q: .law; the roots: .roots"

    @property
    def cramer_exponent(self) -> float:
        return float(-np.log(self.cramer_root))

    def accuracy(self) -> dict[str, Any]:
        """How accurate the law is: the checks of the module docstring."""
        return dict(
            method="roots",
            balance_residual=self.balance_residual,
            mass_residual=self.mass_residual,
            imaginary_residual=self.imaginary_residual,
            cramer_exponent=self.cramer_exponent,
            drift=self.drift,
        )

    def errors(self) -> dict[str, Any]:
        """The absolute error of each printed number (:mod:`numeric.tails.errors`): the
        roots' (a Newton step and the polynomial's rounding, per root in ``roots``),
        the law's propagated to ``scaled_mean``, the rounding of the numbers computed
        from the pmfs; empty for a result made without them."""
        e = self.abs_errors
        if self.law_error is None or not e:
            return {}
        r, dr = self.cramer_root, e["cramer_root"]
        stats = law_statistic_errors(
            self.law_error, self.eps, self.scaled_mean, self.limit_mean,
            limit_mean_error=e["limit_mean"], eps_error=e["eps"],
        )  # fmt: skip
        return e | {
            "scaled_mean": stats["scaled_mean"],
            "cramer_exponent": dr / r + 4 * UNIT * self.cramer_exponent,
        }

    @property
    def scaled_mean(self) -> float:
        """``E[eps q]``."""
        return float(self.law.scaled_mean(self.eps))

    def printed(self, name: str) -> Any:
        """The number ``name`` as :meth:`to_dict` prints it: down to the place its
        error in :meth:`errors` allows (:func:`mfstein.ground.display.printed_to_error`);
        a root as ``[re, im]``, each part to that root's error."""
        error = self.errors().get(name)
        if name == "roots":
            errs = error or [None] * len(self.roots)
            return [
                printed_to_error([float(np.real(v)), float(np.imag(v))], d)
                for v, d in zip(self.roots, errs, strict=True)
            ]
        return printed_to_error(float(getattr(self, name)), error)

    def to_dict(self) -> dict[str, Any]:
        """The headline statistics (floats; a root as ``[re, im]``), each down to the
        place its error in ``errors`` allows, and :meth:`accuracy`, their precision."""
        names = ("eps", "rho", "scaled_mean", "limit_mean", "cramer_root")
        return {
            "model": "ssq",
            **{k: self.printed(k) for k in names},
            "roots": self.printed("roots"),
            "errors": error_figure(self.errors()),
            "accuracy": printed_accuracy(self.accuracy(), self.errors()),
        }

    def _rows(self) -> list[tuple[str, str]]:
        p = self.printed
        return [
            ("model", f"SSQ, eps = {p('eps')!r} (rho = {p('rho')!r})"),
            ("E[eps q]", f"{p('scaled_mean')!r} (heavy-traffic mean {p('limit_mean')!r})"),
            ("Cramer root", repr(p("cramer_root"))),
            ("roots", f"{len(self.roots)} in the unit disk"),
            ("residuals", f"balance {self.balance_residual:.2g}, mass {self.mass_residual:.2g}"),
        ]


def _increment_pmf(a: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, int]:
    """pmf of ``X = a - s`` on ``[-(len(s)-1), len(a)-1]`` and the offset of ``x = 0``."""
    return np.convolve(a, s[::-1]), len(s) - 1


def _cramer(px: np.ndarray, xs: np.ndarray) -> float:
    """The root ``r in (0, 1)`` of ``E[r^{-X}] = 1`` by Brent's method."""
    from scipy.optimize import brentq

    def f(r: float) -> float:
        return float(px @ r ** (-xs.astype(float)) - 1.0)

    lo = 0.5
    while f(lo) < 0:
        lo /= 2
    hi = 1.0 - 1e-3
    while f(hi) >= 0:
        hi = 1.0 - (1.0 - hi) / 4
        if 1.0 - hi < 1e-15:
            raise NumericalError("SSQ: could not bracket the Cramér root below 1.")
    return float(brentq(f, lo, hi, xtol=1e-17, rtol=1e-15, maxiter=500))


def solve_ssq(arrival_pmf, service_pmf) -> SSQSolution:
    """Stationary law of ``q(t+1) = max(q(t) + a(t) - s(t), 0)`` by the roots method.

    Parameters
    ----------
    arrival_pmf, service_pmf:
        ``P(a = 0), P(a = 1), ...`` and ``P(s = 0), ...`` (each at most
        ``MAX_SUPPORT`` entries).

    Raises
    ------
    ParameterError
        Bad pmfs, ``E a >= E s`` (unstable), or ``P(a > s) = 0`` (``q = 0``).
    NumericalError
        A check of the module docstring failed.
    """
    a = check_pmf("arrival_pmf", arrival_pmf)
    s = check_pmf("service_pmf", service_pmf)
    mu = float(np.arange(s.size) @ s)
    lam = float(np.arange(a.size) @ a)
    if not lam < mu:
        raise ParameterError(
            f"arrival_pmf and service_pmf must give E a < E s (stability), got {lam:g} >= {mu:g}."
        )
    px, off = _increment_pmf(a, s)
    xs = np.arange(px.size) - off
    support = xs[px > 0]
    U, S = int(support.max()), int(-support.min())
    if U < 1:
        raise ParameterError(
            "arrival_pmf and service_pmf must allow a(t) > s(t) with positive probability "
            "(otherwise q = 0 for ever)."
        )
    keep = (xs >= -S) & (xs <= U)
    px, xs = px[keep], xs[keep]
    # sum_x p_x r^(U - x) - r^U, coefficients from the highest power (U + S) down
    coeffs = np.zeros(U + S + 1)
    for p, x in zip(px, xs, strict=True):
        coeffs[(U + S) - (U - x)] += p
    coeffs[(U + S) - U] -= 1.0
    poly = np.polynomial.Polynomial(coeffs[::-1])
    dpoly = poly.deriv()
    roots = np.roots(coeffs)
    for _ in range(3):  # Newton polish
        roots = roots - poly(roots) / dpoly(roots)
    inside = roots[np.abs(roots) < 1.0 - 1e-12]
    r_star = _cramer(px, xs)
    if inside.size != U:
        raise NumericalError(
            f"SSQ roots method: found {inside.size} roots in the unit disk, expected {U}."
        )
    j = int(np.argmin(np.abs(inside - r_star)))
    if abs(inside[j] - r_star) > 1e-8:
        raise NumericalError(
            f"SSQ roots method: Cramér root {r_star:.15g} is not among the polynomial roots "
            f"(nearest at distance {abs(inside[j] - r_star):.1e})."
        )
    inside[j] = r_star
    if U > 1:
        dist = np.abs(inside[:, None] - inside[None, :]) + np.eye(U)
        if dist.min() < 1e-7:
            raise NumericalError(
                f"SSQ roots method: two roots closer than {dist.min():.1e} (repeated root)."
            )
    # linear system for c: boundary equations k = 1..U-1 and normalisation
    M, dM = _weight_system(px, xs, inside)
    rhs = np.zeros(U, dtype=complex)
    rhs[U - 1] = 1.0
    c = np.linalg.solve(M, rhs)
    law = TotalQueueLaw(np.array([np.real(c.sum())]), c, inside)
    # checks on 0 .. K
    K = 4 * (U + S) + 50
    kk = np.arange(K + 1)
    pi_c = (c[None, :] * inside[None, :] ** kk[:, None]).sum(axis=1)
    imag = float(np.abs(pi_c.imag).max())
    pi = pi_c.real
    ext = np.concatenate([pi, law.pmf(np.arange(K + 1, K + 1 + U + S + 1))])
    bal = 0.0
    for k in range(1, K + 1):
        i = k - xs  # source states
        ok = i >= 0
        bal = max(bal, abs(pi[k] - float(px[ok] @ ext[i[ok]])))
    mass = abs(law.total_mass() - 1.0)
    if not (bal <= 1e-10 and mass <= 1e-10 and imag <= 1e-12 and pi.min() >= -1e-12):
        raise NumericalError(
            f"SSQ roots method failed its check: balance residual {bal:.1e}, mass residual "
            f"{mass:.1e}, imaginary part {imag:.1e}, min probability {pi.min():.1e} "
            "(tolerances 1e-10, 1e-10, 1e-12, -1e-12)."
        )
    var = float(np.arange(a.size) ** 2 @ a - lam**2 + np.arange(s.size) ** 2 @ s - mu**2)
    dr = root_errors(coeffs, inside)
    return SSQSolution(
        law=law,
        eps=1.0 - lam / mu,
        rho=lam / mu,
        drift=mu - lam,
        cramer_root=r_star,
        limit_mean=var / (2 * mu),
        roots=inside,
        balance_residual=bal,
        mass_residual=mass,
        imaginary_residual=imag,
        law_error=mixture_error(M, dM, c, inside, dr),
        abs_errors=_input_errors(a, s, lam, mu, var)
        | {"cramer_root": float(dr[j]), "roots": [float(v) for v in dr]},
    )


def _weight_system(px: np.ndarray, xs: np.ndarray, roots: np.ndarray) -> tuple:
    """``M`` of the weights' system ``M c = e_U`` (module docstring: row ``k - 1`` the
    boundary equation ``sum_{x > k} p_x r_j^(k - x)``, ``k = 1..U-1``, the last row
    ``1 / (1 - r_j)``) and its derivative ``dM`` in each column's root."""
    U = roots.size
    M = np.zeros((U, U), dtype=complex)
    dM = np.zeros((U, U), dtype=complex)
    for k in range(1, U):
        big = xs > k
        power = (k - xs[big])[:, None]
        M[k - 1] = (px[big][:, None] * roots[None, :] ** power).sum(axis=0)
        dM[k - 1] = (px[big][:, None] * power * roots[None, :] ** (power - 1)).sum(axis=0)
    M[U - 1] = 1.0 / (1.0 - roots)
    dM[U - 1] = 1.0 / (1.0 - roots) ** 2
    return M, dM


def _input_errors(
    a: np.ndarray, s: np.ndarray, lam: float, mu: float, var: float
) -> dict[str, float]:
    """The rounding errors of the numbers computed from the pmfs by a few float64
    operations: ``E a``, ``E s`` (dot products of ``m`` terms: ``m u E``), ``eps``,
    ``rho``, the drift and Kingman's mean (the variance's cancellation
    ``E a^2 - (E a)^2`` included: its error is relative to ``E a^2 + E s^2``)."""
    m = max(a.size, s.size)
    d_lam, d_mu = m * UNIT * lam, m * UNIT * mu
    d_rho = d_lam / mu + lam * d_mu / mu**2 + 2 * UNIT
    squares = float(np.arange(a.size) ** 2 @ a + np.arange(s.size) ** 2 @ s) + lam**2 + mu**2
    d_var = 2 * (m + 4) * UNIT * squares
    return {
        "eps": d_rho + UNIT,
        "rho": d_rho,
        "drift": d_lam + d_mu + UNIT * (lam + mu),
        "limit_mean": d_var / (2 * mu) + var * d_mu / (2 * mu**2) + 2 * UNIT * var / mu,
    }
