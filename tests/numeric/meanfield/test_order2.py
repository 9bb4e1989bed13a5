"""The 1/N^2 terms (A, B, c2) against exact finite-N stationary laws.

``x_N = N (N E||S - s*||^2 - c)`` tends to ``c2`` and ``N^2 (E[S] - s* - V/N)``
to ``A``, both with an O(1/N) error; a two-level Richardson extrapolation over
N, 2N, 4N removes the 1/N and 1/N^2 error terms, so it must land much closer
to the computed coefficient than the raw value at the largest N.
"""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import permutations
from pathlib import Path

import mpmath
import numpy as np
import pytest
from deadlines import deadline

import numeric
from derive.models import load_model
from numeric.exact import solve_exact

sys.path.insert(0, str(Path(__file__).parent))
from test_library import SIR_PARAMS, _sir_exact

ROOT = Path(__file__).resolve().parents[3]


def _richardson(x: list) -> np.ndarray:
    """Two-level Richardson extrapolation of values at N, 2N, 4N (error O(1/N))."""
    r1 = [2 * np.asarray(x[i + 1]) - np.asarray(x[i]) for i in range(2)]
    return (4 * r1[1] - r1[0]) / 3


@pytest.mark.parametrize(("b", "d", "sizes"), [(3, 2, (20, 40, 80)), (2, 3, (40, 80, 160))])
def test_supermarket_order2_against_exact(b: int, d: int, sizes: tuple[int, ...]) -> None:
    # d = 3 exercises the third derivatives of the drift (they vanish for d = 2)
    sol = numeric.bound("0.9", b, d, dps=20, order=2)
    assert sol.digits2 == 20
    c, c2 = float(sol.constant), float(sol.c2)
    s = np.array([float(v) for v in sol.s_star])
    V = np.array([float(v) for v in sol.V])
    A = np.array([float(v) for v in sol.A])
    xs, bias = [], []
    for N in sizes:
        r = solve_exact(N, "0.9", b, d)
        xs.append(N * (r.n_mse - c))
        bias.append(N * (np.asarray(r.n_bias) - V))  # N^2 (E[S] - s*) - N V
    est_c2, est_A = _richardson(xs), _richardson(bias)
    assert abs(est_c2 - c2) < 0.02 * abs(c2) + 0.003
    assert abs(est_c2 - c2) < abs(xs[-1] - c2) / 4
    assert np.max(np.abs(est_A - A)) < 0.02 * np.max(np.abs(A))
    assert np.max(np.abs(est_A - A)) < np.max(np.abs(bias[-1] - A)) / 4
    assert s.shape == A.shape


def test_sir_order2_against_exact_and_conservation() -> None:
    sol = numeric.solve(load_model("sir"), SIR_PARAMS, dps=20, order=2)
    with mpmath.workdps(30):
        tol = mpmath.mpf(10) ** -18
        assert abs(mpmath.fsum(sol.A)) < tol
        for i in range(3):
            assert abs(mpmath.fsum(sol.B[i, j] for j in range(3))) < tol
    s = np.array([float(v) for v in sol.s_star])
    V = np.array([float(v) for v in sol.V])
    A = np.array([float(v) for v in sol.A])
    W = np.array([[float(sol.W[i, j]) for j in range(3)] for i in range(3)])
    xs, bias = [], []
    for N in (100, 200, 400):
        mean, cov = _sir_exact(N, 3.0, 1.0, 0.5, 0.1)
        second = cov + np.outer(mean - s, mean - s)
        xs.append(N * (N * np.trace(second) - np.trace(W)))
        bias.append(N * N * (mean - s) - N * V)
    est_c2, est_A = _richardson(xs), _richardson(bias)
    assert abs(est_c2 - float(sol.c2)) < 0.01 * abs(float(sol.c2))
    assert np.max(np.abs(est_A - A)) < 0.01 * np.max(np.abs(A))


CUBIC = """
import sympy as sp
from derive import Model, Transition
from derive.spec import ModelInfo, StateSpace

def cubic():
    x = sp.Symbol("x")
    return Model("cubic", (x,), (), [
        Transition((1,), 2 * (1 - x) * (1 + x**2 + x**3), "up"),
        Transition((-1,), x + x**4, "down"),
        Transition((2,), x**2 * (1 - x) / 3, "double"),
    ], info=ModelInfo(state_space=StateSpace("box")))
"""


def test_cubic_rates_and_double_jumps_against_exact(tmp_path: Path) -> None:
    """Third and fourth drift derivatives and a third jump moment (jumps of size 2)
    all enter A and c2; a one-dimensional chain is solved exactly up to N = 1600."""
    import scipy.sparse as sps
    import scipy.sparse.linalg as spla

    f = tmp_path / "cubic.py"
    f.write_text(CUBIC)
    sol = numeric.solve(load_model(f"{f}:cubic"), {}, dps=20, order=2)
    s, V, c = float(sol.s_star[0]), float(sol.V[0]), float(sol.constant)
    xs, bias = [], []
    for N in (400, 800, 1600):
        k = np.arange(N + 1)
        x = k / N
        rates = (
            (1, N * 2 * (1 - x) * (1 + x**2 + x**3)),
            (-1, N * (x + x**4)),
            (2, N * x**2 * (1 - x) / 3),
        )
        rows, cols, vals = [], [], []
        for step, r in rates:
            ok = (k + step >= 0) & (k + step <= N) & (r > 0)
            rows += [k[ok], k[ok]]
            cols += [k[ok] + step, k[ok]]
            vals += [r[ok], -r[ok]]
        Q = sps.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
            shape=(N + 1, N + 1),
        )
        A_ = Q.T.tocsc()
        pi = np.ones(N + 1)
        pi[:-1] = spla.spsolve(A_[:-1, :-1], -A_[:-1, -1].toarray().ravel())
        pi /= pi.sum()
        xs.append(N * (N * (pi @ (x - s) ** 2) - c))
        bias.append(N * N * (pi @ x - s) - N * V)
    assert abs(_richardson(xs) - float(sol.c2)) < 1e-4 * abs(float(sol.c2))
    assert abs(_richardson(bias) - float(sol.A[0])) < 1e-3 * abs(float(sol.A[0]))


def test_float64_route_agrees_with_high_precision() -> None:
    from numeric.meanfield.stationary import second_order_float64

    for model, params in (
        (load_model("sir"), SIR_PARAMS),
        (load_model("supermarket", b=5, d=3), {"lam": "0.95"}),
    ):
        hp = numeric.solve(model, params, dps=20, order=2, route="general")
        f64 = second_order_float64(model, params)
        assert abs(f64["c2"] - float(hp.c2)) < 1e-9 * max(1.0, abs(float(hp.c2)))
        A = np.array([float(v) for v in hp.A])
        assert np.max(np.abs(f64["A"] - A)) < 1e-9 * max(1.0, np.max(np.abs(A)))


def test_cli_order2_json_and_refined_row() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mfstein",
            "solve",
            "--model",
            "supermarket",
            "--param",
            "b=3",
            "--param",
            "lam=0.9",
            "--order",
            "2",
            "--dps",
            "15",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=deadline(300),
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {"A", "B", "c2", "digits2"} <= set(data) and data["digits2"] == 15
    ref = numeric.bound("0.9", 3, 2, dps=15, order=2)
    assert abs(mpmath.mpf(data["c2"]) - ref.c2) < 1e-13
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mfstein",
            "refined",
            "--lam",
            "0.9",
            "--b",
            "3",
            "--N",
            "20",
            "--order",
            "2",
            "--dps",
            "15",
        ],
        capture_output=True,
        text=True,
        timeout=deadline(300),
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert "c + c2/N" in out.stdout


def test_float64_tail_truncation_is_invisible() -> None:
    """At lam = 0.9 the levels above ~11 carry less than 1e-20: the float64 route
    solves the shorter model; its c2 and A must equal the full model's 20-digit ones."""
    from numeric.meanfield.stationary import second_order_float64

    full = numeric.solve(load_model("supermarket", b=16), {"lam": "0.9"}, dps=20, order=2)
    cut = second_order_float64(load_model("supermarket", b=16), {"lam": "0.9"})
    assert cut.get("truncated_at") is not None and cut["truncated_at"] < 16
    assert abs(cut["c2"] - float(full.c2)) < 1e-12 * abs(float(full.c2))
    A = np.array([float(v) for v in full.A])
    assert np.max(np.abs(cut["A"] - A)) < 1e-12 * np.max(np.abs(A))
    big = second_order_float64(load_model("supermarket", b=1000), {"lam": "0.9"})
    assert big["c2"] == pytest.approx(cut["c2"], rel=1e-14)


def _kronecker_third_moment(J: np.ndarray, D: np.ndarray) -> np.ndarray:
    """C from the dense n^3 x n^3 system (J (+) J (+) J) vec C = -vec D (test's own route)."""
    n = J.shape[0]
    eye = np.eye(n)
    L = (
        np.kron(np.kron(J, eye), eye)
        + np.kron(np.kron(eye, J), eye)
        + np.kron(eye, np.kron(eye, J))
    )
    return np.linalg.solve(L, -D.ravel()).reshape(n, n, n)


@pytest.mark.parametrize(("lam", "b", "d"), [("0.9", 4, 3), ("1.2", 6, 2)])
def test_third_moment_solvers_agree_with_dense_kronecker(lam: str, b: int, d: int) -> None:
    """The float64 third-moment solvers (tridiagonal eigenbasis, compiled Schur back
    substitution on the real quasi-triangular form, LAPACK trsyl slices) against the
    dense Kronecker system, on the right side D of a real model; then c2 and A of
    the three routes of second_order_float64 against each other."""
    from numeric.meanfield.stationary import (
        Arith,
        _base64,
        _objects64,
        _SchurSolver,
        _TridiagonalEigenSolver,
        assemble_D,
        second_order_float64,
    )

    model = load_model("supermarket", b=b, d=d)
    params = {"lam": lam}
    base = _base64(model, params, None)
    J = base.J
    objs = _objects64(model, base)
    rng = np.random.default_rng(b)
    W = rng.standard_normal((b, b))
    W = W @ W.T
    D = assemble_D(Arith(None), b, W, rng.standard_normal(b), base.Q0, objs)
    ref = _kronecker_third_moment(J, D)
    scale = np.max(np.abs(ref))
    eig = _TridiagonalEigenSolver.build(J)
    assert eig is not None
    routes = {
        "eigen": eig(D),
        "schur": _SchurSolver(J, symmetric=True)(D),
        "trsyl": _SchurSolver(J)(D),
    }
    for name, C in routes.items():
        assert np.max(np.abs(C - ref)) < 1e-12 * scale, name
    pairs = [(0, 0), (1, 2), (b - 1, b - 2)]
    for solver in (eig, _SchurSolver(J, symmetric=True)):
        rows = solver.rows(D, pairs)
        for k, l in pairs:
            assert np.max(np.abs(rows[k, l] - ref[k, l])) < 1e-12 * scale
    res = {s: second_order_float64(model, params, solver=s) for s in ("eigen", "schur", "trsyl")}
    for s in ("eigen", "schur"):
        assert res[s]["third_moment"] == s
        assert abs(res[s]["c2"] - res["trsyl"]["c2"]) < 1e-12 * abs(res["trsyl"]["c2"])
        assert np.max(np.abs(res[s]["A"] - res["trsyl"]["A"])) < 1e-12 * np.max(
            np.abs(res["trsyl"]["A"])
        )


def test_compiled_schur_solver_with_complex_eigenvalues() -> None:
    """A random J with complex eigenvalue pairs: the real Schur form has 2x2 blocks,
    which the compiled back substitution solves as small coupled systems."""
    from numeric.meanfield.stationary import _SchurSolver

    n = 7
    rng = np.random.default_rng(7)
    J = rng.standard_normal((n, n)) - 4 * np.eye(n)
    assert np.any(np.abs(np.linalg.eigvals(J).imag) > 0.1)
    D = rng.standard_normal((n, n, n))
    D = sum(D.transpose(p) for p in permutations(range(3)))
    ref = _kronecker_third_moment(J, D)
    got = _SchurSolver(J, symmetric=True)(D)
    assert np.max(np.abs(got - ref)) < 1e-12 * np.max(np.abs(ref))


def test_float64_order2_far_from_normal_jacobian() -> None:
    """lam = 1.2, b = 20: the symmetrising scaling of J spans ~10^4, so the
    eigenbasis is refused and auto runs the Schur route (real quasi-triangular
    form), whose c2 and A must match the 20-digit refined route."""
    from numeric.meanfield.stationary import _base64, _TridiagonalEigenSolver, second_order_float64

    model = load_model("supermarket", b=20)
    params = {"lam": "1.2"}
    assert _TridiagonalEigenSolver.build(_base64(model, params, None).J) is None
    f64 = second_order_float64(model, params)
    assert f64["third_moment"] == "schur" and f64.get("truncated_at") is None
    hp = numeric.solve(model, params, dps=20, order=2, route="general")
    assert abs(f64["c2"] - float(hp.c2)) < 1e-10 * abs(float(hp.c2))
    A = np.array([float(v) for v in hp.A])
    assert np.max(np.abs(f64["A"] - A)) < 1e-10 * np.max(np.abs(A))


def _richardson_table(x: list) -> np.ndarray:
    """Full Richardson extrapolation of values at N, 2N, 4N, ... whose error is a
    power series in 1/N: the last entry removes the 1/N .. 1/N^(k-1) terms."""
    col = [np.asarray(v, dtype=float) for v in x]
    for j in range(1, len(x)):
        col = [(2**j * col[i + 1] - col[i]) / (2**j - 1) for i in range(len(col) - 1)]
    return col[0]


def _last_levels(x: list, depth: int) -> list:
    """Richardson estimates from the largest 1, 2, ..., ``depth`` sizes."""
    return [_richardson_table(x[-k:]) for k in range(1, depth + 1)]


@pytest.mark.slow
def test_supermarket_order2_against_exact_up_to_N320() -> None:
    """lam = 0.9, b = 3, d = 2 against numeric.exact.solve at N = 20, 40, ..., 320
    (5.6e6 states at N = 320, about a minute; the default test covers N = 20, 40,
    80).  The scaled errors N (N E||Y||^2 - c) - c2 and N (N E[Y] - V) - A shrink
    at every step, from N = 40 on at the rate 1/N of the expansion's next term
    (each step divides them by 1.5..2.5; from N = 20 to 40 the error of A drops
    by 2.7, N = 20 being short of that regime), and each Richardson level over the three largest
    sizes moves the estimates closer to the computed c2 and A, the last one
    (error O(1/N^3)) to within 1e-4 relative."""
    import numeric.exact as exact

    model = load_model("supermarket", b=3, d=2)
    sol = numeric.solve(model, {"lam": "0.9"}, dps=20, order=2)
    c, c2 = float(sol.constant), float(sol.c2)
    V = np.array([float(v) for v in sol.V])
    A = np.array([float(v) for v in sol.A])
    xs, bias = [], []
    for N in (20, 40, 80, 160, 320):
        r = exact.solve(model, {"lam": "0.9"}, N=N)
        xs.append(N * (r.n_mse - c))
        bias.append(N * (np.asarray(r.n_bias, dtype=float) - V))
    gap_c2 = [abs(x - c2) for x in xs]
    gap_A = [np.max(np.abs(a - A)) for a in bias]
    for gaps in (gap_c2, gap_A):
        ratios = [gaps[i] / gaps[i + 1] for i in range(len(gaps) - 1)]
        assert all(q > 1 for q in ratios), ratios
        assert all(1.5 < q < 2.5 for q in ratios[1:]), ratios
    err_c2 = [abs(e - c2) for e in _last_levels(xs[-3:], 3)]
    err_A = [np.max(np.abs(e - A)) for e in _last_levels(bias[-3:], 3)]
    assert err_c2 == sorted(err_c2, reverse=True), err_c2
    assert err_A == sorted(err_A, reverse=True), err_A
    assert err_c2[-1] < 1e-4 * abs(c2)
    assert err_A[-1] < 1e-4 * np.max(np.abs(A))


@pytest.mark.slow
def test_sir_order2_against_library_exact_up_to_N800() -> None:
    """SIR (reduced automatically: S + I + R = 1) against numeric.exact.solve (the
    library's exact solver, not the test's own) at N = 200, 400, 800: as above,
    the last Richardson level to within 1e-5 (c2) and 1e-4 (A) relative."""
    import numeric.exact as exact

    sol = numeric.solve(load_model("sir"), SIR_PARAMS, dps=20, order=2)
    s = np.array([float(v) for v in sol.s_star])
    V = np.array([float(v) for v in sol.V])
    A = np.array([float(v) for v in sol.A])
    W = np.array([[float(sol.W[i, j]) for j in range(3)] for i in range(3)])
    xs, bias = [], []
    for N in (200, 400, 800):
        r = exact.solve(load_model("sir"), SIR_PARAMS, N=N)
        mean = np.asarray(r.mean, dtype=float)
        second = np.asarray(r.n_cov, dtype=float) / N + np.outer(mean - s, mean - s)
        xs.append(N * (N * np.trace(second) - np.trace(W)))
        bias.append(N * N * (mean - s) - N * V)
    err_c2 = [abs(e - float(sol.c2)) for e in _last_levels(xs, 3)]
    err_A = [np.max(np.abs(e - A)) for e in _last_levels(bias, 3)]
    assert err_c2 == sorted(err_c2, reverse=True), err_c2
    assert err_A == sorted(err_A, reverse=True), err_A
    assert err_c2[-1] < 1e-5 * abs(float(sol.c2))
    assert err_A[-1] < 1e-4 * np.max(np.abs(A))
