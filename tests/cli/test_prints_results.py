"""The command line prints results, it does not build its own JSON (issue 31).

For each JSON form below, what ``mfstein ... --json`` prints is the ``to_json()`` of
the result the Python API returns for the same inputs (one line, the one style of
:func:`mfstein.ground.streams.write_json`).  Only a wall time (``seconds``) may differ
between two runs; it is left out of the comparison and nothing else is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from mfstein.cli import main

ROOT = Path(__file__).resolve().parents[2]
BD_FILE = f"{ROOT}/examples/birth_death.py:birth_death"
SIR = {"beta": "2", "gamma": "1", "rho": "0.5", "a": "0.1"}
SIR_ARGS = [a for k, v in SIR.items() for a in ("--param", f"{k}={v}")]
#: Keys that hold a wall time: two runs of the same computation differ there only.
TIMES = {"seconds"}


def _solve(**kw) -> Callable[[], object]:
    import numeric

    return lambda: numeric.solve("sir", SIR, M="identity", **kw)  # --M's default


def _certified() -> object:
    import numeric

    return numeric.solve("sir", SIR, dps=12, M="identity").certify()


def _exact_short() -> object:
    from numeric.exact import solve_exact

    return solve_exact(3, "0.9", 2, 2)


def _exact_model() -> object:
    import numeric.exact

    return numeric.exact.solve(BD_FILE, {"lam": "0.5"}, N=4)


def _exact_observed() -> object:
    import dataclasses

    r = _exact_model()
    return dataclasses.replace(r, observables={"x": r.expect("x")})


def _transient() -> object:
    import numeric

    return numeric.transient(BD_FILE, {"lam": "0.5"}, times=[0.0, 0.5, 1.0])


def _size_table(kind: str) -> Callable[[], object]:
    def compute() -> object:
        from mfstein.families.supermarket.short_form import bound
        from mfstein.families.supermarket.size_tables import BoundTable, RefinedTable

        sol = bound("0.9", 3, 2, dps=12)
        if kind == "bound":
            return BoundTable((10, 20), (sol, sol))
        return RefinedTable((10,), (sol,))

    return compute


def _cache() -> object:
    from mfstein.ground.cache import configured_cache_dir
    from mfstein.ground.cache_contents import look

    return look(configured_cache_dir())


def _library() -> object:
    from derive.models.catalogue_view import library

    return library()


def _model_entry(name: str) -> Callable[[], object]:
    def compute() -> object:
        from derive.models.catalogue_view import model_entry

        return model_entry(name)

    return compute


def _claims() -> object:
    from numeric.lemmas import registered_claims

    return registered_claims()


def _derived_supermarket() -> object:
    from derive import supermarket
    from derive.models.derived_objects import derive_objects

    return derive_objects(supermarket(2, 2), ["f", "J", "stein", "generator"])


def _derived_file() -> object:
    from derive.models import load_model
    from derive.models.derived_objects import derive_objects
    from derive.substitution import with_values

    model = with_values(load_model(BD_FILE), {"lam": "1/2"})
    return derive_objects(model, ["f", "J", "hessian", "Q", "lyapunov"])


HET_LIBRARY = {"K": "4", "d": "3", "speed_classes": "1,2", "lam": "0.5"}
HET_FILE = f"{ROOT}/tests/hetpop_models.py:sis_population"
HET_SIS = {"K": "3", "beta": "1", "eps": "0.5", "gamma": "1"}


def _pairs(params: dict[str, str]) -> list[str]:
    return [a for k, v in params.items() for a in ("--param", f"{k}={v}")]


def _het_exact(spec: str, params: dict[str, str], names: list[str]) -> Callable[[], object]:
    def compute() -> object:
        import dataclasses

        import numeric.exact
        from derive.models import load_model, split_values
        from numeric.heterogeneous.observables import observe

        options, values = split_values(spec, params)
        model = load_model(spec, **options)
        r = numeric.exact.solve(model, values, N=model.K)
        return dataclasses.replace(r, observables=observe(model, values, r, names))

    return compute


#: name -> (argv, the same computation through the Python API)
CASES: dict[str, tuple[list[str], Callable[[], object]]] = {
    "solve": (["solve", "--model", "sir", *SIR_ARGS, "--dps", "12"], _solve(dps=12)),
    "solve --float64": (
        ["solve", "--model", "sir", *SIR_ARGS, "--float64"],
        _solve(precision="float64"),
    ),
    "solve --certify": (
        ["solve", "--model", "sir", *SIR_ARGS, "--dps", "12", "--certify"],
        _certified,
    ),
    "exact (short form)": (["exact", "--N", "3", "--lam", "0.9", "--b", "2"], _exact_short),
    "exact --model": (
        ["exact", "--model", BD_FILE, "--param", "lam=0.5", "--N", "4"],
        _exact_model,
    ),
    "exact --observable": (
        ["exact", "--model", BD_FILE, "--param", "lam=0.5", "--N", "4", "--observable", "x"],
        _exact_observed,
    ),
    "transient": (
        ["transient", "--model", BD_FILE, "--param", "lam=0.5", "--t", "0:1:3"],
        _transient,
    ),
    "bound": (
        ["bound", "--lam", "0.9", "--b", "3", "--N", "10,20", "--dps", "12"],
        _size_table("bound"),
    ),
    "refined": (
        ["refined", "--lam", "0.9", "--b", "3", "--N", "10", "--dps", "12"],
        _size_table("refined"),
    ),
    "cache": (["cache"], _cache),
    "models": (["models"], _library),
    "models NAME": (["models", "sis"], _model_entry("sis")),
    "models FILE:FACTORY": (["models", BD_FILE], _model_entry(BD_FILE)),
    "lemmas --list": (["lemmas", "--list"], _claims),
    "derive (short form)": (
        ["derive", "--b", "2", "--show", "f,J,stein,generator"],
        _derived_supermarket,
    ),
    "derive --model": (
        ["derive", "--model", BD_FILE, "--param", "lam=1/2", "--show", "f,J,H,Q,lyapunov"],
        _derived_file,
    ),
    "exact (heterogeneous) --observable": (
        [
            "exact",
            "--model",
            "power_of_d_heterogeneous",
            *_pairs(HET_LIBRARY),
            "--N",
            "4",
            "--observable",
            "jobs",
        ],
        _het_exact("power_of_d_heterogeneous", HET_LIBRARY, ["jobs"]),
    ),
    "exact (heterogeneous) --model FILE": (
        ["exact", "--model", HET_FILE, *_pairs(HET_SIS), "--N", "3"],
        _het_exact(HET_FILE, HET_SIS, []),
    ),
}


def _without_times(data: dict) -> dict:
    return {k: v for k, v in data.items() if k not in TIMES}


def _cache_of_its_own(name: str, monkeypatch, tmp_path) -> None:
    """For ``mfstein cache``: a cache directory no other test writes into while the
    command and the survey read it (the shared one changes under a parallel run),
    holding one file of each kind and one that is not mfstein's."""
    if name != "cache":
        return
    for rel in ("prepared/a.json", "prepared/a.arrays", "numba/k.nbi", "__pycache__/g.pyc"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"x" * 10)
    (tmp_path / "notes.txt").write_text("the user's")
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))


@pytest.mark.parametrize("name", list(CASES))
def test_the_printed_json_is_the_results_to_json(
    name: str, capsys, monkeypatch, tmp_path
) -> None:
    from numeric.meanfield.problem import forget

    _cache_of_its_own(name, monkeypatch, tmp_path)
    argv, compute = CASES[name]
    # Both from the same empty process state: a float64 solve of a model with a unique
    # fixed point (SIR) starts from the nearest point this process found before
    # (numeric.meanfield.problem, "Warm start"), which moves its last bits; this test
    # is about what is printed, not about the history of the worker it runs in.
    forget()
    capsys.readouterr()
    status = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    forget()
    result = compute()
    expected = result.to_json(indent=None) + "\n"
    if TIMES & json.loads(out).keys():
        assert _without_times(json.loads(out)) == _without_times(json.loads(expected))
    else:
        assert out == expected


# -- the text form: what a command prints without --json is the result's own text --------
def _exact_tail() -> object:
    from numeric.tails.report import exact_tails

    return exact_tails("mmn", 2, 0.5, [1.0], thetas=[])


def _lemmas() -> object:
    from numeric.lemmas import check

    return check(["lemma5"], N="10", lam="0.9", b="2")


def _lemmas_certified() -> object:
    from numeric.lemmas.certified_claims import check_certified

    return check_certified(["lemma5"], N="10", lam="0.9", b="2")


def _derive_file(form: str) -> list[str]:
    """The command of :func:`_derived_file`, printed as ``form``."""
    show = ["--show", "f,J,H,Q,lyapunov", "--format", form]
    return ["derive", "--model", BD_FILE, "--param", "lam=1/2", *show]


def _text_of(compute: Callable[[], object], form: str = "to_text") -> Callable[[], str]:
    return lambda: getattr(compute(), form)()


def _solve_text() -> str:
    return _solve(dps=12, order=2)().to_text(dps=12)


def _transient_observed() -> object:
    import dataclasses

    import numeric
    from derive.models import load_model
    from numeric.expansion.transient_observables import trajectories

    model = load_model(BD_FILE)
    r = numeric.transient(model, {"lam": "0.5"}, times=[0.0, 0.5, 1.0])
    return dataclasses.replace(r, observables=trajectories(r, model, ["x**2"], {"lam": "0.5"}))


def _het_solve() -> object:
    import numeric
    from derive.models import load_model

    model = load_model("power_of_d_heterogeneous", K=4, d=3, speed_classes="1,2")
    return numeric.solve(model, {"lam": "0.5"}, precision="float64", observables=["utilisation"])


def _pi_exact() -> object:
    from numeric.pi.exact import solve_pi_exact

    return solve_pi_exact("0:.5,1:.5", ["1:1", "1:1"])


def _sweep() -> object:
    import numeric

    return numeric.sweep(BD_FILE, {"lam": ["0.4", "0.5"]}, precision="float64")


def _pi_simulation() -> object:
    from sim.pi import simulate_pi

    return simulate_pi("0:.4,2:.2,4:.3,6:.1", "1:1", n=3, slots=20_000, reps=2, seed=3)


def _tails_simulation() -> object:
    from sim.tails import simulate_jsq_tails

    return simulate_jsq_tails(3, 0.1, [1.0, 2.0], events=20_000, reps=2, seed=3)


def _exact_sir() -> object:
    import numeric.exact

    return numeric.exact.solve("sir", SIR, N=6)


RUN = {"steps": 20_000, "reps": 2, "seed": 3}
RUN_ARGS = ["--steps", "20000", "--reps", "2", "--seed", "3"]
SM = {"b": "3", "lam": "0.9"}
BD = {"lam": "0.5"}


def _simulated_short() -> object:
    from mfstein.families.supermarket.simulate_short_form import simulate_supermarket

    return simulate_supermarket(10, "0.9", 3, 2, **RUN)


def _simulated(spec: str, params: dict[str, str], N: int, names: list[str]) -> Callable[[], str]:
    def text() -> str:
        import sim

        return sim.simulate(spec, params, N=N, observables=names, **RUN).to_text()

    return text


#: A wall time or a speed in a text: two runs of the same computation differ there only.
TIMED = re.compile(r"[0-9][0-9.e+-]* (s;|s wall|s$|server-slots/s|events/s)", re.MULTILINE)


#: name -> (argv, the text the Python result writes for the same inputs)
TEXTS: dict[str, tuple[list[str], Callable[[], str]]] = {
    "cache": (["cache"], _text_of(_cache)),
    "models": (
        ["models"],
        lambda: (
            _library().to_text()
            + "\n\n(mfstein models NAME for one model in detail; --json for all fields)"
        ),
    ),
    "models FILE:FACTORY": (["models", BD_FILE], _text_of(_model_entry(BD_FILE))),
    "lemmas --list": (["lemmas", "--list"], _text_of(_claims)),
    "derive (short form)": (
        ["derive", "--b", "2", "--show", "f,J,stein,generator"],
        _text_of(_derived_supermarket),
    ),
    "derive --format latex": (
        ["derive", "--b", "2", "--show", "f,J,stein,generator", "--format", "latex"],
        _text_of(_derived_supermarket, "to_latex"),
    ),
    "derive --model --format latex": (_derive_file("latex"), _text_of(_derived_file, "to_latex")),
    "derive --model --format python": (
        _derive_file("python"),
        _text_of(_derived_file, "to_python"),
    ),
    "solve --order 2": (
        ["solve", "--model", "sir", *SIR_ARGS, "--dps", "12", "--order", "2"],
        _solve_text,
    ),
    "exact (short form)": (
        ["exact", "--N", "3", "--lam", "0.9", "--b", "2"],
        lambda: _exact_short().to_text(short_form=True),
    ),
    "exact --model sir": (["exact", "--model", "sir", *SIR_ARGS, "--N", "6"], _text_of(_exact_sir)),
    "exact --model FILE --observable": (
        ["exact", "--model", BD_FILE, "--param", "lam=0.5", "--N", "4", "--observable", "x"],
        _text_of(_exact_observed),
    ),
    "simulate (short form)": (
        ["simulate", "--N", "10", "--lam", "0.9", "--b", "3", *RUN_ARGS],
        lambda: _simulated_short().to_text(short_form=True),
    ),
    "simulate --model supermarket": (
        ["simulate", "--model", "supermarket", *_pairs(SM), "--N", "10", *RUN_ARGS],
        _simulated("supermarket", SM, 10, []),
    ),
    "simulate --model sir --observable": (
        ["simulate", "--model", "sir", *SIR_ARGS, "--N", "20", "--observable", "I", *RUN_ARGS],
        _simulated("sir", SIR, 20, ["I"]),
    ),
    "simulate --model FILE --observable": (
        ["simulate", "--model", BD_FILE, *_pairs(BD), "--N", "10", "--observable", "x", *RUN_ARGS],
        _simulated(BD_FILE, BD, 10, ["x"]),
    ),
    "transient --observable": (
        [
            "transient",
            "--model",
            BD_FILE,
            "--param",
            "lam=0.5",
            "--t",
            "0:1:3",
            "--observable",
            "x**2",
        ],
        _text_of(_transient_observed),
    ),
    "solve (heterogeneous)": (
        [
            "solve",
            "--model",
            "power_of_d_heterogeneous",
            *_pairs(HET_LIBRARY),
            "--observable",
            "utilisation",
            "--float64",
        ],
        _text_of(_het_solve),
    ),
    "exact (heterogeneous) --model FILE": (
        ["exact", "--model", HET_FILE, *_pairs(HET_SIS), "--N", "3"],
        _text_of(_het_exact(HET_FILE, HET_SIS, [])),
    ),
    "pi --exact": (
        ["pi", "--arrivals", "0:.5,1:.5", "--service", "1:1", "--service", "1:1", "--exact"],
        _text_of(_pi_exact),
    ),
    "sweep": (
        ["sweep", "--model", BD_FILE, "--param", "lam=0.4:0.5:2", "--float64"],
        _text_of(_sweep),
    ),
    "pi (simulation)": (
        [
            "pi",
            "--arrivals",
            "0:.4,2:.2,4:.3,6:.1",
            "--service",
            "1:1",
            "--n",
            "3",
            "--slots",
            "20000",
            "--reps",
            "2",
            "--seed",
            "3",
        ],
        _text_of(_pi_simulation),
    ),
    "bound": (
        ["bound", "--lam", "0.9", "--b", "3", "--N", "10,20", "--dps", "12"],
        _text_of(_size_table("bound")),
    ),
    "refined": (
        ["refined", "--lam", "0.9", "--b", "3", "--N", "10", "--dps", "12"],
        _text_of(_size_table("refined")),
    ),
    "tail (exact)": (
        ["tail", "--model", "mmn", "--n", "2", "--eps", "0.5"],
        _text_of(_exact_tail),
    ),
    "lemmas": (
        ["lemmas", "--N", "10", "--lam", "0.9", "--b", "2", "--only", "lemma5"],
        _text_of(_lemmas),
    ),
    "lemmas --certify": (
        ["lemmas", "--N", "10", "--lam", "0.9", "--b", "2", "--only", "lemma5", "--certify"],
        _text_of(_lemmas_certified),
    ),
    "tail --simulate": (
        [
            "tail",
            "--model",
            "jsq",
            "--n",
            "3",
            "--eps",
            "0.1",
            "--x",
            "1,2",
            "--simulate",
            "--events",
            "20000",
            "--reps",
            "2",
            "--seed",
            "3",
        ],
        _text_of(_tails_simulation),
    ),
}


@pytest.mark.parametrize("name", list(TEXTS))
def test_the_printed_text_is_the_results_own(name: str, capsys, monkeypatch, tmp_path) -> None:
    from numeric.meanfield.problem import forget

    _cache_of_its_own(name, monkeypatch, tmp_path)
    argv, text = TEXTS[name]
    forget()  # as above: the same process state for both
    capsys.readouterr()
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 0, err
    forget()
    assert TIMED.sub("(time)", out) == TIMED.sub("(time)", text() + "\n")


def test_a_short_form_text_needs_a_short_forms_result() -> None:
    import sim
    from mfstein.ground.errors import ParameterError

    r = _exact_model()
    s = sim.simulate(BD_FILE, {"lam": "0.5"}, N=10, **RUN)
    assert not r.family_fields and not s.family_fields
    for result in (r, s):
        with pytest.raises(ParameterError, match="short_form needs"):
            result.to_text(short_form=True)
    assert r.to_text().startswith("exact finite-N birth-death model: N = 4, lam = 0.5")
    assert s.to_text().startswith("birth-death model, N = 10, lam = 0.5 (")
