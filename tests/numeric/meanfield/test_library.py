"""The model library, user model files and the model-first numeric layer.

Independent checks: closed forms of JSQ(L) (Graham's fixed point and, for
L = 1, the covariance of independent M/M/1 queues), the supermarket fast path
against the general route, an automatic against a hand-made reduction of a
model with a conservation law, and the exact stationary law of SIR at finite N.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp

import numeric
from derive import Model, Transition
from derive.models import available, load_model, split_values
from derive.spec import ModelInfo, Parameter, StateSpace, Truncated
from mfstein.ground.errors import ParameterError

SIR_PARAMS = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}


def test_library_lists_the_families() -> None:
    assert {"supermarket", "jsq_L", "sir"} <= set(available())
    assert isinstance(load_model("jsq_L", L=2), Truncated)
    m = load_model("supermarket", b=4, d=3)
    assert m.info.fast_path == "supermarket" and m.info.structure["d"] == 3
    # the upper end is mfstein.ground.limits.MAX_LAM
    assert m.info.parameter("lam").describe() == "> 0 and <= 1000000"
    opts, params = split_values("supermarket", {"b": "4", "lam": "0.9"})
    assert opts == {"b": 4} and params == {"lam": "0.9"}


@pytest.mark.parametrize("L", [2, 3])
def test_jsq_fixed_point_is_grahams_closed_form(L: int) -> None:
    dps = 30
    sol = numeric.solve(load_model("jsq_L", L=L), {"alpha": "0.6", "beta": "1.2"}, dps=dps)
    with mpmath.workdps(dps + 10):
        rho = mpmath.mpf("0.6") / mpmath.mpf("1.2")
        for k, s in enumerate(sol.s_star, start=1):
            u = rho ** ((L**k - 1) // (L - 1))
            if u < mpmath.mpf(10) ** -10:
                break
            assert abs(s - u) <= mpmath.mpf(10) ** (-dps + 1) * u, (k, s, u)
    assert sol.digits == dps


@pytest.mark.parametrize("method", ["auto", "general"])
def test_jsq_L1_covariance_is_independent_mm1(method: str) -> None:
    dps = 25
    sol = numeric.solve(
        load_model("jsq_L", L=1), {"alpha": "0.1", "beta": "1"}, dps=dps, route=method
    )
    b = sol.n
    with mpmath.workdps(dps + 10):
        rho = mpmath.mpf("0.1")
        worst = max(
            abs(sol.W[j, k] - (rho ** max(j + 1, k + 1) - rho ** (j + k + 2)))
            for j in range(b)
            for k in range(b)
        )
        assert worst <= mpmath.mpf(10) ** (-dps + 2) * sol.W[0, 0]


def test_supermarket_with_mu_equals_jsq_L() -> None:
    a = numeric.solve(load_model("supermarket", b=6, d=2, mu="1.5"), {"lam": "0.9"}, dps=25)
    b = numeric.solve(
        load_model("jsq_L", L=2, b=6), {"alpha": "0.9", "beta": "1.5"}, dps=25, route="general"
    )
    with mpmath.workdps(35):
        for i in range(6):
            for j in range(6):
                assert abs(a.W[i, j] - b.W[i, j]) <= mpmath.mpf(10) ** -23 * abs(a.W[0, 0])
        assert abs(a.constant - b.constant) <= mpmath.mpf(10) ** -23 * a.constant


@pytest.mark.parametrize(("b", "lam", "dps"), [(5, "0.9", 30), (20, "0.99", 30), (60, "0.9", 20)])
def test_general_route_agrees_with_supermarket_fast_path(b: int, lam: str, dps: int) -> None:
    model = load_model("supermarket", b=b)
    fast = numeric.solve(model, {"lam": lam}, dps=dps)
    general = numeric.solve(model, {"lam": lam}, dps=dps, route="general")
    assert "shooting" in fast.routes and "stein" in general.routes
    assert fast.digits == general.digits == dps
    with mpmath.workdps(dps + 10):
        tol = mpmath.mpf(10) ** (-dps + 1)
        assert abs(fast.constant - general.constant) <= tol * fast.constant
        vmax = max(abs(v) for v in fast.V)
        assert max(abs(x - y) for x, y in zip(fast.V, general.V, strict=True)) <= tol * vmax
        assert max(abs(x - y) for x, y in zip(fast.s_star, general.s_star, strict=True)) <= tol


def _hand_reduced_sir() -> Model:
    """SIRS on (I, R) with S = 1 - I - R substituted by hand."""
    I, R = sp.symbols("I R")
    beta, gamma, rho, a = sp.symbols("beta gamma rho a")
    S = 1 - I - R
    return Model(
        "sir-2",
        (I, R),
        (beta, gamma, rho, a),
        [
            Transition((1, 0), (a + beta * I) * S, "infection"),
            Transition((-1, 1), gamma * I, "recovery"),
            Transition((0, -1), rho * R, "loss of immunity"),
        ],
        info=ModelInfo(
            parameters=(Parameter("gamma", low=0),),
            state_space=StateSpace("simplex"),
            reference=(sp.Rational(1, 100), 0),
        ),
    )


def test_sir_reduction_matches_hand_reduction() -> None:
    dps = 30
    full = numeric.solve(load_model("sir"), SIR_PARAMS, dps=dps)
    hand = numeric.solve(_hand_reduced_sir(), SIR_PARAMS, dps=dps)
    assert full.free == [1, 2] and full.conservation == [["1", "1", "1"]]
    assert hand.conservation == []
    with mpmath.workdps(dps + 10):
        tol = mpmath.mpf(10) ** (-dps + 2)
        for i in range(2):
            assert abs(full.V[i + 1] - hand.V[i]) <= tol
            assert abs(full.s_star[i + 1] - hand.s_star[i]) <= tol
            for j in range(2):
                assert abs(full.W[i + 1, j + 1] - hand.W[i, j]) <= tol
        assert abs(full.constant - hand.constant - full.W[0, 0]) <= tol  # tr W adds W_SS
        # the 3-state report lives on the conserved set
        assert abs(mpmath.fsum(full.V)) <= tol
        for i in range(3):
            assert abs(mpmath.fsum(full.W[i, j] for j in range(3))) <= tol
        assert abs(mpmath.fsum(full.s_star) - 1) <= tol


def _sir_exact(N: int, beta: float, gamma: float, rho: float, a: float):
    """Exact stationary E[S], Cov[S] of the SIRS chain with N individuals (test's own solver)."""
    import scipy.sparse as sps
    import scipy.sparse.linalg as spla

    nS, nI = np.meshgrid(np.arange(N + 1), np.arange(N + 1), indexing="ij")
    keep = nS + nI <= N
    nS, nI = nS[keep], nI[keep]
    idx = -np.ones((N + 2, N + 2), dtype=np.int64)
    idx[nS, nI] = np.arange(nS.size)
    nR = N - nS - nI
    k = np.arange(nS.size)
    rows, cols, vals = [], [], []
    for dS, dI, rate in (
        (-1, 1, (a + beta * nI / N) * nS),
        (0, -1, gamma * nI.astype(float)),
        (1, 0, rho * nR.astype(float)),
    ):
        on = rate > 0
        rows += [k[on], k[on]]
        cols += [idx[nS[on] + dS, nI[on] + dI], k[on]]
        vals += [rate[on], -rate[on]]
    n = nS.size
    Qm = sps.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    # pi Q = 0 with pi_last = 1 fixed (no dense normalisation row: it would fill the LU)
    A = Qm.T.tocsc()
    pi = np.ones(n)
    pi[:-1] = spla.spsolve(A[:-1, :-1], -A[:-1, -1].toarray().ravel())
    pi /= pi.sum()
    assert np.max(np.abs(Qm.T @ pi)) < 1e-10  # the solve is checked, not trusted
    x = np.stack([nS, nI, nR], axis=1) / N
    mean = pi @ x
    cov = (x - mean).T @ ((x - mean) * pi[:, None])
    return mean, cov


def test_sir_against_exact_finite_n_at_rate_one_over_n() -> None:
    sol = numeric.solve(load_model("sir"), SIR_PARAMS, dps=20)
    s = np.array([float(v) for v in sol.s_star])
    V = np.array([float(v) for v in sol.V])
    W = np.array([[float(sol.W[i, j]) for j in range(3)] for i in range(3)])
    errors_v, errors_w = [], []
    for N in (50, 100, 200, 400):
        mean, cov = _sir_exact(N, 3.0, 1.0, 0.5, 0.1)
        errors_v.append(np.max(np.abs(N * (mean - s) - V)))
        errors_w.append(np.max(np.abs(N * cov - W)))
    # O(1/N) convergence: each doubling of N halves the error (ratio near 2)
    for e in (errors_v, errors_w):
        ratios = [e[i] / e[i + 1] for i in range(len(e) - 1)]
        assert all(1.6 < r < 2.5 for r in ratios), (e, ratios)
        assert e[-1] < 0.05 * max(np.max(np.abs(V)), 1.0)


def test_user_file_model_from_python(tmp_path) -> None:
    sol = numeric.solve(
        load_model("examples/birth_death.py:birth_death", cap=2), {"lam": "0.5"}, dps=25
    )
    with mpmath.workdps(35):
        assert abs(sol.s_star[0] - mpmath.mpf(2) / 3) <= mpmath.mpf(10) ** -24
        # linear rates: V = 0, W = Q/(2|J|) = (lam (cap - x*) + x*) / (2 (1 + lam)) = 4/9
        assert abs(sol.V[0]) <= mpmath.mpf(10) ** -24
        assert abs(sol.W[0, 0] - mpmath.mpf(4) / 9) <= mpmath.mpf(10) ** -24


@pytest.mark.parametrize(
    ("model", "params", "match"),
    [
        ("sir", {"beta": 1}, "needs a value for"),
        ("sir", {**SIR_PARAMS, "zeta": 1}, "zeta is not a parameter"),
        ("sir", {**SIR_PARAMS, "gamma": "0"}, "gamma must be > 0"),
        ("sir", {**SIR_PARAMS, "gamma": "x"}, "gamma must be a real number"),
    ],
)
def test_bad_parameters(model: str, params: dict, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        numeric.solve(load_model(model), params)


def test_bad_start_and_unstable_point() -> None:
    with pytest.raises(ParameterError, match="start must have 3 coordinates"):
        numeric.solve(load_model("sir"), SIR_PARAMS, start=[0.5, 0.5])
    with pytest.raises(ParameterError, match="state space"):
        numeric.solve(load_model("sir"), SIR_PARAMS, start=[0.9, 0.2, 0.1])
    x = sp.Symbol("x")
    grow = Model("grow", (x,), (), [Transition((1,), 2 * x), Transition((-1,), x)])
    with pytest.raises(ParameterError, match="is not stable"):
        numeric.solve(grow, {})
    flat = Model("flat", (x,), (), [Transition((1,), x**2), Transition((-1,), x**2)])
    with pytest.raises(ParameterError, match="not hyperbolic"):
        numeric.solve(flat, {})
    with pytest.raises(ParameterError, match="alpha/beta must be < 1"):
        numeric.solve(load_model("jsq_L", L=2), {"alpha": 2, "beta": 1})
