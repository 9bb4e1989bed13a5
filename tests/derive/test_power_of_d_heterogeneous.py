"""power_of_d_heterogeneous: JSQ(d) with K servers of their own speeds, for any d, as
rates of the occupancy averages (the general object-level form of issue 33)."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

import numeric
import numeric.exact
from derive.heterogeneous_population import as_density_model
from derive.models import load_model
from mfstein.ground.errors import ParameterError

SPEEDS = "1/2, 3/4, 1, 5/4, 3/2"


def test_d2_in_the_general_form_is_the_pairwise_model_to_30_digits():
    """The averaged rates lam (others[s] + 2 sum_{u>s} others[u]) and the pairwise
    tensors of power_of_two_heterogeneous: same fixed point and refined term to 30
    digits, and the same exact chain."""
    pair = load_model("power_of_two_heterogeneous", K=5, b=2, speeds=SPEEDS)
    general = load_model("power_of_d_heterogeneous", K=5, b=2, d=2, speeds=SPEEDS)
    assert general.averaged and not general.pairwise and pair.pairwise
    a = numeric.solve(pair, {"lam": "0.8"}, dps=30)
    b = numeric.solve(general, {"lam": "0.8"}, dps=30)
    assert a.digits == b.digits == 30
    with mpmath.workdps(40):
        tol = mpmath.mpf(10) ** -30
        assert max(abs(x - y) for x, y in zip(a.s_star, b.s_star, strict=True)) < tol
        assert max(abs(x - y) for x, y in zip(a.V, b.V, strict=True)) < tol
    ea = numeric.exact.solve(pair, {"lam": "0.8"}, N=5).mean
    eb = numeric.exact.solve(general, {"lam": "0.8"}, N=5).mean
    assert np.abs(ea - eb).max() < 1e-13


def _errors(K: int, sampling: str) -> tuple[float, float]:
    model = load_model("power_of_d_heterogeneous", K=K, b=2, d=3, sampling=sampling,
                       speed_classes="1, 2")
    sol = numeric.solve(model, {"lam": "0.5"}, precision="float64")
    ex = numeric.exact.solve(model, {"lam": "0.5"}, N=K).mean
    return (np.abs(np.array(sol.s_star, dtype=float) - ex).max(),
            np.abs(np.array(sol.refined(), dtype=float) - ex).max())


@pytest.mark.parametrize("sampling", ["distinct", "replacement"])
def test_d3_refined_is_closer_to_the_exact_chain_than_the_mean_field(sampling):
    """d = 3, two classes of speeds 1 and 2, K = 4 and 8 (3^8 = 6,561 states): the
    refined estimate is several times closer to the exact mean than the mean field,
    and its error falls faster (O(1/K^2) against O(1/K))."""
    (mf4, ref4), (mf8, ref8) = _errors(4, sampling), _errors(8, sampling)
    assert ref4 < mf4 / 3 and ref8 < mf8 / 9
    assert ref4 / ref8 > 1.2 * (mf4 / mf8)


@pytest.mark.parametrize(
    "sampling", ["distinct", pytest.param("replacement", marks=pytest.mark.slow)]
)
def test_the_averaged_refined_term_agrees_with_the_density_model_route(sampling):
    """The same model as an ordinary derive.Model (SymPy Hessian, N = 1): its V is the
    population's V / K and its s* the same (an independent route for the averaged
    moves' Taylor term)."""
    K, S = 4, 2
    model = load_model("power_of_d_heterogeneous", K=K, b=1, d=3, sampling=sampling)
    ours = numeric.solve(model, {"lam": "0.6"}, dps=20)
    theirs = numeric.solve(as_density_model(model), {"lam": "0.6"}, dps=20)
    kept = [k * S + s for k in range(K) for s in range(S - 1)]
    with mpmath.workdps(30):
        pairs = zip(kept, theirs.s_star, strict=True)
        assert max(abs(ours.s_star[i] - v) for i, v in pairs) < 1e-18
        assert max(abs(ours.V[i] / K - v) for i, v in zip(kept, theirs.V, strict=True)) < 1e-18


def test_the_distinct_rates_are_the_policy():
    """arrival_rate against a direct count: the probability that server 0 receives a
    job when d distinct servers of K are sampled, over every configuration of the
    others (K = 5, d = 3)."""
    from derive.heterogeneous_population import occupancy
    from derive.models.power_of_d_servers import arrival_rate

    K, d, S = 5, 3, 3
    _mean, others = occupancy(S)
    for levels in itertools.product(range(S), repeat=K - 1):
        for s in range(S - 1):
            count = 0.0
            for sample in itertools.combinations(range(K - 1), d - 1):
                seen = [levels[j] for j in sample]
                if min(seen) >= s:
                    count += 1 / (1 + seen.count(s))
            direct = count / math.comb(K - 1, d - 1) * d  # lam = 1: K lam (d/K) P(wins)
            at = {o: sum(1 for v in levels if v == u) / (K - 1) for u, o in enumerate(others)}
            rate = arrival_rate(K, d, s, others).subs(at).subs("lam", 1)
            assert abs(float(rate) - direct) < 1e-12


def test_observables_by_independent_routes():
    """Per-class utilisation from the exact law's P(empty) by hand; the response time's
    denominator (the throughput) equals the accepted arrival rate lam (1 - P(loss)),
    P(loss) = E[C(n_full, d) / C(K, d)] from the exact law (Little's law's two sides)."""
    from numeric.heterogeneous.observables import observe

    K, b, d, lam = 4, 2, 3, 0.7
    model = load_model("power_of_d_heterogeneous", K=K, b=b, d=d, speed_classes="1, 2")
    ex = numeric.exact.solve(model, {"lam": str(lam)}, N=K)
    got = observe(model, {"lam": str(lam)}, ex, ["utilisation_class0", "jobs", "response_time"])
    P = ex.by_object()
    assert abs(got["utilisation_class0"].value - (1 - P[:2, 0]).mean()) < 1e-13
    # the chain's state code is sum_k s_k (b+1)^k: object 0 is the fastest digit
    digits = np.array(list(itertools.product(range(b + 1), repeat=K)))[:, ::-1]
    full = (digits == b).sum(axis=1)
    loss = float(ex.pi @ np.array([math.comb(int(n), d) / math.comb(K, d) for n in full]))
    jobs = got["jobs"].value
    assert abs(jobs - float((P * np.arange(b + 1)).sum(axis=1).mean())) < 1e-13
    assert abs(got["response_time"].value - jobs / (lam * (1 - loss))) < 1e-10


def test_bad_options_are_one_sentence():
    for kwargs, word in (({"K": 3, "d": 4}, "d must be at most K"),
                         ({"sampling": "maybe"}, "sampling must be"),
                         ({"K": 4, "speed_classes": "1,2,3"}, "C dividing K"),
                         ({"K": 4, "speeds": "1,1,1,1", "speed_classes": "1"}, "not both")):
        with pytest.raises(ParameterError, match=word) as info:
            load_model("power_of_d_heterogeneous", **kwargs)
        assert "\n" not in str(info.value)


@pytest.mark.slow  # compiles the simulator's event loop (about 10 s)
def test_simulation_agrees_with_the_exact_chain():
    import sim

    model = load_model("power_of_d_heterogeneous", K=5, b=2, d=3)
    r = sim.simulate(model, {"lam": "0.6"}, N=5, steps=200_000, reps=4, seed=3)
    ex = numeric.exact.solve(model, {"lam": "0.6"}, N=5).mean
    assert np.all(np.abs(r.mean - ex) < 2.5 * r.ci95 + 1e-3)
