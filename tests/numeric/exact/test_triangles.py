"""Q^T's triangles stored apart in place (numeric.exact.triangles): per block of rows
the entries left of the diagonals, the diagonals, the entries right of them, each row's
entries in CSR order, and the CSR again afterwards; and the compiled kernels on that
layout (numeric.exact.fused) take every row's sum in the row's order, so their results
are those of plain loops over the CSR rows to the last bit."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps

from numeric.exact import fused, triangles

BLOCK = 37  # rows per block: not dividing the states, so a short last block


def _QT(n: int = 300, seed: int = 4) -> sps.csr_matrix:
    """A transposed generator with values spread over many magnitudes (sums in
    another order would round differently)."""
    rng = np.random.default_rng(seed)
    Q = sps.random(n, n, density=0.03, random_state=seed, format="csr")
    Q.data = np.exp(rng.uniform(-8.0, 8.0, Q.data.size))
    Q = Q + sps.diags(-np.asarray(Q.sum(axis=1)).ravel() - 1.0)
    QT = Q.T.tocsr()
    QT.sort_indices()
    return QT


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint64)


def test_the_layout_is_the_csr_triangles_and_the_csr_comes_back() -> None:
    QT = _QT()
    n = QT.shape[0]
    data, indices = QT.data.copy(), QT.indices.copy()
    L, U, D = sps.tril(QT, -1, format="csr"), sps.triu(QT, 1, format="csr"), QT.diagonal()
    with triangles.split(QT, BLOCK) as m:
        ip, ix, dx, lower, upper, dstart, block = m
        assert ip is QT.indptr and block == BLOCK and dstart.size == -(-n // BLOCK)
        for k in range(dstart.size):
            r0, r1 = k * BLOCK, min(n, (k + 1) * BLOCK)
            pl, pu = ip[r0], dstart[k] + (r1 - r0)
            for i in range(r0, r1):
                lo = slice(L.indptr[i], L.indptr[i + 1])
                up = slice(U.indptr[i], U.indptr[i + 1])
                assert (lower[i], upper[i]) == (lo.stop - lo.start, up.stop - up.start)
                assert np.array_equal(ix[pl : pl + lower[i]], L.indices[lo])
                assert np.array_equal(_bits(dx[pl : pl + lower[i]]), _bits(L.data[lo]))
                assert ix[dstart[k] + i - r0] == i
                assert dx[dstart[k] + i - r0] == D[i]
                assert np.array_equal(ix[pu : pu + upper[i]], U.indices[up])
                assert np.array_equal(_bits(dx[pu : pu + upper[i]]), _bits(U.data[up]))
                pl, pu = pl + lower[i], pu + upper[i]
        assert not np.array_equal(QT.indices, indices)  # rearranged in place
    assert np.array_equal(QT.indices, indices) and np.array_equal(_bits(QT.data), _bits(data))


def test_the_csr_comes_back_after_an_exception() -> None:
    QT = _QT()
    data, indices = QT.data.copy(), QT.indices.copy()
    with pytest.raises(KeyboardInterrupt), triangles.split(QT, BLOCK):
        raise KeyboardInterrupt
    assert np.array_equal(QT.indices, indices) and np.array_equal(_bits(QT.data), _bits(data))


def test_a_row_without_its_diagonal_gets_an_explicit_zero_in_a_copy() -> None:
    QT = _QT(60)
    QT.data[QT.indptr[5] : QT.indptr[6]][QT.indices[QT.indptr[5] : QT.indptr[6]] == 5] = 0.0
    QT.eliminate_zeros()
    before = QT.copy()
    x = np.random.default_rng(2).random(60)
    with triangles.split(QT, 8) as m:
        assert m[2] is not QT.data and m[1][m[5][0] + 5] == 5 and m[2][m[5][0] + 5] == 0.0
        out = np.empty(60)
        fused.matvec(m, 59, x, out)
        assert np.array_equal(QT.indices, before.indices)  # the caller's matrix untouched
    want = before @ x
    want[59] = x[59]
    assert np.allclose(out, want, rtol=1e-13, atol=0.0)


def _rows(QT: sps.csr_matrix, i: int) -> list[tuple[int, float]]:
    return list(
        zip(
            QT.indices[QT.indptr[i] : QT.indptr[i + 1]].tolist(),
            QT.data[QT.indptr[i] : QT.indptr[i + 1]].tolist(),
            strict=True,
        )
    )


def _plain(QT: sps.csr_matrix, r: int, x: np.ndarray) -> dict[str, np.ndarray | float]:
    """Plain loops over the CSR rows, each row's entries in order: ``A x``, the
    forward sweep ``(D + L)^-1 x``, the backward ``(D + U)^-1 D x`` (the entries
    right of the diagonal from the last) and the normalised residual."""
    n = QT.shape[0]
    rows = [_rows(QT, i) for i in range(n)]
    Ax, fw, bw = np.empty(n), np.empty(n), np.empty(n)
    for i, row in enumerate(rows):
        acc = 0.0
        for j, a in row:
            acc += a * x[j]
        Ax[i] = acc
    Ax[r] = x[r]
    for i, row in enumerate(rows):
        acc = x[i]
        for j, a in row:
            if j < i:
                acc -= a * fw[j]
        fw[i] = x[i] if i == r else acc / dict(row)[i]
    for i in range(n - 1, -1, -1):
        acc, d = 0.0, dict(rows[i])[i]
        for j, a in reversed(rows[i]):
            if j > i:
                acc += a * bw[j]
        bw[i] = x[i] if i == r else (d * x[i] - acc) / d
    total = 0.0
    for v in x.tolist():
        if v > 0.0:
            total += v
    res = 0.0
    for row in rows:
        s = 0.0
        for j, a in row:
            if x[j] > 0.0:
                s += a * (x[j] / total)
        res += abs(s)
    return {"matvec": Ax, "forward": fw, "backward": bw, "residual": res}


def test_the_kernels_sum_each_row_in_its_csr_order_bit_for_bit() -> None:
    """Fails if the layout changed the order of a row's entries (or a kernel read
    them in another order): the values' magnitudes differ by up to e^16, so another
    order rounds differently."""
    QT, r = _QT(), 17
    n = QT.shape[0]
    x = np.random.default_rng(8).uniform(-0.2, 1.0, n)
    want = _plain(QT, r, x)
    got = {k: np.empty(n) for k in ("matvec", "forward", "backward")}
    with triangles.split(QT, BLOCK) as m:
        fused.matvec(m, r, x, got["matvec"])
        fused.forward(m, r, x, got["forward"], got["forward"], x, x, False)
        fused.unsplit(m, r, x, got["backward"])
        residual = fused.normalised_residual(m, x, np.empty(n))
    for k, v in got.items():
        assert np.array_equal(_bits(v), _bits(want[k])), k
    assert residual == want["residual"]


def _wide(QT: sps.csr_matrix, i: int) -> sps.csr_matrix:
    """``QT`` with row ``i`` full (a value in every column): more than 255 entries on
    each side of its diagonal, so the layout counts in int32, not in bytes."""
    rng = np.random.default_rng(11)
    n = QT.shape[0]
    row = sps.csr_matrix((np.exp(rng.uniform(-8.0, 8.0, n)), ([i] * n, range(n))), shape=QT.shape)
    out = (QT + row).tocsr()
    out.sort_indices()
    return out


@pytest.mark.slow  # compiles every kernel for these types: some 15 s
def test_the_kernels_read_the_layouts_other_index_types() -> None:
    """The kernels index with unsigned positions (``fused.U``), converted from the
    layout's integer types; besides the usual ones (32-bit columns, 64-bit row
    pointers, byte counts, the test above) 64-bit columns and row pointers (a chain
    of 2^31 entries or more) and int32 counts (a row with more than 255 entries on a
    side).  Each result equals the plain loops' to the last bit, and a BiCGSTAB
    run's vectors are the bits of the same run on 32-bit columns and row pointers."""
    QT, r = _wide(_QT(600, seed=5), 300), 17
    columns = np.int64
    QT.indices, QT.indptr = QT.indices.astype(columns), QT.indptr.astype(columns)
    n = QT.shape[0]
    x = np.random.default_rng(8).uniform(-0.2, 1.0, n)
    want = _plain(QT, r, x)
    got = {k: np.empty(n) for k in ("matvec", "forward", "backward")}
    vectors = [np.empty(n) for _ in range(7)]
    with triangles.split(QT, BLOCK) as m:
        assert m[1].dtype == columns and m[4].dtype == np.int32
        fused.matvec(m, r, x, got["matvec"])
        fused.forward(m, r, x, got["forward"], got["forward"], x, x, False)
        fused.unsplit(m, r, x, got["backward"])
        residual = fused.normalised_residual(m, x, np.empty(n))
        sc = np.empty(4)
        fused.split_start(m, r, np.ones(n), *vectors[:5], sc)
        norms = [fused.split_step(m, r, *vectors, sc) for _ in range(3)]
    for k, v in got.items():
        assert np.array_equal(_bits(v), _bits(want[k])), k
    assert residual == want["residual"]
    QT.indices, QT.indptr = QT.indices.astype(np.int32), QT.indptr.astype(np.int32)
    again = [np.empty(n) for _ in range(7)]
    with triangles.split(QT, BLOCK) as m:
        sc = np.empty(4)
        fused.split_start(m, r, np.ones(n), *again[:5], sc)
        assert [fused.split_step(m, r, *again, sc) for _ in range(3)] == norms
    for a, b in zip(vectors[:6], again[:6], strict=True):
        assert np.array_equal(_bits(a), _bits(b))
