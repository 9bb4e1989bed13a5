"""The wrapper-free dense float64 calls give the wrapped calls' numbers bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg

from numeric.linalg.lyapunov import real_schur, solve_lyapunov64
from numeric.linalg.small import (
    eigenvalues_quiet,
    singular_values_quiet,
    solve_vector_quiet,
    symmetric_eigenvalues_quiet,
)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 33, 90])
def test_real_schur_is_scipys(n: int) -> None:
    rng = np.random.default_rng(n)
    for scale in (1e-8, 1.0, 1e6):
        A = rng.standard_normal((n, n)) * scale
        T, Z = real_schur(A)
        T0, Z0 = scipy.linalg.schur(A, output="real")
        assert np.array_equal(T, T0) and np.array_equal(Z, Z0)
        T, Z = real_schur(np.asfortranarray(A))  # another memory order: the same numbers
        assert np.array_equal(T, T0) and np.array_equal(Z, Z0)


def test_real_schur_refuses_what_scipy_refuses() -> None:
    A = np.eye(3)
    A[1, 2] = np.nan
    with pytest.raises(ValueError, match="infs or NaNs"):
        real_schur(A)
    T, Z = real_schur(np.zeros((0, 0)))  # an empty matrix: SciPy's own answer
    assert T.shape == (0, 0) and Z.shape == (0, 0)


def test_real_schur_of_huge_finite_entries_warns_of_nothing() -> None:
    # entries whose sum overflows are finite: no error and no NumPy overflow warning
    A = np.array([[1e308, 1e308], [0.0, 1e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        T, Z = real_schur(A)
    T0, Z0 = scipy.linalg.schur(A, output="real")
    assert np.array_equal(T, T0) and np.array_equal(Z, Z0)


def test_lyapunov_solves_its_equation() -> None:
    rng = np.random.default_rng(5)
    J = rng.standard_normal((8, 8)) - 6 * np.eye(8)
    Q = rng.standard_normal((8, 8))
    Q = Q @ Q.T
    X = solve_lyapunov64(J, -Q)
    assert np.abs(J @ X + X @ J.T + Q).max() < 1e-12 * np.abs(Q).max()
    assert np.array_equal(X, solve_lyapunov64(J.copy(), -Q))


@pytest.mark.parametrize("n", [1, 2, 5, 10, 40])
def test_solve_vector_is_numpys(n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(20):
        A, b = rng.standard_normal((n, n)), rng.standard_normal(n)
        assert np.array_equal(solve_vector_quiet(A, b), np.linalg.solve(A, b))


def test_solve_vector_raises_and_falls_back_as_numpy() -> None:
    with np.errstate(all="ignore"), pytest.raises(np.linalg.LinAlgError):
        solve_vector_quiet(np.ones((3, 3)), np.ones(3))  # singular
    A = np.array([[2, 1], [1, 3]])  # integers: NumPy's wrapper answers
    assert np.array_equal(solve_vector_quiet(A, np.array([1, 2])), np.linalg.solve(A, [1, 2]))
    huge = np.array([[1e-300, 0.0], [0.0, 1.0]])
    with np.errstate(all="ignore"):
        x = solve_vector_quiet(huge, np.array([1e300, 1.0]))  # overflows: NumPy's inf
        assert np.array_equal(x, np.linalg.solve(huge, np.array([1e300, 1.0])))


@pytest.mark.parametrize("shape", [(10, 20), (1, 1), (40, 7), (0, 3)])
def test_csr_times_is_scipys_product(shape: tuple[int, int]) -> None:
    import scipy.sparse as sps

    from numeric.linalg.small import csr_times

    rng = np.random.default_rng(shape[0])
    for density in (0.0, 0.2, 1.0):
        A = sps.random(*shape, density=density, format="csr", random_state=rng) * 1e3
        x = rng.standard_normal(shape[1]) * np.exp(rng.normal(0, 20, shape[1]))
        assert np.array_equal(csr_times(A, x), A @ x)


def test_csr_times_hands_the_unusual_to_scipy() -> None:
    import scipy.sparse as sps

    from numeric.linalg.small import csr_times

    A = sps.csr_matrix(np.array([[1, 0, 2], [0, 3, 0]]))  # integers
    x = np.array([1.5, -2.0, 0.25])
    for B in (A, A.tocsc(), A.astype(float)):
        assert np.array_equal(csr_times(B, x), B @ x)
        assert np.array_equal(csr_times(B, x[::-1].copy()[::-1]), B @ x)  # not contiguous
    with pytest.raises(ValueError):
        csr_times(A.astype(float), np.ones(2))  # the operator's own refusal


def test_max_abs_reads_nan_and_empty_as_numpy() -> None:
    from numeric.meanfield.acceptance import max_abs

    a = np.array([[1.0, -3.5], [2.0, 0.0]])
    assert max_abs(a) == 3.5 and max_abs(np.zeros(0)) == 0.0
    a[1, 1] = np.nan
    assert np.isnan(max_abs(a)) and np.isnan(np.abs(a).max())


def test_csr_product_bound_once_is_the_operators_product() -> None:
    """``csr_product(A)`` checks ``A`` once and gives ``A @ x`` bit for bit for every
    ``x`` after, handing an unusual ``x`` (not contiguous, integers, the wrong
    length) to the operator, which answers or refuses as before."""
    import scipy.sparse as sps

    from numeric.linalg.small import csr_product

    rng = np.random.default_rng(7)
    A = sps.random(12, 30, density=0.3, format="csr", random_state=rng)
    times = csr_product(A)
    for _ in range(5):
        x = rng.standard_normal(30) * np.exp(rng.normal(0, 20, 30))
        assert np.array_equal(times(x), A @ x)
        assert np.array_equal(times(x[::-1].copy()[::-1]), A @ x)
    assert np.array_equal(times(np.arange(30)), A @ np.arange(30))
    with pytest.raises(ValueError):
        times(np.ones(29))
    B = A.tocsc()  # another format: the operator itself
    assert np.array_equal(csr_product(B)(x), B @ x)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """The same dtype, shape and numbers, bit for bit."""
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 33])
def test_eigenvalues_and_singular_values_are_numpys(n: int) -> None:
    """Real and complex spectra, symmetric matrices, another memory order: the
    wrapper-free calls give NumPy's arrays (real eigenvalues as a real array)."""
    rng = np.random.default_rng(n)
    for scale in (1e-8, 1.0, 1e6):
        A = rng.standard_normal((n, n)) * scale
        S = A + A.T
        upper = np.triu(A)  # real eigenvalues: its diagonal
        for X in (A, S, upper, np.asfortranarray(A)):
            assert _same(eigenvalues_quiet(X), np.linalg.eigvals(X))
            assert _same(singular_values_quiet(X), np.linalg.svd(X, compute_uv=False))
        assert _same(symmetric_eigenvalues_quiet(S), np.linalg.eigvalsh(S))
    assert eigenvalues_quiet(np.triu(A)).dtype == np.float64
    if n > 1:
        rot = np.array([[0.0, -1.0], [1.0, 0.0]])
        assert _same(eigenvalues_quiet(rot), np.linalg.eigvals(rot))
        assert eigenvalues_quiet(rot).dtype == np.complex128


def test_eigenvalues_and_singular_values_hand_the_unusual_to_numpy() -> None:
    """A non-finite entry raises NumPy's error; an empty, a
    non-square or an integer matrix is NumPy's answer."""
    A = np.eye(3)
    A[1, 2] = np.inf
    with pytest.raises(np.linalg.LinAlgError):
        eigenvalues_quiet(A)
    big = np.full((2, 2), 1e308)  # every entry finite, their sum not: NumPy answers
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the overflowing sum warns nothing
        assert _same(eigenvalues_quiet(big), np.linalg.eigvals(big))
        assert _same(singular_values_quiet(big), np.linalg.svd(big, compute_uv=False))
    for X in (np.zeros((0, 0)), np.ones((2, 3)), np.eye(3, dtype=int)):
        assert _same(singular_values_quiet(X), np.linalg.svd(X, compute_uv=False))
    ints = np.array([[2, 1], [1, 2]])
    assert _same(eigenvalues_quiet(ints), np.linalg.eigvals(ints))
    assert _same(symmetric_eigenvalues_quiet(ints), np.linalg.eigvalsh(ints))


def test_max_abs_is_numpys_reduction() -> None:
    """max_abs reads short float64 vectors on Python floats: the same float as NumPy's
    ``max(abs(a))`` for every size, sign and special value (NaN anywhere gives NaN,
    both infinities give inf), and long, 2-d, float32 and empty arrays as before."""
    from numeric.meanfield.acceptance import SHORT, max_abs

    rng = np.random.default_rng(5)
    cases = [rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300) for n in (1, 2, 10, SHORT)]
    cases += [rng.standard_normal(SHORT + 1), rng.standard_normal((4, 5)), np.zeros(3)]
    cases += [np.array([-0.0, 0.0]), np.array([1e308, 1e308, -1e308]), np.float32([1.5, -2.5])]
    cases += [np.array([-np.inf, np.inf]), np.array([1.0, -np.inf])]
    for pos in (0, 4, 9):
        x = rng.standard_normal(10)
        x[pos] = np.nan
        cases.append(x)
    for a in cases:
        got, want = max_abs(a), float(np.max(np.abs(a)))
        assert type(got) is float
        assert got == want or (np.isnan(got) and np.isnan(want)), a
    assert max_abs(np.zeros(0)) == 0.0


def test_finite_entries_whose_sum_overflows_are_finite() -> None:
    """The short checks read the sum of the entries; a sum that overflows is looked
    at entry by entry, so finite entries still take the wrapper-free path (the same
    numbers as NumPy's and SciPy's) and non-finite ones are still refused."""
    from numeric.linalg.small import _finite

    big = np.array([1e308, 1e308, -1.0])
    assert _finite(big) and _finite(big.astype(complex))
    assert not _finite(np.array([1.0, np.inf, -np.inf])) and not _finite(np.array([np.nan]))
    assert not _finite(np.array([1.0, complex(0.0, np.nan)]))
    A = np.diag([1e308, 1e308, 2.0])
    A[0, 1] = -1e308
    assert _same(eigenvalues_quiet(A), np.linalg.eigvals(A))
    assert _same(singular_values_quiet(A), np.linalg.svd(A, compute_uv=False))
    S = np.diag([1e308, 1e308, -3.0])
    assert _same(symmetric_eigenvalues_quiet(S), np.linalg.eigvalsh(S))
    T, Z = real_schur(A)
    T0, Z0 = scipy.linalg.schur(A, output="real")
    assert np.array_equal(T, T0) and np.array_equal(Z, Z0)
    x = solve_vector_quiet(np.eye(3), np.array([1e308, 1e308, 1.0]))
    assert _same(x, np.linalg.solve(np.eye(3), np.array([1e308, 1e308, 1.0])))
    A[2, 2] = np.nan
    with pytest.raises(ValueError, match="infs or NaNs"):
        real_schur(A)
    with pytest.raises(np.linalg.LinAlgError):
        eigenvalues_quiet(A)
