"""An a-posteriori error estimate of an exact chain's float64 law and of its moments.

The solvers (:mod:`numeric.exact.solvers`) return ``pi`` with the residual
``||pi Q||_1``; this module turns the residual into what a printed number needs,
its absolute error.

Law.  Pin the balance equation of state ``r``: ``A = Q^T`` with row ``r`` replaced
by ``e_r``, ``A x_true = e_r``, ``pi_true = x_true / sum(x_true)``.  The computed
``x = pi / pi_r`` satisfies ``A x = e_r + rho / pi_r`` with ``rho = Q^T pi`` (its
``r``-th entry set to 0), so ``||x - x_true||_1 <= ||A^-1||_1 ||pi Q||_1 / pi_r`` and,
normalising (``||x / s - x_t / s_t||_1 <= 2 ||x - x_t||_1 / s_t``, ``s_t = 1 /
pi_true,r``), to first order in the residual

    ``||pi - pi_true||_1 <= 2 kappa ||pi Q||_1,    kappa = ||A^-1||_1``.

``kappa`` is estimated from a sparse LU of ``A`` by
:func:`scipy.sparse.linalg.onenormest` with one column (Hager's and Higham's
estimator, a few solves, deterministic: the block version draws random columns from
NumPy's global generator) and LAPACK's alternating test vector, the larger of the
two times :data:`SAFETY` = 3 (each is a lower bound, "almost invariably within a
factor 3" of ``||A^-1||_1``).  This is an estimate, not a rigorous bound:
``tests/test_printed_digits.py`` checks it against ``||A^-1||_1`` computed in full and
the law's error against an mpmath solve on small chains.  :func:`law_error` adds
the truncation's cut mass (twice it, a total-variation distance) and the rounding
of the sums that form a moment (``S`` units of float64's epsilon over ``S``
states).  The LU is the direct solve's own when the chain was solved by it
(:func:`remember_factor`: the last one made, of the same ``Q^T`` object and ``r``);
otherwise it is made once, when a result is first printed (:class:`LawSystem` keeps
``Q^T`` and ``r`` until then; the solve itself is not slower), and only up to
:data:`FACTOR_STATES` states (a chain solved iteratively can cost several times its
solve in fill-in: the supermarket b = 3 at N = 60, 39,711 states, 1.4 s against a 0.2 s
solve); no estimate is made (``None``) beyond, nor above :data:`MAX_STATES` states.

Moments.  For a function ``g`` of the state, ``sum(pi - pi_true) = 0`` gives
``|E_pi g - E_true g| <= (max g - min g) / 2 * ||pi - pi_true||_1``
(:func:`moment_error`); a covariance adds the product of its means' errors.

Printing.  A number whose absolute error is ``e`` is printed down to the decimal
place ``10^p`` with ``10^p >= 2 e`` (:func:`mfstein.ground.display.printed_to_error`):
the printed value is within ``e + 10^p / 2 <= 10^p`` of the exact one.  Without an
estimate a number keeps :data:`mfstein.ground.display.UNBOUNDED_DIGITS` (10)
significant digits, the solver's relative tolerance, which is then no bound.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Most states for which the condition of the pinned system is estimated (one sparse
#: LU when the result is first printed; ``Q^T`` is kept with the result until then).
MAX_STATES = 50_000

#: Most states for which the estimate makes its own LU (no factor of the solve to read).
FACTOR_STATES = 20_000

#: Factor on the 1-norm estimate (a lower bound, "almost invariably correct within a
#: factor 3", Higham and Tisseur 2000): the claimed ``kappa`` is this times it.
SAFETY = 3.0


#: The last factor of a pinned system a direct solve made: (a weak reference to its
#: ``Q^T``, ``r``, the ``scipy.sparse.linalg.SuperLU``); one at a time.
_FACTOR: tuple[Any, int, Any] | None = None


def remember_factor(QT: Any, r: int, lu: Any) -> None:
    """Keep ``lu``, the sparse LU of ``Q^T`` pinned at ``r`` (the one :func:`condition`
    makes: :func:`numeric.exact.pinned.factor`), for the condition estimate
    of the law just solved; only the last is kept, and none above :data:`MAX_STATES`
    states."""
    global _FACTOR
    _FACTOR = (weakref.ref(QT), int(r), lu) if QT.shape[0] <= MAX_STATES else None


def _remembered(QT: Any, r: int) -> Any:
    """The factor :func:`remember_factor` kept for this ``Q^T`` object and ``r``, or
    ``None``."""
    if _FACTOR is None or _FACTOR[0]() is not QT or _FACTOR[1] != r:
        return None
    return _FACTOR[2]


@dataclass(init=False)
class LawSystem:
    """``Q^T`` (CSR) and the pinned state ``r`` of an exact solve, kept to estimate the
    law's error when the result is first printed (:func:`condition`, cached)."""

    #: ``Q^T`` of the exact solve (CSR).
    QT: Any
    #: The pinned state, the system solved being ``Q^T`` with row ``r`` replaced by ``e_r``
    #: (:func:`numeric.exact.solvers.pinned`).
    r: int
    #: the index in the result's ``pi`` of each of ``QT``'s states (``None`` for the same)
    order: Any = None
    _kappa: float | None = field(default=None, repr=False)
    _estimated: bool = field(default=False, repr=False)

    def __init__(
        self, QT: Any, r: int, order: Any = None, _kappa: float | None = None,
        _estimated: bool = False,
    ) -> None:  # fmt: skip
        # The dataclass's own __init__, written out (init=False): the generated one costs
        # every new process some 0.2 ms to compile (tests/numeric/exact/test_route_classes.py
        # checks it against the fields).
        self.QT, self.r, self.order, self._kappa, self._estimated = QT, r, order, _kappa, _estimated

    def condition(self) -> float | None:
        """``||A^-1||_1`` of the pinned system (module docstring), estimated once;
        ``None`` where :func:`condition` makes none."""
        if not self._estimated:
            self._kappa, self._estimated = condition(self.QT, self.r), True
        return self._kappa

    def law_error(self, residual: float, states: int, cut_mass: float = 0.0) -> float | None:
        """:func:`law_error` with this system's :meth:`condition`."""
        return law_error(residual, self.condition(), states, cut_mass)


def kept_system(QT: Any, r: int, order: Any = None) -> LawSystem | None:
    """A :class:`LawSystem` of ``QT``, ``r`` and ``order``, or ``None`` above
    :data:`MAX_STATES` states."""
    if QT is None or QT.shape[0] > MAX_STATES:
        return None
    return LawSystem(QT, int(r), order)


def condition(QT: Any, r: int) -> float | None:
    """``||A^-1||_1`` of ``Q^T`` pinned at ``r`` (:func:`numeric.exact.solvers.pinned`):
    :func:`scipy.sparse.linalg.onenormest` over a sparse LU of ``A`` (the direct solve's,
    else its own up to :data:`FACTOR_STATES` states; ``None`` above)."""
    import scipy.sparse.linalg as spla

    from numeric.exact.pinned import factor

    S = QT.shape[0]
    if S <= 1:
        return 1.0
    lu = _remembered(QT, r)
    if lu is None and S > FACTOR_STATES:
        return None
    if lu is None:
        lu = factor(QT, r)[1]
    inverse = spla.LinearOperator(
        (S, S),
        matvec=lu.solve,
        rmatvec=lambda v: lu.solve(np.asarray(v, dtype=float), trans="T"),
        dtype=float,
    )
    n = np.arange(S, dtype=float)
    alternating = np.where(n % 2 == 0, 1.0, -1.0) * (1.0 + n / (S - 1))  # LAPACK's xLACN2
    lower = max(
        float(spla.onenormest(inverse, t=1)),  # t = 1: deterministic, no random columns
        2.0 * float(np.abs(lu.solve(alternating)).sum()) / (3.0 * S),
    )
    return SAFETY * lower


def law_error(
    residual: float, kappa: float | None, states: int, cut_mass: float = 0.0
) -> float | None:
    """The estimate of ``||pi - pi_true||_1``: ``2 kappa ||pi Q||_1`` (module
    docstring), ``+ 2`` the truncation's cut mass, ``+ states`` epsilons of float64
    (the rounding of a moment's sum); ``None`` without ``kappa``."""
    if kappa is None or not math.isfinite(kappa):
        return None
    eps = float(np.finfo(float).eps)
    return 2.0 * kappa * float(residual) + 2.0 * float(cut_mass) + max(1, states) * eps


def half_range(values: Any, axis: int = 0) -> Any:
    """``(max - min) / 2`` of ``values`` over the states (``axis``)."""
    a = np.asarray(values, dtype=float)
    if a.size == 0:
        return np.zeros(a.shape[1:]) if a.ndim > 1 else 0.0
    return (a.max(axis=axis) - a.min(axis=axis)) / 2.0


def moment_error(values: Any, error: float) -> Any:
    """``|E_pi g - E_true g| <= (max g - min g) / 2 * ||pi - pi_true||_1`` for each
    column ``g`` of ``values`` (one row per state), ``error`` the law's."""
    return half_range(values) * error
