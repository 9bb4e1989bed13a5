"""Large buffers: tail truncation, the iterative Lyapunov route, lam > 1, float64 at b = 1000."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from mfstein.families.supermarket.solver import solve_supermarket, truncation_level
from numeric import bound, constant_float64


# b = 1000 (~10 s each at 50 digits) is the same check at five times the buffer:
# the b = 200 cases keep it in the default tier (truncated well below 200)
@pytest.mark.parametrize("b", [200, pytest.param(1000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("lam", ["0.9", "0.999"])
def test_truncated_b_equals_auto_to_all_digits(lam: str, b: int) -> None:
    """Tail truncation is exact to the digits claimed: b = 200 and b = 1000 at 50
    digits give b = "auto"'s constant (a separate, untruncated solve of the
    smallest buffer beyond which c no longer changes)."""
    r = solve_supermarket(lam, b, dps=50)
    a = bound(lam, "auto", dps=50)
    assert r.truncated_at is not None and r.truncated_at < b
    assert a.n < 200 and a.truncated_at is None
    assert r.n == b and len(r.s_star) == b and len(r.V) == b and r.W.rows == b
    assert r.digits == 50 and a.digits == 50
    with mpmath.workdps(60):
        assert abs(r.constant - a.constant) <= mpmath.mpf(10) ** -50 * a.constant


@pytest.mark.parametrize("lam", ["0.9", "0.99"])
def test_truncation_against_the_full_system(lam: str) -> None:
    """All 40 levels solved (shooting) against the truncated head: c, s*, W, V agree."""
    full = solve_supermarket(lam, 40, dps=40, truncate=False)
    cut = solve_supermarket(lam, 40, dps=40)
    K = cut.truncated_at
    assert full.truncated_at is None and K is not None and K < 40
    with mpmath.workdps(50):
        eps = mpmath.mpf(10) ** -40
        assert abs(full.constant - cut.constant) <= eps * full.constant
        scale = max(abs(x) for x in full.s_star)
        assert max(abs(x - y) for x, y in zip(full.s_star, cut.s_star, strict=True)) <= eps * scale
        wmax = max(abs(full.W[i, j]) for i in range(40) for j in range(40))
        assert max(abs(full.W[i, j] - cut.W[i, j]) for i in range(40) for j in range(40)) <= (
            eps * wmax
        )
        vmax = max(abs(x) for x in full.V)
        assert max(abs(x - y) for x, y in zip(full.V, cut.V, strict=True)) <= eps * vmax
        # the tail really is negligible, not merely equal by construction
        assert all(cut.s_star[k] < mpmath.mpf(10) ** -50 for k in range(K, 40))


def test_no_truncation_where_the_tail_matters() -> None:
    assert truncation_level("1.2", 500, 2, wp=40) is None  # lam > mu: levels near 1
    assert truncation_level("0.9", 500, 1, wp=40) is None  # d = 1: coupling lam
    assert truncation_level("0.9", 500, 2, wp=40, N=100) is None  # without replacement
    assert truncation_level("0.9", 5, 2, wp=40) is None  # b below the cut


def test_iterative_route_against_shooting_lam_above_one(monkeypatch) -> None:
    """lam = 1.2, b = 60: the iterative routes (O(b^2) per sweep) against the
    shooting routes forced on the same system."""
    import importlib

    # the module, not the lazy export
    nb = importlib.import_module("mfstein.families.supermarket.solver")

    it = solve_supermarket("1.2", 60, dps=40)
    assert set(it.routes) == {"iterative", "covariance"} and it.digits == 40
    monkeypatch.setattr(nb, "DIRECT_MAX_B", 100)
    sh = solve_supermarket("1.2", 60, dps=40, routes=("shooting", "covariance"))
    assert set(sh.routes) == {"shooting", "covariance"}
    with mpmath.workdps(50):
        assert abs(it.constant - sh.constant) <= mpmath.mpf(10) ** -40 * sh.constant
        pmax = max(abs(sh.P[i, j]) for i in range(60) for j in range(60))
        dmax = max(abs(it.P[i, j] - sh.P[i, j]) for i in range(60) for j in range(60))
        assert dmax <= mpmath.mpf(10) ** -40 * pmax


def test_iterative_solver_residual_with_general_rates() -> None:
    """mu = 2 (super-diagonal 2, not 1) and a dense M: both equations solved to wp."""
    from numeric.linalg.tridiagonal import solve_iterative

    sol = solve_supermarket(
        "1.5",
        50,
        dps=30,
        mu=2,
        truncate=False,
        M=lambda b: mpmath.matrix(
            [[mpmath.mpf(1) / (1 + i + j) for j in range(b)] for i in range(b)]
        ),
    )
    with mpmath.workdps(40):
        J, Q = sol.J, sol.Q
        M = mpmath.matrix([[mpmath.mpf(1) / (1 + i + j) for j in range(50)] for i in range(50)])
        P, _ = solve_iterative(J, M)
        W, _ = solve_iterative(J, Q, dual=True)
        assert mpmath.mnorm(P * J + J.T * P + M, 1) < 1e-36 * mpmath.mnorm(P, 1)
        assert mpmath.mnorm(J * W + W * J.T + Q, 1) < 1e-36 * mpmath.mnorm(W, 1)


def test_equilibrium_above_capacity_solves_the_drift() -> None:
    """lam > mu: backward shooting; the drift of derive's kernel vanishes, levels decrease."""
    from derive import supermarket
    from numeric import equilibrium

    for lam, b in (("1.2", 80), ("1.001", 30), ("2", 25)):
        s = equilibrium(lam, b, dps=40)
        k = supermarket(b, 2).kernels("mpmath")
        with mpmath.workdps(50):
            assert max(abs(v) for v in k.f(s, [mpmath.mpf(lam)])) < mpmath.mpf(10) ** -40
        assert all(1 > s[i] > s[i + 1] > 0 for i in range(b - 1))


@pytest.mark.slow
def test_float64_banded_path_at_b1000() -> None:
    lams = np.array([0.5, 0.9, 0.999])
    fast = constant_float64(lams, 1000)
    for lam, c in zip(lams, fast, strict=True):
        ref = float(solve_supermarket(repr(float(lam)), 1000, dps=20).constant)
        assert abs(c - ref) <= 1e-10 * ref, lam


def test_blas_thread_limit_follows_the_environment(monkeypatch) -> None:
    import scipy.linalg  # noqa: F401  (load the BLAS libraries)
    from threadpoolctl import threadpool_info

    from numeric.precision import blas_thread_limit, limited_blas

    blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
    if not blas:
        pytest.skip("no BLAS library visible to threadpoolctl")
    monkeypatch.delenv("MFSTEIN_BLAS_THREADS", raising=False)
    assert blas_thread_limit() == 1
    with limited_blas():
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")
    monkeypatch.setenv("MFSTEIN_BLAS_THREADS", "all")
    assert blas_thread_limit() is None
    monkeypatch.setenv("MFSTEIN_BLAS_THREADS", "two")
    with pytest.raises(Exception, match="MFSTEIN_BLAS_THREADS must be an integer"):
        blas_thread_limit()


def test_blas_limit_as_decorator_covers_the_refinement_loops(monkeypatch) -> None:
    """``@limited_blas()`` (used on the general route's refinement and fixed-point
    search) caps BLAS inside each call and restores the library setting after."""
    from threadpoolctl import threadpool_info

    from numeric.linalg import refinement
    from numeric.precision import limited_blas

    def threads() -> list[int]:
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    outside = threads()
    if not outside:
        pytest.skip("no BLAS library visible to threadpoolctl")
    monkeypatch.setenv("MFSTEIN_BLAS_THREADS", "1")
    seen = []
    real = np.linalg.solve  # the refinement's float64 solves
    monkeypatch.setattr(np.linalg, "solve", lambda *a, **k: seen.append(threads()) or real(*a, **k))
    with mpmath.workdps(30):
        A = mpmath.matrix([[-2, 1], [1, -3]])
        x = refinement.solve_linear(A, [mpmath.mpf(1), mpmath.mpf(2)])
        assert mpmath.norm(A * mpmath.matrix(x) - mpmath.matrix([1, 2])) < mpmath.mpf(10) ** -28
    assert seen and all(n == 1 for n in seen[0])
    assert threads() == outside
    assert limited_blas()(threads)() == [1] * len(outside)
