"""Issue 31: one meaning per name; the old keywords keep working, with a warning.

``route=`` (the mean-field route: ``numeric.solve``, ``numeric.certify``),
``solver=`` (the linear solver: ``numeric.exact.solve``, ``solve_exact``),
``integrator=`` (the ODE integrator: ``numeric.transient``), ``engine=`` (the
simulation loop: ``sim.simulate_supermarket``) replace ``method=`` and
``simulator=``; each old keyword is a deprecated alias
(:func:`mfstein.ground.arguments.renamed_keywords`) that gives the same answer as
the new one.  ``precision="float64" | "dps"`` is taken the same way by every task
that has it.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import sympy as sp

import numeric
import numeric.exact
import sim
from derive import Model, Transition
from mfstein.ground.arguments import renamed_keywords
from mfstein.ground.errors import ParameterError

x, lam = sp.symbols("x lam")
MODEL = Model("birth_death", (x,), (lam,), [Transition((1,), lam * (1 - x)), Transition((-1,), x)])
OK = {"lam": "0.5"}


def _quiet(entry, *args, **kwargs):
    """``entry(*args, **kwargs)`` with every warning turned into an error (the new
    keywords must not warn)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return entry(*args, **kwargs)


def test_solve_method_is_a_deprecated_alias_of_route() -> None:
    new = _quiet(numeric.solve, MODEL, OK, dps=15, route="general")
    with pytest.warns(DeprecationWarning, match=r"method= is deprecated; use route="):
        old = numeric.solve(MODEL, OK, dps=15, method="general")
    assert old.constant == new.constant and old.s_star == new.s_star


def test_exact_method_is_a_deprecated_alias_of_solver() -> None:
    new = _quiet(numeric.exact.solve, MODEL, OK, N=20, solver="direct")
    with pytest.warns(DeprecationWarning, match=r"method= is deprecated; use solver="):
        old = numeric.exact.solve(MODEL, OK, N=20, method="direct")
    assert np.array_equal(old.pi, new.pi) and new.solver == "direct"


def test_transient_method_is_a_deprecated_alias_of_integrator() -> None:
    times = [0.0, 0.5, 1.0]
    new = _quiet(numeric.transient, MODEL, OK, times=times, start=[0.2], integrator="RK45")
    with pytest.warns(DeprecationWarning, match=r"method= is deprecated; use integrator="):
        old = numeric.transient(MODEL, OK, times=times, start=[0.2], method="RK45")
    assert np.array_equal(old.x, new.x) and new.integrator == "RK45"


def test_simulate_supermarket_simulator_is_a_deprecated_alias_of_engine() -> None:
    # the alias is mapped before the value is read: a bad value names engine
    with pytest.warns(DeprecationWarning, match=r"simulator= is deprecated; use engine="):
        with pytest.raises(ParameterError, match="engine must be one of"):
            sim.simulate_supermarket(10, "0.9", 3, simulator="fastest")
    with pytest.raises(ParameterError, match="aggregated engine runs policy 'pod' only"):
        sim.simulate_supermarket(10, "0.9", 3, policy="jsq", engine="aggregated")


def test_the_family_solve_is_named_solve_supermarket_and_solve_warns() -> None:
    """Three ``solve`` became two: the supermarket's ``solve(lam, b, d)`` is
    ``solve_supermarket``; the old name gives the same solution, with a warning that
    points at the caller's line."""
    from mfstein.families.supermarket import solver

    new = _quiet(solver.solve_supermarket, "0.7", 3, dps=15, routes=("shooting",))
    with pytest.warns(
        DeprecationWarning, match=r"solver\.solve is deprecated; use solve_sup"
    ) as rec:
        old = solver.solve("0.7", 3, dps=15, routes=("shooting",))
    assert rec[0].filename == __file__
    assert old.constant == new.constant and old.s_star == new.s_star and old.n == new.n == 3


@pytest.mark.parametrize(
    ("entry", "args", "kwargs"),
    [
        (numeric.solve, (MODEL, OK), {"method": "general", "route": "general"}),
        (numeric.certify, (MODEL, OK), {"method": "auto", "route": "auto"}),
        (numeric.exact.solve, (MODEL, OK), {"N": 5, "method": "direct", "solver": "direct"}),
        (numeric.transient, (MODEL, OK), {"times": [0], "method": "auto", "integrator": "auto"}),
        (sim.simulate_supermarket, (10, "0.9", 3), {"simulator": None, "engine": None}),
    ],
)
def test_old_and_new_keyword_together_is_one_sentence(entry, args, kwargs) -> None:
    with pytest.raises(TypeError, match=r"got both \w+= and its deprecated alias \w+=") as exc:
        entry(*args, **kwargs)
    assert "\n" not in str(exc.value) and str(exc.value).endswith(".")


@pytest.mark.parametrize(
    ("entry", "new", "old"),
    [
        (numeric.solve, "route", "method"),
        (numeric.certify, "route", "method"),
        (numeric.exact.solve, "solver", "method"),
        (numeric.transient, "integrator", "method"),
        (sim.simulate_supermarket, "engine", "simulator"),
    ],
)
def test_signatures_show_the_new_names_only(entry, new: str, old: str) -> None:
    names = inspect.signature(entry).parameters
    assert new in names and old not in names


def test_renamed_keywords_passes_the_value_on_unchanged() -> None:
    @renamed_keywords(old="new")
    def f(*, new: object = None) -> object:
        return new

    marker = object()
    with pytest.warns(DeprecationWarning, match=r"f\(\): old= is deprecated; use new="):
        assert f(old=marker) is marker
    assert _quiet(f, new=marker) is marker


def test_transient_precision_chooses_the_route_as_dps_did() -> None:
    times = [0.0, 1.0]
    f64 = numeric.transient(MODEL, OK, times=times, start=[0.2], order=0)
    named = _quiet(numeric.transient, MODEL, OK, times=times, start=[0.2], order=0,
                   precision="float64", dps=20)  # fmt: skip
    assert named.route == f64.route == "float64" and np.array_equal(named.x, f64.x)
    mp = numeric.transient(MODEL, OK, times=times, start=[0.2], order=0, dps=12)
    named = _quiet(numeric.transient, MODEL, OK, times=times, start=[0.2], order=0,
                   precision="dps", dps=12)  # fmt: skip
    assert named.route == mp.route == "mpmath" and named.dps == 12
    assert np.array_equal(named.x, mp.x)
    default = numeric.transient(MODEL, OK, times=times, start=[0.2], order=0, precision="dps")
    assert default.dps == 30


def test_certify_refuses_float64_in_one_sentence() -> None:
    with pytest.raises(ParameterError, match=r"precision must be 'dps' for certify") as exc:
        numeric.certify(MODEL, OK, precision="float64")
    assert "\n" not in str(exc.value)
    with pytest.raises(ParameterError, match=r"precision must be 'dps' or 'float64'"):
        numeric.certify(MODEL, OK, precision="single")


def test_model_b_is_a_deprecated_name_of_n() -> None:
    from derive import supermarket

    assert _quiet(lambda: MODEL.n) == 1
    with pytest.warns(DeprecationWarning, match=r"Model: b is deprecated; use n instead"):
        assert MODEL.b == MODEL.n
    sm = supermarket(4, 2)
    assert _quiet(lambda: (sm.b, sm.n)) == (4, 4)  # the supermarket's buffer keeps its name


def test_result_fields_have_the_new_names_and_the_old_ones_warn() -> None:
    """``MeanFieldSolution.n`` (was ``b``), ``TransientResult.integrator`` (was
    ``method``), ``SimulationResult.engine`` (was ``simulator``): the old names read
    the same value with a warning; the documented ``--json`` keys stay."""
    import json

    sol = _quiet(numeric.solve, MODEL, OK, dps=15)
    with pytest.warns(DeprecationWarning, match=r"MeanFieldSolution: b is deprecated; use n"):
        assert sol.b == sol.n == 1
    assert json.loads(sol.to_json())["b"] == 1
    tr = _quiet(numeric.transient, MODEL, OK, times=[0.0, 1.0], start=[0.2], integrator="RK45")
    with pytest.warns(DeprecationWarning, match=r"TransientResult: method is deprecated"):
        assert tr.method == tr.integrator == "RK45"
    assert json.loads(tr.to_json())["method"] == "RK45"
    r = _quiet(sim.simulate, MODEL, OK, N=10, steps=2000, reps=2, seed=1, engine="interpreted")
    with pytest.warns(DeprecationWarning, match=r"SimulationResult: simulator is deprecated"):
        assert r.simulator == r.engine == "generic"
    assert json.loads(r.to_json())["simulator"] == "generic"
    for res, old in ((sol, "b"), (tr, "method"), (r, "simulator")):
        with pytest.raises(AttributeError):
            setattr(res, old, None)  # read-only


def test_exact_result_fields_are_solver_and_n_and_the_old_names_warn() -> None:
    """``ExactResult.solver`` (was ``method``: the linear solver, not a route) and
    ``ExactResult.n`` (was ``b``: the dimension); the ``--json`` keys stay."""
    import json

    r = _quiet(numeric.exact.solve, MODEL, OK, N=20, solver="bicgstab")
    assert _quiet(lambda: (r.solver, r.n)) == ("bicgstab", 1)
    with pytest.warns(DeprecationWarning, match=r"ExactResult: method is deprecated; use solver"):
        assert r.method == r.solver
    with pytest.warns(DeprecationWarning, match=r"ExactResult: b is deprecated; use n"):
        assert r.b == r.n
    out = json.loads(r.to_json())
    assert (out["method"], out["b"]) == ("bicgstab", 1)
    from numeric.exact import solve_exact

    sm = _quiet(solve_exact, 6, "0.9", 3, 2, solver="direct")  # the supermarket's buffer b = n
    assert (sm.n, sm.solver) == (3, "direct")
    with pytest.warns(DeprecationWarning, match=r"ExactResult: b is deprecated"):
        assert sm.b == 3
    for old in ("method", "b"):
        with pytest.raises(AttributeError):
            setattr(r, old, None)  # read-only


def test_simulation_and_certified_results_name_the_dimension_n() -> None:
    import json

    r = _quiet(sim.simulate, MODEL, OK, N=10, steps=2000, reps=2, seed=1, engine="interpreted")
    assert _quiet(lambda: r.n) == 1
    with pytest.warns(DeprecationWarning, match=r"SimulationResult: b is deprecated; use n"):
        assert r.b == r.n
    assert json.loads(r.to_json())["b"] == 1
    short = _quiet(sim.simulate_supermarket, 10, "0.9", 3, 2, steps=2000, reps=2, seed=1)
    assert short.n == 3
    cs = _quiet(numeric.certify, MODEL, OK, dps=15)
    assert cs.n == 1
    with pytest.warns(DeprecationWarning, match=r"CertifiedSolution: b is deprecated; use n"):
        assert cs.b == cs.n


def test_the_stationary_record_says_solver_and_method_warns() -> None:
    """``numeric.exact.solvers.Stationary.solver`` (was ``method``: the linear solver
    that ran, as ``SolvedChain.solver`` and ``ExactResult.solver``)."""
    import scipy.sparse as sps

    from numeric.exact.solvers import solve_direct

    QT = sps.csr_matrix(np.array([[-1.0, 2.0], [1.0, -2.0]]))  # Q^T of a two-state chain
    sol = _quiet(solve_direct, QT, 0)
    assert _quiet(lambda: sol.solver) == "direct" and np.allclose(sol.pi, [2 / 3, 1 / 3])
    with pytest.warns(DeprecationWarning, match=r"Stationary: method is deprecated; use solver"):
        assert sol.method == "direct"


def test_pi_exact_result_field_is_solver() -> None:
    """``PIExactResult.solver`` (was ``method``); its JSON keeps ``"solver"`` for the
    solver and ``"method"`` for the route (``"exact"``, beside the simulation's)."""
    from numeric.pi.exact import solve_pi_exact

    e = _quiet(solve_pi_exact, "0:.6,1:.15,2:.1,4:.15", "1:1")
    with pytest.warns(DeprecationWarning, match=r"PIExactResult: method is deprecated; use solver"):
        assert e.method == e.solver
    d = e.to_dict()
    assert d["solver"] == e.solver and d["method"] == "exact"


def test_the_supermarket_spec_says_engine_and_simulator_warns() -> None:
    """``mfstein.families.supermarket.engine.Spec.engine`` (was ``simulator``): the keyword and
    the attribute
    warn, pointing at the caller's line, and give the same spec."""
    from mfstein.families.supermarket.engine import Spec
    from mfstein.families.supermarket.simulate import run_supermarket
    from sim.base import RunOptions

    fields = dict(N=10, lam=0.9, b=3, d=2, replacement=True, policy="pod", s_star=(0.9, 0.5, 0.2))
    new = _quiet(Spec, **fields, engine="per-server")
    with pytest.warns(DeprecationWarning, match=r"^Spec\(\): simulator= is deprecated") as rec:
        old = Spec(**fields, simulator="per-server")
    assert rec[0].filename == __file__
    assert old == new and old.per_server and new.config()["engine"] == "per-server"
    assert "simulator" not in new.config()
    with pytest.warns(DeprecationWarning, match=r"Spec: simulator is deprecated; use engine"):
        assert new.simulator == "per-server"
    with pytest.raises(TypeError, match=r"got both engine= and its deprecated alias simulator="):
        Spec(**fields, engine="aggregated", simulator="aggregated")
    with pytest.warns(DeprecationWarning, match=r"run_supermarket\(\): simulator= is deprecated"):
        with pytest.raises(ParameterError, match="engine must be one of"):
            run_supermarket(10, "0.9", 3, 2, RunOptions(), replacement=True,
                            policy="pod", simulator="fastest")  # fmt: skip


def test_one_certify_entry_the_old_ones_warn_at_the_callers_line() -> None:
    """``solution.certify()`` is the one entry (``numeric.certify`` solves and calls
    it); ``numeric.certify_float_solution`` and ``numeric.certify_solution`` are thin
    deprecated wrappers giving the same certificate."""
    sol = _quiet(numeric.solve, MODEL, OK, dps=15)
    new = _quiet(sol.certify)
    assert _quiet(numeric.certify, MODEL, OK, dps=15).interval() == new.interval()
    for old in (numeric.certify_float_solution, numeric.certify_solution):
        with pytest.warns(DeprecationWarning, match=r"is deprecated; use solution\.certify") as rec:
            cs = old(sol)
        assert rec[0].filename == __file__
        assert cs.interval() == new.interval() and cs.n == new.n


def test_a_warning_under_the_renamed_keywords_wrapper_names_the_callers_line() -> None:
    """``run_supermarket`` takes ``simulator=`` through the wrapper; the note of its
    reference point still names the line that called the library, not the wrapper."""
    with pytest.warns(UserWarning, match="too large for the without-replacement") as rec:
        sim.simulate_supermarket(6, "0.9", 5, 2, replacement=False, steps=2000, reps=2, seed=1)
    assert [w.filename for w in rec if "without-replacement" in str(w.message)] == [__file__]


def test_kernels_generic_spec_and_solution_routes_have_the_vocabulary_names() -> None:
    """Stop 43: the dimension is ``n`` on the kernels (``derive.Kernels``) and on the
    generic engine's spec (``sim.generic.GenericSpec``, and so ``TableSpec``), the
    independent routes of the constant ``MeanFieldSolution.routes`` (as on
    ``CertifiedSolution``); each old name reads the same value with a warning, each
    old constructor keyword builds the same object with one, and the ``--json`` key
    of the routes stays ``"methods"``."""
    import dataclasses
    import json

    from derive.kernels import Kernels
    from sim.generic import GenericSpec
    from sim.interpreted import TableSpec

    k = _quiet(MODEL.kernels, "mpmath")
    assert _quiet(lambda: k.n) == MODEL.n == 1
    with pytest.warns(DeprecationWarning, match=r"^Kernels: b is deprecated; use n instead"):
        assert k.b == k.n
    given = {f.name: getattr(k, f.name) for f in dataclasses.fields(k)}
    given["b"] = given.pop("n")
    with pytest.warns(DeprecationWarning, match=r"^Kernels\(\): b= is deprecated") as rec:
        old = Kernels(**given)
    assert rec[0].filename == __file__ and old.n == k.n

    spec = dict(model="m", kernel="", update="", N=10, params=(0.5,), jumps=((1,), (-1,)),
                s_star=(0.5,), start=(5,), kind=0, upper=10, total=0, truncated=False,
                thin_bits=0, hist_len=0)  # fmt: skip
    new = _quiet(GenericSpec, **spec, n=1)
    with pytest.warns(DeprecationWarning, match=r"^GenericSpec\(\): b= is deprecated"):
        assert GenericSpec(**spec, b=1) == new
    with pytest.warns(DeprecationWarning, match=r"^GenericSpec: b is deprecated; use n"):
        assert new.b == new.n == 1
    assert new.config()["n"] == 1 and "b" not in new.config()
    assert GenericSpec.RENAMED_CONFIG_KEYS == {"b": "n"}
    with pytest.raises(TypeError, match=r"got both n= and its deprecated alias b="):
        GenericSpec(**spec, n=1, b=1)
    with pytest.warns(DeprecationWarning, match=r"^TableSpec\(\): b= is deprecated"):
        assert TableSpec(**spec, b=1).n == 1
    for obj in (k, new):
        with pytest.raises(AttributeError):
            obj.b = 2  # read-only

    sol = _quiet(numeric.solve, MODEL, OK, dps=15)
    assert _quiet(lambda: set(sol.routes)) >= {"stein"}
    with pytest.warns(DeprecationWarning, match=r"^MeanFieldSolution: methods is deprecated"):
        assert sol.methods == sol.routes
    given = {f.name: getattr(sol, f.name) for f in dataclasses.fields(sol) if f.init}
    given["methods"] = given.pop("routes")
    with pytest.warns(DeprecationWarning, match=r"^MeanFieldSolution\(\): methods= is dep"):
        again = type(sol)(**given)
    assert again.routes == sol.routes and again.constant == sol.constant
    assert set(json.loads(sol.to_json())["methods"]) == set(sol.routes)
