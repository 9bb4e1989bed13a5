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

    The state array holds ``b`` int64 throughout.  The search holds ``n_transitions``
    intensities (8 bytes) and targets (4 bytes) per state, a flag and a 32-bit hash
    table at load 1/4 to 1/2 (16 bytes); ``Q^T`` holds ``n_transitions + 1``
    entries per row (value and 32-bit index, 12 bytes each), a row pointer and the
    exit rate (16 bytes), written while the search's arrays are alive (8 bytes of
    counts besides); the intensities and targets are then dropped, and the
    compiled BiCGSTAB holds eight vectors, its start, its best iterate, the
    diagonal, the up-rates and the labels of the closed classes (14 vectors).
    """
    t = n_transitions
    generator = 12 * (t + 1) + 16
    return 8 * b + generator + max(12 * t + 17 + 8, 8 * 14)


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
