"""sim.generic: the generic simulator against exact solutions and the supermarket fast path."""

from __future__ import annotations

import json

import numpy as np
import pytest

from derive.models import load_model
from mfstein.families.supermarket.fast_path import SupermarketFastPath
from mfstein.ground.errors import ParameterError
from sim.api import choose, simulate
from sim.base import CAPABILITIES, SimulationResult, Simulator
from sim.generic import GenericSimulator

SIR = {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}


@pytest.fixture(scope="module")
def sir():
    return load_model("sir")


@pytest.fixture(scope="module")
def sir_run(sir):
    return simulate(sir, SIR, N=50, steps=2 * 10**6, reps=2, seed=1, workers=1)


def test_generic_sir_agrees_with_exact_within_its_ci(sir, sir_run):
    from numeric.exact.general import solve

    exact = solve(sir, SIR, N=50)
    r = sir_run
    assert r.engine == "generic" and r.complete and not r.warnings
    np.testing.assert_allclose(r.s_star, exact.s_star, atol=1e-14)
    assert np.all(np.abs(r.mean.mean - exact.mean) <= r.mean.ci95)
    assert abs(float(r.n_mse.mean) - exact.n_mse) <= float(r.n_mse.ci95)
    assert np.all(np.abs(r.n_cov.mean - exact.n_cov) <= 2 * r.n_cov.ci95)
    # the conservation law holds along every path: E[S + I + R] = 1 exactly
    assert abs(r.mean.mean.sum() - 1) < 1e-12
    marg = r.marginal_pmf
    assert marg.mean.shape == (3, 51)
    np.testing.assert_allclose(marg.mean.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(np.abs(marg.mean[1] - exact.marginal_pmf[1]) <= 2 * marg.ci95[1] + 1e-4)


def test_json_has_todays_keys(sir_run):
    out = json.loads(sir_run.to_json())
    for key in ("mean", "mean_ci95", "n_mse", "n_bias", "n_bias_ci95", "n_cov", "events"):
        assert key in out
    assert out["n_mse"].keys() == {"mean", "ci95"}
    assert out["events_per_second"] > 0 and out["events"] == 2 * 20 * (9 * 10**5 // 10)


def test_generic_supermarket_agrees_with_the_fast_path():
    m = load_model("supermarket", b=4)
    kw = dict(steps=2 * 10**6, reps=2, seed=3, workers=1)
    gen = simulate(m, {"lam": "0.9"}, N=20, engine="generic", **kw)
    fast = simulate(m, {"lam": "0.9"}, N=20, **kw)
    assert gen.engine == "generic" and fast.engine == "supermarket"
    both = np.hypot(gen.mean.ci95, fast.mean.ci95)
    assert np.all(np.abs(gen.mean.mean - fast.mean.mean) <= 2 * both)
    assert abs(float(gen.n_mse.mean) - float(fast.n_mse.mean)) <= 2 * float(
        np.hypot(gen.n_mse.ci95, fast.n_mse.ci95)
    )
    assert abs(float(gen.blocking.mean) - float(fast.blocking.mean)) < 1e-3
    np.testing.assert_allclose(gen.queue_length_pmf.mean.sum(), 1.0, atol=1e-12)


def test_fast_path_takes_the_service_rate_as_a_time_change():
    m = load_model("supermarket", b=3, mu="mu")
    sim = choose(m, {"lam": "1.8", "mu": "2"})(m, 10, {"lam": "1.8", "mu": "2"})
    assert isinstance(sim, SupermarketFastPath) and float(sim.lam_text) == 0.9


def test_checkpoint_resume_is_identical_and_workers_do_not_matter(sir, tmp_path):
    kw = dict(steps=4 * 10**4, reps=2, seed=7, batches=4)
    whole = simulate(sir, SIR, N=30, workers=1, **kw)
    path = tmp_path / "ck.json"
    part = simulate(sir, SIR, N=30, workers=1, checkpoint=path, max_units=3, **kw)
    assert not part.complete and any("incomplete" in w for w in part.warnings)
    rest = simulate(sir, SIR, N=30, workers=2, checkpoint=path, **kw)
    assert rest.complete
    assert float(rest.n_mse.mean) == float(whole.n_mse.mean)
    np.testing.assert_array_equal(rest.mean.mean, whole.mean.mean)
    np.testing.assert_array_equal(rest.n_cov.mean, whole.n_cov.mean)


@pytest.mark.parametrize(("spec", "options"), [("supermarket", {"b": 5}), ("sir", {})])
def test_generated_update_kernel_matches_rates_into(spec, options):
    """update_into(k) recomputes exactly the intensities of coordinate k."""
    from sim.generic_kernels import chain_module

    m = load_model(spec, **options)
    k = m.kernels("numba")
    _, upd = chain_module(m)
    rng = np.random.default_rng(0)
    p = np.array([0.7] if spec == "supermarket" else [3.0, 1.0, 0.5, 0.1])
    for _ in range(20):
        s = np.sort(rng.random(m.n))[::-1].copy()
        full = np.maximum(k.rates(s, p), 0.0)
        for c in range(m.n):
            out = np.full(len(full), np.nan)
            upd.update_into(c, s, p, out)
            mine = upd.DEPS_IDX[upd.DEPS_PTR[c] : upd.DEPS_PTR[c + 1]]
            np.testing.assert_allclose(out[mine], full[mine], rtol=1e-15, atol=0)
            assert np.isnan(np.delete(out, mine)).all()


@pytest.mark.parametrize(
    ("spec", "N", "params", "incremental"),
    [
        # compiling both loops of the 7-level supermarket takes ~45 s from an empty cache
        pytest.param("supermarket", 40, {"lam": "0.95"}, True, marks=pytest.mark.slow),
        ("sir", 30, SIR, False),
    ],
)
def test_unrolled_loop_equals_the_table_driven_loop(spec, N, params, incremental):
    """The two generated event loops do the same arithmetic: identical numbers."""
    from sim.generic import fresh_state, sparse_jumps
    from sim.generic_kernels import chain_module, run_chain
    from sim.rng import seed_states

    m = load_model(spec, **({"b": 7} if spec == "supermarket" else {}))
    sim = GenericSimulator(m, N, params)
    sp = sim.spec
    _, chain = chain_module(m)
    assert chain.INCREMENTAL is incremental and hasattr(chain, "run_chain_unrolled")
    outs = []
    for unrolled in (True, False):
        st = fresh_state(sp, seed_states(3, 1)[0])
        acc = [np.zeros(sp.n), np.zeros((sp.n, sp.n)), np.zeros((sp.n, sp.hist_len))]
        sc = run_chain(
            chain, np.asarray(sp.params), st["n"], sp.N,
            *sparse_jumps(sp.jumps), sp.N * np.asarray(sp.s_star), st["rng"], 20_000, 2,
            sp.kind, sp.upper, sp.total, *acc, np.zeros(0), unrolled=unrolled,
        )  # fmt: skip
        outs.append([sc, st["n"], st["rng"], *acc])
    assert outs[0][0][4] == 20_000 and outs[0][3].any()  # every event, thinned moments kept
    for a, b in zip(*outs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_interface():
    assert issubclass(GenericSimulator, Simulator) and issubclass(SupermarketFastPath, Simulator)
    assert set(GenericSimulator.capabilities) <= set(CAPABILITIES)
    assert GenericSimulator.accepts(load_model("sir"), SIR)
    assert choose(load_model("sir"), SIR) is GenericSimulator
    assert choose(load_model("supermarket", b=2), {"lam": "0.5"}) is SupermarketFastPath
    assert choose(load_model("supermarket", b=2), {"lam": "0.5"}, "generic") is GenericSimulator
    assert "result" not in SimulationResult.__dataclass_fields__
    with pytest.raises(ParameterError, match="no fast-path simulator"):
        choose(load_model("sir"), SIR, "fast")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"N": 10, "params": {**SIR, "a": "-1"}}, "a must be > 0"),
        ({"N": 10, "params": SIR, "start": ["0.5", "0.6", "0"]}, "state space"),
        ({"N": 0, "params": SIR}, "N must be an integer >= 1"),
        ({"N": 10, "params": SIR, "steps": 3}, "steps must be at least"),
    ],
)
def test_bad_input(sir, kwargs, match):
    kwargs = {"steps": 1000, "reps": 1, "workers": 1, **kwargs}
    with pytest.raises(ParameterError, match=match):
        simulate(sir, **kwargs)
