"""A claimed precision holds for every printed number (docs/design.md, "Printed digits").

A float64 solution claims ``digits`` (about 13) for ``c``; its JSON, ``repr``, HTML and
the command line's output print no more, so the last bits, which move with a warm
start, never show: a cold and a warm solve print the same JSON.
"""

from __future__ import annotations

import json
import math
import random
import re
from decimal import Decimal
from fractions import Fraction

import mpmath
import pytest

import numeric
from mfstein.cli import main
from mfstein.ground.display import ERROR_DIGITS, claimed, error_figure

SIR = {"beta": "2", "gamma": "1", "rho": "0.5", "a": "0.1"}
SIR_ARGS = [a for k, v in SIR.items() for a in ("--param", f"{k}={v}")]
NUMBER = re.compile(r"-?\d+\.\d+(?:[eE][-+]?\d+)?|-?\d+[eE][-+]?\d+")


def _significant(text: str) -> int:
    """Significant digits written in a decimal string (trailing zeros count)."""
    mantissa = re.split("[eE]", text.strip().lstrip("+-"))[0].replace(".", "").lstrip("0")
    return len(mantissa)


def _float_digits(x: float) -> int:
    """Significant digits of a float's shortest ``repr`` (what JSON writes)."""
    return len(Decimal(repr(x)).normalize().as_tuple().digits) if x else 0


# -- the one helper ------------------------------------------------------------------------
def test_a_float_keeps_at_most_its_claimed_digits_and_is_the_nearest_such() -> None:
    rng = random.Random(42)
    for _ in range(2000):
        x = rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30)
        d = rng.randint(1, 17)
        y = claimed(x, d)
        assert isinstance(y, float) and _float_digits(y) <= d
        # the float nearest the d-digit rounding: half a unit of the d-th digit of x,
        # and half a float64 spacing for the conversion back
        unit = Fraction(10) ** (math.floor(math.log10(abs(x))) - d + 1)
        assert abs(Fraction(y) - Fraction(x)) <= unit / 2 + Fraction(math.ulp(x))
    assert claimed(1.1921568627450974, 13) == claimed(1.1921568627450978, 13) == 1.192156862745


def test_decimal_strings_nested_values_and_no_claim() -> None:
    assert claimed("1.0043769283159718", 13) == "1.004376928316"
    assert claimed("0.90000000000000000", 13) == "0.9000000000000"  # zeros are digits
    assert claimed("0.9", 13) == "0.9"  # never padded
    assert claimed("-0.0823840233298913942458392234346", 5) == "-0.082384"
    assert claimed({"a": [0.123456, "0.123456"], "n": 3, "ok": True}, 2) == {
        "a": [0.12, "0.12"],
        "n": 3,
        "ok": True,
    }
    assert claimed(0.123456, None) == 0.123456 and claimed("text", 3) == "text"
    import numpy as np  # NumPy: arrays as nested lists, integers and bools as they are

    assert claimed(np.array([[0.123456, 2.0]]), 2) == [[0.12, 2.0]]
    assert claimed(np.float64(1.23456), 2) == 1.2 and claimed(np.array(2.34567), 2) == 2.3
    assert type(claimed(np.int64(3), 1)) is np.int64 and claimed(np.bool_(True), 1)
    assert math.isnan(claimed(float("nan"), 3)) and claimed(0.123456, 0) == 0.0


def test_an_error_figure_is_rounded_upwards_to_three_digits() -> None:
    rng = random.Random(7)
    for _ in range(500):
        e = rng.uniform(0, 1) * 10.0 ** rng.randint(-40, 3)
        shown = error_figure(e)
        assert shown >= e and _float_digits(shown) <= ERROR_DIGITS
    assert error_figure("5.8052147324835832e-14") == "5.81e-14"


# -- the float64 solution --------------------------------------------------------------------
def _check_solution_document(sol, doc: dict) -> None:
    """Every number of a mean-field solution's JSON within its own claim."""
    shown = min(sol.dps, sol.digits)
    assert _significant(doc["constant"]) <= shown
    if "lam" in doc:
        assert _significant(doc["lam"]) <= shown
    for route, text in doc["methods"].items():
        own = sol.digits2 if route.startswith("c2:") else sol.digits
        assert _significant(text) <= min(sol.dps, own), route
    if sol.c2 is not None:
        assert _significant(doc["c2"]) <= min(sol.dps, sol.digits2)
    for name in ("s_star", "V", "W", "A", "B"):
        if name not in doc:
            continue
        assert _significant(doc[f"{name}_abs_error"]) <= ERROR_DIGITS
        texts = json.loads(json.dumps(doc[name]))
        flat = [t for row in texts for t in row] if isinstance(texts[0], list) else texts
        with mpmath.workdps(40):
            for text, err in zip(flat, sol.errors[name], strict=True):
                if text == "0":
                    continue
                # the last printed digit's unit is at least twice the entry's error
                exponent = Decimal(text).as_tuple().exponent
                assert mpmath.mpf(10) ** exponent >= 2 * err * (1 - mpmath.mpf(10) ** -20)


@pytest.fixture(scope="module")
def float64_solutions() -> dict:
    return {
        "supermarket order 2": numeric.solve(
            "supermarket", {"b": 3, "lam": "0.9"}, precision="float64", order=2
        ),
        "sir": numeric.solve("sir", SIR, M="identity", precision="float64"),
    }


@pytest.mark.parametrize("name", ["supermarket order 2", "sir"])
def test_a_float64_solution_prints_only_its_claimed_digits(float64_solutions, name) -> None:
    sol = float64_solutions[name]
    assert sol.digits < 17 and sol.dps == 17  # the case of the lesson
    _check_solution_document(sol, json.loads(sol.to_json()))
    for text in (repr(sol), sol._repr_html_(), sol._repr_latex_()):
        assert all(_significant(t) <= max(sol.digits, 8) for t in NUMBER.findall(text))
    assert float(sol.constant) != float(claimed(float(sol.constant), sol.digits))  # held whole


def test_a_high_precision_solution_prints_its_claims(float64_solutions) -> None:
    sol = numeric.solve("supermarket", {"b": 3, "lam": "0.9"}, dps=20, order=2)
    doc = sol.to_dict()
    assert sol.digits >= sol.dps and _significant(doc["constant"]) == sol.dps == 20
    _check_solution_document(sol, doc)


def test_a_float64_sweep_prints_each_points_claim() -> None:
    res = numeric.sweep("sir", {**SIR, "beta": ["1.5", "2", "3"]}, precision="float64")
    for point in res.to_dict()["points"]:
        assert _significant(point["c"]) <= point["digits"] < 17
        assert _significant(point["s_star_abs_error"]) <= ERROR_DIGITS
    text = repr(res)
    digits = min(p.digits for p in res.rows)
    assert all(_significant(t) <= digits for t in NUMBER.findall(text.split("digits")[0]))


# -- cold and warm -----------------------------------------------------------------------------
def _warm_then_solve() -> object:
    """A float64 SIR solve after a neighbouring one (another ``rho`` and ``M``) in the
    same process: it starts from that neighbour's fixed point and its last bits move
    (shown: ``c`` 1.1921568627450974 cold, ...78 warm)."""
    numeric.solve("sir", {**SIR, "rho": "0.4"}, M="diag:1,2,3", precision="float64")
    return numeric.solve("sir", SIR, M="identity", precision="float64")


def test_a_cold_and_a_warm_float64_solve_print_the_same_json() -> None:
    from numeric.meanfield.problem import forget

    forget()
    cold = numeric.solve("sir", SIR, M="identity", precision="float64")
    forget()
    warm = _warm_then_solve()
    assert cold.to_json() == warm.to_json()
    assert repr(cold) == repr(warm)


def test_the_command_lines_float64_output_is_the_python_calls_json(capsys) -> None:
    """Not reset between the two: the command runs warm, the Python call cold."""
    from numeric.meanfield.problem import forget

    forget()
    expected = numeric.solve("sir", SIR, M="identity", precision="float64").to_json(indent=None)
    _warm_then_solve()
    capsys.readouterr()
    assert main(["solve", "--model", "sir", *SIR_ARGS, "--float64", "--json"]) == 0
    out, _ = capsys.readouterr()
    assert out == expected + "\n"


# -- estimates, float64 transients, measurements ---------------------------------------------
def _decimal_place(x: float) -> int:
    """The exponent of the last digit of a float's shortest ``repr``."""
    return Decimal(repr(x)).normalize().as_tuple().exponent


def _check_estimates(mean, ci95) -> int:
    """Each half-width keeps 2 digits (rounded up) and each mean stops at its place;
    returns how many pairs were checked."""
    if isinstance(mean, list):
        return sum(_check_estimates(m, h) for m, h in zip(mean, ci95, strict=True))
    if mean is None or not ci95 or not math.isfinite(ci95) or not mean:
        return 0
    assert _float_digits(ci95) <= 2
    # the place of the half-width's second digit (a float writes 0.020 as 0.02)
    assert _decimal_place(mean) >= math.floor(math.log10(ci95)) - 1, (mean, ci95)
    return 1


def test_a_simulations_estimates_print_down_to_their_interval() -> None:
    import sim

    run = {"steps": 40_000, "reps": 2, "seed": 7, "workers": 1, "batches": 4}
    res = sim.simulate_supermarket(8, "0.9", 3, 2, **run)
    doc = json.loads(res.to_json())
    checked = _check_estimates(doc["n_mse"]["mean"], doc["n_mse"]["ci95"])
    checked += _check_estimates(doc["mean"], doc["mean_ci95"])
    checked += _check_estimates(doc["n_bias"], doc["n_bias_ci95"])
    checked += _check_estimates(doc["n_cov"]["mean"], doc["n_cov"]["ci95"])
    checked += _check_estimates(doc["blocking"], doc["blocking_ci95"])
    assert checked == 1 + 3 + 3 + 9 + 1
    for key in ("wall_seconds", "events_per_second", "lag1_autocorrelation"):
        assert _float_digits(doc[key]) <= 3, key
    # the values held are the simulation's own, bit for bit: only the print is rounded
    assert float(res.n_mse.mean) != doc["n_mse"]["mean"]
    again = sim.simulate_supermarket(8, "0.9", 3, 2, **run)
    assert float(again.n_mse.mean) == float(res.n_mse.mean)
    assert all(_significant(t) <= 3 for t in NUMBER.findall(repr(res).split("speed")[0]))


def test_a_float64_transient_prints_down_to_its_stated_error() -> None:
    res = numeric.transient("sir", SIR, times=[0, 1, 2, 3], start="0.75,0.25,0", order=2)
    doc = res.to_dict()
    assert res.route == "float64" and "few 1e-10 relative to the largest entry" in doc["precision"]
    for name in ("x", "V", "W", "A", "B"):
        values = getattr(res, name)
        place = math.floor(math.log10(float(abs(values).max()))) - 8  # 9 digits of the largest
        flat = [v for v in json.loads(json.dumps(doc[name]))]
        while flat and isinstance(flat[0], list):
            flat = [v for row in flat for v in row]
        assert all(v == 0 or _decimal_place(v) >= place for v in flat), name
        # within half a unit of that place of the value held
        for printed, held in zip(flat, values.ravel(), strict=True):
            assert abs(printed - held) <= 10.0**place / 2 * (1 + 1e-9), name


def test_a_transients_limit_prints_to_its_newton_step_and_drift_rounding() -> None:
    """The fixed point a transient tends to (float64 Newton) states one error for every
    entry (one more Newton step and the drift's rounding); the 30-digit ``s*`` of the
    same model lies within it, and the print within a unit of its last digit."""
    params = {"b": "3", "lam": "0.9"}
    res = numeric.transient("supermarket", params, times=[0, 1, 2])
    doc = json.loads(res.to_json())
    error = res.limit_abs_error
    assert 0 < error < 1e-12 and doc["limit_abs_error"] == error_figure(error)
    star = numeric.solve("supermarket", params).s_star  # mpf, 30 digits
    for printed, held, want in zip(doc["limit"], res.limit, star, strict=True):
        _holds(printed, float(held), error, float(want), "limit")
        places = math.floor(math.log10(abs(held))) - math.log10(_unit(error)) + 1
        assert _float_digits(printed) <= places
    assert repr(doc["limit"][0]) in repr(res)


# -- the exact chains ------------------------------------------------------------------------
def _mp_law(result) -> list:
    """The stationary law of ``result``'s chain (its float64 ``Q^T``, pinned as the solve
    pinned it) solved in 30-digit arithmetic, in the order of ``result.pi``: the
    reference the claims are checked on."""
    from numeric.exact.solvers import pinned

    A = pinned(result.law_system.QT, result.law_system.r).toarray()
    S = A.shape[0]
    with mpmath.workdps(30):
        rhs = mpmath.matrix(S, 1)
        rhs[result.law_system.r] = 1
        x = mpmath.lu_solve(mpmath.matrix(A.tolist()), rhs)
        total = sum(x)
        law = [x[i] / total for i in range(S)]
    order = result.law_system.order
    if order is None:
        return law
    out = [None] * S
    for i, q in enumerate(law):
        out[order[i]] = q
    return out


def test_the_law_error_estimate_bounds_a_perturbed_laws_error(exact_cases) -> None:
    """A law perturbed by 1e-6: its residual is large, and the estimate from it still
    bounds its distance to the 30-digit law."""
    import numpy as np

    from numeric.exact.law_error import law_error
    from numeric.exact.solvers import normalise, residual

    r = exact_cases["sir direct"]
    law = _mp_law(r)
    rng = np.random.default_rng(3)
    for _ in range(5):
        pi = normalise(r.pi * (1 + 1e-6 * rng.standard_normal(r.pi.size)))
        estimate = law_error(residual(r.law_system.QT, pi), r.condition, r.states)
        with mpmath.workdps(30):
            actual = sum(abs(mpmath.mpf(float(p)) - q) for p, q in zip(pi, law, strict=True))
        assert 1e-9 < actual <= estimate < 1e3 * actual


def _exact_cases() -> dict:
    import numeric.exact

    return {
        "sir direct": numeric.exact.solve("sir", SIR, N=8),
        "sir bicgstab": numeric.exact.solve("sir", SIR, N=8, solver="bicgstab"),
        "supermarket": numeric.exact.solve_exact(4, "0.9", b=2, d=2),
    }


@pytest.fixture(scope="module")
def exact_cases() -> dict:
    return _exact_cases()


def _mp_moments(r, law: list) -> dict:
    """The moments :meth:`ExactResult.to_dict` prints, under the 30-digit ``law``."""
    n, N = r.n, r.N
    X = [[mpmath.mpf(v) / N for v in row] for row in r.state_array.tolist()]
    pairs = list(zip(law, X, strict=True))
    mean = [sum(q * x[k] for q, x in pairs) for k in range(n)]
    s = [mpmath.mpf(float(v)) for v in r.s_star]
    out = {
        "mean": mean,
        "n_bias": [N * (m - v) for m, v in zip(mean, s, strict=True)],
        "n_cov": [
            [N * sum(q * (x[i] - mean[i]) * (x[j] - mean[j]) for q, x in pairs) for j in range(n)]
            for i in range(n)
        ],
        "n_mse": N * sum(q * sum((x[k] - s[k]) ** 2 for k in range(n)) for q, x in pairs),
    }
    if r.mean_jobs is not None:
        out["mean_jobs"] = sum(mean)
    return out


@pytest.mark.parametrize("name", ["sir direct", "sir bicgstab", "supermarket"])
def test_an_exact_chains_numbers_hold_their_printed_claim(exact_cases, name) -> None:
    import numpy as np

    r = exact_cases[name]
    doc = json.loads(r.to_json())
    # the condition estimate bounds ||A^-1||_1 computed in full
    from numeric.exact.solvers import pinned

    A = pinned(r.law_system.QT, r.law_system.r).toarray()
    assert r.condition >= np.abs(np.linalg.inv(A)).sum(axis=0).max()
    law = _mp_law(r)
    with mpmath.workdps(30):
        actual = sum(abs(mpmath.mpf(float(p)) - q) for p, q in zip(r.pi, law, strict=True))
        assert actual <= r.law_error  # the law's error estimate holds
        for key, ref in _mp_moments(r, law).items():
            error = doc["errors"][key]
            unit = mpmath.mpf(10) ** math.ceil(math.log10(2 * error))
            printed = np.ravel(doc[key]).tolist()
            for p, q in zip(printed, np.ravel(np.array(ref, dtype=object)).tolist(), strict=True):
                assert abs(mpmath.mpf(p) - q) <= unit, (name, key, p, q)  # within its claim
                places = math.floor(math.log10(abs(p))) - math.ceil(math.log10(2 * error)) + 1
                assert _float_digits(p) <= max(1, places), key  # and no digit more
    assert 11 <= _float_digits(doc["mean"][0]) <= 14  # fewer than the 17 of a float64
    for text in (repr(r), r._repr_html_()):
        for t in NUMBER.findall(text.split("solver")[0].split("law error")[-1]):
            assert _significant(t) <= 14
    assert r.to_dict()["mean"] != r.mean.tolist()  # only the print is rounded


def _check_printed_to_error(doc: dict, held: dict) -> None:
    """Each printed field of ``held`` (name -> values held) is within half a unit of
    its last digit of the value held, and that unit is at least twice its stated error."""
    import numpy as np

    for key, value in held.items():
        error = doc["errors"][key]
        unit = 10.0 ** math.ceil(math.log10(2 * error))
        assert unit >= 2 * error
        for p, v in zip(np.ravel(doc[key]).tolist(), np.ravel(value).tolist(), strict=True):
            assert abs(p - v) <= unit / 2 * (1 + 1e-9), (key, p, v)
            places = math.floor(math.log10(abs(v))) - math.log10(unit) + 1 if v else 1
            assert _float_digits(p) <= max(1, places), (key, p)


def _law_error_holds(result, system, pi) -> None:
    """The result's estimate of ``||pi - pi_true||_1`` bounds the distance of ``pi`` to
    the 30-digit law of its chain, and the condition estimate bounds ``||A^-1||_1``."""
    import numpy as np

    from numeric.exact.solvers import pinned

    A = pinned(system.QT, system.r).toarray()
    assert system.condition() >= np.abs(np.linalg.inv(A)).sum(axis=0).max()

    class _View:  # what _mp_law reads
        law_system = system

    law = _mp_law(_View)
    with mpmath.workdps(30):
        actual = sum(abs(mpmath.mpf(float(p)) - q) for p, q in zip(pi, law, strict=True))
    assert actual <= result.law_error


def test_a_pi_exact_result_prints_its_claims() -> None:
    from numeric.pi.exact import solve_pi_exact

    r = solve_pi_exact([0.2, 0.3, 0.5], [0.0, 0.6, 0.4], n=2, policy="pi", cap=6)
    doc = json.loads(r.to_json())
    assert doc["load"] == 0.46428571428571  # 14 digits: float arithmetic on the inputs
    stats = ("mean_queue", "mean_total", "delay", "p_idle", "p_some_idle", "tokens_per_slot",
             "messages_per_slot", "messages_per_job", "messages_per_batch")  # fmt: skip
    _check_printed_to_error(doc, {k: getattr(r, k) for k in stats})
    # the law's estimate on the chain it was computed from (the full law, re-solved)
    from numeric.exact.solvers import normalise

    system = r.law_system
    import scipy.sparse.linalg as spla

    from numeric.exact.solvers import pinned

    rhs = [0.0] * system.QT.shape[0]
    rhs[system.r] = 1.0
    x = normalise(spla.spsolve(pinned(system.QT, system.r).tocsc(), rhs))
    pi = [0.0] * len(x)
    for i, v in enumerate(x):
        pi[system.order[i]] = v
    _law_error_holds(r, system, pi)
    for text in (repr(r), r._repr_html_()):
        assert "0.43999" not in text and "law error" in text


def test_a_heterogeneous_exact_result_prints_its_claims() -> None:
    import numpy as np

    import numeric.exact
    from derive.heterogeneous_population import heterogeneous

    A = np.zeros((2, 2, 2))
    A[:, 0, 1], A[:, 1, 0] = 0.5, [1.0, 2.0]
    B = np.zeros((2, 2, 2, 2, 2, 2))
    B[0, 1, 0, 1, 1, 1] = B[1, 0, 0, 1, 1, 1] = 0.5
    r = numeric.exact.solve(heterogeneous(A, B), {}, N=2)
    doc = json.loads(r.to_json())
    _check_printed_to_error(doc, {"mean": r.mean, "cov": r.cov})
    _law_error_holds(r, r.system, r.pi)
    assert _float_digits(doc["mean"][1]) < 17


def test_a_direct_solves_factor_serves_its_condition_estimate(monkeypatch) -> None:
    """The first print of a law the direct solver found makes no second LU: the
    estimate reads the solve's own factor, and equals the one made afresh."""
    import scipy.sparse.linalg as spla

    import numeric.exact
    from numeric.exact import law_error

    r = numeric.exact.solve("sir", SIR, N=12, solver="direct")
    made: list[int] = []
    splu = spla.splu

    def counted(*args, **kwargs):
        made.append(1)
        return splu(*args, **kwargs)

    monkeypatch.setattr(spla, "splu", counted)
    kappa = r.condition
    assert made == []
    monkeypatch.setattr(law_error, "_FACTOR", None)  # forgotten: the estimate factors anew
    assert law_error.condition(r.law_system.QT, r.law_system.r) == kappa
    assert made == [1]


def test_a_chain_solved_iteratively_above_the_factor_limit_claims_no_digits(monkeypatch) -> None:
    """Without the solve's own factor, the estimate makes an LU only up to
    ``FACTOR_STATES`` states; above, no claim: ``law_error`` is ``None`` and the
    numbers print with the unbounded default.  A direct solve's factor still serves."""
    import numeric.exact
    from mfstein.ground.display import UNBOUNDED_DIGITS
    from numeric.exact import law_error

    monkeypatch.setattr(law_error, "FACTOR_STATES", 10)
    it = numeric.exact.solve("sir", SIR, N=8, solver="bicgstab")
    assert it.states > 10 and it.condition is None and it.law_error is None
    printed = json.loads(it.to_json())["n_mse"]
    assert "e" not in repr(printed)  # a plain decimal, its digits counted below
    assert len(repr(abs(printed)).replace(".", "").lstrip("0")) <= UNBOUNDED_DIGITS
    direct = numeric.exact.solve("sir", SIR, N=8, solver="direct")
    assert direct.condition is not None and direct.law_error is not None


# -- the exact tail laws (numeric.tails) -------------------------------------------------------
def _unit(error: float) -> float:
    """The unit of the last digit printed for a number with the absolute error ``error``."""
    return 10.0 ** math.ceil(math.log10(2 * error))


def _holds(printed, held, error, reference, what) -> None:
    """The value held is within its stated error of the reference, and the printed one
    within a unit of its last digit (``error + unit / 2``)."""
    assert abs(held - reference) <= error, (what, held, reference, error)
    assert abs(printed - reference) <= _unit(error) * (1 + 1e-9), (what, printed, reference)


def _mp_mixture(head0, c, r, eps, xs):
    """``E[eps X]`` and ``P(eps X > x)`` of the law ``p_k = sum_j c_j r_j^k`` (``k >= 1``),
    ``p_0`` the head, in mpmath."""
    mean = eps * sum(cj * rj / (1 - rj) ** 2 for cj, rj in zip(c, r, strict=True))
    tails = []
    for x in xs:
        k = math.floor(x / float(eps))
        above = sum(cj * rj ** (k + 1) / (1 - rj) for cj, rj in zip(c, r, strict=True))
        tails.append((head0 if k < 0 else 0) + above)
    return mpmath.re(mean), [mpmath.re(t) for t in tails]


def _tail_reference(model: str, n: int, eps: float, xs: list, thetas: list) -> dict:
    """An independent route to each statistic: M/M/n by its product form in 40-digit
    mpmath; the SSQ's roots found afresh by ``mpmath.polyroots`` (40 digits) from the
    float pmfs and its weights solved in mpmath; JSQ by the untruncated chain on sorted
    queue vectors (tests/numeric/tails/conftest.py), queues capped where the mass left
    is below 1e-20."""
    import sys
    from pathlib import Path

    import numpy as np

    if model == "jsq":
        sys.path.insert(0, str(Path(__file__).parent / "numeric" / "tails"))
        try:
            from conftest import jsq_reference
        finally:
            sys.path.pop(0)
        qmax = math.ceil(20 * math.log(10) / (-n * math.log(1 - eps))) + 8
        ref = jsq_reference(n, eps, qmax)
        pmf = ref["pmf"]
        surv = np.cumsum(pmf[::-1])[::-1]  # surv[k] = P(X >= k)
        k = np.arange(len(pmf))
        return {
            "scaled_mean": eps * float(k @ pmf),
            "tail": [float(surv[math.floor(x / eps) + 1]) for x in xs],
            "perp_second_moment": float(ref["perp2"]),
            "perp_mgf": [float(ref["pi"] @ np.exp(t * ref["perp"])) for t in thetas],
        }
    mpmath.mp.dps = 40
    if model == "mmn":
        rho = 1 - mpmath.mpf(eps)
        a = n * rho
        w = [a**j / mpmath.factorial(j) for j in range(n + 1)]
        Z = sum(w[:n]) + w[n] / (1 - rho)
        # p_j = w_j / Z for j < n, p_{n+i} = (w_n / Z) rho^i
        mean = eps * (sum(j * w[j] / Z for j in range(n))
                      + w[n] / Z * (n / (1 - rho) + rho / (1 - rho) ** 2))  # fmt: skip
        tails = []
        for x in xs:
            k = math.floor(x / eps)
            below = sum(w[j] / Z for j in range(min(k + 1, n)))
            tails.append(1 - below - (w[n] / Z * (1 - rho ** (k - n + 1)) / (1 - rho)
                                      if k >= n else 0))  # fmt: skip
        return {"scaled_mean": float(mean), "tail": [float(t) for t in tails]}
    from numeric.tails.ssq import binomial_pmfs, check_pmf

    a, s = binomial_pmfs(n, eps)
    a, s = check_pmf("a", a), check_pmf("s", s)
    A = [mpmath.mpf(float(v)) for v in a]
    S = [mpmath.mpf(float(v)) for v in s]
    Ea = sum(i * v for i, v in enumerate(A))
    Es = sum(i * v for i, v in enumerate(S))
    e = 1 - Ea / Es
    px = {}
    for i, pa in enumerate(A):
        for j, ps in enumerate(S):
            px[i - j] = px.get(i - j, 0) + pa * ps
    U, Sm = max(px), -min(px)
    coeffs = [mpmath.mpf(0)] * (U + Sm + 1)  # highest power first, as solve_ssq
    for x, p in px.items():
        coeffs[(U + Sm) - (U - x)] += p
    coeffs[Sm] -= 1
    roots = [r for r in mpmath.polyroots(coeffs, maxsteps=200, extraprec=200) if abs(r) < 1 - 1e-9]
    assert len(roots) == U
    M = mpmath.matrix(U, U)
    for k in range(1, U):
        for j, r in enumerate(roots):
            M[k - 1, j] = sum(p * r ** (k - x) for x, p in px.items() if x > k)
    for j, r in enumerate(roots):
        M[U - 1, j] = 1 / (1 - r)
    rhs = mpmath.matrix([0] * (U - 1) + [1])
    c = mpmath.lu_solve(M, rhs)
    head0 = mpmath.re(sum(c))
    mean, tails = _mp_mixture(head0, list(c), roots, e, xs)
    var = (sum(i * i * v for i, v in enumerate(A)) - Ea**2 + sum(i * i * v for i, v in enumerate(S))
           - Es**2)  # fmt: skip
    cramer = max(mpmath.re(r) for r in roots if abs(mpmath.im(r)) < 1e-30 and mpmath.re(r) > 0)
    return {
        "scaled_mean": float(mean),
        "tail": [float(t) for t in tails],
        "eps": float(e),
        "limit_mean": float(var / (2 * Es)),
        "decay_factor": float(cramer),
        "scaled_decay_rate": float(-mpmath.log(cramer) / e),
    }


TAIL_CASES = {
    "jsq n=2": ("jsq", 2, 0.25, [0.0, 0.5, 2.0], [0.5, 1.0]),
    "jsq n=3": ("jsq", 3, 0.4, [0.3, 1.0], [0.5]),
    "mmn": ("mmn", 20, 0.05, [0.0, 1.01, 2.97], []),  # x / eps off the jumps
    "ssq": ("ssq", 6, 0.05, [0.0, 1.01, 2.97], []),
    "ssq n=20": ("ssq", 20, 0.1, [0.0, 0.77], []),  # the weights' system has condition 1e15
}


@pytest.mark.parametrize("case", list(TAIL_CASES))
def test_a_tail_reports_numbers_hold_their_printed_claim(case) -> None:
    """Each number of an exact tail report is within its stated error of an independent
    route (:func:`_tail_reference`), printed within a unit of its last digit, with no
    digit below that unit; text and ``repr`` print the same numbers."""
    import numpy as np

    from numeric.tails.report import exact_tails

    model, n, eps, xs, thetas = TAIL_CASES[case]
    rep = exact_tails(model, n, eps, xs, thetas=thetas)
    doc = json.loads(rep.to_json())
    errors = rep.errors
    numbers = [k for k in ("tail", "scaled_mean", "limit_mean", "sup_distance", "decay_factor",
                           "scaled_decay_rate", "level_decay", "perp_second_moment", "perp_mgf")
               if errors.get(k)]  # fmt: skip
    for key in numbers:  # printed within half a unit of the value held, no further digit
        held, shown = np.ravel(getattr(rep, key)).tolist(), np.ravel(doc[key]).tolist()
        errs = np.broadcast_to(np.asarray(errors[key], dtype=float), len(held)).tolist()
        for p, v, e in zip(shown, held, errs, strict=True):
            assert abs(p - v) <= _unit(e) / 2 * (1 + 1e-9), (key, p, v)
            places = math.floor(math.log10(abs(v))) - math.log10(_unit(e)) + 1 if v else 1
            assert _float_digits(p) <= max(1, places), (key, p)
        assert _float_digits(error_figure(errs[0])) <= ERROR_DIGITS
    ref = _tail_reference(model, n, eps, xs, thetas)
    for key, want in ref.items():
        held, shown = np.ravel(getattr(rep, key)).tolist(), np.ravel(doc[key]).tolist()
        errs = np.broadcast_to(np.asarray(errors[key], dtype=float), len(held)).tolist()
        for p, v, e, w in zip(shown, held, errs, np.ravel(want).tolist(), strict=True):
            _holds(p, v, e, w, key)
    text = rep.to_text() + repr(rep)
    assert repr(doc["scaled_mean"]) in text and all(repr(t) in text for t in doc["tail"])
    if model == "jsq":  # the solve's own document prints the same numbers
        sol_doc = json.loads(_jsq(n, eps, thetas).to_json())
        assert sol_doc["scaled_mean"] == doc["scaled_mean"]
        assert sol_doc["perp_second_moment"] == doc["perp_second_moment"]


def _jsq(n: int, eps: float, thetas: list):
    from numeric.tails.jsq_qbd import solve_jsq

    return solve_jsq(n, eps, thetas=thetas)


def test_a_fixed_truncation_claims_no_digits_and_an_ssq_solution_prints_its_roots() -> None:
    """A JSQ solve at a fixed ``D`` has no truncation change: no estimate, the numbers
    keep :data:`UNBOUNDED_DIGITS`.  The SSQ solution prints each root to its own error,
    within half a unit of its last digit of the root held (the Cramér root, within its
    error of the 40-digit mpmath root)."""
    import numpy as np

    from mfstein.ground.display import UNBOUNDED_DIGITS
    from numeric.tails.jsq_qbd import solve_jsq
    from numeric.tails.ssq import binomial_pmfs, solve_ssq

    fixed = solve_jsq(3, 0.2, D=5)
    assert fixed.errors()["scaled_mean"] is None
    assert _float_digits(json.loads(fixed.to_json())["scaled_mean"]) == UNBOUNDED_DIGITS
    sol = solve_ssq(*binomial_pmfs(6, 0.05))
    doc = json.loads(sol.to_json())
    ref = _tail_reference("ssq", 6, 0.05, [], [])
    _holds(doc["cramer_root"], sol.cramer_root, sol.errors()["cramer_root"],
           ref["decay_factor"], "cramer_root")  # fmt: skip
    held = np.array([complex(*pair) for pair in doc["roots"]])
    units = np.array([_unit(e) for e in sol.errors()["roots"]])
    assert np.all(np.abs(held - sol.roots) <= units * (1 + 1e-9))  # each part within unit / 2
    for text in (repr(sol), repr(fixed)):
        assert all(_significant(t) <= 14 for t in NUMBER.findall(text))


def test_response_time_quantiles_print_to_their_bin_width() -> None:
    """A per-server run's quantiles print down to the place the histogram's bin width
    allows: each lies within half a unit of its last digit of the bin holding the
    run's sample quantile (found here from the printed counts, by the count itself),
    so within a unit of that quantile; the dict held keeps the interpolated values."""
    import numpy as np

    import sim

    r = sim.simulate_supermarket(1, "0.7", 4, 1, policy="random", engine="per-server",
                                 steps=200_000, reps=2, seed=3)  # fmt: skip
    doc = json.loads(r.to_json())["response_time"]
    width = doc["histogram"]["bin_width"]
    assert doc["quantiles_abs_error"] == error_figure(width)
    unit = _unit(width)
    counts = np.asarray(doc["histogram"]["counts"])
    total = counts.sum() + doc["histogram"]["overflow"]
    for q, shown in doc["quantiles"].items():
        need = math.ceil(float(q) * total)  # the sample quantile is the need-th smallest
        i = int(np.argmax(np.cumsum(counts) >= need))
        lo, hi = i * width, (i + 1) * width
        assert lo - unit / 2 <= shown <= hi + unit / 2, (q, shown, lo, hi)
        assert _decimal_place(shown) >= math.log10(unit) - 1e-9
        held = r.response_time["quantiles"][q]
        assert abs(shown - held) <= unit / 2 * (1 + 1e-9)
    assert any(doc["quantiles"][q] != r.response_time["quantiles"][q] for q in doc["quantiles"])


def test_the_exact_commands_text_prints_the_jsons_numbers(capsys) -> None:
    """``mfstein exact`` writes N E||S - s*||^2, the blocking probability and the mean
    jobs per server as its JSON does, down to their law errors' places (was 10 and 6
    significant digits whatever the error)."""
    argv = ["exact", "--N", "4", "--lam", "0.9", "--b", "3"]
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    text = capsys.readouterr().out
    for label, key in (("N E||S - s*||^2", "n_mse"), ("blocking probability", "blocking"),
                       ("mean jobs per server", "mean_jobs")):  # fmt: skip
        line = next(t for t in text.splitlines() if t.startswith(label))
        assert line.split("=", 1)[1].split()[0] == repr(doc[key]), (line, doc[key])
