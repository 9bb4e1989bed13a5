"""``numeric.exact.prefetch.prefetch`` compiles into numba code for the arrays the
search hands it and changes nothing: a loop that asks for entries ahead of reading
them reads the same values."""

from __future__ import annotations

import numpy as np
import pytest

from mfstein.ground.jit import numba
from numeric.exact.prefetch import prefetch


@numba.njit
def _sum_ahead(a, order, ahead):
    acc = a[0] - a[0]
    for i in range(order.shape[0]):
        if i + ahead < order.shape[0]:
            prefetch(a, order[i + ahead])
        acc += a[order[i]]
    return acc


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_a_prefetch_changes_no_value(dtype: type) -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(-1000, 1000, size=50_000).astype(dtype)
    order = rng.permutation(a.shape[0])
    assert _sum_ahead(a, order, 4) == a[order].sum()  # integers: exact in every dtype
