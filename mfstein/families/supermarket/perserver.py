"""Per-server simulator: explicit FIFO queues, real clock, per-job response times.

The same finite-N system as :mod:`mfstein.families.supermarket.aggregated` (Poisson arrivals at rate
``lam N``, exponential services at rate 1, buffer ``b`` per server), but every
server and every job is explicit, so the dispatch policy can be anything and
each job's response time (waiting + service, FIFO) is recorded:

* ``"pod"``: sample ``d`` servers (with or without replacement), join the
  shortest (ties go to the first sampled, which is uniform among the tied);
* ``"jsq"``: join a uniformly chosen server among the shortest of all ``N``;
* ``"random"``: join one uniformly chosen server.

An arrival to a full server (``b`` jobs) is blocked and lost.

Bookkeeping: servers are kept in an array ordered by queue length, longest
first (``perm[rank] = server``, ``pos[server] = rank``), with block boundaries
``n_k`` = number of servers holding at least ``k`` jobs.  A queue growing from
``L`` to ``L + 1`` swaps its server with the first rank of its block and moves
the boundary ``n_{L+1}``; a shrinking queue swaps with the last rank of its
block.  So a uniform busy server (rank below ``n_1``), the shortest queue
(the last block) and the counts ``n_k`` are all O(1).

The state statistics use the same conditional estimator as the aggregated
simulator (weights ``1 / (lam N + n_1)``), so the two can be compared directly;
the clock advances by exponential holding times for the response times.
"""

from __future__ import annotations

import math

import numpy as np

from mfstein.families.supermarket.aggregated import second_moments
from mfstein.ground.jit import numba
from sim.rng import INV_2_53, draw_below, draw_distinct, load_state, low_bits, next_u64, store_state

_U64 = np.uint64

#: Dispatch policies and their codes in the compiled loop.
POLICIES: dict[str, int] = {"pod": 0, "jsq": 1, "random": 2}

#: Indices into the scalar accumulator returned by :func:`run`.
(
    TIME,
    SUMSQ,
    THIN_TIME,
    ARRIVALS,
    BLOCKED,
    EVENTS,
    JOBS,
    RESP_SUM,
    RESP_OVER,
) = range(9)
N_SCALARS = 9


def initial_state(N: int, b: int, counts: np.ndarray) -> dict[str, np.ndarray | float]:
    """Servers ``0..N-1`` holding the queue lengths described by ``counts`` (``n_0..n_{b+1}``).

    Jobs present at the start carry arrival time 0 (warm-up deletion removes them
    from the response-time statistics).
    """
    q = np.zeros(N, dtype=np.int64)
    for k in range(1, b + 1):
        q[: counts[k]] += 1
    return {
        "q": q,
        "perm": np.arange(N, dtype=np.int64),
        "arrival_times": np.zeros((N, b)),
        "head": np.zeros(N, dtype=np.int64),
        "clock": 0.0,
    }


@numba.njit(cache=True)
def _index(q, perm, b):
    """Rebuild ``pos`` and the counts ``n`` from queue lengths and the rank order."""
    N = q.shape[0]
    pos = np.empty(N, dtype=np.int64)
    n = np.zeros(b + 2, dtype=np.int64)
    n[0] = N
    for r in range(N):
        s = perm[r]
        pos[s] = r
        for k in range(1, q[s] + 1):
            n[k] += 1
    return pos, n


# One long compiled loop on purpose: split into calls, its state would leave the
# registers of the hot loop (issue 21 allows the simulators' inner loops to stay long).
@numba.njit(inline="always", cache=True)
def _move_to_rank(perm, pos, srv, rank):
    """Swap server ``srv`` with the server at ``rank`` of the longest-first order ``perm``
    (``pos`` is its inverse, ``perm[pos[i]] = i``); inlined into :func:`run`'s loop."""
    other = perm[rank]
    p = pos[srv]
    perm[p] = other
    pos[other] = p
    perm[rank] = srv
    pos[srv] = rank


@numba.njit(cache=True)
def run(
    q,
    perm,
    arrival_times,
    head,
    clock,
    rng,
    steps,
    lam,
    d,
    replacement,
    policy,
    s_star,
    inv_rate,
    thin_bits,
    mean_acc,
    cov_acc,
    hist,
    hist_max,
):
    """Advance the per-server system by ``steps`` events; accumulate statistics.

    Parameters
    ----------
    q, perm, arrival_times, head : arrays
        Queue lengths ``q[server]``, rank order (longest first), FIFO ring buffers
        of arrival times ``arrival_times[server, slot]`` with ``head[server]`` the
        oldest slot; all updated in place.  The order within a block of equal
        queue lengths is arbitrary but must be a valid longest-first order.
    clock : float
        Current time; the new time is returned in ``out[N_SCALARS]``.
    rng : uint64[4]
        xoshiro256** state, updated in place.
    steps, lam, d, replacement, policy :
        Number of events, arrival rate per server, servers sampled, sampling
        scheme (pod only), policy code from :data:`POLICIES`.
    s_star, inv_rate, thin_bits, mean_acc, cov_acc :
        As in :func:`mfstein.families.supermarket.aggregated.run`.
    hist : float64[bins]
        Response-time histogram on ``[0, hist_max)`` (added to).
    hist_max : float
        Upper end of the histogram; longer responses are counted in ``RESP_OVER``.

    Returns
    -------
    float64[10]
        The scalars indexed by the module constants, then the new clock.
    """
    b = s_star.shape[0]
    N = q.shape[0]
    lam_n = lam * N
    pos, n = _index(q, perm, b)
    dev = np.empty(b + 1)
    sumsq = 0.0
    for k in range(b):
        dev[k + 1] = n[k + 1] - N * s_star[k]
        sumsq += dev[k + 1] * dev[k + 1]
    tlast = np.zeros(b + 1)
    acc = np.zeros(b + 1)
    sel = np.empty(max(d, 1), dtype=np.int64)
    bins = hist.shape[0]
    scale = bins / hist_max
    thin_mask = low_bits(thin_bits)
    s0, s1, s2, s3 = load_state(rng)
    t = 0.0
    area = 0.0
    t_thin = 0.0
    arrivals = 0
    blocked = 0
    jobs = 0
    resp_sum = 0.0
    resp_over = 0
    # The per-event accounting (holding time w, the areas, the thinned sample, the
    # clock) is the one of mfstein.families.supermarket.aggregated's loops and of
    # sim.generic_kernels' template,
    # written out in each compiled loop on purpose: a helper would return nine
    # loop-carried scalars per event, and the accumulators must stay in registers.
    for _ in range(steps):
        n1 = n[1]
        w = inv_rate[n1]
        area += w * sumsq
        r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
        if (r & thin_mask) == _U64(0):
            t_thin += w
            second_moments(n, w, cov_acc)
        t += w
        # real holding time, exponential with rate lam N + n_1
        r2, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
        u = ((r2 >> _U64(11)) + 1.0) * INV_2_53
        clock += -math.log(u) * w
        v = (r >> _U64(11)) * INV_2_53 * (lam_n + n1)
        if v < n1:
            # departure from a uniformly chosen busy server
            srv = perm[np.int64(v)]
            L = q[srv]
            h = head[srv]
            resp = clock - arrival_times[srv, h]
            head[srv] = h + 1 if h + 1 < b else 0
            jobs += 1
            resp_sum += resp
            bi = np.int64(resp * scale)
            if bi < bins:
                hist[bi] += 1.0
            else:
                resp_over += 1
            # move srv to the last rank of block L, then shrink the block
            _move_to_rank(perm, pos, srv, n[L] - 1)
            k = L
            delta = -1
        else:
            arrivals += 1
            if policy == 1:
                # shortest queue: the last block, ranks [n_{Lmin+1}, N)
                lmin = 0
                while lmin < b and n[lmin + 1] == N:
                    lmin += 1
                lo = n[lmin + 1]
                y, s0, s1, s2, s3 = draw_below(s0, s1, s2, s3, N - lo)
                srv = perm[lo + y]
            elif policy == 2:
                y, s0, s1, s2, s3 = draw_below(s0, s1, s2, s3, N)
                srv = y
            else:
                best = -1
                for j in range(d):
                    if replacement:
                        y, s0, s1, s2, s3 = draw_below(s0, s1, s2, s3, N)
                    else:
                        y, s0, s1, s2, s3 = draw_distinct(s0, s1, s2, s3, N, j, sel)
                    if best < 0 or q[y] < q[best]:
                        best = y
                srv = best
            L = q[srv]
            if L == b:
                blocked += 1
                continue
            arrival_times[srv, (head[srv] + L) % b] = clock
            # move srv to the first rank of block L, then grow block L + 1
            _move_to_rank(perm, pos, srv, n[L + 1])
            k = L + 1
            delta = 1
        q[srv] += delta
        nk = n[k]
        acc[k] += nk * (t - tlast[k])
        tlast[k] = t
        dv = dev[k]
        sumsq += 2.0 * delta * dv + 1.0
        dev[k] = dv + delta
        n[k] = nk + delta
    for k in range(1, b + 1):
        mean_acc[k - 1] += acc[k] + n[k] * (t - tlast[k])
    store_state(rng, s0, s1, s2, s3)
    out = np.empty(N_SCALARS + 1)
    out[TIME] = t
    out[SUMSQ] = area
    out[THIN_TIME] = t_thin
    out[ARRIVALS] = arrivals
    out[BLOCKED] = blocked
    out[EVENTS] = steps
    out[JOBS] = jobs
    out[RESP_SUM] = resp_sum
    out[RESP_OVER] = resp_over
    out[N_SCALARS] = clock
    return out
