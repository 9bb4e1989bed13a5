"""The iterative stationary solver (numeric.exact.solvers.solve_krylov) from all
ones and from the Gaussian start of the central limit gives the sparse-LU
solution; the Gaussian start needs fewer iterations; bad starts are refused."""

from __future__ import annotations

import numpy as np
import pytest

import numeric
from derive import supermarket
from numeric.exact.solvers import gaussian_start, residual, solve_direct, solve_krylov
from numeric.exact.states import monotone_states


@pytest.fixture(scope="module")
def chain(transposed_generator):
    """The supermarket chain with b = 3, d = 2, lam = 0.9 at N = 40 (12,341 states, in
    level order), its mean field's s* and W, and the index of the state nearest N s*."""
    model = supermarket(3, 2)
    space = monotone_states(40, 3)
    QT, _ = transposed_generator(space.states, model.kernels("numba"), [0.9], 40)
    mf = numeric.solve(model, {"lam": "0.9"}, dps=20)
    s = np.array([float(v) for v in mf.s_star])
    W = np.array([[float(mf.W[i, j]) for j in range(3)] for i in range(3)])
    r = int(np.argmin(((space.states - 40 * s) ** 2).sum(axis=1)))
    return QT, space.states, 40 * s, W, r


def test_both_starts_agree_with_lu_and_gaussian_is_faster(chain) -> None:
    QT, states, centre, W, r = chain
    lu = solve_direct(QT, r)
    assert lu.residual < 1e-12
    tol = 1e-11
    ones = solve_krylov(QT, r, tol=tol)
    x0 = gaussian_start(states, centre, 40, W)
    assert x0 is not None and x0.max() == 1.0
    guess = solve_krylov(QT, r, tol=tol, x0=x0)
    for sol in (ones, guess):
        assert sol.residual <= tol
        assert sol.residual == pytest.approx(residual(QT, sol.pi), rel=1e-12)
        # the chain mixes in O(1) time at rates O(N): |pi - pi_LU|_1 well below 1e-7
        assert np.abs(sol.pi - lu.pi).sum() < 1e-7
    assert guess.iterations < ones.iterations, (guess.iterations, ones.iterations)


def test_gaussian_start_refuses_a_non_covariance(chain) -> None:
    _, states, centre, W, _ = chain
    assert gaussian_start(states, centre, 40, -W) is None
    assert gaussian_start(states, centre, 40, np.full((3, 3), np.nan)) is None
    # a singular W (a conservation law) is fine: the pseudo-inverse is used
    P = np.diag([1.0, 1.0, 0.0])
    assert gaussian_start(states, centre, 40, P @ W @ P) is not None


def test_bad_start_and_solver_are_refused(chain) -> None:
    QT, _, _, _, r = chain
    S = QT.shape[0]
    with pytest.raises(ValueError, match="x0"):
        solve_krylov(QT, r, x0=np.ones(S - 1))
    bad = np.ones(S)
    bad[r] = 0.0
    with pytest.raises(ValueError, match="x0"):
        solve_krylov(QT, r, x0=bad)
    with pytest.raises(ValueError, match="solver"):
        solve_krylov(QT, r, solver="cg")


def test_without_replacement_gets_its_start_from_the_mean_field() -> None:
    """The supermarket fast path's covariance (its Gaussian start above 10^5 states,
    and the reported W), for sampling without replacement (an N-dependent model),
    is the mean field's W at that N."""
    from numeric.exact import solve_exact

    model = supermarket(3, 2, replacement=False)
    W = solve_exact(10, "0.9", 3, 2, replacement=False).W
    mf = numeric.solve(model, {"lam": "0.9", "N": "10"}, dps=20)
    assert W is not None and W.shape == (3, 3)
    assert np.allclose(W, [[float(mf.W[i, j]) for j in range(3)] for i in range(3)], rtol=1e-12)


def test_a_start_given_as_a_function_is_made_only_for_an_iterative_solver(chain) -> None:
    """``stationary_checked`` takes the start as a function (the general chain's Gaussian
    start, made lazily): a direct solve never calls it, an iterative one calls it once
    and gives the law the start itself gives."""
    from numeric.exact.general import stationary_checked

    QT, states, centre, W, r = chain
    calls: list[int] = []

    def start() -> np.ndarray | None:
        calls.append(1)
        return gaussian_start(states, centre, 40, W)

    direct = stationary_checked(QT, r, free_dims=3, solver="direct", x0=start)
    assert calls == [] and direct[2] == "direct"
    lazy = stationary_checked(QT, r, free_dims=3, solver="bicgstab", tol=1e-11, x0=start)
    assert calls == [1] and lazy[2] == "bicgstab"
    given = stationary_checked(QT, r, free_dims=3, solver="bicgstab", tol=1e-11, x0=start())
    assert np.array_equal(lazy[0], given[0]) and lazy[3] == given[3]


def test_a_start_made_by_a_function_holds_the_best_iterate(chain, monkeypatch) -> None:
    """At millions of states every vector the solve holds counts (issue 34): a start
    the solver makes itself (from a function, as ``stationary_checked`` passes the
    general chain's Gaussian start) is no one else's, so the best iterate is kept in
    its buffer; a start given as an array is not written over (the iterate is copied).
    Until stop 53 the best iterate was always a copy, a vector more at the peak."""
    import weakref

    from numeric.exact import solvers
    from numeric.exact.general import stationary_checked

    QT, states, centre, W, r = chain
    made: list[weakref.ref] = []

    def start() -> np.ndarray | None:
        x0 = gaussian_start(states, centre, 40, W)
        made.append(weakref.ref(x0))
        return x0

    shared: list[bool] = []
    runs = solvers._runs

    def watched(solver: str, sweep: object, mon: object, max_iter: int) -> None:
        runs(solver, sweep, mon, max_iter)
        buffer = made[-1]()
        shared.append(mon.own and buffer is not None and np.shares_memory(mon.x, buffer))

    monkeypatch.setattr(solvers, "_runs", watched)
    lazy = stationary_checked(QT, r, free_dims=3, solver="bicgstab", tol=1e-11, x0=start)
    assert lazy[2] == "bicgstab" and shared == [True]
    given = gaussian_start(states, centre, 40, W)
    made.append(weakref.ref(given))
    kept = given.copy()
    out = solve_krylov(QT, r, tol=1e-11, x0=given)
    assert shared == [True, False]
    assert np.array_equal(given, kept / kept[r])  # only scaled, as documented
    assert np.array_equal(out.pi, lazy[0])
