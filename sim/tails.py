"""Simulation of JSQ's total queue and perpendicular component, up to n = 1000 and beyond.

Model of "Exponential Tail Bounds on Queues: A Confluence of Non-Asymptotic
Heavy Traffic and Large Deviations" (Jhunjhunwala, Hurtado-Lange, Maguluri):
``n`` servers of rate 1, Poisson arrivals at rate ``lambda = n (1 - eps)``,
each joining a shortest queue (ties uniformly at random), unbounded queues.

Data structure (O(1) per event).  The queue lengths are kept *sorted*,
``ql[0] <= ... <= ql[n-1]``, together with ``start[L]`` = the first index
holding a queue of length ``>= L`` (``start[L] = n`` above the maximum).  By
symmetry only the multiset of lengths matters, and the two moves keep the
array sorted with one store each:

* arrival: the minimum is ``m = ql[0]``; the last queue of the block of length
  ``m`` (index ``start[m+1] - 1``) becomes ``m + 1`` and ``start[m+1]`` drops by one;
* departure: a uniformly chosen busy index ``j in [start[1], n)`` has length
  ``L = ql[j]``; the first queue of block ``L`` becomes ``L - 1`` and
  ``start[L]`` rises by one (same multiset as removing a job from queue ``j``).

Estimator.  The jump chain is walked and each visited state weighted by its
expected holding time ``1 / (lambda + busy)`` (the Rao-Blackwellised time
average, no exponential variates), as in :mod:`mfstein.families.supermarket.aggregated`.  One 53-bit
uniform per event chooses arrival or departure and, for a departure, the busy
index.  ``qbar`` and ``S2 = sum q_i^2`` are updated incrementally, so
``||q_perp||_2^2 = S2 - qbar^2 / n`` is O(1).

Randomness.  Replication ``i`` uses the ``i``-th child of
``numpy.random.SeedSequence(seed)`` (:func:`sim.rng.seed_states`, xoshiro256**);
the initial ``qbar`` is drawn from Geometric(``rho``) (the M/M/1 law at rate
``n``) spread as evenly as possible over the queues (state-space collapse,
Proposition 3), then ``warmup_fraction`` of the events are discarded.  The
relaxation time of ``qbar`` is of order ``1 / (n eps^2)`` time units, i.e.
``~ 1/eps^2`` events: runs must be much longer than that.

Confidence intervals.  Each replication gives sums ``A_i`` (time integrals)
and ``T_i`` (time); time averages are ratio estimators over independent
replications with the delta-method 95% interval of :func:`sim.stats.ratio`.
The Kolmogorov distance to Exp(1) is computed per replication from its
``qbar`` histogram and averaged (:func:`sim.stats.batch_means`); being a
supremum of noisy differences it is biased upwards by the noise level.

Replications run through :func:`sim.runner.run` (local processes, a Dask
scheduler or inline; progress, Ctrl-C and SIGTERM keep what is done; checksummed
JSON checkpoints): each replication is a warm-up unit and one recorded unit.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from mfstein.ground.display import Presentable, estimate_text, fields_dict, renamed_to_text
from mfstein.ground.errors import ParameterError
from mfstein.ground.jit import numba
from sim import runner, stats, summary
from sim.rng import INV_2_53, load_state, next_u64, store_state

_U64 = np.uint64

#: Largest number of histogram bins for qbar (bins widen beyond this).
HIST_BINS = 1 << 20

#: Length of a fresh ``start`` array (it doubles whenever a queue outgrows it).
START_CAPACITY = 64
#: Checkpoint format of this simulator (part of the run's configuration).
CHECKPOINT_KIND = "jsq-tails-v2"

#: Scalar accumulator layout.
T, QBAR, PERP2, EVENTS = range(4)


@numba.njit(cache=True)
def _initial(n, rho, rng, cap):
    """Sorted queue lengths with ``qbar ~ Geometric(rho)`` spread evenly; start array."""
    s0, s1, s2, s3 = load_state(rng)
    r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
    store_state(rng, s0, s1, s2, s3)
    u = ((r >> _U64(11)) + _U64(1)) * INV_2_53  # (0, 1]
    qbar = np.int64(np.floor(np.log(u) / np.log(rho)))
    base = qbar // n
    extra = qbar - base * n
    ql = np.empty(n, dtype=np.int64)
    for i in range(n):
        ql[i] = base + (1 if i >= n - extra else 0)
    size = max(cap, base + 8)
    start = np.full(size, n, dtype=np.int64)
    for L in range(size):
        # first index with length >= L
        if L <= base:
            start[L] = 0
        elif L == base + 1:
            start[L] = n - extra
    return ql, start


@numba.njit(cache=True)
def _run(ql, start, st, rng, steps, lam, record, thresholds, thetas, bw, hist, acc, tail_acc, mgf):
    """Advance ``steps`` events.  Returns the events done (fewer when ``start`` must grow).

    ``st = [qbar, S2]``; ``acc = [T, int qbar, int ||q_perp||^2, events]``;
    ``tail_acc[i] += w [qbar > thresholds[i]]``; ``mgf[i] += w exp(thetas[i] ||q_perp||)``;
    ``hist[qbar // bw] += w`` (the last bin collects the overflow).
    """
    n = ql.shape[0]
    qbar = st[0]
    S2 = st[1]
    H = hist.shape[0]
    nt = thresholds.shape[0]
    nth = thetas.shape[0]
    s0, s1, s2, s3 = load_state(rng)
    done = 0
    top = start.shape[0] - 2
    for _ in range(steps):
        if ql[0] + 2 >= top:
            break  # an arrival could outgrow ``start``: the caller enlarges it
        busy = n - start[1]
        total = lam + busy
        w = 1.0 / total
        if record:
            acc[0] += w
            acc[1] += w * qbar
            p2 = (n * S2 - qbar * qbar) / n
            if p2 < 0.0:
                p2 = 0.0
            acc[2] += w * p2
            b = qbar // bw
            if b >= H:
                b = H - 1
            hist[b] += w
            for i in range(nt):
                if qbar > thresholds[i]:
                    tail_acc[i] += w
            if nth > 0:
                pn = np.sqrt(p2)
                for i in range(nth):
                    mgf[i] += w * np.exp(thetas[i] * pn)
        r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
        uu = ((r >> _U64(11)) * INV_2_53) * total
        if uu < lam:
            m = ql[0]
            i1 = start[m + 1] - 1
            ql[i1] = m + 1
            start[m + 1] -= 1
            S2 += 2 * m + 1
            qbar += 1
        else:
            j = start[1] + np.int64(uu - lam)
            if j >= n:
                j = n - 1
            L = ql[j]
            i0 = start[L]
            ql[i0] = L - 1
            start[L] += 1
            S2 -= 2 * L - 1
            qbar -= 1
        done += 1
    if record:
        acc[3] += done
    st[0] = qbar
    st[1] = S2
    store_state(rng, s0, s1, s2, s3)
    return done


def _advance(ql, start, st, rng, steps, lam, record, thresholds, thetas, bw, hist, acc, tails, mgf):
    """Run ``steps`` events, growing ``start`` whenever a queue outgrows it."""
    while steps > 0:
        done = _run(
            ql, start, st, rng, steps, lam, record, thresholds, thetas, bw, hist, acc, tails, mgf
        )
        steps -= done
        if steps > 0:
            n = ql.shape[0]
            bigger = np.full(2 * start.shape[0], n, dtype=np.int64)
            bigger[: start.shape[0]] = start
            start = bigger
    return ql, start


def _start_array(ql: np.ndarray) -> np.ndarray:
    """``start[L]`` = the first index of the sorted ``ql`` holding a length ``>= L``
    (``n`` above the maximum), with room above the longest queue."""
    size = max(START_CAPACITY, int(ql[-1]) + 8)
    return np.searchsorted(ql, np.arange(size), side="left").astype(np.int64)


@dataclass(frozen=True)
class TailsSpec:
    """Everything a worker needs to simulate JSQ(``n``) (hashable, picklable)."""

    #: The number of servers.
    n: int
    #: ``1 - rho``.
    eps: float
    #: The points ``x`` of the tail ``P(eps qbar > x)``.
    x: tuple[float, ...]
    #: The points ``theta`` of the moment generating function
    #: ``E exp(theta ||q_perp||_2)``.
    thetas: tuple[float, ...]
    #: Events discarded at the start of each replication.
    warmup: int
    #: The width in jobs of each bin of the histogram of ``qbar`` (the last bin collects
    #: the overflow).
    bin_width: int
    #: The number of bins of the histogram of ``qbar``.
    bins: int

    @property
    def N(self) -> int:
        """The number of servers (the name :mod:`sim.runner` labels a run with)."""
        return self.n

    @property
    def thresholds(self) -> np.ndarray:
        """``floor(x / eps)``: ``eps qbar > x`` iff ``qbar > floor(x / eps)`` (integer ``qbar``)."""
        return np.floor(np.asarray(self.x, dtype=float) / self.eps).astype(np.int64)

    def config(self) -> dict[str, Any]:
        """The JSON description a checkpoint is matched against."""
        return {
            "kind": CHECKPOINT_KIND,
            "n": self.n,
            "eps": self.eps,
            "x": list(self.x),
            "thetas": list(self.thetas),
            "bin_width": self.bin_width,
            "bins": self.bins,
        }


def fresh_state(spec: TailsSpec, rng: np.ndarray) -> dict:
    """A replication's initial state: ``qbar ~ Geometric(rho)`` spread evenly over the
    sorted queues ``ql``, ``st = [qbar, sum q_i^2]``, the events run so far and the RNG."""
    rng = np.asarray(rng, dtype=np.uint64).copy()
    ql, _ = _initial(spec.n, 1.0 - spec.eps, rng, START_CAPACITY)
    st = np.array([int(ql.sum()), int((ql * ql).sum())], dtype=np.int64)
    return {"rng": rng, "ql": ql, "st": st, "events": 0}


def advance(spec: TailsSpec, state: dict, steps: int) -> tuple[dict, dict]:
    """Run ``steps`` events from ``state`` (not modified); return ``(new_state, sums)``.

    Events up to ``spec.warmup`` (counted over the replication) are not recorded.
    ``sums`` holds ``acc`` (layout ``T, QBAR, PERP2, EVENTS``), ``tails``
    (``int [qbar > x / eps] dt``), ``mgf`` (``int exp(theta ||q_perp||) dt``),
    ``hist`` (time per ``qbar`` bin) and ``seconds`` (CPU time of this unit).
    """
    lam = spec.n * (1.0 - spec.eps)
    ql = np.array(state["ql"], dtype=np.int64)
    st = np.array(state["st"], dtype=np.int64)
    rng = np.array(state["rng"], dtype=np.uint64)
    start = _start_array(ql)
    thresholds = spec.thresholds
    thetas = np.asarray(spec.thetas, dtype=float)
    hist = np.zeros(spec.bins)
    acc = np.zeros(4)
    tails = np.zeros(thresholds.size)
    mgf = np.zeros(thetas.size)
    done = int(state["events"])
    quiet = min(int(steps), max(0, spec.warmup - done))
    t0 = time.thread_time()
    for record, count in ((False, quiet), (True, int(steps) - quiet)):
        ql, start = _advance(
            ql, start, st, rng, count, lam, record, thresholds, thetas, spec.bin_width,
            hist, acc, tails, mgf,
        )  # fmt: skip
    seconds = time.thread_time() - t0
    new = {"rng": rng, "ql": ql, "st": st, "events": done + int(steps)}
    return new, {"acc": acc, "tails": tails, "mgf": mgf, "hist": hist, "seconds": seconds}


@dataclass(frozen=True, repr=False)
class JSQTailSimulation(Presentable):
    """Simulated tail statistics of JSQ with 95% CIs over independent replications."""

    #: The number of servers.
    n: int
    #: ``1 - rho`` (arrivals at rate ``lambda = n (1 - eps)``).
    eps: float
    #: The points ``x >= 0`` of ``tail``, as given.
    x: list[float]
    #: The points ``theta >= 0`` of ``perp_mgf``, as given.
    thetas: list[float]
    #: The seed; the replications' streams come from ``SeedSequence(seed).spawn(reps)``.
    seed: int
    #: The replications asked for (``complete`` says whether all of them ran).
    reps: int
    #: Recorded events per replication.
    events: int
    #: Events discarded before recording, per replication (``events warmup_fraction / (1 -
    #: warmup_fraction)``).
    warmup: int
    #: ``P(eps qbar > x)`` at each ``x``.
    tail: stats.Estimate
    #: ``E[eps qbar]``.
    scaled_mean: stats.Estimate
    #: ``E ||q_perp||_2^2``.
    perp_second_moment: stats.Estimate
    #: ``E exp(theta ||q_perp||_2)`` (Proposition 3).
    perp_mgf: stats.Estimate
    #: ``sup_x |P(eps qbar > x) - exp(-x)|`` on the histogram grid (per-replication
    #: mean; biased upwards by the noise).
    sup_distance: stats.Estimate
    #: The points ``x = eps (k bw)`` of the histogram grid (``bw`` = bin width in jobs),
    #: for plots.
    grid: np.ndarray
    #: The pooled estimate of ``P(eps qbar > x)`` at the points of :attr:`grid`, for
    #: plots.
    survival: np.ndarray
    #: The width in jobs of a bin of the histogram of ``qbar`` behind ``grid``, ``survival`` and
    #: ``sup_distance``.
    bin_width: int
    #: Recorded events per second of CPU time (the replications' events over their summed thread
    #: time).
    events_per_second: float
    #: The run's elapsed (wall-clock) time in seconds, workers included.
    wall_seconds: float
    #: Whether every replication ran (and Ctrl-C did not stop the run).
    complete: bool
    #: Why the estimates may be off (an incomplete run, or ``events`` not much longer than the
    #: relaxation time ``~1/eps^2``); empty when none applies.
    warnings: list[str] = field(default_factory=list)

    _MORE: ClassVar[str] = "every x and theta, grid and survival in to_dict() and attributes"

    def to_dict(self) -> dict[str, Any]:
        """What ``mfstein tail --simulate --json`` prints: every field but ``grid`` and
        ``survival``, in order (an estimate: ``{"mean", "ci95"}``)."""
        return fields_dict(
            self, skip=("grid", "survival"), measurements=("events_per_second", "wall_seconds")
        )

    def _rows(self) -> list[tuple[str, str]]:
        def at(e: stats.Estimate, i: int) -> str:
            return stats.Estimate(e.mean[i], e.ci95[i]).text()

        rows = [("model", f"JSQ, n = {self.n}, eps = {self.eps:.6g}")]
        rows += [(f"P(eps qbar > {x:g})", at(self.tail, i)) for i, x in enumerate(self.x[:3])]
        rows += [
            ("E[eps qbar]", self.scaled_mean.text()),
            ("E ||q_perp||^2", self.perp_second_moment.text()),
            ("sup |P - exp(-x)|", self.sup_distance.text()),
            ("run", f"seed {self.seed}, {self.reps} x {self.events:,} events"),
        ]
        return rows + summary.status_rows(self.complete, self.warnings)

    describe = renamed_to_text("describe")

    def to_text(self) -> str:
        """Human-readable summary (``mfstein tail --simulate``'s text output, as
        :meth:`numeric.tails.report.TailReport.to_text` for the exact tails): each
        estimate ``m ± h`` with its 95% CI (:func:`mfstein.ground.display.estimate_text`)."""
        lines = [
            f"JSQ simulation: n = {self.n}, eps = {self.eps:.6g}, seed = {self.seed}, "
            f"{self.reps} replications x {self.events:.3g} events (warm-up {self.warmup:.3g}), "
            "95% CIs",
        ]
        tail_m, tail_h = np.atleast_1d(self.tail.mean), np.atleast_1d(self.tail.ci95)
        for i, x in enumerate(self.x):
            lines.append(
                f"P(eps qbar > {x:g}) = {estimate_text(tail_m[i], tail_h[i])}   "
                f"(exp(-x) = {np.exp(-x):.6f})"
            )
        for label, e in (
            ("E[eps qbar]", self.scaled_mean),
            ("sup_x |P(eps qbar > x) - exp(-x)|", self.sup_distance),
            ("E ||q_perp||^2", self.perp_second_moment),
        ):
            lines.append(f"{label} = {estimate_text(e.mean, e.ci95)}")
        mgf_m, mgf_h = np.atleast_1d(self.perp_mgf.mean), np.atleast_1d(self.perp_mgf.ci95)
        for i, th in enumerate(self.thetas):
            lines.append(f"E exp({th:g} ||q_perp||) = {estimate_text(mgf_m[i], mgf_h[i])}")
        lines.append(
            f"{self.events_per_second:.3g} events/s per core, {self.wall_seconds:.1f} s wall"
        )
        return "\n".join(lines)


def _survival(hist: np.ndarray, total: float) -> np.ndarray:
    """``P(qbar >= k bw) = P(qbar > k bw - 1)`` at the bin edges ``k = 0..bins-1``, from the
    time ``hist`` spent in each bin out of ``total``."""
    return np.concatenate([[total], total - np.cumsum(hist)])[:-1] / total


def _sup_distance(hist: np.ndarray, total: float, eps: float, bw: int) -> float:
    """``sup_x |P(eps qbar > x) - exp(-x)|`` for one replication's histogram: on
    ``[eps (k bw - 1), eps k bw)`` the law's tail is ``P(qbar > k bw - 1)``, and
    ``exp(-x)`` is monotone, so the supremum is at the ends (clipped at ``x >= 0``)."""
    above = _survival(hist, total)
    k = np.arange(hist.shape[0])
    x_lo = np.maximum(eps * (k * bw - 1), 0.0)
    x_hi = eps * (k * bw)
    d = np.maximum(np.abs(above - np.exp(-x_lo)), np.abs(above - np.exp(-x_hi)))
    return float(d.max())


def _plan(events: int, warmup_fraction: float) -> runner.Plan:
    """A warm-up of ``events warmup_fraction / (1 - warmup_fraction)`` events, then one
    recorded batch of ``events`` events (the replications are the batches)."""
    warmup = int(events * warmup_fraction / (1.0 - warmup_fraction))
    return runner.Plan(steps=warmup + events, batches=1, warmup=warmup, batch_len=events)


def _spec(n: int, eps: float, xs: list[float], ths: list[float], warmup: int) -> TailsSpec:
    """The histogram of ``qbar`` reaches ``45 / eps`` jobs (``P(eps qbar > 45) ~ e^-45``)
    in at most :data:`HIST_BINS` bins, plus one for the overflow."""
    span = 45.0 / eps
    bw = max(1, int(np.ceil(span / HIST_BINS)))
    bins = int(min(HIST_BINS, np.ceil(span / bw))) + 1
    return TailsSpec(n, eps, tuple(xs), tuple(ths), warmup, bw, bins)


def simulate_jsq_tails(
    n: int,
    eps: float,
    x: Any = (1.0,),
    *,
    thetas: Any = (),
    events: int = 10**6,
    reps: int = 8,
    seed: int = 0,
    warmup_fraction: float = 0.1,
    workers: int = 1,
    scheduler: str | None = None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool = False,
    max_units: int | None = None,
) -> JSQTailSimulation:
    """Simulate JSQ(``n``) at ``lambda = n (1 - eps)``; tail statistics with 95% CIs.

    Parameters
    ----------
    n:
        Servers, ``>= 1``.
    eps:
        ``1 - rho`` in ``(0, 1)``.
    x, thetas:
        Points for ``P(eps qbar > x)`` and ``E exp(theta ||q_perp||)`` (``>= 0``).
    events:
        Recorded events per replication (plus ``warmup_fraction / (1 - warmup_fraction)``
        times as many discarded first).
    reps:
        Independent replications, ``>= 2`` (from ``SeedSequence(seed).spawn(reps)``).
    seed:
        Non-negative integer; results depend on it only (not on ``workers``).
    workers, scheduler:
        Local processes or a Dask scheduler address (:func:`sim.runner.run`).
    checkpoint:
        JSON file (checksummed, :mod:`sim.runner`'s format) written after every
        warm-up and every replication; a rerun with the same parameters resumes
        from it with the numbers of an uninterrupted run.
    progress, max_units:
        A progress bar; stop after this many units of work (warm-ups and
        replications) in this call, keeping the checkpoint.
    """
    from mfstein.ground.limits import SIM_MAX_N, check_memory, simulation_bytes
    from numeric.tails.params import check_eps, check_n, check_nonnegative_list

    n = check_n(n, SIM_MAX_N)
    eps = check_eps(eps)
    xs = check_nonnegative_list("x", x)
    ths = check_nonnegative_list("theta", thetas)
    run = runner.check_run(
        events, reps, seed, workers, warmup_fraction, steps_name="events", min_reps=2
    )
    events, reps, seed, workers = run.steps, run.reps, run.seed, run.workers
    check_memory(
        f"simulating JSQ with n = {n:,} servers ({reps} replications, {workers} workers)",
        simulation_bytes(n, 0, True, reps, workers),
    )
    plan = _plan(events, run.warmup_fraction)
    spec = _spec(n, eps, xs, ths, plan.warmup)
    return runner.run_and_pool(
        spec,
        plan,
        lambda out: summarise(spec, out, seed=seed),
        reps=reps,
        seed=seed,
        workers=workers,
        scheduler=scheduler,
        checkpoint=checkpoint,
        progress=progress,
        max_units=max_units,
        advance=advance,
        fresh_state=fresh_state,
        desc=f"JSQ n={n}",
    )


def _distances(
    spec: TailsSpec, hists: np.ndarray, Tw: np.ndarray
) -> tuple[stats.Estimate, np.ndarray]:
    """The per-replication Kolmogorov distance to Exp(1), averaged, and the pooled
    survival function ``P(eps qbar > x)`` on the histogram grid."""
    dists = [_sup_distance(h, t, spec.eps, spec.bin_width) for h, t in zip(hists, Tw, strict=True)]
    pooled = np.zeros(spec.bins)
    for h in hists:
        pooled += h
    return stats.batch_means(np.array(dists)), _survival(pooled, pooled.sum())


def summarise(spec: TailsSpec, out: runner.RunOutput, *, seed: int) -> JSQTailSimulation:
    """Ratio estimators over the completed replications (one batch each), with 95% CIs.

    Raises :class:`KeyboardInterrupt` when an interrupted run completed fewer than two
    replications (the checkpoint keeps what was done), :class:`ParameterError` when a
    finished one did."""
    eps, reps = spec.eps, len(out.reps)
    res = [r.batches[0] for r in out.reps if r.batches]
    if len(res) < 2 and out.interrupted:  # an interruption, not bad input
        raise KeyboardInterrupt
    if len(res) < 2:
        raise ParameterError(
            "reps must complete at least 2 replications for a confidence interval."
        )
    acc = np.array([r["acc"] for r in res])
    Tw = acc[:, T]
    tail = stats.ratio(np.array([r["tails"] for r in res]).reshape(len(res), -1), Tw)
    mean = stats.ratio(eps * acc[:, QBAR], Tw)
    perp2 = stats.ratio(acc[:, PERP2], Tw)
    mgf = stats.ratio(np.array([r["mgf"] for r in res]).reshape(len(res), -1), Tw)
    sup, survival = _distances(spec, np.array([r["hist"] for r in res]), Tw)
    grid = eps * np.maximum(np.arange(spec.bins) * spec.bin_width - 1, 0)
    seconds = sum(r["seconds"] for r in res)
    n_events = float(acc[:, EVENTS].sum())
    events = out.plan.batch_len
    warnings = []
    if out.interrupted or len(res) < reps:
        warnings.append(f"run incomplete: {len(res)} of {reps} replications completed.")
    if events < 20.0 / eps**2:
        warnings.append(
            f"events = {events:g} per replication is not much longer than the relaxation time "
            f"~1/eps^2 = {1 / eps**2:.3g} events; the CIs may be too narrow."
        )
    return JSQTailSimulation(
        n=spec.n,
        eps=eps,
        x=list(spec.x),
        thetas=list(spec.thetas),
        seed=seed,
        reps=reps,
        events=events,
        warmup=out.plan.warmup,
        tail=tail,
        scaled_mean=mean,
        perp_second_moment=perp2,
        perp_mgf=mgf,
        sup_distance=sup,
        grid=grid,
        survival=survival,
        bin_width=spec.bin_width,
        events_per_second=n_events / seconds if seconds > 0 else float("nan"),
        wall_seconds=out.wall_seconds,
        complete=len(res) == reps and not out.interrupted,
        warnings=warnings,
    )
