"""The supermarket family's own engines: the finite-N supermarket system on the
aggregated CTMC of the counts (:mod:`mfstein.families.supermarket.aggregated`) or on explicit
FIFO servers
(:mod:`mfstein.families.supermarket.perserver`), with their estimates (95% CIs).

:func:`run_supermarket` is what :func:`sim.simulate` runs for the supermarket
family's fast path and its ``aggregated`` and ``per-server`` engines
(:class:`mfstein.families.supermarket.fast_path.SupermarketFastPath`), and what
:func:`sim.simulate_supermarket`
reaches through it.

References
----------
.. [1] "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices
   Mean-Field Model in Heavy-Traffic" (Tables 1 and 2: ``N E||S - s*||^2``).
.. [2] N. Gast and B. Van Houdt, "A Refined Mean Field Approximation",
   Proc. ACM Meas. Anal. Comput. Syst. 1(2), 2017 (``N (E[S] - s*)`` against ``V``).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# its advance and fresh_state read at call time (tests replace them)
import mfstein.families.supermarket.engine
from mfstein.families.supermarket import aggregated, perserver
from mfstein.families.supermarket.engine import ENGINES, POLICIES, Spec
from mfstein.ground import jit
from mfstein.ground.arguments import renamed_keywords
from mfstein.ground.display import family_fields
from mfstein.ground.errors import ParameterError, caller_level, check_choice, check_int
from numeric.prepared.cache import PreparedCache
from sim import runner, stats, summary
from sim.base import RunOptions, SimulationResult

#: Largest buffer the simulators accept (queue lengths are stored as uint8).
MAX_B = 200
#: Response-time quantiles reported by the per-server simulator.
QUANTILES = (0.5, 0.9, 0.99)


#: The digits of the centre ``s*`` (:func:`numeric.reference_point`'s default ``dps``);
#: it reads ``lam`` at :data:`READ_DPS` digits.
CENTRE_DPS = 30
#: The digits at which :func:`numeric.reference_point` (``dps`` = :data:`CENTRE_DPS`) reads
#: ``lam``: ``dps + 10`` (:func:`mfstein.families.supermarket.equilibrium.equilibrium`).
READ_DPS = CENTRE_DPS + 10


@dataclass(frozen=True)
class Rate:
    """The arrival rate per server of the ``mu = 1`` chain the engines run, read once.

    ``value`` is the rate the engines simulate (float64, correctly rounded) and ``at_read``
    the one the centre ``s*`` is computed from (:data:`READ_DPS` digits, what
    :func:`numeric.reference_point` reads a text at); ``text`` labels the result.
    """

    #: The rate as the result labels it (``lam_text``).
    text: str
    #: The rate in float64 (correctly rounded: the chain's ``lam``).
    value: float
    #: The rate at :data:`READ_DPS` digits (correctly rounded: the centre's ``lam``).
    at_read: Any

    @classmethod
    def of(cls, lam: Any) -> Rate:
        """The rate as given (str, int, float or mpf): read by
        :func:`numeric.precision.parse_lam` at 53 bits and at :data:`READ_DPS` digits;
        a number that is not text is labelled by its float's ``repr``."""
        import mpmath

        from numeric.precision import parse_lam

        with mpmath.workprec(53):
            value = float(parse_lam(lam))
        text = lam if isinstance(lam, str) else repr(value)
        with mpmath.workdps(READ_DPS):
            at_read = parse_lam(text)
        return cls(text, value, at_read)

    @classmethod
    def read(cls, text: str, now: Any) -> Rate:
        """The rate of a prepared problem: ``now()`` is its value at the current working
        precision (:meth:`numeric.prepared.problem.PreparedProblem.values_now`, the same
        correctly rounded reading as parsing the exact input afresh), read at 53 bits
        and at :data:`READ_DPS` digits; ``text`` labels it."""
        import mpmath

        with mpmath.workprec(53):
            value = float(now())
        with mpmath.workdps(READ_DPS):
            at_read = now()
        return cls(text, value, at_read)


def reference_point(
    lam_text: Any, b: int, d: int, replacement: bool, policy: str, N: int
) -> list[float]:
    """``s*`` from :func:`numeric.equilibrium` (the N-dependent one without replacement).

    ``lam_text`` is the rate as given, or its :class:`Rate`.  JSQ has no power-of-d
    fixed point; its fluid limit for ``lam < 1`` puts every busy server at one job,
    ``s* = (lam, 0, ..., 0)`` (the JSQ system of "Exponential Tail Bounds on Queues: A
    Confluence of Non-Asymptotic Heavy Traffic and Large Deviations"), used as the
    reference there.
    """
    rate = lam_text if isinstance(lam_text, Rate) else Rate.of(lam_text)
    if policy == "jsq":
        return [min(rate.value, 1.0)] + [0.0] * (b - 1)
    dd = 1 if policy == "random" else d
    key = ("mpf", rate.at_read._mpf_, b, dd, bool(replacement), N)
    s_star, note = _CENTRES.get(key, lambda: _centre(rate.at_read, b, dd, replacement, N))
    if note:  # on every call, kept or not
        warnings.warn(note, stacklevel=caller_level())  # the user's line, past the wrappers
    return list(s_star)


#: The centres of this process by their exact inputs (a warm call of the fast path
#: solves no fixed point again; issue 31).
_CENTRES: PreparedCache[tuple[tuple[float, ...], str | None]] = PreparedCache(
    "prepared:centre", 256
)


def _centre(lam: Any, b: int, d: int, replacement: bool, N: int) -> tuple:
    """``(s*, note)`` of :func:`numeric.reference_point` at ``lam`` (an mpf read at
    :data:`READ_DPS` digits), ``s*`` as a tuple of floats."""
    import numeric

    s_star, note = numeric.reference_point(lam, b, d, replacement=replacement, N=N, dps=CENTRE_DPS)
    return tuple(float(x) for x in s_star), note


def resolve_policy(policy: str, engine: str | None) -> tuple[str, str]:
    """``(policy, engine)`` from the user's choice (``engine=`` of
    :func:`sim.simulate_supermarket`): the engine defaults to the aggregated one for
    ``"pod"`` and to the per-server one otherwise."""
    check_choice("policy", policy, POLICIES)
    if engine is None:
        engine = "aggregated" if policy == "pod" else "per-server"
    check_choice("engine", engine, ENGINES)
    if engine == "aggregated" and policy != "pod":
        raise ParameterError(
            f"the aggregated engine runs policy 'pod' only; use engine='per-server' "
            f"for policy {policy!r}."
        )
    return policy, engine


def check_inputs(
    N: Any,
    b: Any,
    d: Any,
    reps: Any,
    seed: Any,
    batches: Any,
    steps: Any,
    workers: Any,
    policy: str = "pod",
    engine: str | None = None,
    replacement: bool = True,
) -> tuple:
    """Validate the sizes of a simulation against :mod:`mfstein.ground.limits`, before any work.

    Returns ``(N, b, d, reps, seed, batches, steps, workers, policy, engine)``;
    ``workers`` defaults to the number of cores and is capped at ``reps``.
    """
    from mfstein.ground.limits import MAX_D, SIM_MAX_N, check_memory, simulation_bytes

    N = check_int("N", N, 1, SIM_MAX_N)
    b = check_int("b", b, 1, MAX_B)
    d = check_int("d", d, 1, MAX_D)
    run = runner.check_run(steps, reps, seed, workers, 0.0, batches=batches)
    steps, reps, seed, batches, workers = run.steps, run.reps, run.seed, run.batches, run.workers
    policy, engine = resolve_policy(policy, engine)
    if not replacement and N < d:
        raise ParameterError(f"N must be >= d = {d} when sampling without replacement, got {N}.")
    workers = min(workers, reps)
    per_server = engine != "aggregated"
    check_memory(
        f"simulating N = {N:,} servers ({engine}, b = {b}, {reps} replications, "
        f"{workers} workers)",
        simulation_bytes(N, b, per_server, reps, workers),
    )
    return N, b, d, reps, seed, batches, steps, workers, policy, engine


#: Seconds of one core numba takes to compile a supermarket engine's loops on a first
#: run (measured: ``simulate --N 100 --lam 0.9 --b 3`` 8.3 s with an empty cache,
#: 3.0 s with a warm one).
SUPERMARKET_COMPILE_SECONDS = 5.0


@renamed_keywords(simulator="engine")
def run_supermarket(
    N: int, lam: Any, b: int, d: int, options: RunOptions, *, replacement: bool, policy: str,
    engine: str, s_star: Sequence[float] | None = None,
) -> SimulationResult:
    """The supermarket engines: simulate the finite-N supermarket system.

    What the ``aggregated`` and ``per-server`` engines of :func:`sim.simulate` run
    (and :func:`sim.simulate_supermarket`, the paper's short form, through them).

    Parameters
    ----------
    N:
        Number of servers, ``1 <= N <= 2^31`` (``N >= d`` without replacement).
    lam:
        Arrival rate per server, ``> 0`` (str, int, float or mpf), or its :class:`Rate`
        read from a prepared problem.
    b:
        Buffer size per server, ``1 <= b <= 200``.
    d:
        Servers sampled per arrival (``pod`` and ``aggregated``), ``>= 1``.
    options:
        The run (:class:`sim.base.RunOptions`): ``steps`` are the paper's "time
        steps" (the core paper drops the first 10%); the same seed gives the same
        numbers whatever ``workers`` or ``scheduler``; with ``max_units`` the
        result covers the completed batches (``complete=False``).
    replacement:
        Sample with replacement (the core paper's chain) or ``d`` distinct servers.
    policy:
        Dispatch: ``"pod"`` (power-of-``d``), ``"jsq"`` or ``"random"``.
    engine:
        ``"aggregated"`` (the CTMC on the counts, fastest; power-of-``d`` only)
        or ``"per-server"`` (explicit FIFO servers, with response times);
        ``simulator=`` is its deprecated alias.
    s_star:
        The centre of ``N E||S - s*||^2`` (``b`` floats), when the caller has it (the
        order-1 solution of the table, :mod:`mfstein.families.supermarket.table`); default
        :func:`reference_point` of ``lam``.

    Returns
    -------
    SimulationResult
    """
    o = options
    N, b, d, reps, seed, batches, steps, workers, policy, engine = check_inputs(
        N, b, d, o.reps, o.seed, o.batches, o.steps, o.workers, policy, engine, replacement
    )
    o = dataclasses.replace(o.checked(), workers=workers)
    rate = lam if isinstance(lam, Rate) else Rate.of(lam)
    lam_text = rate.text
    plan = runner.Plan.make(steps, batches, o.warmup_fraction)
    if s_star is None:
        s_star = reference_point(rate, b, d, replacement, policy, N)
    elif len(s_star) != b:
        raise ParameterError(f"s_star must list b = {b} levels, got {len(s_star)}.")
    spec = Spec(
        N=N,
        lam=rate.value,
        b=b,
        d=1 if policy == "random" else d,
        replacement=replacement,
        policy=policy,
        s_star=tuple(float(x) for x in s_star),
        engine=engine,
    )
    if o.progress:
        loop = perserver.run if engine == "per-server" else aggregated.run
        seconds = jit.first_compile_seconds(SUPERMARKET_COMPILE_SECONDS, loop)
        jit.announce_compile("the supermarket simulator", seconds)
    return runner.run_and_pool(
        spec,
        plan,
        lambda out: summarise(spec, out, lam_text=lam_text, steps=steps, reps=reps, seed=seed),
        **o.runner_kwargs(),
        advance=mfstein.families.supermarket.engine.advance,
        fresh_state=mfstein.families.supermarket.engine.fresh_state,
    )


def _response_time(spec: Spec, batches: list[dict], sc: np.ndarray) -> dict:
    """The per-server engine's response times: mean (95% CI), :data:`QUANTILES` and the
    pooled histogram on ``[0, hist_max)`` with its overflow."""
    jobs = sc[:, perserver.JOBS]
    resp = stats.ratio(sc[:, perserver.RESP_SUM], jobs)
    hist = np.sum([s["hist"] for s in batches], axis=0)
    over = float(sc[:, perserver.RESP_OVER].sum())
    qs = stats.histogram_quantiles(hist, spec.hist_max, over, QUANTILES)
    return {
        **resp.to_dict(),  # as printed (sim.stats.Estimate)
        "quantiles": {str(q): v for q, v in zip(QUANTILES, qs, strict=True)},
        "jobs": int(jobs.sum()),
        "histogram": {
            "bin_width": spec.hist_max / spec.hist_bins,
            "counts": hist.tolist(),
            "overflow": over,
        },
    }


def summarise(
    spec: Spec, out: runner.RunOutput, *, lam_text: str, steps: int, reps: int, seed: int
) -> SimulationResult:
    """Pool the batches of every replication into estimates with 95% CIs."""
    batches = summary.completed_batches(out)
    N, b = spec.N, spec.b
    sc = np.array([s["scalars"] for s in batches])
    T = sc[:, aggregated.TIME]
    m = summary.moments(
        batches, sc[:, aggregated.SUMSQ], T, sc[:, aggregated.THIN_TIME], N,
        np.asarray(spec.s_star),
    )  # fmt: skip
    pmf, mean_jobs = summary.queue_length_pmf(batches, T, N)
    blocking = stats.ratio(sc[:, aggregated.BLOCKED], sc[:, aggregated.ARRIVALS])
    response = _response_time(spec, batches, sc) if spec.per_server else None
    warnings = [m.cov_note] if m.cov_note else []
    warnings += summary.blocking_warning(float(blocking.mean), b)
    return SimulationResult(
        model="supermarket",
        params={"lam": lam_text},
        start=None,
        marginal_pmf=None,
        N=N,
        n=b,
        family_fields=family_fields(
            lam=spec.lam, lam_text=lam_text, d=spec.d, replacement=spec.replacement,
            policy=spec.policy,
        ),
        engine=spec.engine,
        queue_length_pmf=pmf,
        blocking=blocking,
        mean_jobs=mean_jobs,
        response_time=response,
        **summary.result_fields(
            out, batches, m, sumsq=sc[:, aggregated.SUMSQ], T=T, events=sc[:, aggregated.EVENTS],
            s_star=spec.s_star, steps=steps, reps=reps, seed=seed, warnings=warnings,
        ),
    )  # fmt: skip
