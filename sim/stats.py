"""Batch-means confidence intervals for the simulators' estimates.

Each replication is run as a warm-up (discarded) followed by ``m`` batches of
equal numbers of events; every batch yields sums ``A_i`` (time integral of an
observable) and ``T_i`` (elapsed time).  Batches of independent replications
are pooled.  A time average is the ratio estimator ``r = sum A_i / sum T_i``;
its standard error comes from the batch residuals ``z_i = (A_i - r T_i) / mean T``
(the delta method for ratios), and the 95% interval is
``r +- t_{0.975, M-1} sd(z) / sqrt(M)`` with ``M`` the number of pooled batches
(Student t quantile from :func:`scipy.special.stdtrit`, kept on disk:
:func:`t_quantile`).  Batches must be long compared with the chain's relaxation
time for the ``z_i`` to be nearly uncorrelated; the lag-1 autocorrelation of the
residuals is reported so a user can see when they are not.  Statistics that are
not ratios (the covariance) use the plain batch-means interval over per-batch
estimates.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np


@dataclass
class Estimate:
    """A point estimate with the half-width of its 95% confidence interval.

    ``mean`` and ``ci95`` are floats or arrays of the same shape.
    """

    #: The point estimate, a float or an array; a ratio estimator over the pooled batches or the
    #: mean of per-batch estimates (module docstring), NaN where an estimate is withheld.
    mean: np.ndarray | float
    #: The half-width of the 95% confidence interval of ``mean`` (Student t over the pooled
    #: batches), of its shape; NaN where withheld.
    ci95: np.ndarray | float

    def to_dict(self) -> dict:
        """``{"mean": ..., "ci95": ...}`` with plain floats / nested lists, as printed:
        each half-width with 2 significant digits (rounded up) and each mean with its
        digits down to that place (:func:`mfstein.ground.display.estimate_figures`)."""
        mean, ci95 = printed(self.mean, self.ci95)
        return {"mean": plain(mean), "ci95": plain(ci95)}

    def text(self) -> str:
        """A scalar estimate as ``"mean +/- half-width (95% CI)"``, printed as in
        :meth:`to_dict` (``0.899 +/- 0.049 (95% CI)``)."""
        mean, ci95 = printed(self.mean, self.ci95)
        return f"{float(mean)} +/- {float(ci95)} (95% CI)"


def printed(mean, ci95) -> tuple[np.ndarray, np.ndarray]:
    """Means and 95% half-widths (floats or arrays of one shape) as printed, entry by
    entry (:func:`mfstein.ground.display.estimate_figures`); the values held are not
    changed."""
    from mfstein.ground.display import estimate_figures

    m, h = np.broadcast_arrays(np.asarray(mean, dtype=float), np.asarray(ci95, dtype=float))
    pairs = [estimate_figures(a, b) for a, b in zip(m.flat, h.flat, strict=True)]
    shape = m.shape
    return (
        np.array([p[0] for p in pairs], dtype=float).reshape(shape),
        np.array([p[1] for p in pairs], dtype=float).reshape(shape),
    )


def plain(x):
    """Plain floats / nested lists for JSON; NaN (an estimate withheld) as ``None``."""
    a = np.asarray(x, dtype=float)
    if a.ndim == 0:
        return float(a) if np.isfinite(a) or np.isinf(a) else None
    return np.where(np.isnan(a), None, a).tolist() if np.isnan(a).any() else a.tolist()


#: Format of a kept t quantile (part of its key: a new format never reads an old file).
T_RECORD = 1


@functools.cache
def t_quantile(batches: int) -> float:
    """``t_{0.975}`` with ``batches - 1`` degrees of freedom (inf when fewer than 2 batches).

    The value is SciPy's :func:`scipy.special.stdtrit`, computed once per installed
    SciPy and degrees of freedom and kept in the cache directory
    (:mod:`mfstein.ground.records`, key :func:`t_quantile_key`): a later process reads
    the same float back (JSON keeps every bit) without importing ``scipy.special``
    (some 0.1-0.25 s of CPU; ``scipy.stats`` costs ~1 s).  A damaged or missing file
    is computed and written afresh.
    """
    if batches < 2:
        return float("inf")
    from mfstein.ground import records

    key = t_quantile_key(batches - 1)
    kept = records.load(key)
    if kept is not None and type(kept.get("t")) is float:
        return kept["t"]
    from scipy.special import stdtrit

    t = float(stdtrit(batches - 1, 0.975))
    records.save(key, {"dof": batches - 1, "p": 0.975, "t": t})
    return t


def t_quantile_key(dof: int) -> str:
    """The key of the kept ``t_{0.975}`` with ``dof`` degrees of freedom: the record's
    format, ``dof`` and the installed SciPy (:func:`mfstein.ground.records.library_stamp`)."""
    from mfstein.ground import records

    return records.parts_key(["t-quantile", T_RECORD, dof, 0.975, records.library_stamp("scipy")])


def sample_sd(x: np.ndarray) -> np.ndarray | np.floating:
    """``x.std(axis=0, ddof=1)`` of float64 ``x`` with ``M >= 2`` rows, with its bits.

    The same operations in the same order as NumPy's (the mean ``sum x / M`` of the
    rows, the squares of the deviations from it, their sum over the rows divided by
    ``M - 1``, its square root), without the argument handling of
    :meth:`numpy.ndarray.std` around them (a third of its time on the few batches of a
    short run); each sum over the rows is :meth:`numpy.ufunc.reduce` of ``add`` along
    axis 0, as NumPy's.  A 1-d ``x`` gives a NumPy scalar, as :meth:`~numpy.ndarray.std`."""
    M = x.shape[0]
    mean = np.add.reduce(x, axis=0, keepdims=True)
    np.true_divide(mean, M, out=mean)
    dev = np.subtract(x, mean)
    np.square(dev, out=dev)
    var = np.add.reduce(dev, axis=0)
    if isinstance(var, np.ndarray):
        np.true_divide(var, M - 1, out=var)
        return np.sqrt(var, out=var)
    return np.sqrt(var / (M - 1))


def ratio(num: np.ndarray, den: np.ndarray) -> Estimate:
    """Ratio estimator ``sum num / sum den`` over batches (axis 0) with its 95% CI.

    ``num`` has shape ``(M, ...)``, ``den`` shape ``(M,)``.  (Sums and the standard
    deviation by :meth:`numpy.ufunc.reduce` and :func:`sample_sd`: the bits of
    :meth:`~numpy.ndarray.sum`, :meth:`~numpy.ndarray.mean` and
    :meth:`~numpy.ndarray.std`, at a fraction of their cost on a few batches.)
    """
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    M = den.shape[0]
    r = np.add.reduce(num, axis=0) / np.add.reduce(den)
    if M < 2:
        return Estimate(r, np.full_like(np.asarray(r, dtype=float), np.inf))
    shape = (M,) + (1,) * (num.ndim - 1)
    z = (num - r * den.reshape(shape)) / (np.add.reduce(den) / M)
    half = t_quantile(M) * sample_sd(z) / math.sqrt(M)
    return Estimate(r, half)


def sparse_ratio(num: np.ndarray, den: np.ndarray) -> Estimate:
    """:func:`ratio` of ``num`` most of whose entries are zero in every batch (the time
    a chain spent at each value of each coordinate: it visits a narrow window), with
    the same bits, computed on the entries that are not ``+0.0`` in some batch only.

    Every step of :func:`ratio` is entry by entry, its sums over the batches (axis 0)
    included, so an entry's estimate does not depend on the others; an entry that is
    ``+0.0`` in every batch has ``r = 0 / sum den = +0.0`` and residuals ``+0.0``, so
    ``+0.0`` and a half-width ``+0.0`` (``-0.0`` entries take the full computation).
    SIR at N = 1000 spends its time on some 100 of the 3 x 1001 values: 0.1 against
    1 ms of a warm 2e5-event run's 8 ms."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    M = den.shape[0]
    flat = num.reshape(M, -1) if num.ndim >= 2 else num
    # an entry is used unless it is +0.0 in every batch: some bit of it is set somewhere
    used = np.flatnonzero(flat.view(np.uint64).any(axis=0)) if flat.ndim == 2 else ()
    if M < 2 or flat.ndim != 2 or flat.shape[1] < 2 or len(used) < 2:
        return ratio(num, den)
    # C order, at least two entries a row: NumPy sums over the batches row after row, as
    # for the whole array (one entry a row, or another layout, it sums in another order)
    part = ratio(np.ascontiguousarray(flat[:, used]), den)
    mean, half = np.zeros(flat.shape[1]), np.zeros(flat.shape[1])
    mean[used], half[used] = part.mean, part.ci95
    return Estimate(mean.reshape(num.shape[1:]), half.reshape(num.shape[1:]))


def batch_means(per_batch: np.ndarray) -> Estimate:
    """Plain batch means: average of per-batch estimates (axis 0) with its 95% CI."""
    x = np.asarray(per_batch, dtype=float)
    M = x.shape[0]
    mean = x.mean(axis=0)
    if M < 2:
        return Estimate(mean, np.full_like(mean, np.inf))
    return Estimate(mean, t_quantile(M) * sample_sd(x) / math.sqrt(M))


#: How the sentence of a withheld covariance ends (:func:`covariance`): a report
#: that prints no covariance (the Table 1 of ``mfstein.families.supermarket.table``) leaves it out.
WITHHELD = "is not reported: the run is too short for its second moments"


def covariance(
    per_batch: np.ndarray, thin_time: np.ndarray | None = None, what: str = "N Cov(S)"
) -> tuple[Estimate, str | None]:
    """Batch means of per-batch covariance matrices, or nothing when they cannot be one.

    The second moments are accumulated on a thinning of the events and the means
    on all of them (:mod:`mfstein.families.supermarket.aggregated`): a batch in which no event
    was kept
    (``thin_time == 0``) has no second moment at all, and a short run can give a
    negative variance, which no covariance has.  Then the estimate is withheld:
    the returned :class:`Estimate` is all NaN (printed as "not reported",
    ``null`` in JSON) and the sentence says why; otherwise the sentence is ``None``.
    """
    est = batch_means(per_batch)
    empty = 0 if thin_time is None else int((np.asarray(thin_time) <= 0).sum())
    if empty:
        nan = np.full_like(np.asarray(est.mean, dtype=float), np.nan)
        return Estimate(nan, nan.copy()), (
            f"{what} {WITHHELD} ({empty} of the batches kept no thinned sample); increase steps."
        )
    diag = np.diagonal(np.asarray(est.mean, dtype=float))
    if diag.size and (not np.isfinite(diag).all() or (diag < 0).any()):
        nan = np.full_like(np.asarray(est.mean, dtype=float), np.nan)
        worst = float(np.nanmin(diag)) if np.isfinite(diag).any() else float("nan")
        return Estimate(nan, nan.copy()), (
            f"{what} {WITHHELD} (a variance estimate came out {worst:.3g} < 0); increase steps."
        )
    return est, None


def lag1_autocorrelation(num: np.ndarray, den: np.ndarray) -> float:
    """Lag-1 autocorrelation of the ratio residuals of a 1-d statistic (diagnostic)."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    if len(den) < 3:
        return float("nan")
    r = np.add.reduce(num) / np.add.reduce(den)
    z = num - r * den
    z = z - np.add.reduce(z) / len(z)  # z.mean(), its bits
    denom = float(z @ z)
    return float(z[1:] @ z[:-1] / denom) if denom > 0 else float("nan")


def printed_response_time(response: dict | None) -> dict | None:
    """A per-server run's response-time dict (:func:`mfstein.families.supermarket.simulate`
    keeps it) as
    printed: each quantile down to the place its bin width allows
    (:func:`mfstein.ground.display.printed_to_error` with the error ``bin_width``: the
    interpolated quantile and the run's own sample quantile lie in one bin), and
    ``quantiles_abs_error``, that width, beside.  The width bounds the binning only:
    the statistical error of a quantile is not estimated.  The dict held is not
    changed."""
    if not response:
        return response
    from mfstein.ground.display import error_figure, printed_to_error

    width = response["histogram"]["bin_width"]
    quantiles = {q: printed_to_error(v, width) for q, v in response["quantiles"].items()}
    out = dict(response, quantiles=quantiles)
    out["quantiles_abs_error"] = error_figure(width)
    return out


def histogram_quantiles(hist: np.ndarray, hist_max: float, over: float, qs) -> list[float]:
    """Quantiles of a distribution given as a histogram on ``[0, hist_max)`` plus an
    overflow count; linear interpolation inside a bin, ``inf`` in the overflow."""
    hist = np.asarray(hist, dtype=float)
    total = hist.sum() + over
    edges = np.linspace(0.0, hist_max, len(hist) + 1)
    cum = np.concatenate([[0.0], np.cumsum(hist)])
    out = []
    for q in qs:
        target = q * total
        if total == 0 or target > cum[-1]:
            out.append(float("inf") if total else float("nan"))
            continue
        i = int(np.searchsorted(cum, target, side="left"))
        i = min(max(i, 1), len(hist))
        lo, hi = cum[i - 1], cum[i]
        frac = 0.0 if hi == lo else (target - lo) / (hi - lo)
        out.append(float(edges[i - 1] + frac * (edges[i] - edges[i - 1])))
    return out
