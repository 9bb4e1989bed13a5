"""The supermarket family's exact fast path, and the paper's short form ``solve_exact``.

:func:`supermarket_fast` is registered as the exact task's fast path for the
supermarket family (:mod:`numeric.exact.fast_paths`); :func:`numeric.exact.solve`
chooses it, and :func:`solve_exact` ``(N, lam, b, d)`` builds the model and calls
that entry.  The chain is solved by the one exact solver,
:class:`numeric.exact.general.Chain` (through :func:`_solve_chain`).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mfstein.errors import ParameterError, check_int
from mfstein.limits import MAX_D, human_bytes, memory_cap
from numeric.equilibrium import reference_point
from numeric.exact.fast_paths import register_fast_path
from numeric.exact.result import ExactResult
from numeric.exact.solvers import METHODS
from numeric.exact.states import StateSpace, count_monotone, monotone_states

#: A direct (LU) solve is accepted up to this residual even when ``tol`` is
#: smaller: its residual is rounding, ~1e-16 times the largest rate times a
#: modest growth factor.
RESIDUAL_FLOOR = 1e-9

def bytes_per_state(b: int, n_transitions: int) -> int:
    """Planned peak memory per state of one solve (generous; see the benchmark).

    Assembly holds ``n_transitions`` intensities and (row, column, value) triples
    per state (32 bytes each); ``Q^T`` and its pinned copy hold ``n_transitions + 1``
    entries per row (value and index, 16 bytes each, twice); the state array
    holds ``b`` int64; BiCGSTAB and the preconditioner hold about 16 vectors.
    """
    t = n_transitions
    return 32 * t + 2 * 16 * (t + 1) + 8 * b + 8 * 16


def _count(states: int) -> str:
    return f"{states:,}" if states < 10**15 else f"about 10^{len(str(states)) - 1}"


def memory_limit_bytes(limit: float | None) -> int:
    """The memory limit: ``limit`` bytes, or the one memory policy
    (:func:`mfstein.limits.memory_cap`)."""
    if limit is None:
        return memory_cap()
    if not (limit > 0 and limit < float("inf")):
        raise ParameterError(
            f"memory_limit must be a positive, finite number of bytes, got {limit!r}."
        )
    return int(limit)


def check_size(N: int, b: int, states: int, n_transitions: int, limit: float | None) -> int:
    """Raise :class:`ParameterError` if ``states`` would need more memory than the limit.

    Returns the memory estimate in bytes.
    """
    from mfstein.limits import EXACT_MAX_STATES

    need = states * bytes_per_state(b, n_transitions)
    cap = memory_limit_bytes(limit)
    if need > cap:
        raise ParameterError(
            f"N={N}, b={b} gives {_count(states)} states, needing about {human_bytes(need)}; "
            f"the limit is {human_bytes(cap)}."
        )
    if states > EXACT_MAX_STATES:
        raise ParameterError(
            f"N={N}, b={b} gives {_count(states)} states; the exact solver handles at most "
            f"{EXACT_MAX_STATES:,} (beyond, the iterative solver does not reach its residual "
            "target in reasonable time): lower N or b, or simulate."
        )
    return need


@dataclass
class _ChainSolution:
    """Stationary distribution of a finite-N chain on an enumerated state space.

    Attributes
    ----------
    space:
        The states (``space.states``, ``(S, b)`` integers ``n``, level order).
    pi:
        Stationary probabilities, aligned with ``space.states``.
    residual:
        ``||pi Q||_1``.
    arrival_intensity:
        Per state, the sum of the intensities ``beta_l(n/N)`` of transitions that
        raise the total (``sum(l) > 0``).
    method, iterations:
        Solver used and its Krylov iterations.
    max_exit_rate:
        ``max_i q_i`` (for the relative residual).
    start:
        The start of the reachability search (counts).
    """

    space: StateSpace
    pi: np.ndarray
    residual: float
    arrival_intensity: np.ndarray
    method: str
    iterations: int
    max_exit_rate: float = 0.0
    start: list[int] | None = None


def _solve_chain(
    model,
    N: int,
    p,
    *,
    start=None,
    reference=None,
    method: str = "auto",
    tol: float = 1e-11,
    memory_limit: float | None = None,
    spread: np.ndarray | None = None,
    progress: bool = False,
) -> _ChainSolution:
    """Stationary distribution of the finite-N chain of any population-process model.

    A thin wrapper of the one exact solver, :class:`numeric.exact.general.Chain`
    as used by :func:`numeric.exact.general.solve` (lattice from the model's
    declared state space, reachable states with exactly evaluated rates, a
    unique closed class checked, and a result never returned above the
    tolerance), keeping this function's older signature and result type; it
    needs no mean-field solution.  The chain jumps ``n -> n + l`` at rate ``N beta_l(n/N)`` (the
    core paper, Section 3).

    Parameters
    ----------
    model:
        A :class:`derive.Model`.  For a :class:`derive.SupermarketModel` the states
        are returned as the monotone space ``N >= n_1 >= ... >= n_b >= 0``
        (``C(N + b, b)`` states, checked against the memory limit before anything
        is allocated).
    N:
        Lattice size (number of servers), ``N >= 1``.
    p:
        Parameter values in ``model.params`` order (a parameter named ``N`` must
        equal ``N``).
    start:
        Start state in counts ``n`` (``b`` integers); it fixes the values of the
        conservation laws.  Default: the model's reference point, else the origin.
    reference:
        A state of the chain (``ParameterError`` otherwise) whose balance equation
        is replaced by the normalisation (best one of high probability); default
        the recurrent state nearest the start.
    method:
        ``"auto"``, ``"direct"``, ``"bicgstab"`` or ``"gmres"``.
    tol:
        Target for the residual ``||pi Q||_1``: the general solver is asked for
        the relative residual ``tol / max_i q_i``; a result above ``tol`` (above
        :data:`RESIDUAL_FLOOR` for a direct solve) raises
        :class:`mfstein.errors.NumericalError`, it is never returned.
    memory_limit:
        Bytes a solve may plan to use; default half the available memory.
    spread:
        The mean field's covariance ``W``: the iterative solvers then start from
        the Gaussian guess around ``reference`` (:func:`numeric.exact.solvers.gaussian_start`).
    progress:
        Show solver progress on standard error.
    """
    from fractions import Fraction

    from derive.model import SupermarketModel
    from mfstein.errors import NumericalError
    from numeric.exact.general import Chain
    from numeric.exact.states import code_space, index_of, rates_batch

    N = check_int("N", N, 1)
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")
    if not (isinstance(tol, float | int) and tol > 0):
        raise ParameterError(f"tol must be a positive number, got {tol!r}.")
    kern = model.kernels("numba")
    b = model.b
    nt = int(kern.jumps.shape[0])
    p = np.asarray(p, dtype=np.float64).reshape(-1)
    if p.shape[0] != len(model.params):
        raise ParameterError(
            f"p must hold {len(model.params)} values (for {', '.join(kern.params)}), "
            f"got {p.shape[0]}."
        )
    params = {}
    for q, v in zip(model.params, p, strict=True):
        if str(q) == "N":
            if v != N:
                raise ParameterError(f"the parameter N must equal the lattice size {N}, got {v!r}.")
            continue  # filled in by the general solver
        params[str(q)] = repr(float(v))
    monotone = isinstance(model, SupermarketModel)
    if monotone:
        check_size(N, b, count_monotone(N, b), nt, memory_limit)
    frac = None
    if start is not None:
        n0 = np.asarray(start).reshape(-1)
        if n0.shape != (b,) or not all(float(x).is_integer() for x in n0):
            raise ParameterError(f"start must be {b} integer counts, got {np.asarray(start)!r}.")
        frac = [str(Fraction(int(x), N)) for x in n0]
    if reference is not None and np.shape(reference) != (b,):
        raise ParameterError(f"reference must be a state of the chain, got {reference!r}.")
    if spread is not None:
        spread = np.asarray(spread, dtype=np.float64)
        if spread.shape != (b, b) or not np.all(np.isfinite(spread)):
            raise ParameterError(
                f"spread must be a finite {b} x {b} covariance matrix (the mean field's W), "
                f"got shape {spread.shape}."
            )
    ch = Chain.setup(model, N, params, frac, None, memory_limit)
    centre = ch.start if reference is None else np.asarray(reference, dtype=np.float64)
    rel = min(float(tol), 1e-3)
    reach, pi, res, used, iters, exit_rate = ch.solve(centre, method, rel, progress, spread)
    target = max(tol, RESIDUAL_FLOOR) if used == "direct" else tol
    qmax = float(exit_rate.max()) if exit_rate.size else 0.0
    if res > target and qmax > 0:  # now that max q is known: ask for the absolute target
        reach, pi, res, used, iters, exit_rate = ch.solve(
            centre, method, tol / qmax, progress, spread
        )
        target = max(tol, RESIDUAL_FLOOR) if used == "direct" else tol
    if not res <= target:
        raise NumericalError(
            f"the {used} solver stopped at residual ||pi Q||_1 = {res:.2e}, above its target "
            f"{target:.0e} ({reach.states.shape[0]:,} states); no result is reported: try "
            "method='direct' or 'gmres', or a smaller N or b."
        )
    states = reach.states
    if monotone:
        space = monotone_states(N, b)
        mine, theirs = np.lexsort(space.states.T[::-1]), np.lexsort(states.T[::-1])
        if space.size != states.shape[0] or not np.array_equal(space.states[mine], states[theirs]):
            raise NumericalError(
                f"the reachable states of model {model.name} are not its monotone space."
            )
        full = np.zeros(space.size)
        full[mine] = pi[theirs]
        pi = full
    else:
        if (N + 1) ** b >= 2**62:
            raise ParameterError(
                f"the lattice {{0..N}}^b with N={N}, b={b} is too large to index by codes; "
                "it needs (N + 1)^b < 2^62."
            )
        space, order = code_space(states, N)
        pi = pi[order]
    if reference is not None:
        ref = np.asarray(reference, dtype=np.int64)
        ok = ref.shape == (b,) and (
            index_of(ref, space.N, space.mode, space.keys, space.lookup, space.binom) >= 0
        )
        if not ok:
            raise ParameterError(f"reference must be a state of the chain, got {ref.tolist()}.")
    rates = np.maximum(rates_batch(space.states, N, kern.rates_into, p, nt), 0.0)
    arrivals = rates[:, np.asarray(kern.jumps).sum(axis=1) > 0].sum(axis=1)
    return _ChainSolution(
        space=space,
        pi=pi,
        residual=float(res),
        arrival_intensity=arrivals,
        method=used,
        iterations=iters,
        max_exit_rate=float(exit_rate.max()) if exit_rate.size else 0.0,
        start=[int(x) for x in ch.start],
    )


def _lam_string(lam) -> str:
    import mpmath

    if isinstance(lam, str):
        text = lam.strip()
    elif isinstance(lam, mpmath.mpf):
        text = mpmath.nstr(lam, 30)
    else:
        text = repr(lam) if isinstance(lam, float) else str(lam)
    try:
        value = float(mpmath.mpf(text))
    except (ValueError, TypeError):
        raise ParameterError(f"lam must be a positive number, got {lam!r}.") from None
    if not 0.0 < value < float("inf"):
        raise ParameterError(f"lam must be a positive number, got {lam!r}.")
    return text


#: Chains above this many states start the iterative solver from the Gaussian
#: guess (:func:`numeric.exact.solvers.gaussian_start`); below, the mean field's
#: ``W`` would cost more than it saves.
GAUSSIAN_START_STATES = 100_000


def supermarket_fast(
    model: Any,
    params: Mapping[str, Any] | None,
    *,
    N: int,
    method: str = "auto",
    tol: float | None = None,
    memory_limit: float | None = None,
    progress: bool = False,
) -> ExactResult | None:
    """The exact task's fast path for the supermarket family (registered as ``"supermarket"``).

    The unit-rate power-of-d chain of the core paper (Section 3), with or without
    replacement, on its monotone space ``N >= n_1 >= ... >= n_b >= 0``: statistics
    centred at the family's own fixed point (:func:`numeric.equilibrium.reference_point`),
    the balance equation of the state nearest ``N s*`` pinned, the iterative solvers
    started from the mean field's Gaussian above :data:`GAUSSIAN_START_STATES` states.
    ``tol`` is a target for the absolute residual ``||pi Q||_1`` (default ``1e-11``);
    since the largest exit rate of this chain is at least ``N mu >= 1`` it also
    meets the same relative tolerance of :func:`numeric.exact.solve`.  The refined
    bias ``V``, ``W`` and ``c`` of :func:`numeric.solve` are reported when the mean
    field has a solution.  Returns ``None`` for members of the family it does not
    handle (a service rate other than 1, a symbolic one, the JSQ(L) variants).
    """
    from mfstein.errors import NumericalError
    from numeric.exact.general import _mean_field, prepare
    from numeric.refinement import to_float64

    st = model.info.structure
    if model.name not in ("supermarket", "supermarket-without-replacement") or not (
        st.get("service") is None and st.get("mu") == 1
    ):
        return None
    t0 = time.perf_counter()
    # the model's own checks and sentences (names, declared ranges, N >= d, N filled in)
    model, given, _ = prepare(model, N, params)
    N = int(N)
    b, d, replacement = model.b, check_int("d", st["d"], 1, MAX_D), bool(st["replacement"])
    lam_text = _lam_string(given["lam"])
    lam_f = float(lam_text)
    if tol is None:
        tol = 1e-11
    check_size(N, b, count_monotone(N, b), 2 * b, memory_limit)  # before any symbolic work
    s_star_mp, reference_note = reference_point(lam_text, b, d, replacement=replacement, N=N)
    if reference_note:
        warnings.warn(reference_note, stacklevel=4)  # the caller of numeric.exact.solve
    s_star = np.array([float(v) for v in s_star_mp])
    p = [lam_f] if replacement else [lam_f, float(N)]
    # the lattice point nearest N s* carries much probability: a good reference
    ref = np.clip(np.rint(N * s_star), 0, N).astype(np.int64)
    mf_params = {"lam": lam_text} if replacement else {"lam": lam_text, "N": str(N)}
    notes: list[str] = []
    try:
        mf, note = _mean_field(model, mf_params, np.zeros(b, dtype=np.int64), N, False, False)
    except (ParameterError, NumericalError):
        mf, note = None, None
    if note:
        notes.append(note)
    W = None if mf is None else to_float64(mf.W)
    spread = W if count_monotone(N, b) > GAUSSIAN_START_STATES else None
    sol = _solve_chain(
        model,
        N,
        p,
        reference=ref,
        method=method,
        tol=tol,
        memory_limit=memory_limit,
        spread=spread,
        progress=progress,
    )
    pi = sol.pi
    S = sol.space.states / N
    mean = pi @ S
    centred = S - mean
    cov = (centred * pi[:, None]).T @ centred
    dev = S - s_star
    n_mse = N * float(pi @ np.einsum("ij,ij->i", dev, dev))
    padded = np.concatenate([[1.0], mean, [0.0]])
    pmf = padded[:-1] - padded[1:]
    blocking = 1.0 - float(pi @ sol.arrival_intensity) / lam_f
    states = sol.space.states
    marginal = [
        np.bincount(states[:, k], weights=pi, minlength=int(states[:, k].max()) + 1)
        for k in range(b)
    ]
    qmax = sol.max_exit_rate
    return ExactResult(
        model=model.name,
        N=N,
        params=mf_params,
        b=b,
        states=sol.space.size,
        residual=sol.residual,
        relative_residual=sol.residual / qmax if qmax else 0.0,
        pi=pi,
        state_array=states,
        start=sol.start,
        s_star=s_star,
        V=None if mf is None else np.array([float(v) for v in mf.V]),
        W=W,
        constant=None if mf is None else float(mf.constant),
        mean=mean,
        n_bias=N * (mean - s_star),
        n_mse=n_mse,
        n_cov=N * cov,
        seconds=time.perf_counter() - t0,
        method=sol.method,
        iterations=sol.iterations,
        tolerance=float(tol),
        marginal_pmf=marginal,
        queue_length_pmf=pmf,
        mean_jobs=float(mean.sum()),
        blocking=blocking,
        up_rate=float(pi @ sol.arrival_intensity),
        notes=notes,
        lam=lam_text,
        d=d,
        replacement=replacement,
        source_model=model,
    )


register_fast_path("supermarket", supermarket_fast)


def solve_exact(
    N: int,
    lam,
    b: int,
    d: int = 2,
    *,
    replacement: bool = True,
    method: str = "auto",
    tol: float = 1e-11,
    memory_limit: float | None = None,
    progress: bool = False,
) -> ExactResult:
    """The paper's short form: the exact finite-N supermarket model and its moments.

    Builds the supermarket model :func:`derive.supermarket` ``(b, d, replacement=...)``
    and calls the one entry, ``numeric.exact.solve(model, {"lam": lam}, N=N,
    route="fast", ...)`` (its fast path :func:`supermarket_fast`); the size is
    checked first, before the model is built symbolically.

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
    method, memory_limit, progress:
        See :func:`numeric.exact.solve`.
    tol:
        Target for the absolute residual ``||pi Q||_1``.

    Returns
    -------
    ExactResult

    Raises
    ------
    ParameterError
        Bad parameters, or a state space too large for the memory limit (raised
        before anything is allocated, naming the states and the memory needed).
    """
    from derive import supermarket

    N, b = check_int("N", N, 1), check_int("b", b, 1)
    d = check_int("d", d, 1, MAX_D)
    if not replacement and N < d:
        raise ParameterError(f"N must be >= d = {d} to sample {d} distinct servers, got N = {N}.")
    check_size(N, b, count_monotone(N, b), 2 * b, memory_limit)  # before any symbolic work
    return solve(
        supermarket(b, d, replacement=replacement),
        {"lam": lam} if replacement else {"lam": lam, "N": N},
        N=N,
        route="fast",
        method=method,
        tol=tol,
        memory_limit=memory_limit,
        progress=progress,
    )


def solve(
    model: Any,
    params: Mapping[str, Any] | None,
    *,
    N: int,
    start: Sequence[Any] | str | None = None,
    truncation: Any = None,
    route: str = "auto",
    method: str = "auto",
    tol: float | None = None,
    memory_limit: float | None = None,
    progress: bool = False,
) -> ExactResult:
    """The exact stationary law of any model (:func:`numeric.exact.general.solve`).

    Defined here too because this module is also called ``solve``: after
    ``import numeric.exact.solve`` the package attribute ``numeric.exact.solve``
    must still be this function (see :mod:`mfstein.lazy`).
    """
    from numeric.exact.general import solve as solve_general

    return solve_general(
        model,
        params,
        N=N,
        start=start,
        truncation=truncation,
        route=route,
        method=method,
        tol=tol,
        memory_limit=memory_limit,
        progress=progress,
    )
