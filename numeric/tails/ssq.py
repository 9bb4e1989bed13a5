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

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from mfstein.ground.display import Presentable
from mfstein.ground.errors import NumericalError, ParameterError
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
    #: Heavy-traffic mean of ``eps
    #: q``: ``(Var a + Var s) / (2 E s)``.
    limit_mean: float
    #: The ``U`` roots in the unit disk.
    roots: np.ndarray
    #: The checks of the module docstring.
    balance_residual: float
    #: See :attr:`balance_residual`.
    mass_residual: float
    #: See :attr:`balance_residual`.
    imaginary_residual: float

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

    def to_dict(self) -> dict[str, Any]:
        """The headline statistics (floats; a root as ``[re, im]``) and :meth:`accuracy`,
        their precision."""
        return {
            "model": "ssq",
            "eps": self.eps,
            "rho": self.rho,
            "scaled_mean": float(self.law.scaled_mean(self.eps)),
            "limit_mean": self.limit_mean,
            "cramer_root": self.cramer_root,
            "roots": [[float(np.real(r)), float(np.imag(r))] for r in self.roots],
            "accuracy": self.accuracy(),
        }

    def _rows(self) -> list[tuple[str, str]]:
        return [
            ("model", f"SSQ, eps = {self.eps:.6g} (rho = {self.rho:.6g})"),
            ("E[eps q]", f"{float(self.law.scaled_mean(self.eps)):.10g} "
                         f"(heavy-traffic mean {self.limit_mean:.6g})"),
            ("Cramer root", f"{self.cramer_root:.12g}"),
            ("roots", f"{len(self.roots)} in the unit disk"),
            ("residuals", f"balance {self.balance_residual:.2g}, mass {self.mass_residual:.2g}"),
        ]  # fmt: skip


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
    M = np.zeros((U, U), dtype=complex)
    rhs = np.zeros(U, dtype=complex)
    for k in range(1, U):
        big = xs > k
        M[k - 1] = (px[big][:, None] * inside[None, :] ** (k - xs[big])[:, None]).sum(axis=0)
    M[U - 1] = 1.0 / (1.0 - inside)
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
    )
