"""The supermarket family's exact fast path, and the paper's short form ``solve_exact``.

:func:`supermarket_fast` is registered as the exact task's fast path for the
supermarket family (:mod:`numeric.exact.fast_paths`); :func:`numeric.exact.solve`
chooses it, and :func:`solve_exact` ``(N, lam, b, d)`` builds the model and calls
it.  The chain is solved by the one exact solver,
:class:`numeric.exact.general.Chain`, on the model prepared once
(:func:`numeric.exact.prepared.prepare`); its reachable states are then checked to be
the monotone space and put in its order (:func:`_on_monotone_space`).

The finite-N chain of the core paper (Section 3) lives on ``n = N s`` with
``N >= n_1 >= ... >= n_b >= 0`` and jumps ``n -> n + l`` at rate
``N beta_l(n / N)``, with the transitions and intensities of
:func:`derive.supermarket`.  Its stationary distribution ``pi`` is computed
exactly up to floating-point rounding (the residual ``||pi Q||_1`` is reported),
and from it the quantities the mean-field theory approximates:

* ``E[S]`` and ``N (E[S] - s*)``, compared with the refined bias ``V``
  (``E[S] = s* + V/N + O(1/N^2)``);
* ``N E||S - s*||^2``, compared with Theorem 1's constant ``c = tr(P Q)``;
* ``N Cov(S)``, compared with the Ornstein--Uhlenbeck covariance ``W``;
* the queue-length distribution ``P(Q = k) = E[S_k] - E[S_{k+1}]`` (``S_0 = 1``,
  ``S_{b+1} = 0``), by exchangeability of the servers;
* the blocking probability: the fraction of arrivals that find all ``d`` sampled
  queues full, ``1 - E[sum of the arrival intensities] / lam`` (the model's
  arrival intensities telescope to ``lam (1 - s_b^d)`` with replacement and to
  ``lam (1 - C(N s_b, d) / C(N, d))`` without);
* the mean number of jobs per server ``sum_k E[S_k]``.

The sparse solvers call BLAS on vectors many times; BLAS threads are limited
to ``$MFSTEIN_BLAS_THREADS`` (default 1) while they run
(:func:`numeric.precision.limited_blas`).

References
----------
.. [1] "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices
   Mean-Field Model in Heavy-Traffic" (the finite-N chain and its mean field).
.. [2] N. Gast and B. Van Houdt, "A Refined Mean Field Approximation",
   Proc. ACM Meas. Anal. Comput. Syst. 1(2), 2017 (the bias ``V``).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from derive.models.supermarket_structure import SupermarketStructure
from mfstein.families.supermarket.equilibrium import reference_point
from mfstein.ground.arguments import renamed_keywords
from mfstein.ground.display import family_fields
from mfstein.ground.errors import NumericalError, ParameterError, caller_level, check_int
from mfstein.ground.limits import MAX_D
from numeric.exact.general import Chain, SolvedChain, law_moments, queue_length_pmf
from numeric.exact.law_error import MAX_STATES, half_range, kept_system
from numeric.exact.memory import check_exact_N, check_size
from numeric.exact.prepared import PreparedModel, mean_field, prepare
from numeric.exact.result import ExactResult
from numeric.exact.solvers import METHODS
from numeric.exact.states import StateSpace, count_monotone, monotone_positions
from numeric.meanfield.result_tasks import EXACT_TASKS

#: A direct (LU) solve is accepted up to this residual even when ``tol`` is
#: smaller: its residual is rounding, ~1e-16 times the largest rate times a
#: modest growth factor.
RESIDUAL_FLOOR = 1e-9

#: Chains above this many states start the iterative solver from the Gaussian
#: guess (:func:`numeric.exact.solvers.gaussian_start`); below, the mean field's
#: ``W`` would cost more than it saves.
GAUSSIAN_START_STATES = 100_000

#: Default target for the absolute residual ``||pi Q||_1``.
TOL = 1e-11


@dataclass
class _MonotoneSolution:
    """The stationary law on the monotone space ``N >= n_1 >= ... >= n_b >= 0``.

    ``pi`` is aligned with ``space.states`` (level order); ``arrival_intensity``
    is, per state, the sum of the intensities ``beta_l(n/N)`` of the transitions
    that raise the total (``sum(l) > 0``); ``max_exit_rate`` is ``max_i q_i``.
    """

    space: StateSpace
    pi: np.ndarray
    residual: float
    arrival_intensity: np.ndarray
    solver: str
    iterations: int
    max_exit_rate: float
    start: list[int]
    system: Any = None  # numeric.exact.law_error.LawSystem, or None


def _solve_to_target(
    ch: Chain,
    centre: np.ndarray,
    *,
    solver: str,
    tol: float,
    spread: np.ndarray | None,
    progress: bool,
) -> SolvedChain:
    """``ch.solve`` to the absolute residual target ``tol`` (:data:`RESIDUAL_FLOOR` for
    a direct solve): first asked for the relative residual ``min(tol, 1e-3)`` and, by
    the iterative solvers, for the absolute ``tol`` too; then, once ``max_i q_i`` is
    known and if needed, for ``tol / max_i q_i``.  A result above the target raises
    :class:`mfstein.ground.errors.NumericalError`."""
    rel = min(float(tol), 1e-3)
    solved = ch.solve(centre, solver, rel, progress, spread, atol=float(tol))
    target = max(tol, RESIDUAL_FLOOR) if solved.solver == "direct" else tol
    qmax = solved.max_exit_rate
    if solved.residual > target and qmax > 0:  # max q known: ask for the absolute target
        solved = ch.solve(centre, solver, tol / qmax, progress, spread)
        target = max(tol, RESIDUAL_FLOOR) if solved.solver == "direct" else tol
    if not solved.residual <= target:
        raise NumericalError(
            f"the {solved.solver} solver stopped at residual ||pi Q||_1 = "
            f"{solved.residual:.2e}, above its target {target:.0e} "
            f"({solved.reach.states.shape[0]:,} states); no result is reported: try "
            "solver='direct' or 'gmres', or a smaller N or b."
        )
    return solved


def _on_monotone_space(
    prepared: PreparedModel,
    reference: np.ndarray,
    *,
    solver: str,
    tol: float,
    memory_limit: float | None,
    spread: np.ndarray | None,
    progress: bool,
) -> _MonotoneSolution:
    """Solve the chain of ``prepared`` (:class:`numeric.exact.general.Chain`, the
    balance equation of the state nearest ``reference`` pinned) and return its law
    on the monotone space, checked to be the reachable set and put in the order of
    :func:`numeric.exact.states.monotone_states` (by
    :func:`~numeric.exact.states.monotone_positions`)."""
    N, model = prepared.N, prepared.model
    ch = Chain.of(prepared.place(), memory_limit)
    solved = _solve_to_target(
        ch, reference.astype(np.float64), solver=solver, tol=tol, spread=spread,
        progress=progress,
    )  # fmt: skip
    reach, pi = solved.reach, solved.pi
    last = ch.last if ch.last is not None and ch.last.QT.shape[0] <= MAX_STATES else None
    ch.last = None  # Q^T and the solver's arrays: memory back before the reordering
    start = [int(x) for x in ch.start]
    del ch
    pos = monotone_positions(reach.states, N)
    if pos is None:
        raise NumericalError(
            f"the reachable states of model {model.name} are not its monotone space."
        )
    system = None if last is None else kept_system(last.QT, last.r, pos)  # the law's error
    del last
    ordered = np.empty_like(reach.states)
    ordered[pos] = reach.states
    space = StateSpace(N=N, states=ordered)
    full = np.empty(space.size)
    full[pos] = pi
    arrivals = np.empty(space.size)
    arrivals[pos] = reach.up_rates
    return _MonotoneSolution(
        space=space,
        pi=full,
        residual=float(solved.residual),
        arrival_intensity=arrivals,
        solver=solved.solver,
        iterations=solved.iterations,
        max_exit_rate=solved.max_exit_rate,
        start=start,
        system=system,
    )


def _lam_string(lam: Any) -> str:
    """``lam`` as the decimal text the mean-field reference reads, after the one
    number parser (:func:`mfstein.ground.numbers.parse_real`) checked it: ``"9/10"``,
    NumPy scalars and ``mpf`` values are read as everywhere else."""
    import mpmath

    from mfstein.ground.limits import MAX_LAM
    from mfstein.ground.numbers import exact_text, parse_real

    if isinstance(lam, mpmath.mpf):
        lam = mpmath.nstr(lam, 30)
    exact = parse_real("lam", lam, 0, MAX_LAM, low_open=True)
    return exact_text(lam, exact)


def _handles(model: Any) -> bool:
    """The unit-rate power-of-d chain, with or without replacement."""
    declared = SupermarketStructure.declared(model.info.structure)
    if model.name not in ("supermarket", "supermarket-without-replacement") or not declared:
        return False
    st = SupermarketStructure.read(model.info.structure)
    return st.service is None and st.mu == 1


@renamed_keywords(method="solver")
def supermarket_fast(
    problem: Any,
    params: Any = ...,
    *,
    N: int,
    solver: str = "auto",
    tol: float | None = None,
    memory_limit: float | None = None,
    progress: bool = False,
) -> ExactResult | None:
    """The exact task's fast path for the supermarket family (registered as ``"supermarket"``).

    The protocol of :mod:`numeric.exact.fast_paths`: ``problem`` is the prepared
    problem of the call (:meth:`numeric.exact.prepared.PreparedModel.problem`: the
    model, its parameters as given with ``N`` filled in without replacement), from
    which the model (``b``, ``d``, the sampling) and ``lam`` are read; ``solver`` is
    the linear solver of :func:`numeric.exact.solve`.  The older form
    ``supermarket_fast(model, params, *, N, method=...)`` prepares the problem first
    and warns (``method=`` is ``solver``'s deprecated alias).

    The unit-rate power-of-d chain of the core paper (Section 3), with or without
    replacement, on its monotone space ``N >= n_1 >= ... >= n_b >= 0``: statistics
    centred at the family's own fixed point
    (:func:`mfstein.families.supermarket.equilibrium.reference_point`),
    the balance equation of the state nearest ``N s*`` pinned, the iterative solvers
    started from the mean field's Gaussian above :data:`GAUSSIAN_START_STATES` states.
    ``tol`` is a target for the absolute residual ``||pi Q||_1`` (default :data:`TOL`);
    since the largest exit rate of this chain is at least ``N mu >= 1`` it also
    meets the same relative tolerance of :func:`numeric.exact.solve`.  The refined
    bias ``V``, ``W`` and ``c`` of :func:`numeric.solve` are reported when the mean
    field has a solution.  Returns ``None`` for members of the family it does not
    handle (a service rate other than 1, a symbolic one, the JSQ(L) variants).
    """
    from numeric.linalg.refinement import to_float64

    if params is not ...:  # the older form (model, params)
        warnings.warn(
            "supermarket_fast(model, params, ...) is deprecated; pass the prepared problem "
            "(numeric.exact.prepared.prepare(model, N, params).problem()).",
            DeprecationWarning,
            stacklevel=3,  # the caller of the keyword wrapper (mfstein.ground.arguments)
        )
        if not _handles(problem):
            return None
        problem = prepare(problem, N, params).problem()
    if not _handles(problem.model):
        return None
    t0 = time.perf_counter()
    # the model's own checks and sentences (names, declared ranges, N >= d, N filled in):
    # the problem's parameters read again for the lattice (kept per point: no work)
    prepared = prepare(problem.model, N, problem.params)
    model, N = prepared.model, prepared.N
    st = SupermarketStructure.read(model.info.structure)
    b, d, replacement = model.n, check_int("d", st.d, 1, MAX_D), bool(st.replacement)
    lam_text = _lam_string(prepared.params["lam"])
    tol = TOL if tol is None else tol
    if not (isinstance(tol, float | int) and tol > 0):
        raise ParameterError(f"tol must be a positive number, got {tol!r}.")
    check_size(N, b, count_monotone(N, b), 2 * b, memory_limit)  # before any symbolic work
    s_star_mp, reference_note = reference_point(lam_text, b, d, replacement=replacement, N=N)
    if reference_note:
        # the line that called numeric.exact.solve or solve_exact (the entry's
        # argument check, mfstein.ground.arguments, counts as inside)
        warnings.warn(
            reference_note,
            stacklevel=caller_level((__name__, "numeric.exact", "mfstein.ground.arguments")),
        )
    s_star = np.array([float(v) for v in s_star_mp])
    mf_params = {"lam": lam_text} if replacement else {"lam": lam_text, "N": str(N)}
    try:
        mf, note = mean_field(model, mf_params, np.zeros(b, dtype=np.int64), N, False, False)
    except (ParameterError, NumericalError):
        mf, note = None, None
    W = None if mf is None else to_float64(mf.W)
    sol = _on_monotone_space(
        prepared,
        # the lattice point nearest N s* carries much probability: a good reference
        np.clip(np.rint(N * s_star), 0, N).astype(np.int64),
        solver=solver,
        tol=tol,
        memory_limit=memory_limit,
        spread=W if count_monotone(N, b) > GAUSSIAN_START_STATES else None,
        progress=progress,
    )
    return ExactResult(
        model=model.name,
        N=N,
        params=mf_params,
        n=b,
        states=sol.space.size,
        residual=sol.residual,
        relative_residual=sol.residual / sol.max_exit_rate if sol.max_exit_rate else 0.0,
        pi=sol.pi,
        state_array=sol.space.states,
        start=sol.start,
        s_star=s_star,
        V=None if mf is None else np.array([float(v) for v in mf.V]),
        W=W,
        constant=None if mf is None else float(mf.constant),
        seconds=time.perf_counter() - t0,
        solver=sol.solver,
        iterations=sol.iterations,
        tolerance=float(tol),
        notes=[note] if note else [],
        family_fields=family_fields(lam=lam_text, d=d, replacement=replacement),
        source_model=model,
        tasks=EXACT_TASKS,
        law_system=sol.system,
        up_rate_half_range=float(half_range(sol.arrival_intensity)),
        **_moments(sol, N, s_star, float(lam_text)),
    )


def _moments(sol: _MonotoneSolution, N: int, s_star: np.ndarray, lam: float) -> dict[str, Any]:
    """The statistics of the module docstring from the law on the monotone space."""
    out = law_moments(sol.space.states, sol.pi, N, s_star)
    up_rate = float(sol.pi @ sol.arrival_intensity)
    return {
        **out,
        "queue_length_pmf": queue_length_pmf(out["mean"]),
        "mean_jobs": float(out["mean"].sum()),
        "blocking": 1.0 - up_rate / lam,
        "up_rate": up_rate,
    }



@renamed_keywords(method="solver")
def solve_exact(
    N: int,
    lam,
    b: int,
    d: int = 2,
    *,
    replacement: bool = True,
    solver: str = "auto",
    tol: float = TOL,
    memory_limit: float | None = None,
    progress: bool = False,
) -> ExactResult:
    """The paper's short form: the exact finite-N supermarket model and its moments.

    Builds the supermarket model :func:`derive.supermarket` ``(b, d, replacement=...)``
    and solves it by the family's fast path :func:`supermarket_fast` (what
    ``numeric.exact.solve(model, {"lam": lam}, N=N, route="fast", ...)`` does);
    the size is checked first, before the model is built symbolically.

    Parameters
    ----------
    N:
        Number of servers, ``N >= 1`` (``N >= d`` without replacement).
    lam:
        Arrival rate per server (str, int, float or mpf), ``lam > 0``.
    b:
        Buffer size, ``b >= 1``.
    d:
        Servers sampled per arrival, ``d >= 1``.
    replacement:
        Sample with replacement (the core paper's chain) or ``d`` distinct servers.
    solver, memory_limit, progress:
        See :func:`numeric.exact.solve` (``method=`` is ``solver``'s deprecated alias).
    tol:
        Target for the absolute residual ``||pi Q||_1``.

    Returns
    -------
    ExactResult
        The law on the monotone space ``N >= n_1 >= ... >= n_b >= 0`` (``state_array``)
        and its moments, with the supermarket's ``queue_length_pmf``, ``mean_jobs``,
        ``blocking`` and ``up_rate`` (:func:`supermarket_fast`).

    Raises
    ------
    ParameterError
        Bad parameters, or a state space too large for the memory limit (raised
        before anything is allocated, naming the states and the memory needed).
    NumericalError
        The solver stopped above the residual target ``tol`` (no result is reported).
    """
    from derive import supermarket

    if solver not in METHODS:
        raise ParameterError(f"solver must be one of {', '.join(METHODS)}, got {solver!r}.")
    N, b = check_exact_N(N), check_int("b", b, 1)
    d = check_int("d", d, 1, MAX_D)
    if not replacement and N < d:
        raise ParameterError(f"N must be >= d = {d} to sample {d} distinct servers, got N = {N}.")
    check_size(N, b, count_monotone(N, b), 2 * b, memory_limit)  # before any symbolic work
    model = supermarket(b, d, replacement=replacement)
    r = supermarket_fast(
        prepare(model, N, {"lam": lam} if replacement else {"lam": lam, "N": N}).problem(),
        N=N,
        solver=solver,
        tol=tol,
        memory_limit=memory_limit,
        progress=progress,
    )
    assert r is not None  # the unit-rate chain is the fast path's own
    return r
