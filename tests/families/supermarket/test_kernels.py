"""The simulators' event laws against derive's generated transition rates."""

from __future__ import annotations

import numpy as np
import pytest

from derive import supermarket
from mfstein.families.supermarket import aggregated, perserver
from sim.rng import seed_states, uniforms


def _random_counts(rng: np.random.Generator, N: int, b: int) -> np.ndarray:
    levels = np.sort(rng.integers(0, N + 1, size=b))[::-1]
    return np.concatenate([[N], levels, [0]]).astype(np.int64)


@pytest.mark.parametrize(
    ("b", "d", "replacement"),
    [(4, 2, True), (5, 3, True), (3, 1, True), (4, 2, False), (5, 3, False)],
)
def test_event_law_matches_derive_rates(b, d, replacement):
    """Arrival and departure level probabilities of the simulator's rank sampling equal
    derive's rates beta_l(s) divided by the total arrival / departure intensity."""
    model = supermarket(b, d, replacement=replacement)
    k = model.kernels("numba")
    gen = np.random.default_rng(7)
    for N in (7, 12, 40):
        p = np.array([0.8] if replacement else [0.8, float(N)])
        for _ in range(5):
            n = _random_counts(gen, N, b)
            s = n[1 : b + 1] / N
            rates = k.rates(s, p)  # order of derive's JUMPS: arrival k, departure k, ...
            jumps = k.jumps
            up = np.array([rates[i] for i in range(len(rates)) if jumps[i].sum() > 0])
            down = np.array([rates[i] for i in range(len(rates)) if jumps[i].sum() < 0])
            arr = aggregated.arrival_level_pmf(n, d, replacement)
            np.testing.assert_allclose(arr[:b], up / 0.8, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(arr[b], 1 - up.sum() / 0.8, atol=1e-12)  # blocked
            if n[1] > 0:
                dep = aggregated.departure_level_pmf(n)
                np.testing.assert_allclose(dep, down / down.sum(), rtol=1e-12)


def test_level_table_tracks_counts():
    """After a run the counts stay a valid monotone state and conserve nothing spurious."""
    b, N = 5, 30
    s_star = np.linspace(0.9, 0.1, b)
    n = aggregated.initial_counts(N, s_star)
    rng = seed_states(3, 1)[0]
    inv = aggregated.inverse_rates(N, 0.95)
    for rep in (True, False):
        out = aggregated.run(
            n, rng, 20_000, 0.95, 2, rep, s_star, inv, 6, np.zeros(b), np.zeros((b, b))
        )
        assert n[0] == N and n[-1] == 0
        assert np.all(np.diff(n) <= 0)
        table = aggregated.level_table(n)
        expected = [int((n[1 : b + 1] > x).sum()) for x in range(N)]
        assert [int(table[x]) for x in range(N)] == expected
        assert out[aggregated.EVENTS] == 20_000


def test_per_server_index_consistent():
    """The per-server rank order stays sorted by queue length, and FIFO slots are valid."""
    b, N = 4, 25
    s_star = np.array([0.9, 0.6, 0.3, 0.1])
    counts = aggregated.initial_counts(N, s_star)
    st = perserver.initial_state(N, b, counts)
    rng = seed_states(5, 1)[0]
    inv = aggregated.inverse_rates(N, 0.9)
    for policy in (0, 1, 2):
        out = perserver.run(
            st["q"],
            st["perm"],
            st["arrival_times"],
            st["head"],
            st["clock"],
            rng,
            30_000,
            0.9,
            2,
            True,
            policy,
            s_star,
            inv,
            6,
            np.zeros(b),
            np.zeros((b, b)),
            np.zeros(50),
            20.0,
        )
        st["clock"] = out[perserver.N_SCALARS]
        q = st["q"][st["perm"]]
        assert np.all(np.diff(q) <= 0), "ranks must be ordered longest first"
        assert q.min() >= 0 and q.max() <= b
        assert sorted(st["perm"].tolist()) == list(range(N))


def test_rng_streams_reproducible_and_distinct():
    a = seed_states(11, 3)
    b = seed_states(11, 3)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x, y)
    assert not np.array_equal(a[0], a[1])
    u = uniforms(a[0].copy(), 200_000)
    assert 0 <= u.min() and u.max() < 1
    assert abs(u.mean() - 0.5) < 5 * np.sqrt(1 / 12 / len(u))
