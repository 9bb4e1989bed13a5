"""Pooling a run's batches into the estimates the chain simulators share.

The supermarket engines (:mod:`mfstein.families.supermarket.simulate`), the generic engine
(:mod:`sim.generic`) and Persistent-Idle (:mod:`sim.pi`) each turn the batch
sums of :func:`sim.runner.run` into a result; what they have in common lives
here, once: the completed batches, the state moments (``N E||S - s*||^2``,
``E[S]``, ``N (E[S] - s*)`` and ``N Cov(S)`` of Section 3 of "Beyond Scaling:
Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic"), the queue-length pmf of a monotone model, and the warnings
about an incomplete run, correlated batches and a small buffer.  Every
estimate is a ratio of batch sums with its 95% batch-means interval
(:mod:`sim.stats`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from mfstein.ground.display import count_row, measured
from mfstein.ground.errors import ParameterError
from sim import stats

#: Lag-1 autocorrelation of the batch means above which the intervals are called too narrow.
AUTOCORR_WARN = 0.3
#: Blocking fraction above which the buffer is reported as too small.
BLOCKING_WARN = 1e-3


def completed_batches(out: Any, steps_name: str = "steps") -> list[dict]:
    """The batch sums of every replication of ``out`` (a :class:`sim.runner.RunOutput`).

    Raises :class:`KeyboardInterrupt` when an interrupted run completed no batch
    (an interruption, not bad input: a checkpoint keeps the warm-ups), and
    :class:`ParameterError` when a finished one did not.
    """
    batches = [s for r in out.reps for s in r.batches]
    if not batches and out.interrupted:
        raise KeyboardInterrupt
    if not batches:
        raise ParameterError(
            f"{steps_name} is too small (or the run stopped too early) to complete one "
            f"batch; increase {steps_name}."
        )
    return batches


def whole(result: Any) -> Any:
    """``result`` (a simulation's) when it ran to its end; :class:`KeyboardInterrupt`
    when Ctrl-C or SIGTERM cut it short.

    For the callers that run several simulations as one piece of work (the
    accuracy tables, one simulation per N): an interrupted simulation keeps its
    completed batches, but a table with one short column is no table, so the
    interruption stops the whole table (the CLI: one line, status 130).
    """
    if getattr(result, "interrupted", False):
        raise KeyboardInterrupt
    return result


@dataclass
class Moments:
    """The state statistics of a chain on counts ``n`` with ``S = n / N``."""

    n_mse: stats.Estimate  # N E||S - s*||^2
    mean: stats.Estimate  # E[S]
    n_bias: stats.Estimate  # N (E[S] - s*)
    n_cov: stats.Estimate  # N Cov(S), NaN when withheld
    cov_note: str | None  # why N Cov(S) is withheld, or None


def moments(
    batches: list[dict],
    sumsq: np.ndarray,
    T: np.ndarray,
    thin_time: np.ndarray,
    N: int,
    s_star: np.ndarray,
    what: str = "N Cov(S)",
) -> Moments:
    """Pool the batches' ``mean`` (``int n dt``) and thinned ``cov`` (upper triangle of
    ``sum w n_j n_k``) sums, with ``sumsq`` (``int N^2 ||S - s*||^2 dt``), ``T`` (time)
    and ``thin_time`` (the thinned time) per batch.

    ``N Cov(S)`` per batch is ``(E[n_j n_k] - E[n_j] E[n_k]) / N``, the second moment
    from the thinned sums and the means from all events; :func:`sim.stats.covariance`
    withholds it (``what`` names it in the sentence) when a batch cannot give one.
    """
    mean_n = np.array([s["mean"] for s in batches])
    n_mse = stats.ratio(sumsq / N, T)
    mean = stats.ratio(mean_n / N, T)
    n_bias = stats.Estimate(N * (mean.mean - s_star), N * mean.ci95)
    # every batch at once (the same operations, element by element, as one batch at a time)
    cov = np.array([s["cov"] for s in batches])
    zero = cov.dtype.type(0)
    upper = np.where(_below(*cov.shape[-2:], 0), zero, cov)  # np.triu(cov), its bits
    weight = np.maximum(np.asarray(thin_time, dtype=float), np.finfo(float).tiny)
    strict = np.where(_below(*cov.shape[-2:], 1), zero, upper)  # np.triu(upper, 1)
    second = (upper + np.swapaxes(strict, 1, 2)) / weight[:, None, None]
    m = mean_n / np.asarray(T)[:, None]
    covs = (second - m[:, :, None] * m[:, None, :]) / N
    n_cov, cov_note = stats.covariance(covs, thin_time, what)
    return Moments(n_mse, mean, n_bias, n_cov, cov_note)


@functools.cache
def _below(rows: int, cols: int, k: int) -> np.ndarray:
    """The entries of a ``rows x cols`` matrix that :func:`numpy.triu` with offset ``k``
    sets to ``0`` (below its ``k``-th diagonal), made once: ``np.where(mask, 0, a)`` is
    ``np.triu(a, k)``, without making the mask again for every call."""
    mask = ~np.triu(np.ones((rows, cols), dtype=bool), k)
    mask.flags.writeable = False
    return mask


def queue_length_pmf(batches: list[dict], T: np.ndarray, N: int) -> tuple[Any, Any]:
    """``(pmf, mean_jobs)`` of a queueing model whose coordinate ``k`` counts the servers
    with at least ``k`` jobs: ``P(Q = k) = E[s_k - s_{k+1}]``, ``k = 0..b``, with
    ``s_0 = 1`` and ``s_{b+1} = 0``, and ``E[Q] = E[sum_k s_k]``."""
    mean_n = np.array([s["mean"] for s in batches])
    padded = np.concatenate([T[:, None] * N, mean_n, np.zeros((len(T), 1))], axis=1)
    pmf = stats.ratio((padded[:, :-1] - padded[:, 1:]) / N, T)
    return pmf, stats.ratio(mean_n.sum(axis=1) / N, T)


def blocking_warning(blocking: float, b: int) -> list[str]:
    """The warning (a list of none or one) that ``blocking`` exceeds :data:`BLOCKING_WARN`."""
    if blocking <= BLOCKING_WARN:
        return []
    return [
        f"blocking fraction {blocking:.2e} exceeds {BLOCKING_WARN:g}: the buffer b = {b} is "
        "too small for this finite system (it distorts the comparison with larger-b "
        "bounds); increase b."
    ]


def run_warnings(
    out: Any,
    done: int,
    rho: float,
    *,
    statistic: str = "N||S - s*||^2",
    steps_name: str = "steps",
    correlation: bool = True,
) -> list[str]:
    """Warnings about how the run went: ``done`` of the planned batches completed, and
    (with ``correlation``) batch means of ``statistic`` correlated at lag 1 by ``rho``."""
    warnings = []
    if not out.complete:
        warnings.append(
            f"run incomplete: {done} of {len(out.reps) * out.plan.batches} batches completed"
            + (" (interrupted)" if out.interrupted else "")
            + "; estimates use the completed batches."
        )
    if correlation and done >= 10 and rho > AUTOCORR_WARN:
        warnings.append(
            f"batch means of {statistic} are correlated (lag-1 autocorrelation {rho:.2f}); "
            f"the confidence intervals are too narrow: increase {steps_name}."
        )
    return warnings


def per_second(count: float, batches: list[dict]) -> float:
    """``count`` per second of the CPU time the batches took (NaN when none was measured)."""
    seconds = sum(s["seconds"] for s in batches)
    return count / seconds if seconds > 0 else float("nan")


def result_fields(
    out: Any,
    batches: list[dict],
    m: Moments,
    *,
    sumsq: np.ndarray,
    T: np.ndarray,
    events: np.ndarray,
    s_star: Any,
    steps: int,
    reps: int,
    seed: int,
    warnings: list[str],
) -> dict[str, Any]:
    """The fields of :class:`sim.base.SimulationResult` that every chain engine fills
    alike: the run (``steps``, ``reps``, ``seed``, batches, warm-up, how it went), the
    centre ``s*``, the :class:`Moments`, the events and their rate per CPU second.

    ``sumsq``, ``T`` and ``events`` are the batches' sums of ``int ||S - s*||^2 dt``,
    of time and of events; the lag-1 autocorrelation of ``sumsq / T`` across the
    batches is reported, and the engine's own ``warnings`` are followed by
    :func:`run_warnings`.
    """
    rho = stats.lag1_autocorrelation(sumsq, T)
    n_events = int(events.sum())
    return {
        "warnings": list(warnings) + run_warnings(out, len(batches), rho),
        "steps": steps,
        "reps": reps,
        "seed": seed,
        "batches": out.plan.batches,
        "warmup": out.plan.warmup,
        "s_star": [float(x) for x in s_star],
        "n_mse": m.n_mse,
        "mean": m.mean,
        "n_bias": m.n_bias,
        "n_cov": m.n_cov,
        "events": n_events,
        "events_per_second": per_second(n_events, batches),
        "wall_seconds": out.wall_seconds,
        "complete": out.complete,
        "interrupted": out.interrupted,
        "lag1_autocorrelation": rho,
    }


def status_fields(result: Any) -> dict[str, Any]:
    """How a run of a batch-means simulator ended, the closing keys of its result's
    ``to_dict()``: wall time, whether it completed or was interrupted, the lag-1
    autocorrelation of the batch means (the check of the intervals) and the warnings."""
    return {
        "wall_seconds": measured(result.wall_seconds),
        "complete": result.complete,
        "interrupted": result.interrupted,
        "lag1_autocorrelation": measured(result.lag1_autocorrelation),
        "warnings": list(result.warnings),
    }


def status_rows(complete: bool, warnings: list[str]) -> list[tuple[str, str]]:
    """The closing rows of a simulation result's ``repr``: whether the run is
    incomplete and how many warnings it carries (none when it is complete and clean)."""
    rows = [] if complete else [("complete", "no (interrupted or max_units)")]
    if warnings:
        rows.append(count_row("warnings", warnings))
    return rows
