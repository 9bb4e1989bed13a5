"""sim.summary: the pooling every chain engine shares, on batches whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from mfstein.ground.errors import ParameterError
from sim import summary
from sim.runner import Plan, Replication, RunOutput


def _out(batches_per_rep, *, complete=True, interrupted=False) -> RunOutput:
    reps = [Replication(state={}, warm=True, batches=list(b)) for b in batches_per_rep]
    return RunOutput(reps, Plan(100, 2, 0, 50), complete, interrupted, 0.0)


def _frozen(n, T, thin):
    """The sums of a batch that spent time ``T`` (``thin`` of it thinned) in state ``n``."""
    n = np.asarray(n, dtype=float)
    return {"mean": n * T, "cov": np.triu(np.outer(n, n)) * thin, "seconds": 0.5}


def test_no_batch_is_an_interruption_or_too_few_steps() -> None:
    with pytest.raises(KeyboardInterrupt):
        summary.completed_batches(_out([[], []], complete=False, interrupted=True))
    with pytest.raises(ParameterError, match=r"slots is too small .* increase slots"):
        summary.completed_batches(_out([[], []], complete=False), "slots")
    assert len(summary.completed_batches(_out([[{"a": 1}], [{"a": 2}, {"a": 3}]]))) == 3


def test_moments_of_a_chain_that_stays_in_one_state() -> None:
    N, n, s_star = 10, [6.0, 3.0], np.array([0.5, 0.25])
    T, thin = np.array([2.0, 3.0, 4.0]), np.array([0.5, 1.0, 0.25])
    batches = [_frozen(n, t, h) for t, h in zip(T, thin, strict=True)]
    dist2 = float(np.sum((np.asarray(n) - N * s_star) ** 2))  # N^2 ||S - s*||^2
    m = summary.moments(batches, dist2 * T, T, thin, N, s_star)
    assert np.allclose(m.mean.mean, [0.6, 0.3]) and np.allclose(m.mean.ci95, 0.0)
    assert np.allclose(m.n_bias.mean, N * (np.array([0.6, 0.3]) - s_star))
    assert np.isclose(m.n_mse.mean, dist2 / N)
    assert np.allclose(m.n_cov.mean, 0.0, atol=1e-12) and m.cov_note is None
    # a batch that kept no thinned sample has no second moment: withheld, with a reason
    with np.errstate(over="ignore", invalid="ignore"):  # 0 thinned time: inf, then NaN
        m = summary.moments(batches, dist2 * T, T, np.array([0.5, 0.0, 0.25]), N, s_star)
    assert np.isnan(m.n_cov.mean).all() and "1 of the batches" in m.cov_note


def test_queue_length_pmf_from_the_tail_fractions() -> None:
    N, T = 10, np.array([1.0, 2.0])
    batches = [_frozen([6.0, 3.0], t, t) for t in T]  # s_1 = 0.6, s_2 = 0.3
    pmf, jobs = summary.queue_length_pmf(batches, T, N)
    assert np.allclose(pmf.mean, [0.4, 0.3, 0.3]) and np.isclose(jobs.mean, 0.9)


def test_warnings_say_how_the_run_went() -> None:
    out = _out([[{}], [{}, {}]], complete=False, interrupted=True)
    w = summary.run_warnings(out, 3, 0.9, statistic="Q_total", steps_name="slots")
    assert w[0].startswith("run incomplete: 3 of 4 batches completed (interrupted)")
    assert w == w[:1]  # fewer than 10 batches: no verdict on their correlation
    w = summary.run_warnings(_out([[{}] * 6, [{}] * 6]), 12, 0.9, statistic="Q_total")
    assert len(w) == 1 and "batch means of Q_total are correlated" in w[0]
    assert summary.run_warnings(_out([[{}] * 6] * 2), 12, 0.9, correlation=False) == []
    assert summary.blocking_warning(2e-3, 4)[0].startswith("blocking fraction 2.00e-03")
    assert summary.blocking_warning(1e-3, 4) == []


def test_the_t_quantile_is_scipys_kept_for_a_new_process(tmp_path, monkeypatch) -> None:
    """The kept quantile is the float ``stdtrit`` gives, read back bit for bit; a damaged
    record is computed and written afresh; fewer than two batches have no interval."""
    from scipy.special import stdtrit

    from mfstein.ground import records
    from sim import stats

    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    stats.t_quantile.cache_clear()
    for batches in (2, 7, 20, 400):
        want = float(stdtrit(batches - 1, 0.975))
        assert stats.t_quantile(batches) == want  # computed, and written
        stats.t_quantile.cache_clear()  # as a new process: read from the record
        assert records.load(stats.t_quantile_key(batches - 1))["t"] == want
        assert stats.t_quantile(batches) == want
    assert stats.t_quantile(1) == float("inf")
    path = tmp_path / "prepared" / f"{stats.t_quantile_key(19)}.json"
    intact = path.read_text()
    path.write_text(intact.replace('"dof": 19', '"dof": 18'))  # the digest no longer matches
    stats.t_quantile.cache_clear()
    assert stats.t_quantile(20) == float(stdtrit(19, 0.975))
    assert path.read_text() == intact
    stats.t_quantile.cache_clear()
    assert stats.t_quantile_key(19) != stats.t_quantile_key(18)


def test_the_sparse_ratio_has_the_bits_of_the_ratio() -> None:
    """:func:`sim.stats.sparse_ratio` (the marginals: a chain visits few values) gives
    every entry the bits :func:`sim.stats.ratio` gives it, on sums with many, few, one or
    no entries used, ``-0.0`` entries, one batch, and a generic run's time at each value."""
    from sim import stats

    rng = np.random.default_rng(7)
    cases = []
    for _ in range(300):
        M = int(rng.integers(1, 60))
        shape = (M, *(int(rng.integers(1, 30)) for _ in range(int(rng.integers(0, 3)))))
        x = rng.exponential(size=shape) * (rng.random(shape) < rng.random() ** 2)
        if rng.random() < 0.3 and x.ndim > 1:
            x.reshape(M, -1)[:, 0] = -0.0
        cases.append((x, rng.exponential(size=M) + 0.1))
    hist = np.zeros((20, 3, 101))  # a window of visited values, as SIR's
    hist[:, :, 30:60] = rng.exponential(size=(20, 3, 30))
    cases.append((hist, hist.sum(axis=(1, 2)) / 3))
    for num, den in cases:
        want, got = stats.ratio(num, den), stats.sparse_ratio(num, den)
        for a, b in ((want.mean, got.mean), (want.ci95, got.ci95)):
            a, b = np.asarray(a), np.asarray(b)
            assert a.shape == b.shape and a.tobytes() == b.tobytes(), num.shape


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_the_pooling_has_the_bits_of_numpys_reductions() -> None:
    """The estimates are formed with :meth:`numpy.ufunc.reduce` and
    :func:`sim.stats.sample_sd` (cheaper on a short run's few batches); each has the bits
    of the NumPy methods it stands for, written out here: ``sum``, ``mean`` and
    ``std(ddof=1)`` over the batches, :func:`numpy.triu`, and the ratio estimator, the
    batch means and the lag-1 autocorrelation as they were written with them."""
    from sim import stats

    def ratio(num, den):  # stats.ratio with NumPy's methods
        M = den.shape[0]
        r = num.sum(axis=0) / den.sum()
        z = (num - r * den.reshape((M,) + (1,) * (num.ndim - 1))) / den.mean()
        return r, stats.t_quantile(M) * z.std(axis=0, ddof=1) / np.sqrt(M)

    def lag1(num, den):
        z = num - num.sum() / den.sum() * den
        z = z - z.mean()
        return float(z[1:] @ z[:-1] / float(z @ z))

    rng = np.random.default_rng(54)
    for _ in range(400):
        M = int(rng.integers(2, 70))
        shape = (M, *(int(rng.integers(1, 12)) for _ in range(int(rng.integers(0, 3)))))
        x = rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 9)
        if rng.random() < 0.3:
            x = x + rng.standard_normal()  # a common offset: the two passes matter
        den = rng.exponential(size=M) + 0.01
        want = x.std(axis=0, ddof=1)
        assert _same_bits(stats.sample_sd(x), want) and type(stats.sample_sd(x)) is type(want)
        got, (r, half) = stats.ratio(x, den), ratio(x, den)
        assert _same_bits(got.mean, r) and _same_bits(got.ci95, half), shape
        means = stats.batch_means(x)
        assert _same_bits(means.ci95, stats.t_quantile(M) * want / np.sqrt(M))
        if M >= 3:
            assert stats.lag1_autocorrelation(x.reshape(M, -1)[:, 0], den) == lag1(
                x.reshape(M, -1)[:, 0], den
            )


def test_the_moments_have_the_bits_of_numpys_triu() -> None:
    """:func:`sim.summary.moments` takes the upper triangles with a kept mask; ``N Cov(S)``
    has the bits of the same formula written with :func:`numpy.triu`."""
    from sim import stats

    rng = np.random.default_rng(540)
    for _ in range(100):
        M, b, N = int(rng.integers(2, 40)), int(rng.integers(1, 6)), int(rng.integers(1, 999))
        T, thin = rng.exponential(size=M) + 0.1, rng.exponential(size=M)
        mean_n = rng.exponential(size=(M, b)) * T[:, None] * N
        cov = rng.standard_normal((M, b, b)) * N**2  # the lower triangle is ignored
        batches = [{"mean": m, "cov": c} for m, c in zip(mean_n, cov, strict=True)]
        got = summary.moments(batches, rng.exponential(size=M), T, thin, N, np.zeros(b))
        upper = np.triu(cov)
        second = (upper + np.swapaxes(np.triu(upper, 1), 1, 2)) / thin[:, None, None]
        m = mean_n / T[:, None]
        want = stats.batch_means((second - m[:, :, None] * m[:, None, :]) / N)
        if got.cov_note is None:
            assert _same_bits(got.n_cov.mean, want.mean) and _same_bits(got.n_cov.ci95, want.ci95)
        else:  # withheld: a variance came out negative
            assert (np.diagonal(want.mean) < 0).any()
