"""Exact stationary law of small JSQ systems as a level-phase QBD.

Model (Section 2 of "Exponential Tail Bounds on Queues: A Confluence of
Non-Asymptotic Heavy Traffic and Large Deviations", Jhunjhunwala,
Hurtado-Lange, Maguluri): ``n`` FCFS servers of rate ``mu = 1``, Poisson
arrivals at rate ``lambda_n = n (1 - eps)``, each sent to a shortest queue
(ties uniformly at random).  By symmetry the queue-length vector ``q`` can be
lumped into occupancy counts without changing the law of any symmetric
statistic (``qbar``, ``||q_perp||``).

Level and phase.  Level ``m = min_i q_i``; phase ``c = (c_0, ..., c_D)`` with
``c_d`` the number of queues of length ``m + d`` (``c_0 >= 1``,
``sum c_d = n``).  Then ``qbar = n m + s(c)``, ``s(c) = sum_d d c_d``, and the
perpendicular component of Proposition 3,
``q_perp = q - (qbar / n) 1``, depends on the phase only:
``||q_perp||_2^2 = sum_d c_d d^2 - s(c)^2 / n``.

Transitions (at level ``m >= 1``; at level 0 the ``c_0`` queues of length 0
are idle):

* arrival, rate ``lambda``: if ``c_0 >= 2``, ``c_0 -> c_0 - 1``,
  ``c_1 -> c_1 + 1`` (same level); if ``c_0 = 1`` the level rises and
  ``c -> (c_1 + 1, c_2, ..., c_D, 0)``;
* departure from a queue at offset ``d >= 1``, rate ``c_d``:
  ``c_d -> c_d - 1``, ``c_{d-1} -> c_{d-1} + 1``;
* departure from a shortest queue, rate ``c_0``: the level falls and
  ``c -> (1, c_0 - 1, c_1, ..., c_{D-1})``.

Phase truncation (spread ``max q - min q <= D``).  The last move would create
spread ``D + 1`` when ``c_D > 0``; there the departure is taken from a
longest queue instead (``c_D -> c_D - 1``, ``c_{D-1} -> c_{D-1} + 1``).  This
keeps the total departure rate equal to the number of busy servers, so that
``qbar`` moves exactly as in the JSQ system whenever all servers are busy.
Consequences, both checked numerically on every solve:

* in the truncated chain, every state with ``qbar > (n - 1) D`` has all
  servers busy, so the cut equations give ``P(qbar = k + 1) = rho P(qbar = k)``
  for ``k >= (n - 1) D``: the total queue has an exactly geometric tail of
  ratio ``rho = 1 - eps``, and the level decay factor is
  ``sp(R) = rho^n`` (``n`` jobs per level);
* the truncated chain differs from JSQ only through states of spread ``D``;
  their stationary mass (``boundary_mass``) is the neglected mass.

``D`` is chosen automatically: it grows from 2 until ``boundary_mass <=
mass_tol`` *and* the reported statistics (``E qbar``, ``E ||q_perp||^2`` and
``E exp(theta ||q_perp||)`` on the requested grid) change by at most ``rtol``
(relative) from the previous ``D``; that change is reported as
``truncation_change``, the accuracy claim of the truncation.  The number of
phases, ``C(n - 1 + D, D)``, is computed before anything is allocated; beyond
``max_phases`` a :class:`ParameterError` names ``n`` (or ``theta``, when the
moment generating function has not converged at a size where the mass has).

Accuracy of each returned number: the QBD residuals (``solve_qbd``, relative,
``<= 1e-10``), the tail-ratio and mass checks below (``<= 1e-9``), and the
truncation change.  For ``n = 1`` there is one phase and no truncation: the
chain is M/M/1.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from math import comb
from typing import Any, ClassVar

import numpy as np

from mfstein.ground.display import Presentable, error_figure, printed_to_error
from mfstein.ground.errors import NumericalError, ParameterError
from numeric.tails.errors import (
    UNIT,
    LawError,
    law_distance,
    law_statistic_errors,
    mmn_law_error,
    printed_accuracy,
    truncation_error,
)
from numeric.tails.params import check_eps, check_n
from numeric.tails.qbd import QBDSolution, solve_qbd
from numeric.tails.statistics import TotalQueueLaw

__all__ = ["JSQSolution", "count_phases", "jsq_blocks", "jsq_phases", "solve_jsq"]

#: Default cap on the number of phases (dense matrices of this side are formed).
MAX_PHASES = 2500


def count_phases(n: int, D: int) -> int:
    """``C(n - 1 + D, D)``: count vectors of ``n`` queues with ``c_0 >= 1``, spread ``<= D``."""
    return comb(n - 1 + D, D)


def jsq_phases(n: int, D: int) -> np.ndarray:
    """All phases ``(c_0, ..., c_D)`` with ``c_0 >= 1``, ``sum = n`` (rows, int64)."""
    out: list[tuple[int, ...]] = []

    def rec(prefix: list[int], left: int, slots: int) -> None:
        if slots == 1:
            out.append((*prefix, left))
            return
        for v in range(left, -1, -1):
            rec([*prefix, v], left - v, slots - 1)

    if D == 0:
        return np.array([[n]], dtype=np.int64)
    for c0 in range(n, 0, -1):
        rec([c0], n - c0, D)
    return np.array(out, dtype=np.int64)


def jsq_blocks(
    n: int, eps: float, D: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(phases, A0, A1, A2, B1)`` of the truncated JSQ QBD (see the module docstring)."""
    lam = n * (1.0 - eps)
    ph = jsq_phases(n, D)
    P = ph.shape[0]
    index = {tuple(c): i for i, c in enumerate(ph.tolist())}
    A0 = np.zeros((P, P))
    A1 = np.zeros((P, P))
    A2 = np.zeros((P, P))
    B1 = np.zeros((P, P))
    for i, c in enumerate(ph.tolist()):
        # arrival
        if c[0] >= 2:
            t = c.copy()
            t[0] -= 1
            t[1] += 1
            j = index[tuple(t)]
            A1[i, j] += lam
            B1[i, j] += lam
        else:
            t = [c[1] + 1, *c[2:], 0] if D >= 1 else [1]
            A0[i, index[tuple(t)]] += lam
        # departures from queues above the minimum (same at every level)
        for d in range(1, D + 1):
            if c[d]:
                t = c.copy()
                t[d] -= 1
                t[d - 1] += 1
                j = index[tuple(t)]
                A1[i, j] += c[d]
                B1[i, j] += c[d]
        # departures from the shortest queues (levels >= 1 only)
        if D == 0:
            A2[i, i] += c[0]
        elif c[D] > 0:
            t = c.copy()
            t[D] -= 1
            t[D - 1] += 1
            A1[i, index[tuple(t)]] += c[0]
        else:
            t = [1, c[0] - 1, *c[1:D]]
            A2[i, index[tuple(t)]] += c[0]
    busy_top = n
    A1[np.diag_indices(P)] -= lam + busy_top
    B1[np.diag_indices(P)] -= lam + (n - ph[:, 0])
    return ph, A0, A1, A2, B1


@dataclass(frozen=True, repr=False)
class JSQSolution(Presentable):
    """Exact (phase-truncated) stationary law of JSQ with ``n`` servers."""

    #: The number of servers.
    n: int
    #: The heavy-traffic parameter (arrivals at rate ``lambda_n = n (1 - eps)``, ``rho = 1 -
    #: eps``).
    eps: float
    #: Phase truncation (maximal spread).
    D: int
    #: Number of phases.
    phases: int
    #: Law of ``qbar``; head up to ``(n - 1) D``, geometric tail of ratio ``rho``.
    law: TotalQueueLaw
    #: Stationary mass of spread ``D`` (the neglected mass).
    boundary_mass: float
    #: Largest relative change of the checked statistics between the last two
    #: ``D`` (the error estimate of the truncation); 0 for ``n = 1``.
    truncation_change: float
    #: ``sp(R)``, the decay factor of ``P(level = m)``; equals ``rho^n``.
    level_decay: float
    #: ``max |P(qbar = k+1) / P(qbar = k) - rho|`` over ``(n-1)D <= k < (n-1)D + n``
    #: (computed from the levels, not assumed).
    tail_ratio_residual: float
    #: ``|sum of the law - 1|``.
    mass_residual: float
    #: The :class:`~numeric.tails.qbd.QBDSolution` (residuals, ``R``).
    qbd: QBDSolution
    #: Stationary phase probabilities.
    phase_marginal: np.ndarray
    #: ``||q_perp||_2`` in each phase.
    perp_norm: np.ndarray
    #: The solve's wall-clock time in seconds, the spreads tried included.
    seconds: float
    #: One dict per spread solved, in order, with ``D``, ``phases``, ``boundary_mass`` and, when the
    #: spread was chosen (no ``D`` given), ``change`` (the largest relative change of the checked
    #: statistics from the previous spread; ``inf`` for the first); one entry for a fixed ``D``.
    history: list[dict] = field(default_factory=list)
    #: The solves at the last two spreads tried before ``D`` (their ``law``,
    #: ``phase_marginal``, ``perp_norm``, ``D``; the latest first): the truncation's
    #: changes, from which :meth:`errors` estimates each printed number's error;
    #: empty for a fixed ``D`` (no estimate: the numbers print with
    #: :data:`mfstein.ground.display.UNBOUNDED_DIGITS`) and for ``n = 1`` (M/M/1, no
    #: truncation: rounding only).
    coarser: list[dict[str, Any]] = field(default_factory=list, compare=False)

    _MORE: ClassVar[str] = "the law of qbar: .law; the QBD: .qbd; perp_mgf(thetas)"

    @property
    def rho(self) -> float:
        return 1.0 - self.eps

    def accuracy(self) -> dict[str, Any]:
        """How accurate the law is: the phase truncation, its neglected mass and
        change, the QBD's residuals and the law's own checks."""
        return dict(
            method="QBD (level = min queue, phase = offsets, logarithmic reduction)",
            D=self.D,
            phases=self.phases,
            boundary_mass=self.boundary_mass,
            truncation_change=self.truncation_change,
            residual_R=self.qbd.residual_R,
            residual_boundary=self.qbd.residual_boundary,
            tail_ratio_residual=self.tail_ratio_residual,
            mass_residual=self.mass_residual,
            seconds=self.seconds,
        )

    def errors(self, thetas: Any = ()) -> dict[str, Any]:
        """The absolute error of each printed number (:mod:`numeric.tails.errors`): the
        law's from the truncation's changes (the distances between the laws at the last
        three spreads, extrapolated by :func:`~numeric.tails.errors.truncation_error`),
        with it the statistics of the law (``law``: its ``mass`` and ``first`` sums);
        the moments of ``q_perp`` by their own changes; ``level_decay`` by its distance
        to ``rho^n``, its exact value for every truncation.  ``None`` where there is
        no estimate (a fixed ``D``)."""
        level = abs(self.level_decay - self.rho**self.n) + 4 * self.n * UNIT
        perp_here = self.perp_second_moment()
        mgf_here = self.perp_mgf(thetas)
        if self.n == 1:
            law = mmn_law_error(1, self.law.mean())
            perp, mgf = 0.0, [0.0] * len(thetas)
        elif not self.coarser:
            law = LawError(None, None)
            perp, mgf = None, [None] * len(thetas)
        else:
            laws = [self.law, *(c["law"] for c in self.coarser)]
            steps = [law_distance(a, b) for a, b in itertools.pairwise(laws)]
            mass = truncation_error(*(d.mass for d in steps)) + 8 * UNIT + self.mass_residual
            first = truncation_error(*(d.first for d in steps)) + mass * self.law.mean()
            law = LawError(mass, first)
            perps = [perp_here, *(float(c["phase_marginal"] @ c["perp_norm"] ** 2)
                                  for c in self.coarser)]  # fmt: skip
            perp = _extrapolated(perps) + 8 * UNIT * perp_here
            mgfs = [mgf_here, *(_mgf(c["perp_norm"], c["phase_marginal"], thetas)
                                for c in self.coarser)]  # fmt: skip
            mgf = [_extrapolated(v) + 8 * UNIT * abs(float(v[0])) for v in zip(*mgfs, strict=True)]
        stats = law_statistic_errors(law, self.eps, self.scaled_mean, 1.0)
        return {
            "law": {"mass": law.mass, "first": law.first},
            "scaled_mean": stats["scaled_mean"],
            "tail": stats["tail"],
            "sup_distance": stats["sup_distance"],
            "level_decay": level,
            "perp_second_moment": perp,
            "perp_mgf": mgf,
        }

    @property
    def scaled_mean(self) -> float:
        """``E[eps qbar]``."""
        return float(self.law.scaled_mean(self.eps))

    def printed(self, name: str) -> Any:
        """The number ``name`` (``scaled_mean``, ``level_decay``, ``perp_second_moment``)
        as :meth:`to_dict` prints it: down to the place its error in :meth:`errors`
        allows (:func:`mfstein.ground.display.printed_to_error`)."""
        value = self.perp_second_moment() if name == "perp_second_moment" else getattr(self, name)
        return printed_to_error(float(value), self.errors().get(name))

    def to_dict(self) -> dict[str, Any]:
        """The headline statistics (floats), each down to the place its error in
        ``errors`` allows, and :meth:`accuracy`, their precision."""
        errors = self.errors()
        return {
            "model": "jsq",
            "n": self.n,
            "eps": self.eps,
            "scaled_mean": self.printed("scaled_mean"),
            "level_decay": self.printed("level_decay"),
            "perp_second_moment": self.printed("perp_second_moment"),
            "errors": error_figure(errors),
            "accuracy": printed_accuracy(self.accuracy(), errors),
        }

    def _rows(self) -> list[tuple[str, str]]:
        p = self.printed
        return [
            ("model", f"JSQ, n = {self.n}, eps = {self.eps:.6g}"),
            ("E[eps qbar]", repr(p("scaled_mean"))),
            ("level decay", f"{p('level_decay')!r} (rho^n = {self.rho**self.n:.12g})"),
            ("E ||q_perp||^2", repr(p("perp_second_moment"))),
            ("truncation", f"D = {self.D}, {self.phases} phases, boundary mass "
                           f"{self.boundary_mass:.2g}, change {self.truncation_change:.2g}"),
        ]  # fmt: skip

    def perp_second_moment(self) -> float:
        """``E ||q_perp||_2^2`` (Proposition 3's perpendicular component)."""
        return float(self.phase_marginal @ self.perp_norm**2)

    def perp_mgf(self, thetas: np.ndarray | list[float]) -> np.ndarray:
        """``E exp(theta ||q_perp||_2)`` for each ``theta`` (Proposition 3's MGF)."""
        return _mgf(self.perp_norm, self.phase_marginal, thetas)


def _extrapolated(values: list[float]) -> float:
    """The truncation error of ``values[0]`` from the changes along ``values`` (the
    statistic at the current spread, then at the coarser ones)."""
    changes = [abs(float(a) - float(b)) for a, b in itertools.pairwise(values)]
    return truncation_error(*changes)


def _mgf(perp_norm: np.ndarray, marginal: np.ndarray, thetas: Any) -> np.ndarray:
    """``E exp(theta ||q_perp||_2)`` for each ``theta``, from a phase marginal."""
    th = np.asarray(thetas, dtype=float)
    return np.exp(np.outer(th, perp_norm)) @ marginal


def _one_blas_thread():
    """Context limiting BLAS to one thread (``threadpoolctl`` if installed, else a no-op).

    The QBD matrices are at most a few thousand wide; on a shared machine
    OpenBLAS's thread team then costs more than it gains (measured: 20x slower
    at 136 phases on a loaded 2-core machine)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _solve_fixed(n: int, eps: float, D: int, tol: float) -> dict[str, Any]:
    """The chain with phase truncation ``D``, solved and checked: the
    :class:`JSQSolution` fields it decides (all but ``n``, ``eps``, the truncation
    change, the time and the history)."""
    ph, A0, A1, A2, B1 = jsq_blocks(n, eps, D)
    with _one_blas_thread():
        sol = solve_qbd(A0, A1, A2, B1, tol=tol)
    rho = 1.0 - eps
    s = ph @ np.arange(D + 1)
    perp2 = np.maximum(ph @ (np.arange(D + 1) ** 2) - s.astype(float) ** 2 / n, 0.0)
    K0 = (n - 1) * D
    Kc = K0 + n
    levels = sol.levels(Kc // n + 1)
    p = np.zeros(Kc + 1)
    for m in range(levels.shape[0]):
        k = n * m + s
        ok = k <= Kc
        np.add.at(p, k[ok], levels[m, ok])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = p[K0 + 1 : Kc + 1] / p[K0:Kc]
    ratio_res = float(np.max(np.abs(ratios - rho)))
    law = TotalQueueLaw(p[: K0 + 1], np.array([p[K0]]), np.array([rho]))
    mass_res = abs(law.total_mass() - 1.0)
    if not (ratio_res <= 1e-9 and mass_res <= 1e-9):
        raise NumericalError(
            f"JSQ QBD (n = {n}, eps = {eps}, D = {D}): geometric-tail residual {ratio_res:.2e}, "
            f"mass residual {mass_res:.2e} (tolerance 1e-9)."
        )
    with _one_blas_thread():
        w = sol.level_marginal()
    boundary = 0.0 if n == 1 else float(w[ph[:, D] > 0].sum())
    return {
        "D": D,
        "phases": ph.shape[0],
        "qbd": sol,
        "law": law,
        "phase_marginal": w,
        "perp_norm": np.sqrt(perp2),
        "boundary_mass": boundary,
        "level_decay": sol.spectral_radius,
        "tail_ratio_residual": ratio_res,
        "mass_residual": mass_res,
    }


def _next_spread(history: list[dict], mass_tol: float) -> int:
    """Next ``D`` to try: one more, or (from ``D = 4`` on, while the boundary mass is
    above ``mass_tol``) a jump to two below the ``D`` at which the geometric decay
    of the boundary mass over the last two solves predicts ``mass_tol`` (the decay
    steepens with ``D``, so the prediction errs on the large side)."""
    D = history[-1]["D"]
    if len(history) < 3:
        return D + 1
    h1, h2 = history[-2], history[-1]
    m1, m2 = h1["boundary_mass"], h2["boundary_mass"]
    if not (0 < m2 < m1) or m2 <= mass_tol:
        return D + 1
    per_step = np.log(m2 / m1) / (h2["D"] - h1["D"])
    steps = int(np.ceil(np.log(mass_tol / m2) / per_step))
    return D + max(1, steps - 2)


#: Truncation levels over which the relative change of the statistics must
#: shrink once the boundary mass is small: a convergent ``E exp(theta ||q_perp||)``
#: changes geometrically less with each spread, a divergent one does not.
DIVERGENCE_LEVELS = 3


def _refuse_diverging_mgf(history: list[dict], thetas: np.ndarray, mass_ok: bool) -> None:
    """Refuse a ``theta`` whose MGF does not settle under phase truncation, up front:
    the boundary mass is already small but the relative change has not shrunk over
    :data:`DIVERGENCE_LEVELS` spreads (without this, the loop grows the phase space
    to ``max_phases``, minutes of dense solves, before refusing)."""
    k = DIVERGENCE_LEVELS
    if not thetas.size or not mass_ok or len(history) <= k:
        return
    recent = [h["change"] for h in history[-(k + 1) :]]
    if all(later >= earlier for earlier, later in itertools.pairwise(recent)):
        raise ParameterError(
            f"theta must lie where E exp(theta ||q_perp||) converges: at theta = "
            f"{float(np.max(thetas)):g} its relative change under phase truncation stopped "
            f"shrinking ({recent[-1]:.1e} at spread D = {history[-1]['D']}), so it diverges; "
            "lower the largest theta."
        )


def _stats(r: dict[str, Any], thetas: np.ndarray) -> np.ndarray:
    w, perp = r["phase_marginal"], r["perp_norm"]
    vals = [r["law"].mean(), float(w @ perp**2)]
    if thetas.size:
        vals.extend(np.exp(np.outer(thetas, perp)) @ w)
    return np.asarray(vals)


def _spread_bar(show: bool) -> Any:
    """The bar of :func:`solve_jsq`'s spreads (disabled unless ``show``)."""
    import sys

    from tqdm import tqdm

    return tqdm(desc="JSQ QBD", unit="spread", file=sys.stderr, leave=False, disable=not show)


def solve_jsq(
    n: int,
    eps: float,
    *,
    thetas: list[float] | np.ndarray = (),
    mass_tol: float = 1e-7,
    rtol: float = 1e-5,
    D: int | None = None,
    max_phases: int = MAX_PHASES,
    tol: float = 1e-10,
    progress: bool = False,
) -> JSQSolution:
    """Stationary law of JSQ(``n``) at ``lambda = n (1 - eps)``, by the truncated QBD.

    Parameters
    ----------
    n:
        Number of servers (small: the phase count grows like ``C(n - 1 + D, D)``).
    eps:
        Heavy-traffic parameter, ``0 < eps < 1`` (``rho = 1 - eps``).
    thetas:
        Points where ``E exp(theta ||q_perp||)`` must have converged in ``D``.
    mass_tol, rtol:
        Truncation targets (module docstring).
    D:
        Fix the truncation instead of choosing it (no convergence check; the
        boundary mass is still reported).
    max_phases:
        Largest QBD phase space allowed.
    tol:
        Tolerance of the QBD residual checks.
    progress:
        Show a tqdm bar on standard error, one step per spread ``D`` tried (with its
        phase count and boundary mass): a solve near ``max_phases`` takes a minute.

    Raises
    ------
    ParameterError
        ``eps`` or ``n`` out of range, or the phase space needed exceeds
        ``max_phases``.
    NumericalError
        A residual check failed.
    """
    n = check_n(n)
    eps = check_eps(eps)
    th = np.asarray(list(thetas), dtype=float)
    t0 = time.perf_counter()
    if n == 1:
        D = 0
    if D is not None:
        if count_phases(n, D) > max_phases:
            raise ParameterError(
                f"D must keep the JSQ phase space C(n - 1 + D, D) <= {max_phases}; "
                f"D = {D} gives {count_phases(n, D)} for n = {n}."
            )
        r = _solve_fixed(n, eps, D, tol)
        change, coarser = 0.0, []
        history = [dict(D=D, phases=r["phases"], boundary_mass=r["boundary_mass"])]
    else:
        if count_phases(n, 3) > max_phases:
            raise ParameterError(
                f"n must be small enough for the exact JSQ QBD (C(n + 2, 3) <= {max_phases} "
                f"phases at spread 3), got n = {n}; use the simulator for larger n."
            )
        history = []
        prev, coarser = None, []
        Dc = 2
        with _spread_bar(progress) as bar:  # closed on a refusal too
            while True:
                if count_phases(n, Dc) > max_phases:
                    last = history[-1]
                    if last["boundary_mass"] > mass_tol:
                        raise ParameterError(
                            f"n must be small enough for the exact JSQ QBD to reach boundary mass "
                            f"{mass_tol:g} within {max_phases} phases; n = {n} reached "
                            f"{last['boundary_mass']:.1e} at D = {Dc - 1} (use the simulator)."
                        )
                    raise ParameterError(
                        f"theta must lie where E exp(theta ||q_perp||) converges under phase "
                        f"truncation (relative change {last['change']:.1e} > {rtol:g} at D = "
                        f"{Dc - 1}, max {max_phases} phases); lower the largest theta."
                    )
                bar.set_postfix_str(f"D = {Dc}, {count_phases(n, Dc):,} phases")
                r = _solve_fixed(n, eps, Dc, tol)
                bar.update()
                with np.errstate(over="ignore", invalid="ignore"):
                    cur = _stats(r, th)
                if not np.all(np.isfinite(cur)):  # no phase truncation can make it converge
                    raise ParameterError(
                        f"theta must lie where E exp(theta ||q_perp||) is finite: at theta = "
                        f"{float(np.max(th)):g} it overflows float64 already at spread D = {Dc} "
                        "(the MGF diverges there); lower the largest theta."
                    )
                change = (
                    float(np.max(np.abs(cur - prev) / np.maximum(np.abs(cur), 1e-300)))
                    if prev is not None
                    else np.inf
                )
                history.append(
                    dict(D=Dc, phases=r["phases"], boundary_mass=r["boundary_mass"], change=change)
                )
                if r["boundary_mass"] <= mass_tol and change <= rtol:
                    break
                _refuse_diverging_mgf(history, th, r["boundary_mass"] <= mass_tol)
                kept = {k: r[k] for k in ("D", "law", "phase_marginal", "perp_norm")}
                prev, coarser = cur, [kept, *coarser[:1]]  # not its R: phases^2 floats
                Dc = _next_spread(history, mass_tol)
    return JSQSolution(
        n=n,
        eps=eps,
        truncation_change=float(change) if n > 1 else 0.0,
        seconds=time.perf_counter() - t0,
        history=history,
        coarser=[] if n == 1 else coarser,
        **r,
    )
