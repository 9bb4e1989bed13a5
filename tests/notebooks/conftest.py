"""Independent float64 reference for the notebook tests (SciPy, not numeric).

Everything here is rebuilt from the core paper's model equations (eq. (1)) with NumPy
and SciPy, deliberately without numeric's shooting, Lyapunov or refined-bias code,
so that the numbers the notebooks print are checked by a second route:

- ``s*``: Newton's method (``scipy.optimize.root``, ``hybr``) on the drift
  ``f_k(s) = lam (s_{k-1}^d - s_k^d) - (s_k - s_{k+1})``, ``s_0 = 1``,
  ``s_{b+1} = 0``, started from the infinite-buffer point ``lam^((d^k-1)/(d-1))``;
- ``J``: the tridiagonal Jacobian ``J_{k,k-1} = lam d s_{k-1}^{d-1}``,
  ``J_kk = -lam d s_k^{d-1} - 1``, ``J_{k,k+1} = 1``;
- ``Q = diag(lam (s_{k-1}^d - s_k^d) + s_k - s_{k+1})`` (``= 2 F~``);
- ``P`` and ``W`` by Bartels--Stewart (``scipy.linalg.solve_continuous_lyapunov``);
- the literal Kronecker form of Theorem 1 with ``numpy.kron``;
- the refined bias ``V = -J^{-1} h``, ``h_k = 1/2 sum_ij d^2 f_k/ds_i ds_j W_ij``;
- sampling ``d`` distinct servers (``N`` given): ``s^d`` becomes
  ``C(N s, d) / C(N, d)`` everywhere above;
- the finite-N chain's stationary moments from a sparse generator matrix built
  here (:func:`exact_moments`), for the exact solver's numbers.

The tests compare at relative tolerances of 1e-8 to 1e-12: float64 with condition
numbers of at most ~1e3 here (``1 - lam >= 0.006``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize


@dataclass
class Reference:
    lam: float
    b: int
    d: int
    s: np.ndarray
    J: np.ndarray
    Q: np.ndarray
    P: np.ndarray
    W: np.ndarray
    V: np.ndarray

    @property
    def constant(self) -> float:
        """``c = tr(P Q)`` (Theorem 1, corrected sign)."""
        return float(np.trace(self.P @ self.Q))

    @property
    def ftilde(self) -> np.ndarray:
        return np.diag(self.Q) / 2

    def printed_kronecker(self) -> float:
        """Theorem 1 as printed: ``2 vec(F~)^T (J^T (x) I + I (x) J^T)^-1 vec(I)``."""
        eye = np.eye(self.b)
        K = np.kron(self.J.T, eye) + np.kron(eye, self.J.T)
        x = np.linalg.solve(K, eye.reshape(-1, order="F"))
        return float(2 * np.diag(self.ftilde).reshape(-1, order="F") @ x)


def _sampling(d: int, N: int | None) -> np.polynomial.Polynomial:
    """Probability that ``d`` sampled servers all hold >= k jobs, as a polynomial in ``s_k``.

    With replacement ``x^d``; ``d`` distinct servers out of ``N``:
    ``C(N x, d) / C(N, d) = prod_{i<d} (N x - i) / (N - i)``.
    """
    x = np.polynomial.Polynomial([0.0, 1.0])
    if N is None:
        return x**d
    g = np.polynomial.Polynomial([1.0])
    for i in range(d):
        g = g * (N * x - i) / (N - i)
    return g


def _padded(s: np.ndarray) -> np.ndarray:
    return np.concatenate([[1.0], s, [0.0]])


def _drift(s: np.ndarray, lam: float, g: np.polynomial.Polynomial) -> np.ndarray:
    t = _padded(s)
    return lam * (g(t[:-2]) - g(t[1:-1])) - (t[1:-1] - t[2:])


def _jacobian(s: np.ndarray, lam: float, g: np.polynomial.Polynomial) -> np.ndarray:
    b = len(s)
    t = _padded(s)
    dg = g.deriv()
    J = np.zeros((b, b))
    for k in range(b):
        J[k, k] = -lam * dg(t[k + 1]) - 1.0
        if k > 0:
            J[k, k - 1] = lam * dg(t[k])
        if k < b - 1:
            J[k, k + 1] = 1.0
    return J


def reference(lam: float, b: int, d: int = 2, N: int | None = None) -> Reference:
    """Mean-field objects in float64; ``N`` given means sampling without replacement."""
    g = _sampling(d, N)
    k = np.arange(1, b + 1)
    start = lam ** ((d**k - 1) / (d - 1)) if d > 1 else lam**k
    s = scipy.optimize.root(_drift, start, args=(lam, g), jac=_jacobian, method="hybr").x
    for _ in range(3):  # Newton polish; hybr may stop a few ulps short
        s = s - np.linalg.solve(_jacobian(s, lam, g), _drift(s, lam, g))
    assert np.max(np.abs(_drift(s, lam, g))) < 1e-14
    t = _padded(s)
    J = _jacobian(s, lam, g)
    Q = np.diag(lam * (g(t[:-2]) - g(t[1:-1])) + t[1:-1] - t[2:])
    P = scipy.linalg.solve_continuous_lyapunov(J.T, -np.eye(b))
    W = scipy.linalg.solve_continuous_lyapunov(J, -Q)
    # Hessian of f_k: d^2/ds_{k-1}^2 = lam g''(s_{k-1}), d^2/ds_k^2 = -lam g''(s_k).
    d2g = g.deriv(2)
    h = np.zeros(b)
    for i in range(b):
        h[i] = -lam * d2g(t[i + 1]) * W[i, i]
        if i > 0:
            h[i] += lam * d2g(t[i]) * W[i - 1, i - 1]
    h /= 2
    V = -np.linalg.solve(J, h)
    return Reference(lam=lam, b=b, d=d, s=s, J=J, Q=Q, P=P, W=W, V=V)


@pytest.fixture(scope="session")
def mean_field_reference():
    """The function :func:`reference` (``lam, b, d, N=None -> Reference``), for the tests."""
    return reference


def exact_moments(
    N: int, lam: float, b: int, d: int, s_star: np.ndarray, replacement: bool = True
) -> dict[str, object]:
    """``N E||S - s*||^2``, ``N (E[S] - s*)`` and ``N Cov(S)`` of the finite-N chain.

    The stationary distribution comes from a generator matrix built here.

    States are the occupancy counts ``N >= n_1 >= ... >= n_b >= 0``; an arrival
    raises ``n_k`` at rate ``N lam ((n_{k-1}/N)^d - (n_k/N)^d)`` (``n_0 = N``), a
    departure lowers it at rate ``n_k - n_{k+1}`` (``n_{b+1} = 0``); the core paper, eq. (1)
    with sampling with replacement (``x^d``), or ``C(n_k, d)/C(N, d)`` in place of
    ``(n_k/N)^d`` without.  Meant for a few thousand states.
    """
    import itertools

    import scipy.sparse
    import scipy.sparse.linalg

    g = _sampling(d, None if replacement else N)
    states = [
        n
        for n in itertools.product(range(N + 1), repeat=b)
        if all(n[i] >= n[i + 1] for i in range(b - 1))
    ]
    index = {n: i for i, n in enumerate(states)}
    rows, cols, vals = [], [], []
    for i, n in enumerate(states):
        full = (N, *n, 0)
        for k in range(1, b + 1):
            up = N * lam * (g(full[k - 1] / N) - g(full[k] / N))
            if up > 0:
                m = list(n)
                m[k - 1] += 1
                rows.append(i), cols.append(index[tuple(m)]), vals.append(up)
            down = full[k] - full[k + 1]
            if down > 0:
                m = list(n)
                m[k - 1] -= 1
                rows.append(i), cols.append(index[tuple(m)]), vals.append(float(down))
    size = len(states)
    Q = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(size, size))
    Q = Q - scipy.sparse.diags(np.asarray(Q.sum(axis=1)).ravel())
    A = Q.T.tolil()
    A[0, :] = 1.0  # replace one balance equation by the normalisation
    rhs = np.zeros(size)
    rhs[0] = 1.0
    pi = scipy.sparse.linalg.spsolve(A.tocsc(), rhs)
    S = np.array(states, dtype=float) / N
    mean = pi @ S
    dev = S - mean
    return {
        "n_mse": float(N * pi @ np.sum((S - s_star) ** 2, axis=1)),
        "n_bias": N * (mean - s_star),
        "n_cov": N * (dev.T * pi) @ dev,
    }


@pytest.fixture(scope="session")
def exact_reference():
    """The function :func:`exact_moments`, for the tests."""
    return exact_moments
