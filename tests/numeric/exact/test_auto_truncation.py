"""Issue 32: an exact chain on an unbounded state space chooses its truncation.

Without ``truncation=`` the solver raises the level ``n_k <= U`` until the stationary
mass it cuts is below ``truncation_tol`` (default 1e-12) and reports that mass
(:mod:`numeric.exact.truncation`).  Each law is checked against a closed form of the
untruncated chain: the M/M/1 and M/M/c (Erlang C) queues, the M/M/infinity queue
(Poisson) and a two-station tandem line (product form, Jackson's theorem with
state-dependent service); the distance in total variation must lie within the
reported cut (plus the solver's residual).
"""

from __future__ import annotations

import json
import math
import textwrap

import numpy as np
import pytest

from derive.models import load_model
from mfstein.ground.errors import ParameterError
from numeric.exact.general import solve

MODELS = """
import sympy as sp
from derive import Model, Transition

def tandem():
    x, y, lam, c = sp.symbols("x y lam c")
    return Model("tandem", (x, y), (lam, c), [Transition((1, 0), lam),
        Transition((-1, 1), sp.Min(x, c)), Transition((0, -1), sp.sqrt(y))])
"""


@pytest.fixture(scope="module")
def tandem(tmp_path_factory):
    """One model for every check (the exact solver compiles its search once per model):
    station x is the M/M/(cN) queue with arrivals N lam whatever y does, so its
    marginal law is the M/M/c, M/M/1 or M/M/infinity law; the pair is a tandem line."""
    path = tmp_path_factory.mktemp("plain") / "models.py"
    path.write_text(textwrap.dedent(MODELS))
    return load_model(f"{path}:tandem")


def _birth_death(birth, death, top: int) -> np.ndarray:
    """The law of a birth-death chain on 0..top (top far beyond any cut): the closed
    form pi(n) = pi(0) prod_k birth(k - 1) / death(k), computed in logarithms."""
    logs = np.zeros(top + 1)
    for n in range(1, top + 1):
        logs[n] = logs[n - 1] + math.log(birth(n - 1)) - math.log(death(n))
    law = np.exp(logs - logs.max())
    return law / law.sum()


def _tv(pmf: np.ndarray, exact: np.ndarray) -> float:
    n = len(pmf)
    return 0.5 * (np.abs(pmf - exact[:n]).sum() + exact[n:].sum())


def test_mm1_at_n_1_is_geometric(tandem):
    """Min(x, 1) at N = 1 is the M/M/1 queue: pi(n) = (1 - rho) rho^n."""
    r = solve(tandem, {"lam": "0.8", "c": 1}, N=1)
    cut = r.truncation
    assert cut.chosen and cut.mass <= 1e-12 and cut.tolerance == 1e-12
    pmf = r.marginal_pmf[0]
    geometric = 0.2 * 0.8 ** np.arange(4 * len(pmf))
    assert _tv(pmf, geometric) <= cut.mass + 1e-13
    assert r.mean[0] == pytest.approx(0.8 / 0.2, rel=1e-9)


def test_mmc_is_erlang_c(tandem):
    """Min(x, 2) at N = 10: the M/M/20 queue with offered load 15 (Erlang C)."""
    N, lam, c = 10, 1.5, 2
    r = solve(tandem, {"lam": lam, "c": c}, N=N)
    exact = _birth_death(lambda n: N * lam, lambda n: min(n, c * N), 2000)
    assert r.truncation.mass <= 1e-12
    assert _tv(r.marginal_pmf[0], exact) <= r.truncation.mass + 1e-12
    a, servers = N * lam, c * N  # Erlang C: P(wait) and the mean queue length
    head = sum(a**k / math.factorial(k) for k in range(servers))
    tail = a**servers / math.factorial(servers) * servers / (servers - a)
    wait = tail / (head + tail)
    assert r.marginal_pmf[0][servers:].sum() == pytest.approx(wait, rel=1e-9)
    mean = a + wait * a / (servers - a)
    assert r.mean[0] * N == pytest.approx(mean, rel=1e-10)


def test_m_m_infinity_is_poisson_with_a_looser_tolerance(tandem):
    """Min(x, 100) at N = 5: every one of the 500 servers serves below the cut, so the
    chain is the M/M/infinity queue with arrivals 10: Poisson(10)."""
    r = solve(tandem, {"lam": "2", "c": 100}, N=5, truncation_tol=1e-6)
    assert r.truncation.tolerance == 1e-6 and r.truncation.mass <= 1e-6
    k = np.arange(200)
    poisson = np.exp(-10.0 + k * math.log(10.0) - np.array([math.lgamma(j + 1) for j in k]))
    assert _tv(r.marginal_pmf[0], poisson) <= r.truncation.mass + 1e-12


def test_tandem_line_is_product_form(tandem):
    """x: M/M/N with arrivals N lam; y: arrivals N lam (Burke), deaths sqrt(N n)."""
    N, lam = 10, 0.5
    r = solve(tandem, {"lam": lam, "c": 1}, N=N)
    assert r.truncation.chosen and r.truncation.mass <= 1e-12
    px = _birth_death(lambda n: N * lam, lambda n: min(n, N), 400)
    py = _birth_death(lambda n: N * lam, lambda n: math.sqrt(N * n), 400)
    joint = px[r.state_array[:, 0]] * py[r.state_array[:, 1]]
    outside = 1.0 - joint.sum()  # the product law's mass beyond the kept states
    assert 0.5 * (np.abs(r.pi - joint).sum() + outside) <= r.truncation.mass + 1e-11
    # the mean field's fixed point is found though the origin is a point of no derivative
    assert r.s_star == pytest.approx([0.5, 0.25], abs=1e-12)


def test_the_cut_is_reported_in_json_and_text(tandem):
    r = solve(tandem, {"lam": "0.8", "c": 1}, N=1)
    d = json.loads(r.to_json())["truncation"]
    assert d["chosen"] and d["level"] == r.truncation.level and d["mass_cut"] <= 1e-12
    assert "truncation" in repr(r) and "bounded by it" in repr(r)
    given = solve(tandem, {"lam": "0.8", "c": 1}, N=1, truncation=20)
    assert not given.truncation.chosen and given.truncation.level == 20
    assert 0 < given.truncation.boundary < 1e-1


@pytest.mark.parametrize(
    ("keywords", "match"),
    [
        ({"truncation_tol": 0.5}, "truncation_tol must be a real number >= 1e-15 and <= 0.01"),
        ({"truncation_tol": 1e-9, "truncation": 3}, "cannot be given with truncation="),
        ({"memory_limit": 5000}, "needs a truncation at n_k <= "),
    ],
)
def test_refusals_are_one_sentence(tandem, keywords, match):
    with pytest.raises(ParameterError, match=match) as info:
        solve(tandem, {"lam": "0.8", "c": 1}, N=1, **keywords)
    assert str(info.value).count("\n") == 0


def test_the_levels_tried_share_the_chain_prepared_once(tandem, monkeypatch):
    """Each level the search tries is the chain prepared once under another bound: its
    exact rate evaluator (the parameters read as fractions) is made once per call, not
    once per level, and the law is the one of a chain prepared at the chosen level."""
    from numeric.exact import lattice
    from numeric.exact.general import Chain

    made = []

    class Counted(lattice.ExactRates):
        def __init__(self, *args, **kwargs):
            made.append(args)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(lattice, "ExactRates", Counted)
    r = solve(tandem, {"lam": "0.8", "c": 1}, N=3)
    assert r.truncation.chosen and len(made) == 1
    level = r.truncation.level
    ch = Chain.setup(tandem, 3, {"lam": "0.8", "c": 1}, None, level / 3, None)
    assert ch.lattice.upper == level
    solved = ch.solve(np.asarray(r.s_star, dtype=float) * 3, "auto", r.tolerance, False)
    assert np.array_equal(solved.reach.states, r.state_array)
    assert np.array_equal(solved.pi, r.pi)
