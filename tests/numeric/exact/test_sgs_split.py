"""The split symmetric Gauss--Seidel preconditioner of numeric.exact.solvers gives
bit-for-bit the result of the one-matrix sweep it replaced (same operations in the
same order), on the pinned generator of a real chain."""

from __future__ import annotations

import numpy as np

from numeric.exact.solvers import _diagonal, _sgs, _sgs_split, _split_triangles, pinned


def test_split_sweeps_are_identical_to_the_full_sweep() -> None:
    import scipy.sparse as sps

    rng = np.random.default_rng(3)
    n = 400
    Q = sps.random(n, n, density=0.02, random_state=4, format="csr")
    Q = Q + sps.diags(-np.asarray(Q.sum(axis=1)).ravel() - 1.0)
    A = pinned(Q.T.tocsr(), 7)
    diag = _diagonal(A.indptr, A.indices, A.data)
    parts = _split_triangles(A.indptr, A.indices, A.data)
    assert parts[1].size + parts[4].size + n == A.nnz
    for _ in range(3):
        v = rng.standard_normal(n)
        full = _sgs(A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data, diag, v)
        assert np.array_equal(_sgs_split(*parts, diag, v), full)
