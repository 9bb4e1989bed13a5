"""The one-pass search's lattice (:func:`numeric.exact.small.lattice_points`): every point
of the box ``{0, ..., upper}^b`` that satisfies the conservation laws and lies inside the
state space, in the mixed-radix order of the free coordinates, as a direct enumeration
finds them (laws with unit and other coefficients, fractional values, every kind)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from numeric.exact import small
from numeric.exact.space import KIND_CODES, Lattice

F = Fraction
CASES = [  # kind, upper, total, laws, free, values
    ("simplex", 9, 9, ((F(1), F(1), F(1)),), (1, 2), (F(9),)),
    ("box", 6, 6, ((F(2), F(1), F(-1)),), (1, 2), (F(4),)),
    ("box", 7, 7, ((F(0), F(3), F(1), F(2)),), (0, 2, 3), (F(9),)),
    ("orthant", 8, 8, ((F(1), F(0), F(-1)), (F(0), F(1, 2), F(1, 3))), (2,), (F(1), F(5, 3))),
    ("box", 6, 6, ((F(-1), F(1), F(1)),), (1, 2), (F(2),)),
    ("monotone", 5, 5, (), (0, 1, 2), ()),
    ("simplex", 6, 12, ((F(1, 2), F(1), F(0)),), (1, 2), (F(5, 2),)),
]


def _enumerated(lattice: Lattice, b: int) -> np.ndarray:
    """The points by brute force: the whole box, filtered, sorted by the free digits."""
    box = np.array(list(itertools.product(range(lattice.upper + 1), repeat=b)), dtype=np.int64)
    keep = np.ones(box.shape[0], dtype=bool)
    for row, value in zip(lattice.laws, lattice.values, strict=True):
        keep &= np.array(
            [sum(c * int(x) for c, x in zip(row, p, strict=True)) == value for p in box]
        )
    inside = small._status(box[:, None, :], KIND_CODES[lattice.kind], lattice.upper, lattice.total)
    pts = box[keep & (inside[:, 0] == 1)]
    base = lattice.upper + 1
    code = np.zeros(pts.shape[0], dtype=np.int64)
    for j in lattice.free:
        code = code * base + pts[:, j]
    return pts[np.argsort(code, kind="stable")]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_lattice_points_are_those_of_a_direct_enumeration(case):
    kind, upper, total, laws, free, values = CASES[case]
    b = len(laws[0]) if laws else 3
    lattice = Lattice(N=upper, kind=kind, upper=upper, total=total, truncated=False,
                      laws=laws, free=free, values=values, notes=[])  # fmt: skip
    got = small.lattice_points(lattice, b, 1)
    want = _enumerated(lattice, b)
    assert got is not None and want.shape[0] > 0
    assert got.dtype == np.int64 and np.array_equal(got, want)
