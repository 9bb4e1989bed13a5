"""How many events the second moments keep: one in ``2^t`` (every engine's thinning).

An event is kept when the low ``t`` bits of its first random word are zero (a
Horvitz--Thompson sum: no bias, only variance; the estimator of
:mod:`mfstein.families.supermarket.aggregated` and of :mod:`sim.generic_kernels`).
Accumulating a kept event costs ``b (b + 1) / 2`` multiply-adds over ``b``
coordinates, so :func:`thin_bits` scales ``t`` with ``b``: the smallest ``t >= 6``
with ``b (b + 1) / 2 <= 2^t`` (about one multiply-add per event), capped at 11 to
keep the keep bits disjoint from the 53 bits that decide the event.

>>> thin_bits(10), thin_bits(11), thin_bits(200)
(6, 7, 11)
"""

from __future__ import annotations

__all__ = ["MAX_THIN_BITS", "THIN_BITS", "thin_bits"]

#: Smallest thinning exponent: second moments use at most one event in 2^6.
THIN_BITS = 6
#: Largest thinning exponent: the keep bits must stay below the 11 bits that
#: the event decision (top 53 bits of the same word) does not use.
MAX_THIN_BITS = 11


def thin_bits(b: int) -> int:
    """Thinning exponent for ``b`` coordinates: smallest ``t >= THIN_BITS`` with
    ``b (b + 1) / 2 <= 2^t``, at most :data:`MAX_THIN_BITS` (module docstring)."""
    t = THIN_BITS
    while t < MAX_THIN_BITS and b * (b + 1) // 2 > (1 << t):
        t += 1
    return t
