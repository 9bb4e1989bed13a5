"""A homogeneous population (derive.population) through numeric.solve and numeric.exact.

The same four-state population with pairwise interactions is written three ways --
rate tensors (rmftool's HomPP), the per-object transition table, and a plain
derive.Model of density transitions written by hand (unmerged) -- and must give the
same s*, V and c to 30 digits; the fixed point is also checked against the drift
computed directly from the tensors.  Against the exact chain of N objects, the
refined mean field s* + V/N is closer than s*, its error falls like 1/N^2 and
N^2 times that error tends to the 1/N^2 term A of the expansion.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import pairwise

import mpmath
import numpy as np
import pytest
import sympy as sp

import numeric
import numeric.exact
from derive import Model, Transition, population
from derive.spec import ModelInfo, StateSpace

K = sp.Symbol("k")  # a parameter, so that entries are expressions too
PARAMS = {"k": "3/2"}


def tensors() -> tuple[np.ndarray, np.ndarray]:
    """Rates: a cycle 0 -> 1 -> 2 -> 0, 3 -> 0; pairs (1, 2) -> (3, 3), (0, 3) -> (1, 1)."""
    A = np.zeros((4, 4), dtype=object)
    A[0, 1], A[1, 2], A[2, 0], A[3, 0] = 1, 1, Fraction(1, 2), 1
    B = np.zeros((4, 4, 4, 4), dtype=object)
    B[1, 2, 3, 3], B[0, 3, 1, 1] = 2, K
    return A, B


def three_ways() -> list[Model]:
    A, B = tensors()
    x = sp.symbols("x0:4")
    by_tensors = population(A, B, params=(K,), name="pop-tensors")
    by_table = population(
        states=x,
        params=(K,),
        name="pop-table",
        transitions=[
            (0, 1, 1),
            (x[1], x[2], 1),
            ("x2", "x0", sp.Rational(1, 2)),
            (3, 0, 1),
            ((1, 2), (3, 3), 2),
            (("x0", "x3"), ("x1", "x1"), K),
        ],
    )
    by_hand = Model(
        "pop-by-hand",
        x,
        (K,),
        [
            Transition((-1, 1, 0, 0), x[0]),
            Transition((0, -1, 1, 0), x[1]),
            Transition((1, 0, -1, 0), x[2] / 2),
            Transition((1, 0, 0, -1), x[3]),
            Transition((0, -1, -1, 2), 2 * x[1] * x[2]),
            Transition((-1, 2, 0, -1), K * x[0] * x[3]),
        ],
        info=ModelInfo(
            state_space=StateSpace("simplex", total=1.0),
            conservation=((1, 1, 1, 1),),
            reference=(sp.Rational(1, 4),) * 4,
        ),
    )
    return [by_tensors, by_table, by_hand]


def tensor_drift(x: list, k: mpmath.mpf) -> list:
    """The drift straight from the tensors (rmftool's definition), at ``x``."""
    A, B = tensors()
    f = [mpmath.mpf(0)] * 4
    for (s, t), a in np.ndenumerate(A):
        rate = mpmath.mpf(Fraction(a).numerator) / Fraction(a).denominator * x[s]
        f[s], f[t] = f[s] - rate, f[t] + rate
    for (s, s1, t, t1), b in np.ndenumerate(B):
        rate = (k if b == K else mpmath.mpf(b)) * x[s] * x[s1]
        for i, sign in ((s, -1), (s1, -1), (t, 1), (t1, 1)):
            f[i] += sign * rate
    return f


def test_three_ways_agree_to_30_digits() -> None:
    sols = [numeric.solve(m, PARAMS, dps=30) for m in three_ways()]
    ref = sols[0]
    assert ref.digits >= 30
    with mpmath.workdps(40):
        assert max(abs(v) for v in tensor_drift(ref.s_star, mpmath.mpf(3) / 2)) < 1e-30
        for other in sols[1:]:
            for a, b in (
                *zip(ref.s_star, other.s_star, strict=True),
                *zip(ref.V, other.V, strict=True),
            ):
                assert abs(a - b) <= 1e-30 * max(1, abs(a))
            assert abs(ref.constant - other.constant) <= 1e-30 * abs(ref.constant)
    assert abs(mpmath.fsum(ref.s_star) - 1) < 1e-30 and abs(mpmath.fsum(ref.V)) < 1e-30


def exact_errors(model: Model, sol: numeric.MeanFieldSolution) -> list[tuple[int, float, list]]:
    """``(N, mean-field error, refined errors)`` against the exact chain, N = 4, 8, 16."""
    out = []
    for N in (4, 8, 16):
        mean = numeric.exact.solve(model, PARAMS, N=N).mean
        mf = max(abs(float(m - s)) for m, s in zip(mean, sol.s_star, strict=True))
        refined = [float(m - s - v / N) for m, s, v in zip(mean, sol.s_star, sol.V, strict=True)]
        out.append((N, mf, refined))
    return out


def test_refined_beats_mean_field_and_its_error_falls_like_one_over_n_squared() -> None:
    model = three_ways()[0]
    rows = exact_errors(model, numeric.solve(model, PARAMS, dps=20))
    errors = [max(map(abs, refined)) for _, _, refined in rows]
    for (_, mf, _), error in zip(rows, errors, strict=True):
        assert error < mf / 4  # the refined estimate is far closer to the exact mean
    for coarse, fine in pairwise(errors):
        assert 3.2 < coarse / fine < 6  # 1/N^2: a factor 4 per doubling of N


@pytest.mark.slow
def test_the_refined_error_tends_to_the_next_term() -> None:
    """N^2 (E[X_N] - s* - V/N) -> A, the 1/N^2 term of numeric's order-2 expansion."""
    model = three_ways()[0]
    sol = numeric.solve(model, PARAMS, dps=20, order=2)
    to_a = [
        max(abs(N * N * e - float(a)) for e, a in zip(refined, sol.A, strict=True))
        for N, _, refined in exact_errors(model, sol)
    ]
    for coarse, fine in pairwise(to_a):
        assert fine < coarse / 1.5  # the remainder is O(1/N^3)
    assert to_a[-1] < 0.2 * max(abs(float(a)) for a in sol.A)
