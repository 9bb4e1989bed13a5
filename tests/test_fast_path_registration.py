"""One run-time registration of a user's family, and the routes on the prepared problem.

A user's model family registers once, for every task it serves, with
:func:`mfstein.ground.fast_paths.register` ``(name, FastPath(...))``: the mean
field (``numeric.solve``), the finite-N chain (``numeric.exact.solve``) and the
simulation (``sim.simulate``) find it in the one table, each route is handed the
prepared problem, and :func:`~mfstein.ground.fast_paths.unregister` takes it away
without touching other names or the built-in table.  The three older
registrations are deprecated wrappers onto it, and the supermarket's exact fast
path, restriction and negligible tail take the problem (their older forms warn and
give the same answer).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import numeric
import numeric.exact
from derive import Model, Transition
from derive.models import load_model
from derive.spec import ModelInfo
from mfstein.ground.errors import ParameterError
from mfstein.ground.fast_paths import (
    FAST_PATHS,
    REGISTERED,
    FastPath,
    families,
    load,
    register,
    route,
    unregister,
)
from numeric.exact.prepared import prepare
from numeric.prepared.problem import PreparedProblem, prepare_problem
from sim import simulate
from sim.interpreted import InterpretedSimulator

PARAMS = {"beta": "2", "gamma": "1", "a": "1/10"}
FAMILY = "user-si"


def plain_si(family: str | None = FAMILY) -> Model:
    """States ``s``, ``i`` and two transitions; its info names only the fast path and
    the start (``s + i`` is conserved, so the origin would be a chain of one state)."""
    s, i = sp.symbols("s i")
    beta, gamma, a = sp.symbols("beta gamma a")
    transitions = [Transition((-1, 1), (beta * i + a) * s), Transition((1, -1), gamma * i)]
    info = ModelInfo(reference=("9/10", "1/10"), fast_path=family)
    return Model(f"plain-si-{family}", (s, i), (beta, gamma, a), transitions, info=info)


class UserSimulator(InterpretedSimulator):
    """The user's simulator: the generic chain on the interpreted loop, its own name."""

    name = FAMILY


@pytest.fixture
def user_family():
    """The user's family registered once for three tasks; yields the problems (and
    ``N``) each route was handed."""
    calls: dict[str, list] = {"mean_field": [], "exact": []}

    def mean_field(problem, *, dps, M):
        calls["mean_field"].append(problem)
        return numeric.solve(problem.model, dict(problem.params), dps=dps, M=M, route="general")

    def exact(problem, *, N, solver, tol, memory_limit, progress):
        calls["exact"].append((problem, N))
        return numeric.exact.solve(
            problem.model, dict(problem.params), N=N, route="general", solver=solver, tol=tol,
            memory_limit=memory_limit, progress=progress,
        )  # fmt: skip

    register(FAMILY, FastPath(mean_field=mean_field, exact=exact, simulation=UserSimulator))
    yield calls
    unregister(FAMILY)


def test_a_user_family_registered_once_serves_solve_exact_and_simulate(user_family):
    model = plain_si()
    sol = numeric.solve(model, PARAMS, dps=20)
    assert user_family["mean_field"] == [prepare_problem(model, PARAMS)]  # the one problem
    general = numeric.solve(model, PARAMS, dps=20, route="general")
    assert sol == general

    chain = numeric.exact.solve(model, PARAMS, N=12)
    (problem, N), *_ = user_family["exact"]
    assert isinstance(problem, PreparedProblem) and problem.model is model and N == 12
    assert problem is prepare(model, 12, PARAMS).problem()
    other = numeric.exact.solve(model, PARAMS, N=12, route="general")
    assert np.array_equal(chain.pi, other.pi) and np.array_equal(chain.s_star, other.s_star)

    run = simulate(model, PARAMS, N=20, steps=2_000, reps=1, seed=3, workers=1)
    assert run.engine == FAMILY
    assert families("simulation")[-1] == FAMILY and families("exact")[-1] == FAMILY


def test_unregistering_and_other_names_are_unaffected(user_family):
    numeric.solve(plain_si("another-name"), PARAMS, dps=15)  # a name nobody registered
    assert user_family["mean_field"] == []
    assert route("supermarket", "exact") == FAST_PATHS["supermarket"].exact  # built in
    assert load(FAMILY, "negligible_tail") is None  # a task the family leaves out
    unregister(FAMILY)
    assert FAMILY not in REGISTERED and route(FAMILY, "mean_field") is None
    numeric.solve(plain_si(), PARAMS, dps=15)
    run = simulate(plain_si(), PARAMS, N=20, steps=2_000, reps=1, seed=3, workers=1)
    assert user_family["mean_field"] == [] and run.engine == "generic"
    assert unregister(FAMILY) is None  # twice: nothing left to remove


def test_a_registration_over_a_built_in_name_keeps_its_other_tasks():
    register("supermarket", FastPath(exact="numeric.exact.general:solve"))
    try:
        assert route("supermarket", "exact") == "numeric.exact.general:solve"
        assert route("supermarket", "simulation") == FAST_PATHS["supermarket"].simulation
    finally:
        unregister("supermarket")
    assert route("supermarket", "exact") == FAST_PATHS["supermarket"].exact


@pytest.mark.parametrize(
    "args, match",
    [(("", FastPath()), "name must be a non-empty string"), (("x", {}), "fast_path must be")],
)
def test_bad_registrations_are_refused_in_one_sentence(args, match):
    with pytest.raises(ParameterError, match=match):
        register(*args)


def test_a_simulation_route_that_is_no_simulator_is_refused_when_looked_up():
    from sim.base import fast_simulator

    register("no-simulator", FastPath(simulation=int))
    try:
        with pytest.raises(ParameterError, match=r"must subclass sim\.base\.Simulator, got"):
            fast_simulator(plain_si("no-simulator"))
    finally:
        unregister("no-simulator")


def test_the_older_registrations_are_wrappers_onto_the_one_table():
    from numeric.meanfield.fast_paths import register_fast_path as register_mean_field
    from sim.base import fast_simulator, register_simulator

    seen = []

    def old_exact(model, params, *, N, method, tol, memory_limit, progress):
        seen.append((model, dict(params), N, method))
        return numeric.exact.solve(model, params, N=N, route="general", solver=method)

    def solver(problem, *, dps, M):
        return numeric.solve(problem.model, dict(problem.params), dps=dps, route="general")

    model = plain_si("old-forms")
    try:
        with pytest.warns(DeprecationWarning, match="register_fast_path is deprecated"):
            register_mean_field("old-forms", solver)
        with pytest.warns(DeprecationWarning, match=r"f\(problem, \*, N, solver"):
            numeric.exact.register_fast_path("old-forms", old_exact)
        with pytest.warns(DeprecationWarning, match="register_simulator is deprecated"):
            register_simulator("old-forms", UserSimulator)
        entry = REGISTERED["old-forms"]  # one entry, every task kept
        assert entry.mean_field is solver and entry.simulation is UserSimulator
        chain = numeric.exact.solve(model, PARAMS, N=8, solver="direct")
        assert seen == [(model, PARAMS, 8, "direct")]
        assert fast_simulator(model) is UserSimulator
        with pytest.raises(ParameterError, match=r"must subclass sim\.base\.Simulator"):
            with pytest.warns(DeprecationWarning):
                register_simulator("old-forms", int)
    finally:
        unregister("old-forms")
    general = numeric.exact.solve(model, PARAMS, N=8, solver="direct", route="general")
    assert np.array_equal(chain.pi, general.pi)


def test_the_supermarket_routes_take_the_problem_and_their_older_forms_warn():
    from derive.models.supermarket import first_levels
    from mfstein.families.supermarket.exact import supermarket_fast
    from mfstein.families.supermarket.tail import negligible_tail

    model, params = load_model("supermarket", b=3), {"lam": "0.9"}
    problem = prepare(model, 10, params).problem()
    new = supermarket_fast(problem, N=10, solver="direct")
    with pytest.warns(DeprecationWarning):
        old = supermarket_fast(model, params, N=10, method="direct")
    assert np.array_equal(new.pi, old.pi) and new.params == old.params
    assert np.array_equal(new.pi, numeric.exact.solve(model, params, N=10, solver="direct").pi)

    assert first_levels(problem, [0, 1]).n == 2 and first_levels(problem, [1]) is None
    with pytest.warns(DeprecationWarning, match="pass the prepared problem"):
        assert first_levels(model, [0, 1]).n == 2

    big = load_model("supermarket", b=40)
    smaller = negligible_tail(prepare_problem(big, {"lam": "0.5"}))
    assert smaller is not None and smaller.n < 40
    with pytest.warns(DeprecationWarning, match="pass the prepared problem"):
        assert negligible_tail(big, {"lam": "0.5"}).n == smaller.n


class OldFormSimulator(InterpretedSimulator):
    """A user's simulator written for the class protocol before the prepared problem: a
    constructor of its own, ``cls(model, N, params, start=, truncation=)``."""

    name = "old-form"

    def __init__(self, model, N, params=None, *, start=None, truncation=None):
        self.built_with = (model, N, dict(params or {}), start, truncation)
        super().__init__(model, N, params, start=start, truncation=truncation)


def test_the_simulation_route_is_handed_the_prepared_problem(user_family):
    """``sim.simulate`` builds the registered simulator from the problem it prepared
    (:meth:`sim.base.Simulator.from_problem`): the simulator holds that problem."""
    from sim.base import simulation_problem

    model = plain_si()
    sim = UserSimulator.from_problem(simulation_problem(model, 20, PARAMS), 20)
    assert sim.problem is prepare(model, 20, PARAMS).problem()
    assert sim.problem is prepare_problem(model, PARAMS)  # no parameter N: the mean field's
    assert (sim.model, sim.N, sim.start, sim.params) == (model, 20, None, PARAMS)
    built = UserSimulator(model, 20, PARAMS)  # the constructor: the same problem, read again
    assert built.problem is sim.problem and built.spec == sim.spec


def test_a_simulator_with_a_constructor_of_its_own_is_built_by_it_with_a_warning():
    register("old-form", FastPath(simulation=OldFormSimulator))
    try:
        model = plain_si("old-form")
        with pytest.warns(DeprecationWarning, match=r"OldFormSimulator.__init__\(model, N"):
            run = simulate(model, PARAMS, N=20, steps=2_000, reps=1, seed=3, workers=1)
        new = simulate(plain_si(None), PARAMS, N=20, steps=2_000, reps=1, seed=3, workers=1)
    finally:
        unregister("old-form")
    assert run.engine == "old-form" and new.engine == "generic"
    assert run.n_mse.mean == new.n_mse.mean and run.s_star == new.s_star  # the same chain


def test_a_simulator_of_something_else_than_a_prepared_problem_is_refused():
    refusal = r"^problem must be a prepared problem .* got Model\.$"
    with pytest.raises(ParameterError, match=refusal):
        UserSimulator.from_problem(plain_si(), 20)
