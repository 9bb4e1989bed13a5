"""Issue 23: only population processes are answered.

Malformed models are refused in one sentence where they are built
(:class:`derive.Model`, :class:`derive.Transition`, :class:`derive.spec.Parameter`);
negative or non-finite rates at the start, at the fixed point and along a
transient are refused naming the transition and the state; a start off the
declared state space is refused, float round-off of one is snapped and said so.
"""

from __future__ import annotations

import warnings
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from in_process import run_main

from derive import Model, Transition
from derive.models import load_model
from derive.spec import ModelInfo, Parameter, StateSpace
from mfstein.ground.errors import ParameterError

ROOT = Path(__file__).resolve().parents[2]
BIRTH_DEATH = str(ROOT / "examples" / "birth_death.py") + ":birth_death"
SIR = {"beta": "2", "gamma": "1", "rho": "0.5", "a": "0.1"}

x, y, lam = sp.symbols("x y lam")


def _one_sentence(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and text.endswith("."), text
    return text


@pytest.mark.parametrize(
    ("jump", "needle"),
    [((0.5,), "integers"), ((1.0,), "integers"), (("1",), "integers"), ("1", "sequence"),
     (1, "sequence"), ((), "empty"), ((True,), "integers")],
)
def test_jumps_must_be_integers(jump, needle) -> None:
    with pytest.raises(ParameterError) as exc:
        Transition(jump, lam)
    assert needle in _one_sentence(exc)


@pytest.mark.parametrize(
    ("rate", "needle"),
    [(None, "SymPy expression or a number"), ("lam*x", "SymPy expression or a number"),
     (lambda s: s, "got a function"), (sp.I * x, "real and finite"),
     (sp.zoo, "real and finite"), (-1, ">= 0"), (sp.Matrix([x]), "SymPy expression"),
     (sp.Eq(x, 1), "scalar"), (sp.ImmutableMatrix([x]), "scalar"),
     (sp.Integer(10) ** 400 * x, "beyond what the compiled float64"),
     (sp.Integer(2) ** 70 * x, "beyond what the compiled float64"),
     (sp.Rational(10**400, 3) * x, "beyond what the compiled float64")],
)
def test_rates_must_be_real_expressions(rate, needle) -> None:
    with pytest.raises(ParameterError) as exc:
        Transition((1,), rate)
    assert needle in _one_sentence(exc)


def test_numeric_rates_are_exact_sympy_numbers_and_work() -> None:
    """``Transition((1,), 2)`` crashed every command; it is a valid constant rate."""
    from numeric.meanfield.entry import solve as solve_model

    assert Transition((1,), 2).rate == sp.Integer(2)
    assert Transition((1,), Fraction(1, 3)).rate == sp.Rational(1, 3)
    assert Transition((sp.Integer(1), 0), x).jump == (1, 0)
    m = Model("immigration", (x,), (), [Transition((1,), 2), Transition((-1,), x)])
    sol = solve_model(m, {}, dps=15)
    # x* = 2, W = Q/(2|J|) = (2 + 2)/2 = 2, c = tr(W) = 2
    assert abs(sol.constant - 2) < 1e-14 and abs(sol.s_star[0] - 2) < 1e-14


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"states": "x"}, "sequence of SymPy symbols"),
        ({"states": (x, x)}, "more than once"),
        ({"states": ("x",)}, "must be SymPy symbols"),
        ({"params": (lam, lam)}, "more than once"),
        ({"params": (x,)}, "both a state and a parameter"),
        ({"transitions": [((1,), lam)]}, "derive.Transition objects"),
        ({"info": {"state_space": "box"}}, "ModelInfo"),
        ({"info": ModelInfo(parameters=(Parameter("lam"), Parameter("lam", low=0)))},
         "more than once"),
        ({"name": 3}, "name"),
    ],
)
def test_malformed_models_are_one_sentence(kwargs, needle) -> None:
    args = {"name": "m", "states": (x,), "params": (lam,),
            "transitions": [Transition((1,), lam), Transition((-1,), x)], "info": None}
    args.update(kwargs)
    with pytest.raises(ParameterError) as exc:
        Model(args["name"], args["states"], args["params"], args["transitions"],
              info=args["info"])
    assert needle in _one_sentence(exc)


@pytest.mark.parametrize(
    "kwargs",
    [{"low": 2, "high": 1}, {"low": 1, "high": 1}, {"low": "0"}, {"high": float("nan")}],
)
def test_parameter_ranges_must_be_consistent(kwargs) -> None:
    with pytest.raises(ParameterError) as exc:
        Parameter("lam", **kwargs)
    _one_sentence(exc)
    assert Parameter("a", low=1, high=1, low_inclusive=True, high_inclusive=True).contains(1)


def test_negative_rates_from_a_factory_option_are_refused() -> None:
    """birth-death with cap = -1 gave a negative c "to 30 correct digits"."""
    from numeric.expansion.transient import transient
    from numeric.meanfield.entry import solve as solve_model

    model = load_model(BIRTH_DEATH, cap=-1)
    with pytest.raises(ParameterError) as exc:
        solve_model(model, {"lam": "0.5"}, dps=30)
    text = _one_sentence(exc)
    assert "transition birth" in text and "negative rate" in text and "x = 0" in text
    with pytest.raises(ParameterError, match="negative rate"):
        transient(model, {"lam": "0.5"}, times=[0, 1])


def test_negative_rate_at_the_fixed_point_is_refused() -> None:
    """Rates fine at the start but negative where the ODE settles."""
    from numeric.meanfield.entry import solve as solve_model

    m = Model("dip", (x,), (),
              [Transition((1,), 2), Transition((-1,), x), Transition((1,), (1 - x) / 2, "dip")],
              info=ModelInfo(reference=(sp.Rational(1, 2),)))
    # f = 2 - x + (1 - x)/2, x* = 5/3: the rate (1 - x)/2 is -1/3 there
    with pytest.raises(ParameterError) as exc:
        solve_model(m, {}, dps=15, route="general")
    assert "transition dip" in _one_sentence(exc) and "at the fixed point" in str(exc.value)


def test_jumps_that_can_leave_the_declared_space_are_refused() -> None:
    """A constant death rate on the orthant drives x below 0 (x(1) = -0.4)."""
    from numeric.expansion.transient import transient
    from numeric.meanfield.entry import solve as solve_model

    m = Model("leaky", (x,), (), [Transition((1,), sp.Rational(1, 10)), Transition((-1,), 1)],
              info=ModelInfo(state_space=StateSpace("orthant"), reference=(sp.Rational(1, 2),)))
    for run in (lambda: transient(m, {}, times=[0, 1]), lambda: solve_model(m, {}, dps=10)):
        with pytest.raises(ParameterError) as exc:
            run()
        assert "can leave the state space" in _one_sentence(exc) and "x = 0" in str(exc.value)
    # the same death rate vanishing at 0 is a process
    ok = Model("ok", (x,), (), [Transition((1,), sp.Rational(1, 10)), Transition((-1,), x)])
    ok.check_state_space()
    # a loose declaration (orthant for a monotone chain): the rate is negative, not
    # positive, on the unreachable part of the face, so the model is accepted
    s1, s2 = sp.symbols("s1 s2")
    loose = Model("loose", (s1, s2), (),
                  [Transition((1, 0), 1 - s1), Transition((-1, 0), s1 - s2),
                   Transition((0, 1), s1 - s2), Transition((0, -1), s2)])
    loose.check_state_space()
    box = Model("box", (x,), (), [Transition((1,), 1), Transition((-1,), x)],
                info=ModelInfo(state_space=StateSpace("box")))
    with pytest.raises(ParameterError, match="face x = 1"):
        box.check_state_space()


def test_transient_refuses_negative_rates_along_the_way() -> None:
    """Rates fine at the start, negative once x(t) passes 1: refused, naming the time."""
    from numeric.expansion.transient import transient

    m = Model("dip", (x,), (),
              [Transition((1,), 2), Transition((-1,), x), Transition((1,), (1 - x) / 2, "dip")],
              info=ModelInfo(reference=(sp.Rational(1, 2),)))
    with pytest.raises(ParameterError) as exc:
        transient(m, {}, times=[0, 0.1, 2])
    text = _one_sentence(exc)
    assert "transition dip" in text and "negative rate" in text and "t = 2" in text
    ok = transient(m, {}, times=[0, 0.1])  # x(0.1) < 1: all rates >= 0 so far
    assert 0.5 < float(ok.x[-1][0]) < 1


def test_start_off_the_conserved_simplex_is_refused_and_round_off_snapped() -> None:
    from numeric.meanfield.entry import solve as solve_model

    sir = load_model("sir")
    with pytest.raises(ParameterError) as exc:
        solve_model(sir, SIR, dps=10, start="0,0,0")
    assert "s_1 + ... + s_3 = 1" in _one_sentence(exc)
    third = "0.3333333333333333"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        snapped = solve_model(sir, SIR, dps=10, start=",".join([third] * 3))
    moved = [w for w in caught if "moved onto the state space" in str(w.message)]
    assert len(moved) == 1, [str(w.message) for w in caught]
    assert moved[0].filename == __file__  # the caller's line, not the library's
    exact = solve_model(sir, SIR, dps=10, start="0.2,0.3,0.5")
    assert abs(snapped.constant - exact.constant) < 1e-9  # same fixed point, same c


def test_cli_refusals_are_one_line_and_status_2(capsys) -> None:
    """The command line's refusals, run in this process (:func:`in_process.run_main`)."""
    sir = ["--model", "sir"] + [f"--param={k}={v}" for k, v in SIR.items()]
    for argv in (
        ["solve", "--model", BIRTH_DEATH, "--param", "lam=0.5", "--param", "cap=-1"],
        ["solve", *sir, "--start", "0,0,0", "--dps", "10"],
        ["transient", *sir, "--start", "0,0,0", "--t", "0:1:3"],
    ):
        proc = run_main(argv, ROOT, capsys, timeout=120)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, (
            argv, proc.stderr)
