"""Issue 36: rate signs and singular rates in transient, simulate, exact and solve.

* a rate that vanishes exactly on a face of the state space evaluates to a few
  ulps of either sign there; every route allows that round-off by one rule
  (:mod:`numeric.rate_signs`) and still refuses a truly negative rate;
* a rate ``lam / x`` at ``x = 0`` is refused in solve's sentence by transient,
  exact and simulate (no ZeroDivisionError);
* a ``sqrt(y)`` rate: the transient works from a start inside, and is refused in
  one sentence from ``y = 0`` (no finite Jacobian there);
* simulate refuses a reachable negative rate in exact's sentence.

The models are plain model files in a temporary directory; the transients are
checked against SciPy's ``solve_ivp`` on the drift written out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from mfstein.cli import main
from mfstein.ground.errors import ParameterError

HEAD = (
    "import sympy as sp\nfrom derive import Model, Transition\n"
    "from derive.spec import ModelInfo, StateSpace\n\n\n"
)
#: rmf_tool's Example_nonStableSIR, small: S -> I at 10 x0 x1, I -> R at 5 x1 and
#: R -> S at (10 x0 + 0.1)(1 - x0 - x1), with x2 = 1 - x0 - x1 implicit.
SIR_LIKE = HEAD + (
    "def factory():\n"
    "    x0, x1 = sp.symbols('x0 x1')\n"
    "    return Model('nssir', (x0, x1), (), [\n"
    "        Transition((-1, 1), 10*x0*x1, 'infection'),\n"
    "        Transition((0, -1), 5*x1, 'recovery'),\n"
    "        Transition((1, 0), (10*x0 + 0.1)*(1 - x0 - x1), 'return')],\n"
    "        info=ModelInfo(state_space=StateSpace('simplex')))\n"
)
INVERSE = HEAD + (
    "def factory():\n"
    "    x, lam = sp.symbols('x lam')\n"
    "    return Model('inv', (x,), (lam,), [Transition((1,), lam/x, 'arrival'),\n"
    "        Transition((-1,), x, 'departure')],\n"
    "        info=ModelInfo(state_space=StateSpace('orthant'), reference=(sp.Rational(1, 2),)))\n"
)
SQRT = HEAD + (
    "def factory():\n"
    "    x, y, lam = sp.symbols('x y lam')\n"
    "    return Model('sq', (x, y), (lam,), [Transition((1, 0), lam, 'a'),\n"
    "        Transition((-1, 0), x, 'd'), Transition((0, 1), x, 'b'),\n"
    "        Transition((0, -1), sp.sqrt(y), 'e')],\n"
    "        info=ModelInfo(state_space=StateSpace('orthant')))\n"
)
#: negative once x > 1, which the chain reaches (the mean field settles at x = 1)
DIP = HEAD + (
    "def factory():\n"
    "    x, lam = sp.symbols('x lam')\n"
    "    return Model('dip', (x,), (lam,), [Transition((1,), lam, 'arrival'),\n"
    "        Transition((-1,), x, 'departure'), Transition((1,), (1 - x)/2, 'dip')],\n"
    "        info=ModelInfo(state_space=StateSpace('orthant'), reference=(sp.Rational(1, 2),)))\n"
)
TIMES = [0.0, 0.5, 1.0]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("rate_signs")
    out = {}
    for name, text in (("sir", SIR_LIKE), ("inv", INVERSE), ("sqrt", SQRT), ("dip", DIP)):
        path = d / f"{name}.py"
        path.write_text(text)
        out[name] = f"{path}:factory"
    return out


def _reference(f, y0) -> np.ndarray:
    """``x(t)`` at :data:`TIMES` from SciPy on the hand-written drift ``f``."""
    sol = solve_ivp(lambda t, y: f(y), (0, TIMES[-1]), y0, t_eval=TIMES, method="LSODA",
                    rtol=1e-12, atol=1e-14)
    assert sol.success
    return sol.y.T


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.split("error: ", 1)[1]


@pytest.mark.parametrize("start", ["0.5,0.5", "0.7,0.3", "0.2,0.8", "0.9,0.1"])
def test_rates_vanishing_on_a_face_are_accepted(files, start) -> None:
    """Each start lies on the face x0 + x1 = 1 where the return rate is exactly 0;
    float64 gave -5e-16 there and the transient was refused."""
    from numeric.expansion.transient import transient

    s0 = [float(v) for v in start.split(",")]
    res = transient(files["sir"], {}, times=TIMES, start=s0)

    def drift(y):
        x0, x1 = y
        back = (10 * x0 + 0.1) * (1 - x0 - x1)
        return [-10 * x0 * x1 + back, 10 * x0 * x1 - 5 * x1]

    got = np.array(res.x, dtype=float)
    assert np.allclose(got, _reference(drift, s0), rtol=1e-7, atol=1e-9)


def test_a_negative_rate_beyond_round_off_is_still_refused(files) -> None:
    """The allowance is a few ulps of the rate's own terms, not a tolerance: the
    return rate at a start 1e-12 beyond the face is refused."""
    from derive.models import load_model
    from numeric.rate_signs import check_rates

    model = load_model(files["sir"])
    check_rates(model, [0.7, 0.3], [], "the start")  # 1 - 0.7 - 0.3 rounds to -5.6e-17
    with pytest.raises(ParameterError, match=r"transition return .* negative rate"):
        check_rates(model, [0.7, 0.3 + 1e-12], [], "the start")


def test_rates_that_divide_by_zero_get_solves_sentence(files, capsys) -> None:
    inv = files["inv"]
    assert main(["solve", "--model", inv, "--param", "lam=0.5", "--start", "0"]) == 2
    solve_says = _error_line(capsys)
    assert solve_says == "the rates of model inv cannot be evaluated at the start (x = 0.0)."
    assert main(["transient", "--model", inv, "--param", "lam=0.5", "--start", "0",
                 "--t", "0:1:3"]) == 2
    assert _error_line(capsys) == solve_says
    lattice = "at the lattice state N s = (0) at N = 4 (x = 0)."
    assert main(["exact", "--model", inv, "--param", "lam=0.5", "--N", "4",
                 "--truncation", "3"]) == 2
    assert _error_line(capsys) == f"the rates of model inv cannot be evaluated {lattice}"
    assert main(["simulate", "--model", inv, "--param", "lam=0.5", "--N", "4",
                 "--steps", "20000", "--reps", "1", "--workers", "1"]) == 2
    assert _error_line(capsys) == f"the rates of model inv cannot be evaluated {lattice}"


def test_transient_with_lam_over_x_from_inside(files) -> None:
    from numeric.expansion.transient import transient

    res = transient(files["inv"], {"lam": "0.5"}, times=TIMES)
    ref = _reference(lambda y: [0.5 / y[0] - y[0]], [0.5])
    assert np.allclose(np.array(res.x, dtype=float), ref, rtol=1e-7)


def test_sqrt_rate_works_inside_and_is_refused_at_zero(files, capsys) -> None:
    from numeric.expansion.transient import transient

    res = transient(files["sqrt"], {"lam": "0.5"}, times=TIMES, start=[0.5, 0.5])
    ref = _reference(lambda y: [0.5 - y[0], y[0] - np.sqrt(y[1])], [0.5, 0.5])
    assert np.allclose(np.array(res.x, dtype=float), ref, rtol=1e-7)
    assert main(["transient", "--model", files["sqrt"], "--param", "lam=0.5",
                 "--t", "0:1:3"]) == 2
    said = _error_line(capsys)
    assert "no finite derivative at the start (x = 0.0, y = 0.0)" in said


def test_simulate_refuses_a_reachable_negative_rate_in_exacts_sentence(files, capsys) -> None:
    """The chain from x = 1/2 reaches x = 11/10, where the rate (1 - x)/2 is -1/20:
    exact's breadth-first search and the simulated path meet it first there."""
    dip = files["dip"]
    argv = ["--model", dip, "--param", "lam=1", "--N", "10"]
    assert main(["exact", *argv, "--truncation", "3"]) == 2
    exact_says = _error_line(capsys)
    assert exact_says.startswith("transition dip of model dip has the negative rate -0.05 at "
                                 "the lattice state N s = (11) at N = 10 (x = 11/10)")
    assert main(["simulate", *argv, "--steps", "20000", "--reps", "1", "--workers", "1"]) == 2
    assert _error_line(capsys) == exact_says


def test_float64_rates_are_refused_as_the_general_check_refuses(files) -> None:
    """The vectorised check of float64 rates passes what the general check passes and
    refuses in its sentence what it refuses (round-off allowed, negative, not finite)."""
    from derive.models import load_model
    from derive.sparse import sparse_rates
    from numeric.rate_signs import check_values, check_values64

    model = load_model(files["sir"])
    kernels = sparse_rates(model)  # the float64 route's rates (no compile)
    p = np.zeros(0)
    for s in ([0.7, 0.3], [0.7, 0.3 + 1e-12], [0.2, 0.5]):
        s64 = np.array(s)
        rates = kernels.rates(s64, p)
        for bad in (None, -0.0, np.nan, -np.inf, np.inf):
            vals = np.array(rates, dtype=float)
            if bad is not None:
                vals[1] = bad
            outcomes = []
            for check in (check_values, check_values64):
                args = (vals.tolist(), s, []) if check is check_values else (vals, s64, p)
                try:
                    check(model, *args, "the start")
                    outcomes.append(None)
                except ParameterError as exc:
                    outcomes.append(str(exc))
            assert outcomes[0] == outcomes[1], outcomes
    assert outcomes[0] is not None  # an infinite rate is refused (a check of the check)
