"""The memory plan of an exact solve: bytes per state, the limit, and the refusal.

Every exact solve knows an upper bound on its number of states before any
array grows (the supermarket's ``C(N + b, b)``, the general lattice's bound);
:func:`check_size` turns it into bytes with :func:`bytes_per_state` and refuses,
with one sentence naming ``N``, ``b``, the states and the memory, a problem
above the limit (:func:`memory_limit_bytes`: the caller's, else
:func:`mfstein.ground.limits.memory_cap`, the one memory policy) or above
:data:`mfstein.ground.limits.EXACT_MAX_STATES`.
"""

from __future__ import annotations

from typing import Any

from mfstein.ground.errors import ParameterError, check_int
from mfstein.ground.limits import EXACT_MAX_STATES, human_bytes, memory_cap


def check_exact_N(N: Any) -> int:
    """``N`` of an exact solve: an integer from 1 to :data:`mfstein.ground.limits.EXACT_MAX_STATES`,
    the bound of ``mfstein exact --N`` (one rule for the command and the Python
    entries), so that an ``N`` such as ``10**30`` is refused in one sentence
    before it reaches the lattice's int64 arrays.  A Python ``int`` in range is
    returned as it is, without loading the number parser
    (:func:`mfstein.ground.numbers.parse_integer`, some 0.4 ms of a first call)."""
    if type(N) is int and 1 <= N <= EXACT_MAX_STATES:
        return N
    return check_int("N", N, 1, EXACT_MAX_STATES)


def bytes_per_state(b: int, n_transitions: int) -> int:
    """Planned peak memory per state of one solve (see ``benchmarks/bench_exact_scale.py``).

    The state array holds ``b`` int64 throughout, and ``Q^T``, once assembled, up to
    ``n_transitions + 1`` entries per row (value and 32-bit index, 12 bytes each) and a
    32-bit row pointer (4 bytes).  Beside them, at the larger of two peaks:

    * the assembly: the search's intensities (8 bytes per transition) and targets (4)
      while ``Q^T`` is written (the search's flags and its 32-bit hash table, at load
      1/4 to 1/2, 17 bytes at most, are dropped before it);
    * the solve: the up-rates (8 bytes) and the labels of the closed classes (4), the
      counts of each row's entries left and right of its diagonal
      (:mod:`numeric.exact.triangles`, 2), and the compiled BiCGSTAB's seven vectors
      and its start, which then holds its best iterate (64).

    The exit rates are not kept (read off ``Q^T``'s diagonal after the solve).  Until
    stop 53 the plan left out the counts and counted an exit rate, a 64-bit row pointer
    and a ninth vector the solve no longer holds: 236 bytes for the supermarket with
    ``b = 3`` (6 transitions), where it is 190 now, against 187 measured (the slope of
    the peak from 0.3 to 3.0 million states).
    """
    t = n_transitions
    generator = 12 * (t + 1) + 4
    return 8 * b + generator + max(12 * t, 8 + 4 + 2 + 8 * 8)


def _count(states: int) -> str:
    return f"{states:,}" if states < 10**15 else f"about 10^{len(str(states)) - 1}"


def memory_limit_bytes(limit: float | None) -> int:
    """The memory limit: ``limit`` bytes, or the one memory policy
    (:func:`mfstein.ground.limits.memory_cap`)."""
    if limit is None:
        return memory_cap()
    if not (limit > 0 and limit < float("inf")):
        raise ParameterError(
            f"memory_limit must be a positive, finite number of bytes, got {limit!r}."
        )
    return int(limit)


def check_size(N: int, b: int, states: int, n_transitions: int, limit: float | None) -> int:
    """Raise :class:`ParameterError` if ``states`` would need more memory than the limit.

    Returns the memory estimate in bytes.
    """
    need = states * bytes_per_state(b, n_transitions)
    cap = memory_limit_bytes(limit)
    if need > cap:
        raise ParameterError(
            f"N={N}, b={b} gives {_count(states)} states, needing about {human_bytes(need)}; "
            f"the limit is {human_bytes(cap)}."
        )
    if states > EXACT_MAX_STATES:
        raise ParameterError(
            f"N={N}, b={b} gives {_count(states)} states; the exact solver handles at most "
            f"{EXACT_MAX_STATES:,} (beyond, the iterative solver does not reach its residual "
            "target in reasonable time): lower N or b, or simulate."
        )
    return need
