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
    assert np.array_equal(old.pi, new.pi) and new.method == "direct"


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
