"""Issue 22: one way in (``task(model, params, *, options)``) and results that speak for
themselves (``to_dict``/``to_json``, a short ``repr``, HTML, stated digits)."""

from __future__ import annotations

import dataclasses
import html.parser
import importlib
import inspect
import json
import math
import pkgutil
import re
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest

import mfstein as mf
import numeric
import numeric.exact
import sim
from mfstein.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
BD = f"{ROOT / 'examples' / 'birth_death.py'}:birth_death"
SIR = {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}
SIM = {"steps": 40_000, "reps": 2, "seed": 7, "workers": 1, "batches": 4}
#: The packages of the library (the tests and examples are not).
LIBRARY = ("derive", "numeric", "sim", "mfstein")

ENTRIES = {
    "numeric.solve": numeric.solve,
    "numeric.exact.solve": numeric.exact.solve,
    "sim.simulate": sim.simulate,
    "numeric.expansion.transient": numeric.transient,
    "numeric.certified.enclosures": numeric.certify,
}


# -- one entry per task ---------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_entries_take_model_then_params_and_keywords_only(name: str) -> None:
    params = list(inspect.signature(ENTRIES[name]).parameters.values())
    assert [p.name for p in params[:2]] == ["model", "params"], name
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params[:2])
    assert all(p.kind is p.KEYWORD_ONLY for p in params[2:]), name  # no *args, no **kwargs


def test_the_distribution_name_gives_the_same_entries() -> None:
    assert mf.solve is numeric.solve and mf.exact is numeric.exact.solve
    assert mf.simulate is sim.simulate and mf.transient is numeric.transient
    assert mf.certify is numeric.certify
    from derive import models

    assert mf.models is models and mf.load_model is models.load_model


def test_option_names_are_the_same_everywhere() -> None:
    """The same thing has the same keyword in every entry (``engine`` for the choice of
    simulator, ``method`` for the choice of solver)."""
    shared = {"N", "dps", "order", "M", "start", "seed", "steps", "reps", "workers"}
    seen: dict[str, set[str]] = {}
    for name, fn in ENTRIES.items():
        for p in list(inspect.signature(fn).parameters)[2:]:
            seen.setdefault(p, set()).add(name)
    assert shared <= set(seen)
    assert "simulator" not in seen and "engine" in seen


def test_bad_model_and_params_are_one_sentence() -> None:
    from mfstein.ground.errors import ParameterError

    for call in (
        lambda: numeric.solve(0.9, {"lam": "0.9"}),
        lambda: numeric.solve("sir", [1, 2]),
        lambda: numeric.solve("no-such-model", {}),
        lambda: numeric.exact.solve(3, {}, N=4),
    ):
        with pytest.raises(ParameterError) as info:
            call()
        msg = str(info.value)
        assert msg.endswith(".") and "\n" not in msg and ("model" in msg or "params" in msg)


# -- the same numbers by other routes -------------------------------------------------
def test_supermarket_solve_is_its_fast_path_and_the_short_form() -> None:
    from mfstein.families.supermarket.solver import solve_supermarket as structured

    via_entry = numeric.solve("supermarket", {"b": 5, "lam": "0.9"}, dps=25)
    short = numeric.bound("0.9", 5, 2, dps=25)
    ref = structured("0.9", 5, 2, dps=25)
    assert via_entry.constant == short.constant == ref.constant
    assert via_entry.s_star == short.s_star == ref.s_star
    general = numeric.solve("supermarket", {"b": 5, "lam": "0.9"}, dps=25, route="general")
    with mpmath.workdps(40):  # an independent route: agreement to the digits claimed
        assert abs(general.constant - ref.constant) <= 10 ** -(ref.digits - 1) * ref.constant


def test_sir_and_a_user_file_model() -> None:
    from derive.models import load_model
    from numeric.meanfield.general import solve_general

    sol = numeric.solve("sir", SIR, dps=30)
    ref = solve_general(load_model("sir"), SIR, dps=30)
    assert sol.constant == ref.constant and sol.s_star == ref.s_star
    # birth-death with capacity: x* = lam cap / (1 + lam), W = cap p (1 - p), p = lam/(1 + lam)
    bd = numeric.solve(BD, {"cap": 2, "lam": "0.5"}, dps=30)
    with mpmath.workdps(50):
        p = mpmath.mpf(1) / 3
        assert abs(bd.s_star[0] - 2 * p) < mpmath.mpf(10) ** -29
        assert abs(bd.constant - 2 * p * (1 - p)) < mpmath.mpf(10) ** -28


def test_exact_entry_against_the_supermarket_solver_and_a_binomial() -> None:
    from numeric.exact import solve_exact

    a = numeric.exact.solve("supermarket", {"b": 3, "lam": "0.9"}, N=6)
    b = solve_exact(6, "0.9", 3, 2)  # the short form: the same entry and fast path
    assert a.states == b.states and type(a) is type(b)
    assert a.n_mse == pytest.approx(b.n_mse, rel=1e-9)
    assert np.allclose(a.mean, b.mean, rtol=1e-9, atol=1e-12)
    # the user's birth-death chain is Binomial(N cap, p): N Var(S) = cap p (1 - p)
    N, cap, p = 20, 2, Fraction(1, 3)
    ex = numeric.exact.solve(BD, {"cap": cap, "lam": "0.5"}, N=N)
    assert ex.mean[0] == pytest.approx(float(cap * p), rel=1e-9)
    assert ex.n_mse == pytest.approx(float(cap * p * (1 - p)), rel=1e-8)


def test_simulation_engines_are_one_entry_with_the_same_numbers() -> None:
    from mfstein.families.supermarket.simulate import run_supermarket
    from sim.base import RunOptions

    opts = RunOptions(**SIM)
    ref = run_supermarket(  # the aggregated engine itself
        10, "0.9", 4, 2, opts, replacement=True, policy="pod", engine="aggregated"
    )
    auto = sim.simulate("supermarket", {"b": 4, "lam": "0.9"}, N=10, **SIM)
    named = sim.simulate("supermarket", {"b": 4, "lam": "0.9"}, N=10, engine="aggregated", **SIM)
    short = sim.simulate_supermarket(10, "0.9", 4, 2, **SIM)
    for r in (auto, named, short):
        assert np.array_equal(r.n_cov.mean, ref.n_cov.mean) and r.n_mse == ref.n_mse
    assert auto.engine == "supermarket" and named.engine == short.engine == "aggregated"
    jsq = sim.simulate("supermarket", {"b": 4, "lam": "0.9"}, N=10, policy="jsq", **SIM)
    assert jsq.engine == "per-server" and jsq.response_time is not None
    direct = run_supermarket(
        10, "0.9", 4, 2, opts, replacement=True, policy="jsq", engine="per-server"
    )
    assert jsq.n_mse == direct.n_mse


def test_transient_and_certify_entries() -> None:
    from derive.models import load_model
    from numeric.certified.enclosures import certify_solution

    tr = numeric.transient("sir", SIR, times=[0, 1, 2], start="0.76,0.24,0", order=1)
    again = numeric.transient(load_model("sir"), SIR, times=[0, 1, 2], start="0.76,0.24,0")
    assert np.array_equal(tr.x, again.x) and np.array_equal(tr.W, again.W)
    cert = numeric.certify("supermarket", {"b": 3, "lam": "0.9"}, dps=20)
    sol = numeric.bound("0.9", 3, 2, dps=20)
    assert cert.decide(sol.constant, sol.digits) == "proved"
    with pytest.warns(DeprecationWarning, match=r"solution\.certify"):
        old = certify_solution(sol)  # the deprecated wrapper: the same computation
    assert old.interval() == sol.certify().interval()  # the solution carries its model


# -- results that speak for themselves --------------------------------------------------
class _Checker(html.parser.HTMLParser):
    """Well-formed: every opened tag closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tags = 0

    def handle_starttag(self, tag, attrs) -> None:
        self.stack.append(tag)
        self.tags += 1

    def handle_endtag(self, tag) -> None:
        assert self.stack and self.stack.pop() == tag, tag


def _significant(text: str) -> int:
    mant = re.split("[eE]", text.strip().lstrip("+-"))[0].replace(".", "").lstrip("0")
    return len(mant)


@pytest.fixture(scope="module")
def results() -> dict:
    from numeric.exact import solve_exact

    with mpmath.workdps(15):
        return {
            "mean-field": numeric.bound("0.9", 4, 2, dps=30, order=2),
            "mean-field (sir)": numeric.solve("sir", SIR, dps=30),
            "exact (supermarket)": solve_exact(5, "0.9", 3, 2),
            "exact (model)": numeric.exact.solve(BD, {"cap": 2, "lam": "0.5"}, N=10),
            "simulation": sim.simulate_supermarket(8, "0.9", 3, 2, **SIM),
            "simulation (model)": sim.simulate("sir", SIR, N=20, **SIM),
            "transient (float64)": numeric.transient(BD, {"cap": 2, "lam": "0.5"}, times=[0, 1]),
            "transient (mpmath)": numeric.transient(
                BD, {"cap": 2, "lam": "0.5"}, times=[0, 1], start=[0], dps=20
            ),
            "certified": numeric.certify("supermarket", {"b": 3, "lam": "0.9"}, dps=20),
            **_other_results(),
        }


def _other_results() -> dict:
    """One of each remaining result type, from a cheap real computation."""
    from derive import stein_lyapunov_check, supermarket
    from derive.models import load_model
    from mfstein.families.supermarket import table
    from mfstein.families.supermarket.size_tables import BoundTable, RefinedTable
    from numeric.lemmas import check, lemma12_parameters
    from numeric.lemmas.certified_claims import check_certified
    from numeric.pi.exact import solve_pi_exact
    from numeric.tails.jsq_qbd import solve_jsq
    from numeric.tails.report import exact_tails
    from numeric.tails.ssq import binomial_pmfs, solve_ssq
    from sim.pi import simulate_pi
    from sim.tails import simulate_jsq_tails

    bd = load_model(BD, cap=2)
    sol = numeric.solve(bd, {"lam": "0.5"}, dps=20, order=2)
    grid = {"N": "10", "lam": "0.9", "b": 1}
    row = table.build("0.1", "0.05", [4], steps=20_000, reps=2, seed=2, workers=1)[0]
    pi_run = {"slots": 20_000, "reps": 2, "seed": 3, "workers": 1}
    small = numeric.bound("0.9", 3, 2, dps=12)  # the size tables of mfstein bound / refined
    return {
        "stein-lyapunov check": stein_lyapunov_check(supermarket(1)),
        "lemma 12 parameters": lemma12_parameters("0.05", "0.001"),
        "lemma report": check(["lemma6", "theorem1.eq6"], **grid),
        "certified claims": check_certified(["lemma6"], **grid),
        "pi exact": solve_pi_exact("0:.5,1:.2,3:.3", ["1:1", "1:.5,2:.5"]),
        "pi simulation": simulate_pi("0:.4,2:.2,4:.3,6:.1", "1:1", n=3, **pi_run),
        "tails exact": exact_tails("jsq", 2, 0.3, [0.5, 1.0], thetas=[0.1]),
        "jsq law": solve_jsq(2, 0.3),
        "ssq law": solve_ssq(*binomial_pmfs(2, 0.3)),
        "tails simulation": simulate_jsq_tails(2, 0.3, [1.0], events=20_000, reps=2, seed=1),
        "table row": row,
        "paper table": table.PaperTable([row], "0.1", "0.05", 2, 2, steps=20_000, reps=2),
        "accuracy table": sim.accuracy_table(bd, {"lam": "0.5"}, "x**2", [4], exact=False),
        "accuracy tables": sim.accuracy_table(bd, {"lam": "0.5"}, ["x", "x**2"], [4], exact=False),
        "observable expansion": sol.observable(bd, "x**2"),
        "exact expectation": numeric.exact.solve(bd, {"lam": "0.5"}, N=4).expect("x", bd),
        "sweep": numeric.sweep(bd, {"lam": ["0.4", "0.5"]}, precision="float64"),
        "bound table": BoundTable((10, 20), (small, small)),
        "refined table": RefinedTable((10,), (small,)),
        **_heterogeneous_results(),
        **_listing_results(bd),
    }


def _listing_results(bd: object) -> dict:
    """The results of the commands that list or derive rather than compute numbers."""
    from derive.models.catalogue_view import library, model_entry
    from derive.models.derived_objects import derive_objects
    from mfstein.ground.cache import configured_cache_dir
    from mfstein.ground.cache_contents import look
    from numeric.lemmas import registered_claims

    return {
        "cache survey": look(configured_cache_dir()),
        "claim list": registered_claims(["lemma6"]),
        "model library": library(),
        "model entry": model_entry("sis"),
        "derived objects": derive_objects(bd, ["f", "J", "lyapunov"]),
    }


def _heterogeneous_results() -> dict:
    """Two objects of different speeds, one infecting the other (issue 33)."""
    from derive.heterogeneous_population import heterogeneous
    from derive.models import load_model
    from sim.heterogeneous_table import heterogeneous_table

    A = np.zeros((2, 2, 2))
    A[:, 0, 1], A[:, 1, 0] = 0.5, [1.0, 2.0]
    B = np.zeros((2, 2, 2, 2, 2, 2))
    B[0, 1, 0, 1, 1, 1] = B[1, 0, 0, 1, 1, 1] = 0.5
    het = heterogeneous(A, B)
    return {
        "heterogeneous mean field": numeric.solve(het, {}, dps=20),
        "heterogeneous exact": numeric.exact.solve(het, {}, N=2),
        "heterogeneous simulation": sim.simulate(het, {}, N=2, steps=2_000, reps=2, seed=1),
        "heterogeneous transient": numeric.transient(het, {}, times=[0, 1], dps=10),
        "heterogeneous table": heterogeneous_table(
            lambda K: load_model("power_of_d_heterogeneous", K=K, d=2, speed_classes="1,2"),
            {"lam": "0.5"},
            "utilisation_class1",
            [2],
            exact=False,
            simulate=False,
            steps=1,
            reps=1,
            seed=1,
        ),
    }


#: One of each result type, by the name the ``results`` fixture gives it.
KINDS = [
    "mean-field",
    "mean-field (sir)",
    "exact (supermarket)",
    "exact (model)",
    "simulation",
    "simulation (model)",
    "transient (float64)",
    "transient (mpmath)",
    "certified",
    "stein-lyapunov check",
    "lemma 12 parameters",
    "lemma report",
    "certified claims",
    "pi exact",
    "pi simulation",
    "tails exact",
    "jsq law",
    "ssq law",
    "tails simulation",
    "table row",
    "paper table",
    "accuracy table",
    "accuracy tables",
    "observable expansion",
    "exact expectation",
    "sweep",
    "heterogeneous mean field",
    "heterogeneous exact",
    "cache survey",
    "claim list",
    "model library",
    "model entry",
    "derived objects",
    "heterogeneous simulation",
    "heterogeneous transient",
    "heterogeneous table",
]


@pytest.mark.parametrize("kind", KINDS)
def test_result_serialises_prints_and_displays(results: dict, kind: str) -> None:
    r = results[kind]
    text = r.to_json()
    assert json.loads(text) == json.loads(json.dumps(r.to_dict()))  # round trip
    assert isinstance(json.loads(r.to_json(indent=None)), dict)
    lines = repr(r).splitlines()
    assert 3 <= len(lines) <= 15, repr(r)
    checker = _Checker()
    checker.feed(r._repr_html_())
    checker.close()
    assert checker.tags >= 3 and not checker.stack


@pytest.mark.parametrize("kind", KINDS)
def test_result_is_frozen_and_its_json_round_trips(results: dict, kind: str) -> None:
    """Assigning any field raises; the JSON text parses back to the same document."""
    from mfstein.ground.display import dumps

    r = results[kind]
    for f in dataclasses.fields(r):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(r, f.name, getattr(r, f.name))
    text = r.to_json()
    parsed = json.loads(text)
    assert dumps(parsed) == text and parsed.keys() == r.to_dict().keys()


def test_every_result_type_presents_itself_through_one_base(results: dict) -> None:
    from mfstein.ground.display import Presentable

    def subclasses(cls: type) -> set[type]:
        return {c for s in cls.__subclasses__() for c in {s} | subclasses(s)}

    # every module of the library, so that the survey does not depend on what the other
    # tests of this worker happened to import (a type no test builds here is found)
    for pkg in LIBRARY:
        path = importlib.import_module(pkg).__path__
        for info in pkgutil.walk_packages(path, f"{pkg}."):
            if not info.name.endswith("__main__"):
                importlib.import_module(info.name)
    library = {c for c in subclasses(Presentable) if c.__module__.split(".")[0] in LIBRARY}
    # a private base (``_SizeTable``) shares code between result types and is never built
    result_types = {c for c in library if not c.__name__.startswith("_")}
    assert {type(r) for r in results.values()} == result_types  # each one built above
    for cls in library:
        own = {"to_json", "__repr__", "_repr_html_"} & set(vars(cls))
        assert not own, f"{cls.__name__} writes {sorted(own)} again"
    for cls in result_types:
        bases = [k for k in cls.__mro__ if issubclass(k, Presentable) and k is not Presentable]
        defined = set().union(*(vars(k) for k in bases))
        assert {"to_dict", "_rows", "_MORE"} <= defined, cls
        assert cls.__dataclass_params__.frozen, f"{cls.__name__} is not frozen"


def test_to_json_is_written_once() -> None:
    """``to_json`` returns JSON text everywhere: the library defines it only in the base
    (a value type inside a result has ``to_dict``)."""
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for pkg in LIBRARY
        for path in sorted((ROOT / pkg).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.match(r"\s*def to_json\b", line)
    ]
    where = "mfstein/ground/display.py"
    assert found == [f"{where}:{_line_of(where, 'def to_json')}"]


def _line_of(relpath: str, text: str) -> int:
    lines = (ROOT / relpath).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def test_numbers_print_with_the_digits_they_claim(results: dict) -> None:
    old = mpmath.mp.dps
    try:
        mpmath.mp.dps = 15
        sol = results["mean-field"]
        assert sol.digits == 30 and _significant(str(sol.constant)) == 30
        assert _significant(str(sol.c2)) == sol.digits2 > 15
        assert f"{sol.constant}" in repr(sol) and f"({sol.digits} digits)" in repr(sol)
        assert _significant(sol.to_dict()["constant"]) == sol.dps == 30
        assert str(sol.constant) in sol._repr_latex_()
        other = results["mean-field (sir)"]
        assert _significant(str(other.constant)) == other.digits == 30
        tr = results["transient (mpmath)"].to_dict()
        assert tr["digits"] >= 15 and all(_significant(v) == 20 for v in tr["x"][-1])
        cert = results["certified"]
        lo, hi = cert.enclosure()  # two digits more than it certifies (documented)
        held = int(cert.prec * math.log10(2))
        shown = min(cert.certified_digits, held) + 2
        assert cert.certified_digits >= 20 and _significant(lo) == _significant(hi) == shown
        assert lo in cert._repr_latex_() and lo in repr(cert)
    finally:
        mpmath.mp.dps = old
    # arithmetic gives plain numbers; the claim stays with the result
    assert type(sol.constant + 0) is mpmath.mpf


# -- the command line ---------------------------------------------------------------------
ARGV = {
    "derive": ["--b", "1", "--show", "f"],
    "models": ["sis"],
    "bound": ["--lam", "0.9", "--N", "10", "--b", "3", "--dps", "15"],
    "refined": ["--lam", "0.9", "--N", "10", "--b", "3", "--dps", "15"],
    "solve": ["--model", BD, "--param", "cap=2", "--param", "lam=0.5", "--dps", "15"],
    "exact": ["--N", "4", "--lam", "0.7", "--b", "2"],
    "transient": ["--model", BD, "--param", "cap=2", "--param", "lam=0.5", "--t", "0:1:3"],
    "sweep": ["--model", BD, "--param", "cap=2", "--param", "lam=0.4:0.5:2", "--float64"],
    "simulate": ["--N", "5", "--lam", "0.9", "--b", "2", "--steps", "2e4", "--reps", "2"],
    "table": ["--gamma", "0.1", "--alpha", "0.05", "--N", "4", "--sim-steps", "4000"],
    "lemmas": ["--lam", "0.9", "--N", "10", "--b", "1", "--only", "lemma6"],
    "tail": ["--model", "jsq", "--n", "3", "--eps", "0.1", "--x", "1"],
    "pi": ["--arrivals", "0:.5,1:.5", "--service", "1:1", "--service", "1:1", "--exact"],
    "cache": [],
}


def test_every_command_is_covered() -> None:
    sub = next(a for a in build_parser()._actions if getattr(a, "choices", None))
    assert set(sub.choices) == set(ARGV)


@pytest.mark.parametrize("command", sorted(ARGV))
def test_every_command_takes_json(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    extra = ["--reps", "2", "--workers", "1", "--no-progress"] if command == "table" else []
    if command == "simulate":
        extra = ["--workers", "1", "--no-progress"]
    assert main([command, *ARGV[command], *extra, "--json"]) == 0
    out = capsys.readouterr().out
    assert isinstance(json.loads(out), dict | list)


def test_one_engine_option_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["simulate", "--N", "6", "--lam", "0.9", "--b", "3", "--steps", "2e4", "--reps", "2"]
    base += ["--workers", "1", "--no-progress", "--json"]
    runs = {}
    for extra in ([], ["--engine", "aggregated"]):
        assert main([*base, *extra]) == 0
        out = json.loads(capsys.readouterr().out)
        runs[tuple(extra)] = (out["n_mse"], out["n_cov"], out["simulator"])
    assert len(set(json.dumps(v) for v in runs.values())) == 1  # same engine, same numbers
    assert main([*base, "--engine", "generic"]) == 0
    assert json.loads(capsys.readouterr().out)["simulator"] == "generic"
    # --simulator, the former spelling of --engine, is gone: argparse refuses it
    with pytest.raises(SystemExit) as exit_:
        main([*base, "--simulator", "aggregated"])
    assert exit_.value.code == 2


def test_the_library_does_not_import_the_command_line() -> None:
    """Dependencies point one way: derive, numeric, sim and the families never import
    mfstein.cli."""
    import ast

    for package in ("derive", "numeric", "sim", "mfstein/families"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                assert not any(n.startswith("mfstein.cli") for n in names), path


def test_import_mfstein_loads_nothing_heavy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, mfstein as mf\n"
        "assert callable(mf.__getattr__) and 'solve' in dir(mf)\n"
        "print(sorted(m for m in ('sympy', 'numba', 'scipy', 'numpy', 'mpmath') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_policy_belongs_to_the_supermarket_engines() -> None:
    from mfstein.ground.errors import ParameterError

    with pytest.raises(ParameterError, match="policy 'jsq' is a dispatch rule"):
        sim.simulate("sir", SIR, N=10, policy="jsq", **SIM)
    with pytest.raises(ParameterError, match="policy must be one of pod, jsq, random, got"):
        sim.simulate("supermarket", {"b": 3, "lam": "0.9"}, N=6, policy="aggregated", **SIM)
    auto = sim.simulate("supermarket", {"b": 3, "lam": "0.9"}, N=6, **SIM)
    new = sim.simulate("supermarket", {"b": 3, "lam": "0.9"}, N=6, engine="aggregated", **SIM)
    assert new.engine == "aggregated" and auto.n_mse == new.n_mse
