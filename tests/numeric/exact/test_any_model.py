"""numeric.exact.general.solve: exact stationary laws of any model, each checked
against an independent computation."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

from derive.models import load_model
from mfstein.ground.errors import NumericalError, ParameterError
from numeric.exact.general import solve

SIR = {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}


@pytest.fixture(scope="module")
def sir():
    return load_model("sir")


@pytest.fixture(scope="module")
def sir_second_order(sir):
    import numeric

    sol = numeric.solve(sir, SIR, order=2, dps=20, start=["1", "0", "0"])
    return np.array([float(x) for x in sol.A])


def test_sir_converges_to_refined_mean_field_at_rate_one_over_n_squared(sir, sir_second_order):
    """E[S] = s* + V/N + A/N^2 + O(1/N^3): N^2 (E[S] - s* - V/N) -> A (numeric.meanfield.stationary,
    an independent computation) with an error O(1/N)."""
    A = sir_second_order
    scaled_errors = []
    for N in (50, 100, 200, 400):
        r = solve(sir, SIR, N=N)
        assert r.relative_residual <= r.tolerance
        assert r.states == math.comb(N + 2, 2)  # S + I + R = N, all reachable
        assert abs(r.mean.sum() - 1) < 1e-12  # the conservation law, exactly
        d = N**2 * (r.mean - r.s_star - r.V / N)
        scaled_errors.append(N * np.abs(d - A).max())
        assert np.abs(d - A).max() < 100 / N
    # N (N^2 (E[S] - s* - V/N) - A) stays bounded and settles: the rate is 1/N^2
    assert max(scaled_errors) / min(scaled_errors) < 1.2


def test_sir_start_fixes_the_conservation_law(sir):
    """A start with S + I + R = 1 gives the chain on N individuals; the rounded start
    keeps the law exactly."""
    r = solve(sir, SIR, N=20, start=["0.5", "0.45", "0.05"])
    assert sum(r.start) == 20 and r.law_values == ["20"]
    assert r.states == math.comb(22, 2)


def test_round_off_zero_rate_is_not_refused(sir, tmp_path):
    """Loss of immunity written as rho (1 - S) - rho I (= rho R on S + I + R = 1): at
    S = 4/5, I = 1/5 float64 gives 0.5 (1 - 0.8) - 0.5 * 0.2 = -1.4e-17 (the 1 - 0.8 - 0.2 of
    the issue); the exact rational is 0, so the chain is the SIR chain."""
    path = tmp_path / "sir_roundoff.py"
    path.write_text(
        textwrap.dedent(
            """
            import sympy as sp
            from derive import Model, Transition
            from derive.spec import ModelInfo, Parameter, StateSpace

            def sir_roundoff():
                S, I, R = sp.symbols("S I R")
                beta, gamma, rho, a = sp.symbols("beta gamma rho a")
                return Model(
                    "sir-roundoff", (S, I, R), (beta, gamma, rho, a),
                    [Transition((-1, 1, 0), (a + beta * I) * S, "infection"),
                     Transition((0, -1, 1), gamma * I, "recovery"),
                     Transition((1, 0, -1), rho * (1 - S) - rho * I, "loss of immunity")],
                    info=ModelInfo(
                        parameters=tuple(Parameter(n, low=0) for n in "beta gamma rho a".split()),
                        state_space=StateSpace("simplex"), conservation=((1, 1, 1),),
                        reference=("0.99", "0.01", "0")),
                )
            """
        )
    )
    assert 0.5 * (1 - 0.8) - 0.5 * 0.2 < 0
    m = load_model(f"{path}:sir_roundoff")
    r = solve(m, SIR, N=5)
    ref = solve(sir, SIR, N=5)
    assert r.exact_states > 0
    np.testing.assert_allclose(r.mean, ref.mean, rtol=0, atol=1e-13)
    assert abs(r.n_mse - ref.n_mse) < 1e-12


def test_jsq_distinct_identity_and_variance_limit():
    """C. Graham's JSQ(L), L = 2 distinct queues, rho = 1/2: E R^N(1) = rho (1 - P(block))
    (flow balance: the busy fraction serves what is accepted) at every N, so E R^N(1) = rho
    up to the blocking of the finite buffer b = 6 (below 1e-5 here); N Var R^N(1)
    increases to W_11 of the limit at rate 1/N."""
    import numeric

    b = 6
    m = load_model("jsq_L", L=2, b=b, distinct=True)
    params = {"alpha": "0.5", "beta": 1}
    W11 = float(numeric.solve(load_model("jsq_L", L=2, b=b), params, dps=20).W[0, 0])
    variances, gaps = [], []
    for N in range(4, 13):
        r = solve(m, params, N=N)
        assert r.relative_residual <= r.tolerance
        assert r.states == math.comb(N + b, b)
        assert abs(r.mean[0] - 0.5 * (1 - r.blocking)) < 1e-10  # to the residual tolerance
        assert abs(r.mean[0] - 0.5) < (1e-5 if N < 10 else 1e-9)  # the buffer's blocking
        variances.append(r.n_cov[0, 0])
        gaps.append(N * (W11 - r.n_cov[0, 0]))
    assert np.all(np.diff(variances) > 0) and variances[-1] < W11
    assert np.all(np.diff(gaps) < 0) and gaps[-1] > 0
    assert gaps[0] / gaps[-1] < 1.2  # N (W_11 - N Var) bounded: the rate is 1/N


def test_supermarket_service_rate_rescales_time_only():
    """mu != 1: the generator is mu times that of the chain with lam/mu, so the stationary
    laws agree (two different generators); solve_exact, now a wrapper of the same
    solver, reports the same law through its own statistics code."""
    from mfstein.families.supermarket.exact import solve_exact

    fast = solve(load_model("supermarket", b=4, mu="mu"), {"lam": "1.8", "mu": 2}, N=8)
    unit = solve(load_model("supermarket", b=4), {"lam": "0.9"}, N=8)
    old = solve_exact(8, "0.9", 4)
    for r in (fast, unit):
        np.testing.assert_allclose(r.mean, old.mean, rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.n_cov, old.n_cov, rtol=0, atol=1e-10)
        assert abs(r.n_mse - old.n_mse) < 1e-10
        assert abs(r.blocking - old.blocking) < 1e-12
        np.testing.assert_allclose(r.queue_length_pmf, old.queue_length_pmf, atol=1e-12)
    np.testing.assert_allclose(fast.s_star, old.s_star, atol=1e-14)


def test_case_where_the_old_solver_returned_garbage():
    """solve_exact(320, "0.9", 2, 3) once returned N E||S - s*||^2 = 14890 after 86 s; the
    generic solver checks its residual and agrees with the mean-field constant to O(1/N)."""
    r = solve(load_model("supermarket", b=2, d=3), {"lam": "0.9"}, N=320)
    assert r.states == math.comb(322, 2) and r.relative_residual <= r.tolerance
    assert abs(r.n_mse - r.constant) < 0.01
    assert np.abs(r.n_bias - r.V).max() < 0.05


def test_truncated_orthant_is_a_truncated_poisson(tmp_path):
    """Births at rate N lam, deaths at rate mu n: Poisson(N lam / mu), unbounded; with the
    truncation n <= N T the stationary law is the Poisson law conditioned on n <= N T."""
    path = tmp_path / "immigration.py"
    path.write_text(
        textwrap.dedent(
            """
            import sympy as sp
            from derive import Model, Transition
            from derive.spec import ModelInfo, Parameter, StateSpace

            def immigration():
                x, lam, mu = sp.symbols("x lam mu")
                return Model("immigration-death", (x,), (lam, mu),
                    [Transition((1,), lam, "arrival"), Transition((-1,), mu * x, "death")],
                    info=ModelInfo(parameters=(Parameter("lam", low=0), Parameter("mu", low=0)),
                                   state_space=StateSpace("orthant")))
            """
        )
    )
    m = load_model(f"{path}:immigration")
    N, lam = 10, 0.5
    r = solve(m, {"lam": lam, "mu": 1}, N=N, truncation=2)
    k = np.arange(21)
    poisson = np.array([math.exp(-N * lam) * (N * lam) ** j / math.factorial(j) for j in k])
    np.testing.assert_allclose(r.marginal_pmf[0], poisson / poisson.sum(), rtol=1e-9, atol=0)
    # the given truncation reports the mass it cuts: P(n = 20) of the conditioned law ...
    assert not r.truncation.chosen and r.truncation.level == 20
    assert r.truncation.boundary == pytest.approx(poisson[-1] / poisson.sum(), rel=1e-9)
    # ... and without one the solver chooses a level whose cut is below 1e-12
    auto = solve(m, {"lam": lam, "mu": 1}, N=N)
    assert auto.truncation.chosen and auto.truncation.mass <= 1e-12
    k = np.arange(auto.truncation.level + 1)
    full = np.array([math.exp(-N * lam) * (N * lam) ** j / math.factorial(j) for j in k])
    np.testing.assert_allclose(auto.marginal_pmf[0], full, rtol=1e-8, atol=1e-15)


def test_a_result_is_never_returned_above_the_tolerance(sir):
    with pytest.raises(NumericalError, match="above the tolerance"):
        solve(sir, SIR, N=10, tol=1e-300)


def test_general_solver_meets_independently_assembled_balance_equations(sir, transposed_generator):
    """The issue's case: the older chain wrapper on SIR once returned E[S] = [0.972, 0.027,
    0.0003] with residual 27.2.  The general solver's law satisfies the balance equations
    of a generator assembled independently (tests/conftest.py) to its tolerance, and its
    rate of up-jumps is the one of that generator."""
    p = [3.0, 1.0, 0.5, 0.1]
    r = solve(sir, {"beta": 3, "gamma": 1, "rho": 0.5, "a": 0.1}, N=30, start=["1", "0", "0"],
              tol=1e-13)  # fmt: skip
    QT, up = transposed_generator(r.state_array, sir.kernels("numba"), p, 30)
    qmax = float(-QT.diagonal().min())
    assert np.abs(QT @ r.pi).sum() <= 1e-13 * qmax and abs(r.pi.sum() - 1) < 1e-14
    assert r.up_rate == pytest.approx(float(r.pi @ up), rel=1e-13)
    assert abs(r.mean.sum() - 1) < 1e-12  # S + I + R = N on every state


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m: solve(m, {**SIR, "gamma": -1}, N=10), "gamma must be > 0"),
        (lambda m: solve(m, {"beta": 3}, N=10), "needs a value for"),
        (lambda m: solve(m, SIR, N=10, start=["0.7", "0.6", "0"]), "state space"),
        (lambda m: solve(m, SIR, N=0), "N must be an integer >= 1"),
        (lambda m: solve(m, SIR, N=10**6, memory_limit=1e6), "memory limit"),
    ],
)
def test_bad_input_is_one_sentence(sir, call, match):
    with pytest.raises(ParameterError, match=match) as info:
        call(sir)
    assert str(info.value).count("\n") == 0


def test_models_with_n_parameter_and_infinite_buffers_are_refused():
    m = load_model("supermarket", b=3, replacement=False)
    with pytest.raises(ParameterError, match="N must be an integer >= 2"):
        solve(m, {"lam": "0.5"}, N=1)
    with pytest.raises(ParameterError, match="unbounded state space"):
        solve(load_model("jsq_L"), {"alpha": "0.5", "beta": 1}, N=5)


def test_without_replacement_small_n_is_solved_by_both_assemblies():
    """d = 3 of N = 7 without replacement: J(s*) has an off-diagonal product <= 0.

    The mean field's spectral cross-check must step aside (not refuse the model);
    the general assembly and the supermarket's own state space then agree.
    """
    from numeric.exact import solve_exact

    model = load_model("supermarket", b=4, d=3, replacement=False)
    general = solve(model, {"lam": 0.9}, N=7, route="general")
    special = solve_exact(7, 0.9, 4, d=3, replacement=False)
    assert general.residual < 1e-10
    assert general.n_mse == pytest.approx(special.n_mse, rel=1e-9)
    np.testing.assert_allclose(general.mean, special.mean, rtol=1e-9)


@pytest.mark.parametrize("method", ["direct", "bicgstab"])
def test_an_absorbing_closed_class_is_a_point_mass(method):
    """Deaths at rate x |2 - x| stop at x = 2, where the truncation blocks births: the one
    closed class is that absorbing state, so pi is the point mass there (its zero exit
    rate is not stored by SciPy; the pinned system was singular: an internal error)."""
    import sympy as sp

    from derive import Model, Transition
    from derive.spec import ModelInfo, StateSpace

    x, lam = sp.symbols("x lam")
    m = Model(
        "absorbed",
        (x,),
        (lam,),
        [Transition((1,), lam), Transition((-1,), x * sp.Abs(2 - x))],
        info=ModelInfo(state_space=StateSpace("orthant"), reference=(sp.Rational(1, 2),)),
    )
    N = 4
    r = solve(m, {"lam": "0.7"}, N=N, truncation=2, solver=method)
    top = int(np.argmax(r.state_array[:, 0]))
    assert r.state_array[top, 0] == 2 * N and r.pi[top] == pytest.approx(1.0, abs=1e-12)
    assert r.relative_residual <= r.tolerance


def test_a_constant_state_is_a_conserved_coordinate():
    """y never moves (no jump touches it): exact once refused the model; y is a
    conserved coordinate fixed by the start, and x, born at rate N lam y and dying at
    rate N x, is Poisson(N lam y) conditioned on x <= T (the truncation)."""
    import sympy as sp

    from derive import Model, Transition
    from derive.spec import ModelInfo, StateSpace

    x, y, lam = sp.symbols("x y lam")
    m = Model(
        "constant-y",
        (x, y),
        (lam,),
        [Transition((1, 0), lam * y, "birth"), Transition((-1, 0), x, "death")],
        info=ModelInfo(
            state_space=StateSpace("orthant"), reference=(sp.Rational(1, 2), sp.Integer(1))
        ),
    )
    N, T = 5, 2
    for y0 in ("1", "0.4"):
        r = solve(m, {"lam": "0.5"}, N=N, truncation=T, start=["0.2", y0])
        ny = round(float(y0) * N)
        assert set(r.state_array[:, 1]) == {ny}
        mean = N * 0.5 * ny / N
        k = np.arange(N * T + 1)
        law = np.array([mean**j / math.factorial(j) for j in k])
        np.testing.assert_allclose(r.marginal_pmf[0], law / law.sum(), rtol=1e-9, atol=1e-15)
