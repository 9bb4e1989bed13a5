"""A small, fast, reproducible random-number generator for the compiled simulators.

xoshiro256** (Blackman & Vigna, 2018): 256 bits of state, period ``2^256 - 1``,
passes BigCrush; one output costs a handful of integer instructions, which is
several times cheaper than calling NumPy's generators from numba code.  Each
replication's state is derived from its own ``numpy.random.SeedSequence`` child
(``SeedSequence(seed).spawn(reps)``), so a replication's stream depends only on
the user's seed and the replication index -- not on which process runs it -- and
the state is four integers that a checkpoint can store exactly.

The state lives in a ``uint64[4]`` array between calls; the simulators copy it
into local variables for their inner loops and write it back at the end.
"""

from __future__ import annotations

import numpy as np

from mfstein.ground.jit import numba

_U64 = np.uint64
_MASK32 = np.uint64(0xFFFFFFFF)
#: 2^-53, to turn the top 53 bits of an output into a double in [0, 1).
INV_2_53 = 1.0 / 9007199254740992.0


def seed_states(seed: int, reps: int) -> list[np.ndarray]:
    """Return ``reps`` independent xoshiro256** states from ``SeedSequence(seed).spawn(reps)``.

    Each state is four ``uint64`` words (not all zero) drawn from the child
    sequence's :meth:`~numpy.random.SeedSequence.generate_state`.
    """
    out = []
    for i in range(reps):
        # the i-th child of SeedSequence(seed).spawn(reps), made directly (spawn's own
        # construction of it): the parent's entropy pool is never used, so not mixed
        child = np.random.SeedSequence(seed, spawn_key=(i,))
        st = child.generate_state(4, dtype=np.uint64)
        if not st.any():  # the one forbidden state; probability 2^-256
            st[0] = 1
        out.append(st.astype(np.uint64))
    return out


@numba.njit(inline="always", cache=True)
def _rotl(x, k):
    return (x << _U64(k)) | (x >> _U64(64 - k))


@numba.njit(inline="always", cache=True)
def next_u64(s0, s1, s2, s3):
    """One xoshiro256** step: returns ``(output, s0, s1, s2, s3)`` (all ``uint64``)."""
    result = _rotl(s1 * _U64(5), 7) * _U64(9)
    t = s1 << _U64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, s0, s1, s2, s3


@numba.njit(inline="always", cache=True)
def load_state(state):
    """The four words of a ``uint64[4]`` state, for a loop's local variables."""
    return state[0], state[1], state[2], state[3]


@numba.njit(inline="always", cache=True)
def store_state(state, s0, s1, s2, s3):
    """Write a loop's four state words back into the ``uint64[4]`` array."""
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3


@numba.njit(inline="always", cache=True)
def low_bits(bits):
    """The mask of the low ``bits`` bits of a word (``2^bits - 1``): an event is
    kept by a Bernoulli(``2^-bits``) thinning when those bits of its word are zero."""
    return (_U64(1) << _U64(bits)) - _U64(1)


@numba.njit(cache=True)
def uniforms(state, count):
    """``count`` doubles in ``[0, 1)`` from ``state`` (advances it); for tests."""
    s0, s1, s2, s3 = load_state(state)
    out = np.empty(count)
    for i in range(count):
        r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
        out[i] = (r >> _U64(11)) * INV_2_53
    store_state(state, s0, s1, s2, s3)
    return out


@numba.njit(inline="always", cache=True)
def draw_below(s0, s1, s2, s3, bound):
    """A uniform integer in ``[0, bound)`` from 32 fresh bits (Lemire's method, exact).

    Returns ``(value, s0, s1, s2, s3)``; redraws in the rejection zone
    ``low < 2^32 mod bound`` (probability below ``bound / 2^32``).
    """
    nb = _U64(bound)
    while True:
        r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
        m = (r >> _U64(32)) * nb
        low = m & _MASK32
        if low >= nb or low >= ((_U64(1) << _U64(32)) - nb) % nb:
            return np.int64(m >> _U64(32)), s0, s1, s2, s3


@numba.njit(inline="always", cache=True)
def draw_distinct(s0, s1, s2, s3, N, j, sel):
    """The ``j``-th of ``d`` distinct uniform ranks in ``[0, N)``, given the ``j``
    already drawn in ``sel[:j]`` (sorted): draw from ``[0, N - j)`` and step over
    the taken ranks, then insert the result keeping ``sel[:j+1]`` sorted.

    Returns ``(rank, s0, s1, s2, s3)``.
    """
    y, s0, s1, s2, s3 = draw_below(s0, s1, s2, s3, N - j)
    pos = 0
    while pos < j and sel[pos] <= y:
        y += 1
        pos += 1
    for q in range(j, pos, -1):
        sel[q] = sel[q - 1]
    sel[pos] = y
    return y, s0, s1, s2, s3
