"""``simulate(model, params, *, N, ...)``: the one entry of simulation, its
supermarket short form ``simulate_supermarket(N, lam, b, d)``, and the
supermarket's aggregated and per-server engines with their estimates (95% CIs).

References
----------
.. [1] "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices
   Mean-Field Model in Heavy-Traffic" (Tables 1 and 2: ``N E||S - s*||^2``).
.. [2] N. Gast and B. Van Houdt, "A Refined Mean Field Approximation",
   Proc. ACM Meas. Anal. Comput. Syst. 1(2), 2017 (``N (E[S] - s*)`` against ``V``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mfstein.errors import ParameterError, check_int
from sim import aggregated, engine, perserver, runner, stats
from sim.base import SimulationResult
from sim.engine import POLICIES

#: Largest buffer the simulators accept (queue lengths are stored as uint8).
MAX_B = 200
#: Blocking fraction above which the buffer is reported as too small.
BLOCKING_WARN = 1e-3
#: Response-time quantiles reported by the per-server simulator.
QUANTILES = (0.5, 0.9, 0.99)


def _reference_point(lam_text, b, d, replacement, policy, N) -> list[float]:
    """``s*`` from :func:`numeric.equilibrium` (the N-dependent one without replacement).

    JSQ has no power-of-d fixed point; its fluid limit for ``lam < 1`` puts every
    busy server at one job, ``s* = (lam, 0, ..., 0)`` (the JSQ system of "Exponential
    Tail Bounds on Queues: A Confluence of Non-Asymptotic Heavy Traffic and Large
    Deviations"), used as the reference there.
    """
    import numeric

    if policy == "jsq":
        return [min(float(lam_text), 1.0)] + [0.0] * (b - 1)
    dd = 1 if policy == "random" else d
    s_star, note = numeric.reference_point(lam_text, b, dd, replacement=replacement, N=N)
    if note:
        warnings.warn(note, stacklevel=3)
    return [float(x) for x in s_star]


def resolve_policy(policy: str, simulator: str | None) -> tuple[str, str]:
    """``(policy, simulator)`` from the user's choice: the simulator defaults to the
    aggregated one for ``"pod"`` and to the per-server one otherwise."""
    if policy not in engine.POLICIES:
        raise ParameterError(f"policy must be one of {', '.join(engine.POLICIES)}, got {policy!r}.")
    if simulator is None:
        simulator = "aggregated" if policy == "pod" else "per-server"
    if simulator not in engine.SIMULATORS:
        raise ParameterError(
            f"simulator must be one of {', '.join(engine.SIMULATORS)}, got {simulator!r}."
        )
    if simulator == "aggregated" and policy != "pod":
        raise ParameterError(
            f"the aggregated simulator runs policy 'pod' only; use simulator='per-server' "
            f"for policy {policy!r}."
        )
    return policy, simulator


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
    simulator: str | None = None,
    replacement: bool = True,
) -> tuple:
    """Validate the sizes of a simulation against :mod:`mfstein.limits`, before any work.

    Returns ``(N, b, d, reps, seed, batches, steps, workers, policy, simulator)``;
    ``workers`` defaults to the number of cores and is capped at ``reps``.
    """
    from mfstein.limits import MAX_D, SIM_MAX_N, check_memory, simulation_bytes

    N = check_int("N", N, 1, SIM_MAX_N)
    b = check_int("b", b, 1, MAX_B)
    d = check_int("d", d, 1, MAX_D)
    steps, reps, seed, batches, workers, _ = runner.check_run(
        steps, reps, seed, workers, 0.0, batches=batches
    )
    policy, simulator = resolve_policy(policy, simulator)
    if not replacement and N < d:
        raise ParameterError(f"N must be >= d = {d} when sampling without replacement, got {N}.")
    workers = min(workers, reps)
    per_server = simulator != "aggregated"
    check_memory(
        f"simulating N = {N:,} servers ({simulator}, b = {b}, {reps} replications, "
        f"{workers} workers)",
        simulation_bytes(N, b, per_server, reps, workers),
    )
    return N, b, d, reps, seed, batches, steps, workers, policy, simulator


def run_supermarket(
    N: int,
    lam: Any,
    b: int,
    d: int = 2,
    *,
    replacement: bool = True,
    policy: str = "pod",
    simulator: str | None = None,
    steps: int = 10**7,
    reps: int = 4,
    seed: int = 0,
    workers: int | None = None,
    scheduler: str | None = None,
    checkpoint: str | os.PathLike | None = None,
    batches: int = 20,
    warmup_fraction: float = 0.1,
    progress: bool = False,
    max_units: int | None = None,
) -> SimulationResult:
    """The supermarket engines: simulate the finite-N supermarket system.

    What the ``aggregated`` and ``per-server`` engines of :func:`simulate` run
    (and :func:`simulate_supermarket`, the paper's short form, through them).

    Parameters
    ----------
    N:
        Number of servers, ``1 <= N <= 2^31`` (``N >= d`` without replacement).
    lam:
        Arrival rate per server, ``> 0`` (str, int, float or mpf).
    b:
        Buffer size per server, ``1 <= b <= 200``.
    d:
        Servers sampled per arrival (``pod`` and ``aggregated``), ``>= 1``.
    replacement:
        Sample with replacement (the core paper's chain) or ``d`` distinct servers.
    policy:
        Dispatch: ``"pod"`` (power-of-``d``), ``"jsq"`` or ``"random"``.
    simulator:
        ``"aggregated"`` (the CTMC on the counts, fastest; power-of-``d`` only)
        or ``"per-server"`` (explicit FIFO servers, with response times).
        Default: aggregated for ``"pod"``, per-server otherwise.
    steps:
        Events per replication (the paper's "time steps"); the first
        ``warmup_fraction`` of them is discarded (the core paper drops 10%).
    reps:
        Independent replications, from ``SeedSequence(seed).spawn(reps)``.
    seed:
        Non-negative integer; the same seed gives the same numbers whatever
        ``workers`` or ``scheduler``.
    workers:
        Local processes (default: the number of cores, at most ``reps``).
    scheduler:
        Address of a running Dask scheduler (``tcp://host:port``) to run the
        replications on instead of local processes.
    checkpoint:
        JSON file written atomically after every batch; if it exists, the run
        resumes from it.
    batches:
        Batches per replication for the batch-means confidence intervals, ``>= 2``.
    max_units:
        Stop after this many units of work (warm-ups or batches) in this call;
        the result then covers the completed batches (``complete=False``).

    Returns
    -------
    SimulationResult
    """
    N, b, d, reps, seed, batches, steps, workers, policy, simulator = check_inputs(
        N, b, d, reps, seed, batches, steps, workers, policy, simulator, replacement
    )
    if not 0.0 <= float(warmup_fraction) < 1.0:
        raise ParameterError(f"warmup_fraction must lie in [0, 1), got {warmup_fraction!r}.")
    from numeric.precision import parse_lam

    lam_mp = parse_lam(lam)
    lam_text = lam if isinstance(lam, str) else repr(float(lam_mp))
    lam_f = float(lam_mp)
    plan = runner.Plan.make(steps, batches, float(warmup_fraction))
    s_star = _reference_point(lam_text, b, d, replacement, policy, N)
    spec = engine.Spec(
        N=N,
        lam=lam_f,
        b=b,
        d=1 if policy == "random" else d,
        replacement=replacement,
        policy=policy,
        s_star=tuple(s_star),
        simulator=simulator,
    )
    # Ctrl-C is a flag from here to the returned result: a second press that
    # lands after the run stopped must not lose the estimates being pooled
    with runner.Interrupts():
        out = runner.run(
            spec,
            plan,
            reps=reps,
            seed=seed,
            workers=workers,
            scheduler=scheduler,
            checkpoint=checkpoint,
            progress=progress,
            max_units=max_units,
        )
        return summarise(spec, out, lam_text=lam_text, steps=steps, reps=reps, seed=seed)


def summarise(
    spec: engine.Spec, out: runner.RunOutput, *, lam_text: str, steps: int, reps: int, seed: int
) -> SimulationResult:
    """Pool the batches of every replication into estimates with 95% CIs."""
    batches = [s for r in out.reps for s in r.batches]
    if not batches and out.interrupted:
        # nothing to estimate from: an interruption, not bad input (the checkpoint,
        # if any, keeps the completed warm-ups)
        raise KeyboardInterrupt
    if not batches:
        raise ParameterError(
            "steps is too small (or the run stopped too early) to complete one batch; "
            "increase steps."
        )
    N, b = spec.N, spec.b
    s_star = np.asarray(spec.s_star)
    sc = np.array([s["scalars"] for s in batches])
    T = sc[:, aggregated.TIME]
    mean_n = np.array([s["mean"] for s in batches])  # sum w n_k
    n_mse = stats.ratio(sc[:, aggregated.SUMSQ] / N, T)
    mean = stats.ratio(mean_n / N, T)
    n_bias = stats.Estimate(N * (mean.mean - s_star), N * mean.ci95)
    # queue-length pmf: E[s_k - s_{k+1}], k = 0..b, with s_0 = 1, s_{b+1} = 0
    padded = np.concatenate([T[:, None] * N, mean_n, np.zeros((len(T), 1))], axis=1)
    pmf = stats.ratio((padded[:, :-1] - padded[:, 1:]) / N, T)
    mean_jobs = stats.ratio(mean_n.sum(axis=1) / N, T)
    # N Cov(S) per batch: (E[n_j n_k] - E[n_j] E[n_k]) / N, thinned second moments
    tt = sc[:, aggregated.THIN_TIME]
    covs = []
    for s, ti, Ti in zip(batches, tt, T, strict=True):
        upper = np.triu(s["cov"])
        second = (upper + np.triu(upper, 1).T) / max(ti, np.finfo(float).tiny)
        m = s["mean"] / Ti
        covs.append((second - np.outer(m, m)) / N)
    n_cov, cov_note = stats.covariance(np.array(covs), tt)
    arrivals = sc[:, aggregated.ARRIVALS]
    blocking = stats.ratio(sc[:, aggregated.BLOCKED], arrivals)
    events = int(sum(sc[:, aggregated.EVENTS]))
    seconds = sum(s["seconds"] for s in batches)
    response = None
    if spec.per_server:
        jobs = sc[:, perserver.JOBS]
        resp = stats.ratio(sc[:, perserver.RESP_SUM], jobs)
        hist = np.sum([s["hist"] for s in batches], axis=0)
        over = float(sc[:, perserver.RESP_OVER].sum())
        qs = stats.histogram_quantiles(hist, spec.hist_max, over, QUANTILES)
        response = {
            "mean": float(resp.mean),
            "ci95": float(resp.ci95),
            "quantiles": {str(q): v for q, v in zip(QUANTILES, qs, strict=True)},
            "jobs": int(jobs.sum()),
            "histogram": {
                "bin_width": spec.hist_max / spec.hist_bins,
                "counts": hist.tolist(),
                "overflow": over,
            },
        }
    warnings = [cov_note] if cov_note else []
    if float(blocking.mean) > BLOCKING_WARN:
        warnings.append(
            f"blocking fraction {float(blocking.mean):.2e} exceeds {BLOCKING_WARN:g}: "
            f"the buffer b = {b} is too small for this finite system (it distorts the "
            "comparison with larger-b bounds); increase b."
        )
    if not out.complete:
        done = len(batches)
        warnings.append(
            f"run incomplete: {done} of {reps * out.plan.batches} batches completed"
            + (" (interrupted)" if out.interrupted else "")
            + "; estimates use the completed batches."
        )
    rho = stats.lag1_autocorrelation(sc[:, aggregated.SUMSQ], T)
    if len(batches) >= 10 and rho > 0.3:
        warnings.append(
            f"batch means of N||S - s*||^2 are correlated (lag-1 autocorrelation {rho:.2f}); "
            "the confidence intervals are too narrow: increase steps."
        )
    return SimulationResult(
        model="supermarket",
        params={"lam": lam_text},
        start=None,
        marginal_pmf=None,
        N=N,
        lam=spec.lam,
        lam_text=lam_text,
        b=b,
        d=spec.d,
        replacement=spec.replacement,
        policy=spec.policy,
        simulator=spec.simulator,
        steps=steps,
        reps=reps,
        seed=seed,
        batches=out.plan.batches,
        warmup=out.plan.warmup,
        s_star=[float(x) for x in s_star],
        n_mse=n_mse,
        mean=mean,
        n_bias=n_bias,
        n_cov=n_cov,
        queue_length_pmf=pmf,
        blocking=blocking,
        mean_jobs=mean_jobs,
        response_time=response,
        events=events,
        events_per_second=events / seconds if seconds > 0 else float("nan"),
        wall_seconds=out.wall_seconds,
        complete=out.complete,
        interrupted=out.interrupted,
        lag1_autocorrelation=rho,
        warnings=warnings,
    )


#: Values of ``engine=`` in :func:`simulate`: ``auto`` (the model's registered
#: fast path when it accepts the model, else generic), ``generic`` (any model),
#: ``fast`` (the registered fast path, or an error), and the supermarket family's
#: two engines by name.
ENGINES = ("auto", "generic", "fast", "aggregated", "per-server")


def simulate(
    model: Any,
    params: Mapping[str, Any] | None,
    *,
    N: int,
    steps: int = 10**7,
    reps: int = 4,
    seed: int = 0,
    workers: int | None = None,
    engine: str = "auto",
    policy: str = "pod",
    start: Sequence[Any] | str | None = None,
    truncation: Any = None,
    scheduler: str | None = None,
    checkpoint: str | os.PathLike | None = None,
    batches: int = 20,
    warmup_fraction: float = 0.1,
    progress: bool = False,
    max_units: int | None = None,
    observables: Sequence[Any] | str = (),
) -> SimulationResult:
    """Simulate the finite-N chain of ``model`` and estimate its stationary statistics.

    Parameters
    ----------
    model:
        A :class:`derive.model.Model`, or a name :func:`derive.models.load_model`
        takes (``"sir"``, ``"file.py:factory"``; entries of ``params`` that are
        factory keywords build it).
    params:
        Parameter name -> value (``{}`` for none).
    N:
        Population size, ``1 <= N <= 2^31 - 1`` (:data:`mfstein.limits.SIM_MAX_N`;
        the model's own range for an ``N`` parameter).
    steps, reps, seed, workers:
        Events (jumps) per replication, the first ``warmup_fraction`` of them
        discarded; independent replications from ``SeedSequence(seed)``; local
        processes (default the cores, at most ``reps``).  The same seed gives
        the same numbers whatever ``workers`` or ``scheduler``.
    engine:
        One of :data:`ENGINES`.  ``auto`` picks the model's registered fast path
        (for the supermarket family the aggregated CTMC on the counts) unless a
        ``start`` or ``truncation`` is given; ``aggregated`` and ``per-server``
        (explicit FIFO servers, with response times) are the supermarket
        family's engines.
    policy:
        Dispatch of the supermarket's per-server engine: ``"pod"``
        (power-of-``d``), ``"jsq"`` or ``"random"``; another policy than
        ``"pod"`` selects that engine under ``auto``.
    start, truncation:
        Initial state in fractions (fixes the conservation laws) and the
        truncation of an unbounded state space (see :func:`numeric.exact.solve`);
        generic engine only.
    scheduler, checkpoint, batches, warmup_fraction, progress, max_units:
        A Dask scheduler address; a JSON checkpoint written atomically and
        resumed from; batches per replication (batch-means CIs); the warm-up
        fraction; a progress bar; stop after this many units of work.
    observables:
        Observables ``g`` (declared names, expressions or strings; see
        :mod:`sim.observables` for those the statistics support) whose
        ``E[g(S_N)]`` is estimated with a 95% CI in ``result.observables``;
        they run on the generic engine.

    Returns
    -------
    SimulationResult
        Every size is checked (:mod:`mfstein.limits`) before any work.
    """
    from derive.model import Model
    from mfstein.limits import SIM_MAX_N
    from sim.base import RunOptions, choose

    opts = RunOptions(
        steps=steps,
        reps=reps,
        seed=seed,
        workers=workers,
        scheduler=scheduler,
        checkpoint=checkpoint,
        batches=batches,
        warmup_fraction=warmup_fraction,
        progress=progress,
        max_units=max_units,
    ).checked()  # before any symbolic or compiled work
    if engine not in ENGINES:
        raise ParameterError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}.")
    if policy not in POLICIES:
        raise ParameterError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}.")
    if isinstance(model, str):
        from derive.models import as_model

        model, params = as_model(model, params)
    if not isinstance(model, Model):
        from numeric.exact.general import prepare

        prepare(model, N, params)  # the one-sentence refusal of a non-model
    check_int("N", N, 1, SIM_MAX_N)
    if policy != "pod":
        from sim.base import FAST_SIMULATORS

        fast = FAST_SIMULATORS.get(model.info.fast_path or "")
        if fast is None or fast.name != "supermarket":
            raise ParameterError(
                f"policy {policy!r} is a dispatch rule of the supermarket's per-server "
                f"engine; model {model.name} runs its own transitions (policy='pod')."
            )
    if engine == "auto" and (start or truncation is not None):
        engine = "generic"
    if engine == "auto" and policy != "pod":
        engine = "per-server"
    if policy != "pod" and engine not in ("per-server",):
        raise ParameterError(
            f"policy {policy!r} is run by the supermarket's per-server engine; use "
            "engine='per-server' (or policy='pod')."
        )
    prepared: tuple = ()
    if observables:
        from sim.observables import prepare as prepare_observable

        if isinstance(observables, str):
            observables = [observables]
        if engine not in ("auto", "generic"):
            raise ParameterError("observables need engine='generic' (or 'auto').")
        engine = "generic"
        values = dict(params or {})
        prepared = tuple(prepare_observable(model, g, values) for g in observables)
    cls = choose(model, params or {}, engine)
    sim = cls(model, N, params, start=start, truncation=truncation)
    if engine in ("aggregated", "per-server"):
        sim.engine, sim.policy = engine, policy
    if prepared:
        sim.observables = prepared
    return sim._run(opts)


def simulate_supermarket(
    N: int,
    lam: Any,
    b: int,
    d: int = 2,
    *,
    replacement: bool = True,
    policy: str = "pod",
    simulator: str | None = None,
    **options: Any,
) -> SimulationResult:
    """The paper's short form: simulate the supermarket model with ``N`` servers.

    ``simulate_supermarket(N, lam, b, d)`` builds the power-of-``d`` supermarket
    model with buffer ``b`` ("Beyond Scaling: Calculable Error Bound of the
    Power-of-Two-Choices Mean-Field Model in Heavy-Traffic", Section 3) and
    runs :func:`simulate` on it with ``engine = simulator`` (``"aggregated"``,
    the default for ``policy="pod"``, or ``"per-server"``, the default for
    ``"jsq"`` and ``"random"``).  ``options`` are those of :func:`simulate`
    (``steps``, ``reps``, ``seed``, ``workers``, ``scheduler``, ``checkpoint``,
    ``batches``, ``warmup_fraction``, ``progress``, ``max_units``).
    """
    from derive.models.supermarket import supermarket
    from numeric.precision import parse_lam

    opts = {"steps": 10**7, "reps": 4, "seed": 0, "workers": None, "batches": 20, **options}
    check_inputs(
        N, b, d, opts["reps"], opts["seed"], opts["batches"], opts["steps"], opts["workers"],
        policy, simulator, replacement,
    )  # fmt: skip
    policy, simulator = resolve_policy(policy, simulator)
    parse_lam(lam)  # the same one-sentence refusal as before any model is built
    model = supermarket(int(b), 1 if policy == "random" else int(d), replacement=replacement)
    return simulate(model, {"lam": lam}, N=N, engine=simulator, policy=policy, **options)
