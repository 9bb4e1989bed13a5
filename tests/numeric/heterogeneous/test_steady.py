"""The heterogeneous steady state against the exact product chain and by other routes."""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp
from hetpop_models import SIS, sis, three_state

import numeric
import numeric.exact


def _errors(model, params, K):
    sol = numeric.solve(model, params, precision="float64")
    ex = numeric.exact.solve(model, params, N=K)
    mf = np.abs(np.array(sol.s_star, dtype=float) - ex.mean).max()
    ref = np.abs(np.array(sol.refined(), dtype=float) - ex.mean).max()
    return mf, ref


@pytest.mark.parametrize("build,params", [(sis, SIS), (three_state, {})])
def test_refined_is_closer_to_the_exact_mean_and_its_error_falls_like_1_over_K2(build, params):
    (mf4, ref4), (mf8, ref8) = (_errors(build(K), params, K) for K in (4, 8))
    assert ref4 < mf4 / 3 and ref8 < mf8 / 3
    assert 1.5 < mf4 / mf8 < 2.7  # the mean field is off by O(1/K)
    assert ref4 / ref8 > 3.0  # the refined estimate by O(1/K^2): about 4x smaller


def _two_class_sis_mean(K: int) -> float:
    """E[X_{0,1}] of :func:`sis` (two classes of K/2 objects) by its lumped chain on
    the numbers of infected objects of each class (independent of the product chain)."""
    import scipy.linalg

    h = K // 2
    eps, beta, gamma = (float(Fraction(SIS[k])) for k in ("eps", "beta", "gamma"))
    speed = (gamma, 1.5 * gamma)
    n = (h + 1) ** 2
    Q = np.zeros((n, n))
    for a in range(h + 1):
        for b in range(h + 1):
            i, infected = a * (h + 1) + b, a + b
            for c, m, step in ((0, a, h + 1), (1, b, 1)):
                if m < h:
                    Q[i, i + step] += (h - m) * (eps + beta * infected / K)
                if m > 0:
                    Q[i, i - step] += m * speed[c]
    Q -= np.diag(Q.sum(axis=1))
    M = Q.T.copy()
    M[-1] = 1
    pi = scipy.linalg.solve(M, np.eye(n)[-1])
    return sum(pi[a * (h + 1) + b] * a for a in range(h + 1) for b in range(h + 1)) / h


@pytest.mark.slow
def test_the_refined_error_falls_like_1_over_K2_up_to_128_objects():
    """Beyond K = 8 the chain of the objects is lumped (K = 16 checked against the
    product chain); the error's ratio over doublings tends to 4 (2.9, 3.5, 3.8 from
    K = 16; 4 -> 8 -> 16 is still pre-asymptotic: the 1/K^2 term changes sign)."""
    product = numeric.exact.solve(sis(16), SIS, N=16).mean[1]
    assert product == pytest.approx(_two_class_sis_mean(16), rel=1e-10)
    errs = []
    for K in (16, 32, 64, 128):
        sol = numeric.solve(sis(K), SIS, precision="float64")
        errs.append(abs(float(sol.refined()[1]) - _two_class_sis_mean(K)))
    ratios = [a / b for a, b in itertools.pairwise(errs)]
    assert all(r > 2.5 for r in ratios) and ratios[-1] > 3.5


def test_float64_and_30_digits_agree_to_the_float64_digits():
    model = three_state(4)
    f64 = numeric.solve(model, {}, precision="float64")
    hi = numeric.solve(model, {}, dps=30)
    assert hi.digits == 30 and 10 <= f64.digits <= 14
    with mpmath.workdps(40):
        for name in ("s_star", "V"):
            a, b = getattr(f64, name), getattr(hi, name)
            scale = max(abs(v) for v in b)
            gap = max(abs(mpmath.mpf(float(x)) - y) for x, y in zip(a, b, strict=True))
            assert gap < scale * 10.0**-f64.digits


def test_30_digits_against_a_kronecker_lyapunov_solve():
    """W and V by an independent route: the Lyapunov equation vectorised and solved
    by mpmath's LU at 50 digits, from the 30-digit fixed point."""
    from numeric.heterogeneous import algebra as alg
    from numeric.heterogeneous.entry import rates

    K, S = 3, 3
    model = three_state(K)
    sol = numeric.solve(model, {}, dps=30)
    with mpmath.workdps(50):
        R, _ = rates(model, {}, float64=False)
        x = np.array([mpmath.mpf(str(v)) for v in sol.texts("s_star")], dtype=object)
        keep = alg.kept(K, S)
        J = mpmath.matrix(alg.reduce_jacobian(alg.jacobian(R, x), K, S).tolist())
        Q = alg.noise(R, x)[np.ix_(keep, keep)]
        n = len(keep)
        eye = mpmath.eye(n)
        L = mpmath.matrix(n * n, n * n)
        for i in range(n):
            for j in range(n):
                for a in range(n):
                    L[i * n + j, a * n + j] += J[i, a]
                    L[i * n + j, i * n + a] += J[j, a] * eye[i, i]
        w = mpmath.lu_solve(L, mpmath.matrix([-Q[i, j] for i in range(n) for j in range(n)]))
        Wr = np.array([[w[i * n + j] for j in range(n)] for i in range(n)], dtype=object)
        W = alg.expand_matrix(Wr, K, S)
        g = alg.pair_term(R, W)[keep]
        v = mpmath.lu_solve(J, mpmath.matrix([-K * gi for gi in g]))
        V = alg.expand_vector(np.array([v[i] for i in range(n)], dtype=object), K, S)
        assert max(abs(a - b) for a, b in zip(V, sol.V, strict=True)) < mpmath.mpf(10) ** -28
        gap = max(abs(a - b) for a, b in zip(W.ravel(), sol.W.ravel(), strict=True))
        assert gap < mpmath.mpf(10) ** -28
        assert max(abs(f) for f in alg.drift(R, x)) < mpmath.mpf(10) ** -29


def _birth_death_mean(K: int) -> Fraction:
    """E[infected fraction] of the density model's chain with N = K, exactly: the count
    n goes up at (K - n)(eps + beta n / K), down at gamma n (detailed balance)."""
    beta, eps, gamma = (Fraction(SIS[k]) for k in ("beta", "eps", "gamma"))
    weights = [Fraction(1)]
    for n in range(K):
        weights.append(weights[-1] * (K - n) * (eps + beta * Fraction(n, K)) / (gamma * (n + 1)))
    return sum(n * w for n, w in enumerate(weights)) / (K * sum(weights))


def test_identical_objects_are_the_density_model_written_as_transitions():
    """K identical SIS objects: the heterogeneous mean field is the density model's with
    beta (K - 1)/K (an object never infects itself), the exact chain lumps to the
    density model's birth-death chain, and the refined estimates agree up to O(1/K^2)."""
    from derive import Model, Transition

    x, beta, eps, gamma = sp.symbols("x beta eps gamma")
    density = Model(
        "sis-density", (x,), (beta, eps, gamma),
        [Transition((1,), (eps + beta * x) * (1 - x), "infection"),
         Transition((-1,), gamma * x, "recovery")],
    )  # fmt: skip
    gaps = []
    plain = numeric.solve(density, SIS, dps=30)
    for K in (4, 8):
        het = numeric.solve(sis(K, ("1",)), SIS, dps=30)
        shifted = dict(SIS, beta=f"{K - 1}/{K}")
        dens = numeric.solve(density, shifted, dps=30)
        assert abs(het.s_star[1] - dens.s_star[0]) < mpmath.mpf(10) ** -29
        ex_het = numeric.exact.solve(sis(K, ("1",)), SIS, N=K)
        assert ex_het.mean[1] == pytest.approx(float(_birth_death_mean(K)), rel=1e-12)
        gaps.append(abs(float(het.refined()[1]) - float(plain.s_star[0] + plain.V[0] / K)))
    assert gaps[0] / gaps[1] > 3.0


def test_the_density_model_form_gives_the_same_numbers_to_30_digits():
    """The general route of :func:`numeric.solve` on the population written as an
    ordinary model (reduced coordinates, N = 1): its V is ours divided by K."""
    from derive.heterogeneous_population import as_density_model

    K, S = 3, 3
    model = three_state(K)
    ours = numeric.solve(model, {}, dps=30)
    theirs = numeric.solve(as_density_model(model), {}, dps=30)
    kept = [k * S + s for k in range(K) for s in range(S - 1)]
    with mpmath.workdps(40):
        tiny = mpmath.mpf(10) ** -29
        assert max(abs(ours.s_star[i] - t) for i, t in zip(kept, theirs.s_star, strict=True)) < tiny
        assert max(abs(ours.V[i] / K - t) for i, t in zip(kept, theirs.V, strict=True)) < tiny
