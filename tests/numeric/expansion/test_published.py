"""Library models against numbers published by their own authors' reference tool.

The reference values are the stored test data and example outputs of rmf_tool
(N. Gast, https://github.com/ngast/rmf_tool), computed there in float64 by an
independent implementation of the refined mean-field expansion:

* ``tests/output_tests/d_choice.pickle`` (``tests/test_twoChoice.py``:
  ``dChoiceModel(K=5, rho, d).meanFieldExpansionSteadyState(order=2)``; the
  two-choice model of N. Gast and B. Van Houdt, "A Refined Mean Field
  Approximation", SIGMETRICS 2018): ``pi``, ``V``, ``A``, ``W``, ``B``, ``C``,
  from which the listed observables' terms follow;
* ``tests/output_tests/cache.pickle`` (``tests/test_cache.py``: the RANDOM
  cache with 10 items, cache size 5 or 3, Zipf exponent 0.5): ``pi`` and ``V``;
* ``Example_bikeSharingSystem.ipynb`` (the bike-sharing model of C. Fricker and
  N. Gast, K = 10, lam = mu = 1): the printed ``max(abs(V))`` for s = 7, 6, 9
  and ``V/pi`` for s = 9.

rmf_tool's order-2 terms are float64 solves of ill-conditioned systems and agree
with mfstein's 20-digit values to about six digits; orders 0 and 1 to 13.
"""

from __future__ import annotations

import pytest

from derive.models import load_model
from numeric import solve

# (rho, d) -> observable -> (g0, g1, g2) from d_choice.pickle (K = 5)
D_CHOICE = {
    ("0.9", 2): {
        "queue_length": (2.334047363794634, 0.9665599944449451, -48.28526630192876),
        "s1**2": (None, -0.15175383476990598, -2.8376292293506267),
        "s1**3": (None, None, -4.296647774727353),
        "s1*s2": (None, None, -5.474378994298918),
    },
    ("0.8", 3): {
        "queue_length": (1.2647085041902575, 1.6994564724447463, 0.848834455048878),
        "s1**2": (None, 0.30040672763188725, -0.29087411848624534),
        "s1**3": (None, None, -1.1805455201569863),
        "s1*s2": (None, None, -1.626138438962648),
    },
}


@pytest.mark.parametrize(("rho", "d"), list(D_CHOICE))
def test_two_choice_observables_match_rmf_tool(rho, d):
    m = load_model("supermarket", b=5, d=d)
    sol = solve(m, {"lam": rho}, dps=20, order=2)
    for g, ref in D_CHOICE[(rho, d)].items():
        e = sol.observable(m, g)
        for value, expected, rel in zip((e.g0, e.g1, e.g2), ref, (1e-13, 1e-12, 1e-5), strict=True):
            if expected is not None:
                assert float(value) == pytest.approx(expected, rel=rel), (g, value, expected)


# cache size -> (indices, pi, V) from cache.pickle (10 items, alpha = 0.5)
CACHE = {
    5: (
        [0, 4, 10, 19],
        [0.31903890586441513, 0.511629612019273, 0.680961094135584, 0.40297115868807326],
        [-0.016376074785598153, 0.000981928327074222, 0.016376074785598153, -0.009406103848008914],
    ),
    3: (
        [0, 4, 10, 19],
        [0.16413946255865505, 0.3051216226338379, 0.8358605374413448, 0.6169099021284943],
        [
            -0.009724940028419221,
            -0.0004808470575524066,
            0.009724940028419221,
            -0.008432011709031309,
        ],
    ),
}


@pytest.mark.parametrize("size", [5, pytest.param(3, marks=pytest.mark.slow)])
def test_random_cache_matches_rmf_tool(size):
    m = load_model("cache_random", n=10, m=size, alpha="0.5")
    sol = solve(m, {}, dps=15)
    idx, pi, V = CACHE[size]
    for k, p, v in zip(idx, pi, V, strict=True):
        assert float(sol.s_star[k]) == pytest.approx(p, rel=1e-12)
        assert float(sol.V[k]) == pytest.approx(v, rel=1e-10, abs=1e-15)
    # the hit rate's expansion: sum_i p_i (c_i* + V_{c_i}/N) with the same popularities
    from derive.models.cache import zipf

    pop = [float(p) for p in zipf(10, __import__("sympy").Rational(1, 2))]
    e = sol.observable(m, "hit_rate")
    assert float(e.g0) == pytest.approx(
        sum(p * float(sol.s_star[10 + i]) for i, p in enumerate(pop))
    )
    assert float(e.g1) == pytest.approx(sum(p * float(sol.V[10 + i]) for i, p in enumerate(pop)))
    assert e.g1 > 0  # finite caches hit more often than the mean field says


BIKE_MAX_V = {"7": 0.07064348633719213, "6": 0.06386175807663369, "9": 0.08500187953529433}
BIKE_V_OVER_PI_S9 = [
    -2.45517316, -1.63099948, -0.94224151, -0.38889924, 0.02902733, 0.31153818,
    0.45863333, 0.47031277, 0.34657651, 0.08742454, -0.30714314,
]  # fmt: skip


@pytest.mark.parametrize("s", ["7", "6", "9"])
def test_bike_sharing_matches_rmf_tool_example(s):
    m = load_model("bike_sharing", K=10)
    sol = solve(m, {"lam": "1", "mu": "1", "s": s}, dps=20)
    assert float(max(abs(v) for v in sol.V)) == pytest.approx(BIKE_MAX_V[s], rel=1e-12)
    if s == "9":
        ratio = [float(v / p) for v, p in zip(sol.V, sol.s_star, strict=True)]
        assert ratio == pytest.approx(BIKE_V_OVER_PI_S9, abs=6e-9)
    e = sol.observable(m, "problematic")
    assert 0 < float(e.g0) < 1


# rmf_tool misc/jsqD_simulate/steadyState/exp_rho{70,90,95}_d2_N{10,100}.npy: the
# authors' own simulations of JSQ(2) with infinite buffers (rows: steady-state
# samples of x_0 .. x_19); the mean queue length sum_k x_k over the rows and its
# standard error (rows treated as independent samples).
JSQ2_SIMULATION = {
    ("0.7", 10): (1.2192976, 0.00014467684816962183),
    ("0.7", 100): (1.1387389404347825, 0.00011230801163735064),
    ("0.9", 10): (2.8002988932432435, 0.0007627362158760356),
    ("0.9", 100): (2.3930885321739126, 0.0004916762740217644),
    ("0.95", 10): (4.299288242857143, 0.002773096847741461),
    ("0.95", 100): (3.3066095008695653, 0.001125116524099809),
}


@pytest.mark.parametrize("rho", ["0.7", "0.9", "0.95"])
def test_jsq2_mean_queue_length_against_the_authors_simulations(rho):
    """Each order of the expansion of E[sum_k S_k] gets closer to the authors'
    simulation, and at N = 100 the 1/N^2 value lies within 3 standard errors."""
    fam = load_model("jsq_L", L=2)
    sol = solve(fam, {"alpha": rho, "beta": "1"}, dps=20, order=2)
    e = sol.observable(fam, "queue_length")
    for N in (10, 100):
        sim, se = JSQ2_SIMULATION[(rho, N)]
        err = [abs(float(e.value(N, k)) - sim) for k in (0, 1, 2)]
        assert err[2] < err[1] < err[0], (N, err)
        if N == 100:
            assert err[2] < 3 * se


def test_sir_matches_rmf_tool_basic_example():
    """rmf_tool ``BasicExample_SIR.ipynb``: infection at rate x_S + 2 x_S x_I,
    recovery x_I, loss of immunity 3 x_R (mfstein's ``sir`` with a = 1, beta = 2,
    gamma = 1, rho = 3); printed pi and V (8 decimals)."""
    m = load_model("sir")
    sol = solve(m, {"beta": "2", "gamma": "1", "rho": "3", "a": "1"}, dps=20, order=2)
    assert [float(v) for v in sol.s_star] == pytest.approx(
        [0.26259518, 0.55305361, 0.1843512], abs=6e-9
    )
    assert [float(v) for v in sol.V] == pytest.approx(
        [0.15875529, -0.11906646, -0.03968882], abs=6e-9
    )
    e = sol.observable(m, "infected")
    assert float(e.g0) == pytest.approx(0.55305361, abs=6e-9)
    assert float(e.g1) == pytest.approx(-0.11906646, abs=6e-9)
    # the notebook's refined value at N = 10 (pi + V/N), and its simulation
    # 0.54281585 +/- 0.00547974 covers the order-2 value as well
    assert float(e.value(10, 1)) == pytest.approx(0.54114697, abs=6e-9)
    assert abs(float(e.value(10, 2)) - 0.54281585) < 0.00547974


def test_bike_sharing_expansion_against_exact_chains():
    """The finite systems (s N bikes, the reference point a valid state of each)
    against the expansion of the fraction of problematic stations."""
    from numeric.exact import solve as exact_solve

    m = load_model("bike_sharing", K=4)
    p = {"lam": "1", "mu": "1", "s": "2"}
    sol = solve(m, p, dps=20, order=2)
    e = sol.observable(m, "problematic")
    for N in (10, 20):
        x = exact_solve(m, p, N=N).expect("problematic").mean
        err = [abs(x - float(e.value(N, k))) for k in (0, 1, 2)]
        assert err[2] < err[1] < err[0], (N, err)


def _rational_sir():
    """rmf_tool ``Example_nonStableSIR.ipynb`` / ``misc/SIR_simulate``: infection at
    rate S (1 + 10 I/(a + S)), recovery 5 I, loss of immunity (10 S + 0.1) R,
    R = 1 - S - I (a user model with rational rates)."""
    import sympy as sp

    from derive import Model, Transition
    from derive.spec import ModelInfo, Parameter, StateSpace

    S, I, a = sp.symbols("S I a")
    return Model(
        "sir_rational",
        (S, I),
        (a,),
        [
            Transition((-1, 1), S * (1 + 10 * I / (a + S))),
            Transition((0, -1), 5 * I),
            Transition((1, 0), (10 * S + sp.Rational(1, 10)) * (1 - S - I)),
        ],
        info=ModelInfo(
            parameters=(Parameter("a", low=0),),
            state_space=StateSpace("simplex", total=1.0),
            reference=(sp.Rational(1, 2), sp.Rational(1, 2)),
        ),
    )


# misc/SIR_simulate/traj/steadyStateN{N}a0.3.txt: 100 independent runs, each the time
# average of (S, I) over t in [100, 1000]; their mean and standard error.
RATIONAL_SIR_SIMULATION = {
    1000: ((0.21381374000000006, 4.806367960289446e-05), (0.23977486, 2.2804350196372444e-05)),
    2000: ((0.21248375999999997, 3.2788936665844515e-05), (0.24081154, 1.76850357333224e-05)),
}


def test_rational_sir_matches_rmf_tool():
    m = _rational_sir()
    sol = solve(m, {"a": "0.5"}, dps=20)
    # the notebook's printed fixed point, V and W at a = 0.5
    assert [float(v) for v in sol.s_star] == pytest.approx([0.31199746, 0.26950822], abs=6e-9)
    assert [float(v) for v in sol.V] == pytest.approx([1.28376883, -1.32697402], abs=6e-9)
    W = [[float(sol.W[i, j]) for j in range(2)] for i in range(2)]
    assert W[0] == pytest.approx([1.45092322, -0.23627429], abs=6e-9)
    assert W[1] == pytest.approx([-0.23627429, 0.54280068], abs=6e-9)
    # a = 0.3, near the loss of stability: large 1/N^2 terms, and the expansion to
    # 1/N^2 within 3 standard errors of the authors' simulations at N = 1000, 2000
    sol = solve(m, {"a": "0.3"}, dps=20, order=2)
    for k, g in enumerate(("S", "I")):
        e = sol.observable(m, g)
        assert abs(float(e.g2)) > 50
        for N, sims in RATIONAL_SIR_SIMULATION.items():
            mean, se = sims[k]
            assert abs(float(e.value(N, 2)) - mean) < 3 * se, (g, N)
