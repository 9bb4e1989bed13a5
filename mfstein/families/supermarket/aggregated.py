"""Aggregated simulator: the CTMC of the core paper (Section 3) on the counts ``n_k = N s_k``.

State: integers ``N = n_0 >= n_1 >= ... >= n_b >= n_{b+1} = 0``, ``n_k`` the number
of servers holding at least ``k`` jobs.  Transitions (``derive.supermarket``):

* arrival, total rate ``lam N``: the job samples ``d`` servers and joins the
  shortest; it lands on level ``k`` (``n_k += 1``) at rate
  ``lam N (s_{k-1}^d - s_k^d)`` with replacement, or
  ``lam N [C(n_{k-1}, d) - C(n_k, d)] / C(N, d)`` for ``d`` distinct servers;
  if every sampled server is full (``k = b + 1``) the job is blocked;
* departure, total rate ``mu N s_1`` (``mu = 1``): a uniformly chosen busy server
  finishes a job; it is on level ``k`` (``n_k -= 1``) with probability
  ``(n_k - n_{k+1}) / n_1``, i.e. at rate ``N (s_k - s_{k+1})``.

Sampling without formulas.  Order the servers by queue length, longest first,
so that server ``x`` (``0 <= x < N``) holds ``L(x) = #{k >= 1 : n_k > x}`` jobs.
The arrival's shortest sampled queue is ``L(X)`` with ``X`` the largest sampled
index: ``P(L(X) >= k) = P(X < n_k) = (n_k / N)^d`` with replacement and
``C(n_k, d) / C(N, d)`` without, exactly the rates above.  A departure picks a
uniform busy index ``Y < n_1`` and leaves level ``L(Y)``.  So one integer draw per
sampled server and one branch-free count over ``b`` levels per event; the tests
check the induced event probabilities against ``derive``'s generated rates.

Estimator.  The loop walks the embedded jump chain and weights each visited
state by its *expected* holding time ``1 / (lam N + n_1)`` (the conditional,
Rao-Blackwellised form of the time average; blocked arrivals are self-loops and
keep their weight), so no exponential variates are drawn:
``E_pi[g(S)] = lim sum_i g(S_i) w_i / sum_i w_i``.  Statistics update in O(1)
per event: ``sum_k (n_k - N s*_k)^2`` changes by ``2 delta D_k + 1`` when ``n_k``
moves by ``delta``, and the time integral of ``n_k`` is kept by parts,
``int_0^t n_k = n_k(t) t - sum_{jumps of n_k} delta tau``, one update per event.
The second moments ``E[n_j n_k]`` (for ``N Cov(S)``) are
accumulated on an independent Bernoulli(``2^-t``) thinning of the events.

Thinning.  An event is kept when the low ``t`` bits of its first random word
are zero; the event itself is decided by the word's top 53 bits, so for
``t <= 11`` the keep decision is independent of the chain (a fair coin flip
per event, whatever the state).  Both the numerator
``sum_{kept} w_i n_j(i) n_k(i)`` and the denominator ``sum_{kept} w_i`` are
then Horvitz--Thompson sums: their expectations given the path are ``2^-t``
times the full sums, so the ratio estimates the same time average as the full
sums would (the thinning only adds variance, no bias), and the batch-means
confidence interval accounts for that variance.  Accumulating a kept event
costs ``b (b + 1) / 2`` multiply-adds, so a fixed ``t`` makes the average cost
per event grow like ``b^2`` (3x slower at ``b = 50`` than at ``b = 10`` with
``t = 6``).  :func:`sim.thinning.thin_bits` therefore scales ``t`` with ``b``: the
smallest ``t >= 6`` with ``b (b + 1) / 2 <= 2^t`` (about one multiply-add per event),
capped at 11 to keep the keep bits disjoint from the event bits.  Second
moments are a fraction ``2^-t`` of the events: at ``b = 50``, ``t = 11``, one
event in 2048 -- still ~10^5 per 2 * 10^8-event run, far more than the batch
means need.

References
----------
.. [1] "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices
   Mean-Field Model in Heavy-Traffic", Section 3 (the chain simulated here).
.. [2] D. G. Horvitz and D. J. Thompson, "A generalization of sampling without
   replacement from a finite universe", J. Amer. Statist. Assoc. 47, 1952.
"""

from __future__ import annotations

import numpy as np

from mfstein.ground.jit import numba
from sim.rng import INV_2_53, draw_below, draw_distinct, load_state, low_bits, next_u64, store_state

_U64 = np.uint64
_MASK32 = np.uint64(0xFFFFFFFF)

#: Indices into the scalar accumulator returned by :func:`run`.
TIME, SUMSQ, THIN_TIME, ARRIVALS, BLOCKED, EVENTS = range(6)


@numba.njit(inline="always", cache=True)
def _level(n, x, b):
    """``#{k in 1..b : n_k > x}``: the queue length of the server ranked ``x``."""
    c = 0
    for k in range(1, b + 1):
        c += n[k] > x
    return c


@numba.njit(cache=True)
def level_table(n):
    """``table[x] = L(x) = #{k : n_k > x}`` for every rank ``x = 0..N-1`` (uint8).

    When ``n_k`` grows by one, only rank ``n_k`` (old value) changes, to ``k``;
    when it shrinks, only rank ``n_k - 1`` changes, to ``k - 1``.  So the table
    turns the level search into one load and one store per event.
    """
    b = n.shape[0] - 2
    N = n[0]
    table = np.empty(N, dtype=np.uint8)
    for x in range(N):
        table[x] = _level(n, x, b)
    return table


@numba.njit(cache=True)
def second_moments(n, w, cov_acc):
    """``cov_acc[j, k] += w n_{j+1} n_{k+1}`` for ``j <= k`` (kept out of the hot loop).

    The thinned second-moment sample of both supermarket engines (``n`` the counts
    ``n_0 = N, n_1, ..., n_b``, ``w`` the holding time of the current state).
    """
    b = cov_acc.shape[0]
    for j in range(b):
        wj = w * n[j + 1]
        for k in range(j, b):
            cov_acc[j, k] += wj * n[k + 1]


@numba.njit(cache=True)
def _departure_thresholds(inv_rate):
    """``thr[m] = ceil(2^53 p_m)``, ``p_m = m / (lam N + m)`` (the float ``m * inv_rate[m]``).

    ``p_m`` is the probability that an event in a state with ``n_1 = m`` is a
    departure.  For a 53-bit integer ``u``, ``u 2^-53 < p`` (both sides exact
    doubles; scaling by 2^53 is exact) holds iff ``u < 2^53 p`` iff
    ``u < ceil(2^53 p)``, so the integer test on the top 53 bits of a word is
    the same event as the float test and the chain consumes the same random
    words; ``p >= 1`` gives ``2^53`` (always) and a NaN ``p`` gives 0 (never),
    as the float test would.
    """
    out = np.empty(inv_rate.shape[0], dtype=np.uint64)
    for m in range(inv_rate.shape[0]):
        p = m * inv_rate[m]
        if p >= 1.0:
            out[m] = _U64(1) << _U64(53)
        elif p > 0.0:
            out[m] = _U64(np.ceil(p * 9007199254740992.0))
        else:
            out[m] = _U64(0)
    return out


@numba.njit(inline="always", cache=True)
def _start(n, target, rng, thin_bits):
    """What both event loops start from: ``sum_{k=1..b} (n_k - N s*_k)^2`` (the
    running squared distance), the thinning mask and the four RNG words."""
    sumsq = 0.0
    for k in range(1, target.shape[0]):
        sumsq += (n[k] - target[k]) ** 2
    s0, s1, s2, s3 = load_state(rng)
    return sumsq, low_bits(thin_bits), s0, s1, s2, s3


@numba.njit(cache=True)
def _loop_d2(n, table, target, acc, cov_acc, inv_rate, rng, steps, replacement, thin_bits):
    """The event loop for ``d = 2``: both sampled ranks from one 64-bit word."""
    b = target.shape[0] - 1
    N = n[0]
    nb = _U64(N)
    nb2 = _U64(N) if replacement else _U64(max(N - 1, 1))
    sumsq, thin_mask, s0, s1, s2, s3 = _start(n, target, rng, thin_bits)
    t = 0.0
    area = 0.0
    t_thin = 0.0
    departures = 0
    blocked = 0
    # n_1 is kept in a register: it is on the loop-carried dependency chain, and
    # reloading it from ``n`` would add a store-to-load forwarding delay to
    # every event.  Indices are cast to uint64 so that numba omits its
    # negative-index wraparound code (all indices here are >= 0 by construction).
    dep_thr = _departure_thresholds(inv_rate)
    n1 = n[1]
    for _ in range(steps):
        w = inv_rate[_U64(n1)]
        area += w * sumsq
        r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
        if (r & thin_mask) == _U64(0):
            t_thin += w
            second_moments(n, w, cov_acc)
        t += w
        # the same event as ``(r >> 11) 2^-53 < n_1 / (lam N + n_1)``, see
        # _departure_thresholds
        dep = (r >> _U64(11)) < dep_thr[_U64(n1)]
        # the second word gives the departing busy rank (high half) or the two
        # sampled ranks of an arrival (both halves); all three are computed and
        # one is selected, so there is no unpredictable branch
        r2, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
        n1u = _U64(n1)
        m1 = (r2 >> _U64(32)) * nb
        m2 = (r2 & _MASK32) * nb2
        my = (r2 >> _U64(32)) * n1u
        if (m1 & _MASK32) < nb or (m2 & _MASK32) < nb2 or (my & _MASK32) < n1u:
            # Lemire's rejection zone (probability < 3N / 2^32): redo the used
            # draws exactly.
            if dep:
                thr = ((_U64(1) << _U64(32)) - n1u) % n1u
                while (my & _MASK32) < thr:
                    r2, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
                    my = (r2 >> _U64(32)) * n1u
            else:
                thr1 = ((_U64(1) << _U64(32)) - nb) % nb
                thr2 = ((_U64(1) << _U64(32)) - nb2) % nb2
                while (m1 & _MASK32) < thr1:
                    r2, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
                    m1 = (r2 >> _U64(32)) * nb
                while (m2 & _MASK32) < thr2:
                    r2, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
                    m2 = (r2 >> _U64(32)) * nb2
        x1 = np.int64(m1 >> _U64(32))
        x2 = np.int64(m2 >> _U64(32))
        # without replacement x2 is uniform on the N - 1 ranks other than x1
        x2 += (not replacement) and x2 >= x1
        x = max(x1, x2)
        z = np.int64(my >> _U64(32)) if dep else x
        lev = np.int64(table[_U64(z)])
        # blocked iff an arrival reaches level b; one integer test (levels are
        # below 256) so that the code does not branch on the random ``dep``
        if (lev | (np.int64(dep) << 8)) == b:
            blocked += 1
            continue
        departures += dep
        k = lev + 1 - dep
        delta = 1 - 2 * dep
        ku = _U64(k)
        nk = n[ku]
        acc[ku] -= delta * t
        sumsq += 2.0 * delta * (nk - target[ku]) + 1.0
        nk += delta
        n[ku] = nk
        table[_U64(nk - 1 + dep)] = k - dep
        step1 = delta * (k == 1)
        n1 += step1
    store_state(rng, s0, s1, s2, s3)
    return t, area, t_thin, departures, blocked


@numba.njit(cache=True)
def _loop_any_d(
    n, table, target, acc, cov_acc, inv_rate, rng, steps, lam, d, replacement, thin_bits
):
    """The event loop for any ``d``: one 32-bit draw per sampled server."""
    sel = np.empty(d, dtype=np.int64)
    b = target.shape[0] - 1
    N = n[0]
    lam_n = lam * N
    sumsq, thin_mask, s0, s1, s2, s3 = _start(n, target, rng, thin_bits)
    t = 0.0
    area = 0.0
    t_thin = 0.0
    departures = 0
    blocked = 0
    # n_1 is kept in registers (as int and float): it is on the loop-carried
    # dependency chain, and reloading it from ``n`` would add a store-to-load
    # forwarding delay to every event.
    n1 = n[1]
    n1f = float(n1)
    # The accumulators and the per-event accounting below are those of _loop_d2 (and
    # of mfstein.families.supermarket.perserver.run): each compiled loop keeps its own copies so
    # that they
    # stay in registers; what can be shared without that cost is (_start,
    # second_moments).  Measured (stop 43, benchmarks/bench_loop_versions.py): the
    # four accounting lines as one ``@njit(inline="always")`` helper returning
    # ``r, t, area, t_thin`` and the RNG words made this loop 3.2x slower per event
    # (10.4 -> 33.1 ns, b = 10, N = 1000) and mfstein.families.supermarket.perserver.run's 1.4x
    # (46.8 -> 66.7).
    for _ in range(steps):
        w = inv_rate[n1]
        area += w * sumsq
        r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
        if (r & thin_mask) == _U64(0):
            t_thin += w
            second_moments(n, w, cov_acc)
        t += w
        v = (r >> _U64(11)) * INV_2_53 * (lam_n + n1f)
        dep = v < n1f
        if replacement:
            x = np.int64(-1)
            for _j in range(d):
                y, s0, s1, s2, s3 = draw_below(s0, s1, s2, s3, N)
                x = max(x, y)
        else:
            # d distinct ranks: draw from [0, N - j) and step over the ones
            # taken (in increasing order), keeping ``sel`` sorted.
            for j in range(d):
                y, s0, s1, s2, s3 = draw_distinct(s0, s1, s2, s3, N, j, sel)
            x = sel[d - 1]
        z = np.int64(v) if dep else x
        lev = np.int64(table[z])
        if not dep and lev == b:
            blocked += 1
            continue
        departures += dep
        k = lev + 1 - dep
        delta = 1 - 2 * dep
        nk = n[k]
        acc[k] -= delta * t
        sumsq += 2.0 * delta * (nk - target[k]) + 1.0
        nk += delta
        n[k] = nk
        table[nk - 1 + dep] = k - dep
        step1 = delta * (k == 1)
        n1 += step1
        n1f += step1
    store_state(rng, s0, s1, s2, s3)
    return t, area, t_thin, departures, blocked


@numba.njit(cache=True)
def run(n, rng, steps, lam, d, replacement, s_star, inv_rate, thin_bits, mean_acc, cov_acc):
    """Advance the aggregated chain by ``steps`` events and accumulate statistics.

    Parameters
    ----------
    n : int64[b + 2]
        Counts ``n_0 = N, n_1, ..., n_b, n_{b+1} = 0``; updated in place.
    rng : uint64[4]
        xoshiro256** state; updated in place.
    steps : int
        Number of events (jumps of the embedded chain, blocked arrivals included).
    lam : float
        Arrival rate per server.
    d : int
        Servers sampled per arrival.
    replacement : bool
        Sample with replacement (the core paper's chain) or ``d`` distinct servers.
    s_star : float64[b]
        Reference point ``s*`` for ``||S - s*||^2``.
    inv_rate : float64[N + 1]
        ``1 / (lam N + m)`` for ``m = n_1 = 0..N`` (expected holding times).
    thin_bits : int
        Second moments use the events whose low ``thin_bits`` random bits are 0.
    mean_acc : float64[b]
        Receives ``sum_i w_i n_k(i)`` (added to).
    cov_acc : float64[b, b]
        Receives ``sum_{i thinned} w_i n_j(i) n_k(i)`` for ``j <= k`` (added to).

    Returns
    -------
    float64[6]
        ``[sum w, sum w ||n - N s*||^2, sum_{thinned} w, arrivals, blocked, events]``.

    Notes
    -----
    Per event: two 64-bit random words.  The first picks departure versus
    arrival (``v < n_1`` with ``v`` uniform on ``[0, lam N + n_1)``) and, for a
    departure, the busy rank ``floor(v)``; the second gives the sampled ranks
    (two 32-bit halves when ``d = 2``).  The rank is chosen without a branch and
    its level read from :func:`level_table`; only blocking and the thinned
    second moments branch, and both are rare.
    """
    b = s_star.shape[0]
    N = n[0]
    table = level_table(n)
    target = np.zeros(b + 1)  # N s*_k, k = 1..b
    for k in range(1, b + 1):
        target[k] = N * s_star[k - 1]
    # time integral of n_k by parts: int_0^t n_k = n_k(t) t - sum_jumps delta tau
    acc = np.zeros(b + 1)
    if d == 2:
        t, area, t_thin, departures, blocked = _loop_d2(
            n, table, target, acc, cov_acc, inv_rate, rng, steps, replacement, thin_bits
        )
    else:
        t, area, t_thin, departures, blocked = _loop_any_d(
            n, table, target, acc, cov_acc, inv_rate, rng, steps, lam, d, replacement, thin_bits
        )
    for k in range(1, b + 1):
        mean_acc[k - 1] += acc[k] + n[k] * t
    out = np.empty(6)
    out[TIME] = t
    out[SUMSQ] = area
    out[THIN_TIME] = t_thin
    out[ARRIVALS] = steps - departures
    out[BLOCKED] = blocked
    out[EVENTS] = steps
    return out


@numba.njit(cache=True)
def arrival_level_pmf(n, d, replacement):
    """Exact probability that an arrival lands on level ``k = 1..b+1`` (``b+1``: blocked).

    Enumerates the largest sampled index ``X`` with its exact law
    (``P(X < m) = (m/N)^d``, or ``C(m, d)/C(N, d)`` without replacement) and
    applies the simulator's own level search, so a test can compare the
    simulator's event law with ``derive``'s rates.
    """
    b = n.shape[0] - 2
    N = n[0]
    out = np.zeros(b + 1)
    prev = 0.0
    for x in range(N):
        m = x + 1
        if replacement:
            cdf = (m / N) ** d
        else:
            cdf = 1.0
            for j in range(d):
                cdf *= max(m - j, 0) / (N - j)
        out[_level(n, x, b)] += cdf - prev
        prev = cdf
    return out


@numba.njit(cache=True)
def departure_level_pmf(n):
    """Exact probability that a departure leaves level ``k = 1..b`` (uniform busy server)."""
    b = n.shape[0] - 2
    out = np.zeros(b)
    if n[1] == 0:
        return out
    for y in range(n[1]):
        out[_level(n, y, b) - 1] += 1.0 / n[1]
    return out


def initial_counts(N: int, s_star: np.ndarray) -> np.ndarray:
    """Counts ``[N, round(N s*_1), ..., round(N s*_b), 0]`` (monotone since rounding is)."""
    b = len(s_star)
    n = np.zeros(b + 2, dtype=np.int64)
    n[0] = N
    n[1 : b + 1] = np.rint(N * np.asarray(s_star, dtype=float)).astype(np.int64)
    return n


def inverse_rates(N: int, lam: float) -> np.ndarray:
    """Expected holding times ``1 / (lam N + m)``, ``m = 0..N`` (mu = 1)."""
    return 1.0 / (lam * N + np.arange(N + 1, dtype=float))
