"""Issue 23: every printed number keeps its promise.

Over seeded random parameter sets of every library model (supermarket, JSQ(L),
SIR) and a user model from a file (``examples/birth_death.py``), each entry of
``s*``, ``V``, ``W`` (and ``A``, ``B`` at order 2) is formatted exactly as the
command line prints it (:func:`numeric.precision.solution_entries`) and compared
with the same model solved at twice the precision: every string lies within the
stated absolute error of the array and within one unit of its own last digit;
``c`` printed with its ``digits`` lies within one unit of its last digit.  A
certified enclosure contains the twice-precision value and is printed with the
digits it certifies.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import mpmath
import pytest
from deadlines import deadline
from mpmath import mpf

from derive.models import load_model, split_values
from numeric.meanfield.entry import solve as solve_model
from numeric.precision import solution_entries, to_str

ROOT = Path(__file__).resolve().parents[2]
BIRTH_DEATH = str(ROOT / "examples" / "birth_death.py") + ":birth_death"
DPS = 12


def _cases() -> list[tuple[str, dict[str, str], int]]:
    """30+ seeded random (model, options and parameters, order)."""
    rng = random.Random(23)
    out: list[tuple[str, dict[str, str], int]] = []
    for i in range(10):
        lam = f"{rng.uniform(0.2, 0.97):.6f}"
        out.append(("supermarket", {"b": str(rng.randint(2, 4)), "lam": lam}, 1 + i % 2))
    for i in range(8):
        alpha = f"{rng.uniform(0.3, 0.95):.5f}"
        out.append(("jsq_L", {"L": str(rng.randint(2, 4)), "alpha": alpha, "beta": "1"}, 1 + i % 2))
    for i in range(8):
        p = {k: f"{rng.uniform(lo, hi):.4f}" for k, lo, hi in
             (("beta", 0.5, 4), ("gamma", 0.2, 2), ("rho", 0.05, 1), ("a", 0.01, 0.3))}
        out.append(("sir", p, 1 + i % 2))
    for i in range(6):
        p = {"cap": str(rng.randint(1, 3)), "lam": f"{rng.uniform(0.1, 3):.5f}"}
        out.append((BIRTH_DEATH, p, 1 + i % 2))
    return out


CASES = _cases()


def _solve(name: str, pairs: dict[str, str], dps: int, order: int):
    options, params = split_values(name, dict(pairs))
    model = load_model(name, **options)
    return solve_model(model, params, dps=dps, order=order)


def _flat(x, b: int) -> list[mpf]:
    """The first ``b`` entries (leading ``b x b`` block of a matrix, row-major): a
    truncated family (JSQ(L) with ``b = inf``) keeps more levels at more digits."""
    if isinstance(x, mpmath.matrix):
        return [x[i, j] for i in range(b) for j in range(b)]
    return list(x)[:b]


def _unit(text: str) -> Decimal:
    """One unit of the last printed digit of a decimal string."""
    return Decimal(1).scaleb(Decimal(text).as_tuple().exponent)


def _check_entries(name: str, truth: list[mpf], strings: list[str], stated: str) -> None:
    bound = mpf(stated)
    for k, (text, t) in enumerate(zip(strings, truth, strict=True)):
        err = abs(mpf(text) - t)
        assert err <= bound, f"{name}[{k}] = {text} is {mpmath.nstr(err, 3)} off (stated {stated})"
        if text != "0":
            assert err <= mpf(str(_unit(text))), f"{name}[{k}] = {text}: last digit wrong"


def test_at_least_30_parameter_sets_of_every_model() -> None:
    names = {c[0] for c in CASES}
    assert len(CASES) >= 30 and names == {"supermarket", "jsq_L", "sir", BIRTH_DEATH}


def _check_case(name: str, pairs: dict[str, str], order: int, dps: int) -> None:
    """Every entry printed at ``dps`` (and at 12 digits, what the text output shows)
    within its stated error of the run at ``2 dps``; ``c`` within a unit of its last
    digit."""
    low = _solve(name, pairs, dps, order)
    high = _solve(name, pairs, 2 * dps, order)
    arrays = ["s_star", "V", "W"] + (["A", "B"] if order == 2 else [])
    with mpmath.workdps(4 * dps):
        for arr in arrays:
            for digits in sorted({dps, min(12, dps)}):
                strings, stated = solution_entries(low, arr, digits)
                _check_entries(arr, _flat(getattr(high, arr), low.n), strings, stated)
        c_text = to_str(low.constant, low.digits)
        assert abs(mpf(c_text) - high.constant) <= mpf(str(_unit(c_text))), c_text


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{Path(c[0]).stem}-{c[2]}-{c[1]}")
def test_every_printed_entry_within_its_stated_error(case) -> None:
    name, pairs, order = case
    _check_case(name, pairs, order, DPS)


#: A handful of the cases above (every model, both orders) and the issue's supermarket
#: example (b = 3, lam = 0.9 at 30 digits printed V 2.6x and W 9x its stated error off).
HIGH_CASES = [CASES[i] for i in (1, 10, 11, 18, 27)]
HIGH_CASES.append(("supermarket", {"b": "3", "lam": "0.9"}, 2))


@pytest.mark.parametrize("case", HIGH_CASES, ids=lambda c: f"{Path(c[0]).stem}-{c[2]}-{c[1]}")
def test_at_30_digits_every_printed_entry_within_its_stated_error(case) -> None:
    """The same promise at a higher working precision: 30 digits against 60."""
    name, pairs, order = case
    _check_case(name, pairs, order, 30)


def _large_cases() -> list[tuple[str, dict[str, str], int]]:
    """The slow sweep: bigger models (the supermarket's iterative route beyond 40
    levels, at lam > 1 where nothing is truncated; its truncated tail at b = 100 and,
    at order 2, b = 16 to 60, where the kept levels must grow until A and B settle),
    and more digits."""
    rng = random.Random(2323)
    out = [("supermarket", {"b": str(b), "lam": f"{rng.uniform(1.01, 1.3):.5f}"}, 1)
           for b in (8, 45, 60)]
    out += [("supermarket", {"b": str(rng.randint(5, 12)), "lam": f"{rng.uniform(0.5, 0.99):.6f}"},
             2) for _ in range(4)]
    out += [("jsq_L", {"L": str(rng.randint(2, 6)), "alpha": f"{rng.uniform(0.5, 0.99):.5f}",
                       "beta": "1"}, 2) for _ in range(4)]
    out += [("supermarket", {"b": "100", "lam": f"{rng.uniform(0.8, 0.999):.4f}"}, 1),
            ("supermarket", {"b": "30", "lam": "0.95"}, 2)]
    out += [("supermarket", {"b": str(rng.randint(16, 60)), "lam": f"{rng.uniform(0.6, 0.95):.4f}"},
             2) for _ in range(2)]
    return out  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("case", _large_cases(), ids=lambda c: f"{c[0]}-{c[2]}-{c[1]}")
def test_larger_sweep_every_printed_entry_within_its_stated_error(case) -> None:
    name, pairs, order = case
    _check_case(name, pairs, order, 30)


def _cli(argv: list[str]) -> dict:
    env = {**os.environ}
    env.pop("MFSTEIN_TRACEBACK", None)
    proc = subprocess.run(
        [sys.executable, "-m", "mfstein", *argv, "--json"],
        capture_output=True, text=True, timeout=deadline(120), cwd=ROOT, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_issue_example_jsq_l_dps_25_keeps_its_promise() -> None:
    """The issue's example: V[3] was 15x, W 33x the stated error off the dps 55 run."""
    argv = ["solve", "--model", "jsq_L", "--param", "L=4", "--param", "alpha=0.8797",
            "--param", "beta=1", "--order", "2"]
    low, high = _cli([*argv, "--dps", "25"]), _cli([*argv, "--dps", "55"])
    with mpmath.workdps(80):
        for arr in ("s_star", "V", "W", "A", "B"):
            lo, hi = low[arr], high[arr]
            if isinstance(lo[0], list):
                lo, hi = [x for r in lo for x in r], [x for r in hi for x in r]
            _check_entries(arr, [mpf(x) for x in hi], lo, low[f"{arr}_abs_error"])


def test_certified_enclosure_contains_the_truth_with_the_digits_it_claims() -> None:
    """The issue's example: a 2e-30 wide enclosure printed next to "38 certified digits"."""

    model, params = load_model("supermarket", b=3), {"lam": "0.447671"}
    sol = solve_model(model, params, dps=20)
    cert = sol.certify(params=params)
    truth = solve_model(model, params, dps=60).constant
    lo, hi = cert.enclosure()
    with mpmath.workdps(80):
        assert mpf(lo) <= truth <= mpf(hi)
        width = (mpf(hi) - mpf(lo)) / abs(truth)
        # as narrow as the digits it claims (two more digits printed than certified)
        assert width <= mpf(10) ** (1 - cert.certified_digits), (lo, hi, cert.certified_digits)
    assert cert.certified_digits >= 20


def _check_transient(name: str, pairs: dict[str, str], order: int, dps: int, times) -> None:
    import numpy as np

    from numeric.expansion.transient import transient

    options, params = split_values(name, dict(pairs))
    model = load_model(name, **options)
    times = np.array(times, dtype=float)
    low = transient(model, params, times=times, order=order, dps=dps).to_dict()
    high = transient(model, params, times=times, order=order, dps=2 * dps)
    with mpmath.workdps(60):
        for arr in ["x", "V", "W"] + (["A", "B"] if order == 2 else []):
            strings = np.array(low[arr], dtype=object).ravel().tolist()
            truth = list(getattr(high, arr).flat)
            _check_entries(arr, truth, strings, low[f"{arr}_abs_error"])


SIR = ("sir", {"beta": "2.5", "gamma": "1", "rho": "0.5", "a": "0.05"})
SUPERMARKET = ("supermarket", {"b": "2", "lam": "0.9"})
JSQ = ("jsq_L", {"L": "2", "b": "2", "alpha": "0.8", "beta": "1"})


@pytest.mark.parametrize(
    "case, order, dps, times",
    [(SIR, 1, 10, [0, 1, 2]), (SIR, 2, 8, [0, 1]), (SUPERMARKET, 1, 8, [0, 1]),
     (JSQ, 1, 8, [0, 1])],
    ids=["sir-1", "sir-2", "supermarket-1", "jsq_L-1"],
)  # fmt: skip
def test_transient_entries_within_their_stated_error(case, order, dps, times) -> None:
    """The mpmath transient prints each entry with the digits its own error allows."""
    _check_transient(*case, order, dps, times)


@pytest.mark.slow
@pytest.mark.parametrize(
    "case, order, dps, times",
    [(SUPERMARKET, 2, 6, [0, 1]), (JSQ, 2, 6, [0, 1]),
     (("supermarket", {"b": "3", "lam": "0.7"}), 2, 8, [0, 1]),
     (("jsq_L", {"L": "2", "b": "3", "alpha": "0.8", "beta": "1"}), 2, 8, [0, 1]),
     (("jsq_L", {"L": "3", "b": "3", "alpha": "1.7", "beta": "1"}), 1, 12, [0, 0.5, 2])],
    ids=["supermarket-2", "jsq_L-2", "supermarket-b3-2", "jsq_L-b3-2", "jsq_L-overload-1"],
)  # fmt: skip
def test_transient_order_2_entries_within_their_stated_error(case, order, dps, times) -> None:
    """The same at order 2 (and a heavier order-1 run) for the queueing models."""
    _check_transient(*case, order, dps, times)


# --------------------------------------------------------------------------
# issue 36: observables that cancel keep their digits
# --------------------------------------------------------------------------
#: (model, factory options and parameters) of every library model and the user
#: model of a file, for observables (small sizes: the default tier stays short).
OBSERVABLE_MODELS = [
    ("supermarket", {"b": "3", "lam": "0.8"}),
    ("jsq_L", {"L": "2", "alpha": "0.8", "beta": "1"}),
    ("sir", {"beta": "2.5", "gamma": "1", "rho": "0.5", "a": "0.05"}),
    ("sis", {"a": "0.1", "beta": "2", "gamma": "1"}),
    ("jiq", {"b": "3", "r": "2", "L": "3", "lam": "0.7"}),
    ("power_of_d_two_speeds", {"b": "2", "d": "2", "lam": "0.7", "mu1": "1.5", "mu2": "0.5",
                               "gamma": "0.5"}),
    ("bike_sharing", {"K": "4", "lam": "1", "mu": "1", "s": "2"}),
    ("cache_random", {"n": "4", "m": "2", "alpha": "0.5"}),
    (BIRTH_DEATH, {"cap": "2", "lam": "0.7"}),
]  # fmt: skip


def _random_observable(rng: random.Random, states: list[str], centre: list[mpf]) -> str:
    """A seeded random nonlinear g whose value cancels: a square ``(x - c y)**2``
    (``(x - c)**2`` for one coordinate) written expanded, ``c`` making it vanish
    at the fixed point to 9 digits (~18 digits cancel), times a random factor
    with an elementary function, plus a random cubic of the same tiny size."""
    if len(states) > 1:
        i, j = rng.sample(range(len(states)), 2)
        x, y = states[i], states[j]
        c = mpmath.nstr(centre[i] / centre[j], 9) if centre[j] else "1"
        square = f"{x}**2 - 2*{c}*{x}*{y} + {c}**2*{y}**2"
    else:
        x = y = states[0]
        c = mpmath.nstr(centre[0], 9)
        square = f"{x}**2 - 2*{c}*{x} + {c}**2"
    a, b = f"{rng.uniform(1, 2):.3f}", f"{rng.uniform(-2, 2):.3f}"
    func = rng.choice([f"exp({x})", f"sqrt({y} + 1)", f"Abs({x} - 0.5)", f"Min({x}, {y})",
                       f"log({y} + 2)", f"Max({x}, 0.25)"])
    return f"({square})*({a} + {func}) + {b}e-{rng.randint(15, 22)}*{x}*{y}**2"  # fmt: skip


def _observable_solutions(name: str, pairs: dict[str, str], dps: int, order: int):
    options, params = split_values(name, dict(pairs))
    model = load_model(name, **options)
    return (model, solve_model(model, params, dps=dps, order=order),
            solve_model(model, params, dps=2 * dps, order=order))  # fmt: skip


def _check_observable(model, low_sol, high_sol, g: str, dps: int) -> None:
    """Every term and every value g0 + g1/N + g2/N^2 of ``g`` printed at ``dps``
    lies within one unit of its last digit (plus the high run's own bound) of the
    run at ``2 dps``; the terms the bound leaves no digit are not printed."""
    from numeric.meanfield.observables import expand

    low, high = expand(low_sol, model, g), expand(high_sol, model, g)
    with mpmath.workdps(4 * dps + 20):
        for term in ("g0", "g1", "g2", "variance"):
            text = low.text(term)
            if text is None:
                continue
            err = abs(mpf(text) - getattr(high, term))
            slack = mpf(str(_unit(text))) + high.error(term)
            assert err <= slack, f"{g}: {term} = {text} is {mpmath.nstr(err, 3)} off"
        for N in (10, 1000):
            for order in range(low.order + 1):
                text = low.text("g0", N, order)
                if text is None:
                    continue
                err = abs(mpf(text) - high.value(N, order))
                terms = ("g0", "g1", "g2")[: order + 1]
                slack = mpf(str(_unit(text))) + sum(
                    high.error(k) / mpf(N) ** n for n, k in enumerate(terms)
                )
                where = f"{g}: value({N}, {order}) = {text}"
                assert err <= slack, f"{where} is {mpmath.nstr(err, 3)} off"


def _observable_cases(seed: int, per_model: int) -> list[tuple[str, dict[str, str], int]]:
    rng = random.Random(seed)
    return [(name, pairs, rng.randrange(10**6)) for name, pairs in OBSERVABLE_MODELS
            for _ in range(per_model)]  # fmt: skip


def _run_observable_case(name: str, pairs: dict[str, str], seed: int, dps: int) -> None:
    model, low, high = _observable_solutions(name, pairs, dps, 2)
    from numeric.meanfield.observables import resolve_model

    finite = resolve_model(model, low.n)
    states = [str(s) for s in finite.states][: max(2, min(4, finite.n))]
    g = _random_observable(random.Random(seed), states, list(high.s_star))
    _check_observable(model, low, high, g, dps)


FAST_MODELS = ("sir", "sis", BIRTH_DEATH)


@pytest.mark.parametrize("case", [c for c in _observable_cases(36, 1) if c[0] in FAST_MODELS],
                         ids=lambda c: f"{Path(c[0]).stem}-{c[2]}")  # fmt: skip
def test_random_cancelling_observables_keep_their_digits(case) -> None:
    """A few seeded random nonlinear g with an 18-digit cancellation: every digit
    printed at 12 digits is a digit of the run at 24."""
    _run_observable_case(*case, 12)


@pytest.mark.slow
@pytest.mark.parametrize("case", _observable_cases(3636, 3),
                         ids=lambda c: f"{Path(c[0]).stem}-{c[2]}")  # fmt: skip
def test_random_cancelling_observables_on_every_library_model(case) -> None:
    """The sweep: three random g on every library model, at 15 digits against 30."""
    _run_observable_case(*case, 15)


def test_cancelled_square_prints_no_digit_then_true_digits() -> None:
    """``(S - c I)**2`` expanded, ``c`` the ratio ``S*/I*`` to 20 digits (~1e-40): at
    12 digits no digit survives and none is printed, but the bound says how small
    it is; at 30 the digits printed are true and the value is positive (the old
    bound printed a negative square)."""
    from numeric.meanfield.observables import expand

    name, pairs = SIR
    model, low, high = _observable_solutions(name, pairs, 30, 1)
    with mpmath.workdps(60):
        c = mpmath.nstr(high.s_star[0] / high.s_star[1], 20)
    g = f"S**2 - 2*{c}*S*I + {c}**2*I**2"
    _check_observable(model, *_observable_solutions(name, pairs, 12, 1)[1:], g, 12)
    twelve = expand(solve_model(model, split_values(name, pairs)[1], dps=12), model, g)
    assert twelve.text("g0") is None and twelve.digits["g0"] == 0
    assert twelve.error("g0") >= abs(twelve.g0)
    assert "0 digits" in str(twelve)
    _check_observable(model, low, high, g, 30)
    assert expand(low, model, g).digits["g0"] >= 5
    assert mpf(expand(low, model, g).text("g0")) > 0


def test_exact_chain_value_counts_the_rounding_of_g() -> None:
    """``(S + 10**8)**2 - 2*10**8*S - 10**16`` is ``S**2``; float64 loses its every
    digit on the states (~1 off).  The printed exact value keeps only the digits the
    float64/longdouble disagreement leaves, and they are digits of ``E[S^2]``."""
    import numpy as np

    from numeric.exact import solve as exact_solve

    name, pairs = SIR
    model = load_model(name)
    r = exact_solve(model, pairs, N=10)
    x = r.expect("(S + 10**8)**2 - 2*10**8*S - 10**16", model)
    X = np.asarray(r.state_array, dtype=float) / 10
    truth = float(np.asarray(r.pi) @ X[:, 0] ** 2)
    assert x.digits < 10
    text = x.text()
    if text is not None:
        assert abs(float(text) - truth) <= float(_unit(text)), (text, truth)
    else:
        assert x.error >= abs(x.mean)
    plain = r.expect("S**2", model)
    assert plain.digits == 10 and abs(float(plain.text()) - truth) <= float(_unit(plain.text()))


@pytest.mark.slow
@pytest.mark.parametrize(
    "pairs, g, dps",
    [({"b": "30", "d": "5", "lam": "1.2"}, "s1**2-2*s1*s2+s2**2", 20),
     ({"b": "30", "d": "5", "lam": "1.2"}, "s1**2-2*s1*s2+s2**2", 40),
     ({"b": "20", "d": "2", "lam": "3"}, "s1**2-2*s1*s2+s2**2", 5)],
    ids=["b30-dps20", "b30-dps40", "b20-dps5"],
)  # fmt: skip
def test_issue_36_cancelling_squares(pairs, g, dps) -> None:
    """The issue's examples: -9.86e-32 printed for a square of 2.19e-45 (10 digits
    claimed, none true), 17 claimed with 6 true at 40 digits, -1.11e-16 at 5."""
    model, low, high = _observable_solutions("supermarket", pairs, dps, 2)
    _check_observable(model, low, high, g, dps)
