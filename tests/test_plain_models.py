"""The plain model files of ``tests/plain_models/`` through every task, from Python and
the command line, each answer checked against an independent route (issue 32).

Default tier: the mean field at 30 digits, order 2 and the certificate of a
non-identity ``M`` from Python (mpmath kernels, no compilation), and the rule behind
them: generated code never shares a namespace with a model's names.  The
compiled routes (transient, exact, simulate) and the command line run with
``--run-slow``.

Also: ``derive --model X --show J --format json`` of every model against SymPy's
Jacobian of the drift; ``exact`` of ``mmc`` and ``tandem`` without ``truncation=``
(the chain chooses it) against Erlang C and the product form; ``table`` with two
observables, exact and mean field, against ``exact``'s law and g(s*); ``table
--simulate`` of every model, the thirty-site ring included.  The default tier
keeps one model of each (the rest with ``--run-slow``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
from deadlines import deadline
from plain_models import CASES

import mfstein as mf
from mfstein.ground.display import place

HERE = Path(__file__).resolve().parent / "plain_models"
#: Models whose finite-N chain lives on an unbounded orthant: the exact chain needs
#: a truncation (``n <= N * 4`` keeps all but a negligible mass at these loads).
TRUNCATED = {"mmc": 4, "tandem": 4}
#: Populations of the Richardson fit where the default 20, 40, 80 is too small: the
#: M/M/c chain at N <= 80 still reaches its kink Min(x, 2) (an effect beyond every
#: order of 1/N, which the fit would read as a 1/N term of -0.2 where V = 0).
RICHARDSON_N = {"mmc": (100, 200, 400)}
#: Models small enough for the exact chain at N = 10 (the thirty-site ring has 11^30 states).
EXACT = [m for m in CASES if m != "thirty"]


def spec(name: str) -> str:
    return f"{HERE / name}.py:{name}"


def model(name: str):
    return mf.load_model(spec(name))


def encloses(ball, value: mpmath.mpf, digits: int) -> bool:
    """Whether the Arb ``ball`` meets ``value`` +- one unit of its ``digits``-th digit:
    the certificate confirms the digits claimed."""
    from flint import arb

    from numeric.certified.arb import to_arb

    with mpmath.workdps(digits + 20):
        unit = abs(value) * mpmath.mpf(10) ** (1 - digits)
    return bool(ball.overlaps(arb(to_arb("value", value), to_arb("unit", unit))))


def diag_M(name: str) -> str:
    """A non-identity quadratic observable ``diag(2, 1, 1, ...)`` of the model's size."""
    b = model(name).n
    return "diag:" + ",".join(["2"] + ["1"] * (b - 1))


# --------------------------------------------------------------------------
# any names: generated code reads the model's symbols under its own names
# --------------------------------------------------------------------------
NASTY = """
import sympy as sp
from derive import Model, Transition

def build(names):
    s, p, out, *q = sp.symbols(names)
    return Model("names", (s, p, out), tuple(q), [
        Transition((-1, 1, 0), q[0] * s * p * sp.exp(-p) + q[1] * s),
        Transition((0, -1, 1), q[2] * p + q[3] * p**2),
        Transition((1, 0, -1), q[4] * out + q[5] * out * s + q[6] * out),
        Transition((1, -1, 0), q[7] * p + q[8] * p * s),
    ])

def nasty():
    # the kernels' own arguments, the modules they call, a CSE temporary, SymPy constants
    return build("s p out math mpmath np E I pi x_0 t exp")

def tame():
    return build("u1 u2 u3 a0 a1 a2 a3 a4 a5 a6 a7 a8")
"""
VALUES = ["2", "1", "1", "0.5", "0.3", "0.2", "0.1", "0.1", "0.2"]


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """The same model twice: with names that collide with generated code, and plain."""
    path = tmp_path_factory.mktemp("names") / "twins.py"
    path.write_text(NASTY)
    out = []
    for f in ("nasty", "tame"):
        m = mf.load_model(f"{path}:{f}")
        out.append((m, dict(zip(map(str, m.params), VALUES, strict=True))))
    return out, path


def test_names_colliding_with_generated_code_give_the_same_numbers(twins):
    """Order 2 and the certificate of the model named ``s, p, out, mpmath, E, I, pi, x_0,
    exp ...`` equal those of its plainly named twin to every digit: renaming the
    symbols is the only difference between the two runs."""
    (nasty, pn), (tame, pt) = twins[0]
    a = mf.solve(nasty, pn, start="0.5,0.3,0.2", dps=20)
    b = mf.solve(tame, pt, start="0.5,0.3,0.2", dps=20)
    assert a.digits >= 20
    assert a.constant == b.constant and a.s_star == b.s_star and a.V == b.V
    assert a.params["E"] == "0.5" and a.params["pi"] == "0.2"  # the user's E and pi


def test_observable_names_are_the_models_symbols(twins):
    """``E``, ``I`` and ``pi`` in an observable are the model's parameters; ``exp`` is
    the parameter where it is a name and the function where it is called."""
    from derive.observables import parse_expression

    (nasty, _), _ = twins[0]
    params = {str(q): q for q in nasty.params}
    states = {str(x): x for x in nasty.states}
    g = parse_expression(nasty, "E*s + pi + I + exp*p + exp(-p)")
    import sympy as sp

    assert g == (
        params["E"] * states["s"]
        + params["pi"]
        + params["I"]
        + params["exp"] * states["p"]
        + sp.exp(-states["p"])
    )


def test_generated_source_binds_no_user_name(twins):
    """The kernel source binds the model's symbols as ``_s<i>``/``_p<j>`` only: every
    name it assigns is one of those, a CSE temporary ``x_<k>``, the output or a
    module constant (the user's ``x_0`` became ``_p6``)."""
    import ast
    import re

    (nasty, _), _ = twins[0]
    source = nasty.kernels("mpmath").source
    assigned = {
        t.id
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    own = r"_s\d+|_p\d+|x_\d+|out|[A-Z_]+"
    assert all(re.fullmatch(own, n) for n in assigned), assigned
    assert "_s0 = mpmath.mpf(s[0])" in source and "_p6 = mpmath.mpf(p[6])" in source


# --------------------------------------------------------------------------
# Python, default tier: mean field, order 2, certificate of a non-identity M
# --------------------------------------------------------------------------
#: The plain models whose order 2 at 30 digits takes seconds, not tens of them.
QUICK = ["sis", "mmc", "tandem", "sympy_names"]


@pytest.mark.parametrize(
    "name",
    [*QUICK, *(pytest.param(m, marks=pytest.mark.slow) for m in CASES if m not in QUICK)],
)
def test_solve_order2_and_certify_with_M(name):
    """dps 30 and order 2 from a plain model; the certificate of ``sol`` (computed with
    ``M = diag(2, 1, ...)``) encloses its 30-digit constant -- and not the constant of
    ``M = I`` when they differ (the certificate is of what ``sol`` computed)."""
    params, start = CASES[name]
    M = diag_M(name)
    sol = mf.solve(model(name), params, start=start, dps=30, M=M, order=2)
    assert sol.digits == 30 and sol.M == M and sol.start == start and sol.inputs == params
    cert = sol.certify()
    assert encloses(cert.constant, sol.constant, 30)
    plain = mf.solve(model(name), params, start=start, dps=30)
    if abs(plain.constant - sol.constant) > mpmath.mpf(10) ** -20:
        assert not encloses(cert.constant, plain.constant, 30)


@pytest.mark.slow
def test_thirty_coordinates():
    params, start = CASES["thirty"]
    sol = mf.solve(model("thirty"), params, start=start, dps=20)
    # every site alike: s* solves lam (1 - x) = x (1 + x), the positive root
    with mpmath.workdps(40):
        lam = mpmath.mpf(params["lam"])
        x = (-(1 + lam) + mpmath.sqrt((1 + lam) ** 2 + 4 * lam)) / 2
        assert all(abs(v - x) < mpmath.mpf(10) ** -19 for v in sol.s_star)


# --------------------------------------------------------------------------
# the compiled routes against independent ones (slow)
# --------------------------------------------------------------------------
def _exact(name: str, N: int):
    params, start = CASES[name]
    return mf.exact(model(name), params, N=N, start=start, truncation=TRUNCATED.get(name))


@pytest.mark.slow
@pytest.mark.parametrize("name", EXACT)
def test_exact_within_the_simulations_ci(name):
    params, start = CASES[name]
    ex = _exact(name, 10)
    sim = mf.simulate(
        model(name),
        params,
        N=10,
        steps=1_000_000,
        seed=1,
        start=start,
        reps=4,
        workers=1,
        truncation=TRUNCATED.get(name),
    )
    d = sim.to_dict()
    assert np.all(np.abs(np.asarray(d["mean"]) - ex.mean) <= np.asarray(d["mean_ci95"]))


@pytest.mark.slow
@pytest.mark.parametrize("name", EXACT)
def test_order2_against_exact_by_richardson(name):
    """``E[S_N] = s* + V/N + A/N^2 + O(1/N^3)``: the exact means at N, 2N, 4N fitted
    by ``a + b/N + c/N^2`` give back ``V`` (the 1/N term) to the fit's O(1/N^2), and
    the order-2 expansion is closer to the exact mean than the order-1 one."""
    params, start = CASES[name]
    sol = mf.solve(model(name), params, start=start, dps=20, order=2)
    Ns = RICHARDSON_N.get(name, (20, 40, 80))
    means = np.array([_exact(name, N).mean for N in Ns])
    X = np.array([[1, 1 / N, 1 / N**2] for N in Ns])
    fit = np.linalg.solve(X, means)
    s, V, A = (np.array([float(v) for v in vec]) for vec in (sol.s_star, sol.V, sol.A))
    scale = 1 + np.abs(V) + np.abs(A)
    assert np.all(np.abs(fit[1] - V) <= 0.1 * scale)
    n = Ns[-1]
    one, two = s + V / n, s + V / n + A / n**2
    assert np.linalg.norm(two - means[-1]) <= np.linalg.norm(one - means[-1]) + 1e-12


def _drift(name: str):
    """The drift ``f(x) = sum_l l beta_l(x)`` written here from the transitions
    (NumPy through SymPy's lambdify), not by the generated kernels."""
    import sympy as sp

    m = model(name)
    params, _ = CASES[name]
    values = {q: sp.Rational(params[str(q)]) for q in m.params}
    rates = [t.rate.xreplace(values) for t in m.transitions]
    L = np.array([t.jump for t in m.transitions], dtype=float)
    fn = sp.lambdify([list(m.states)], rates, "numpy", dummify=True)
    return lambda t, x: L.T @ np.array(fn(x), dtype=float)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_transient_against_an_ode_solve(name):
    from scipy.integrate import solve_ivp

    params, start = CASES[name]
    times = [0.0, 0.5, 1.0, 2.0]
    tr = mf.transient(model(name), params, times=times, start=start)
    x0 = [float(v) for v in start.split(",")]
    ref = solve_ivp(_drift(name), (0, 2), x0, t_eval=times, method="DOP853", rtol=1e-11, atol=1e-12)
    assert np.allclose(np.asarray(tr.x, dtype=float), ref.y.T, rtol=1e-7, atol=1e-8)


# --------------------------------------------------------------------------
# the command line (slow: one process per task)
# --------------------------------------------------------------------------
def _cli(name: str) -> dict[str, list[str]]:
    params, start = CASES[name]
    base = ["--model", spec(name), *[f"--param={k}={v}" for k, v in params.items()]]
    base += ["--start", start]
    cut = [f"--truncation={TRUNCATED[name]}"] if name in TRUNCATED else []
    tasks: dict[str, list[str]] = {
        "solve": ["solve", *base],
        "solve-float64": ["solve", *base, "--float64"],
        "solve-order2": ["solve", *base, "--order", "2"],
        "solve-certify": ["solve", *base, "--certify", "--M", diag_M(name)],
        "transient": ["transient", *base, "--t", "0:2:3", "--order", "2"],
        "simulate": [
            "simulate",
            *base,
            *cut,
            "--N",
            "10",
            "--steps",
            "20000",
            "--reps",
            "2",
            "--workers",
            "1",
            "--no-progress",
        ],
    }
    observe = [a for g in _observables(name) for a in ("--observable", g)]
    tasks["table"] = ["table", *base, *observe, "--N", "10", "--order", "1", "--no-progress"]
    tasks["derive"] = ["derive", "--model", spec(name), "--show", "J,f"]
    if name in EXACT:  # without --truncation: an unbounded chain chooses its own
        tasks["exact"] = ["exact", *base, "--N", "10"]
        tasks["table"] += ["--exact"]
    return tasks


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_every_command_answers_json(name):
    procs = {
        task: subprocess.Popen(
            [sys.executable, "-m", "mfstein", *argv, "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for task, argv in _cli(name).items()
    }
    for task, proc in procs.items():
        out, err = proc.communicate(timeout=deadline(600))
        assert proc.returncode == 0, (task, err)
        data = json.loads(out)
        assert data.get("model", name) == name and data, task


# --------------------------------------------------------------------------
# derive --model: the Jacobian against SymPy's own, every model
# --------------------------------------------------------------------------
def _jacobian(name: str):
    """``df/dx`` of the drift ``f = sum_l l beta_l`` written here from the
    transitions and differentiated by SymPy (not by :mod:`derive`)."""
    import sympy as sp

    m = model(name)
    f = sp.Matrix([sum(t.jump[k] * t.rate for t in m.transitions) for k in range(m.n)])
    return m, f.jacobian(sp.Matrix(m.states))


@pytest.mark.parametrize(
    "name",
    [*(m for m in CASES if m != "thirty"), pytest.param("thirty", marks=pytest.mark.slow)],
)
def test_derive_jacobian_json_equals_sympys(name, capsys):
    """``mfstein derive --model X --show J --format json``: the JSON parses into a
    b x b matrix of expressions in the model's own symbols, equal to SymPy's
    Jacobian of the drift -- symbolically where every rate is smooth, and at three
    rational points inside the state space off the kinks of ``Min``, exactly to 40
    digits (at a kink the two one-sided choices may differ)."""
    import random

    import sympy as sp

    from mfstein.cli import main

    assert main(["derive", "--model", spec(name), "--show", "J", "--format", "json"]) == 0
    m, J = _jacobian(name)
    names = {str(x): x for x in (*m.states, *m.params)}
    rows = json.loads(capsys.readouterr().out)["J"]
    assert len(rows) == m.n and all(len(r) == m.n for r in rows)
    got = sp.Matrix([[sp.sympify(e, locals=names) for e in r] for r in rows])
    assert got.free_symbols <= set(names.values())
    smooth = not any(t.rate.has(sp.Min, sp.Max, sp.Piecewise) for t in m.transitions)
    diff = got - J
    if smooth and m.n <= 3:
        assert sp.simplify(diff) == sp.zeros(m.n, m.n)
    rng = random.Random(name)
    for _ in range(3):
        point = {x: sp.Rational(rng.randint(1, 97), 199) for x in m.states}
        point.update({q: sp.Rational(rng.randint(1, 9), 4) for q in m.params})
        values = diff.xreplace(point)
        assert all(abs(sp.N(v, 40)) < sp.Float(10) ** -35 for v in values), name


# --------------------------------------------------------------------------
# exact without truncation= on the unbounded orthant: Erlang C, the product form
# --------------------------------------------------------------------------
def _erlang_mean(arrival: mpmath.mpf, servers: int) -> mpmath.mpf:
    """E[queue + in service] of the M/M/c queue (unit service), Erlang C."""
    a, c = arrival, servers
    terms = [a**k / mpmath.factorial(k) for k in range(c)]
    tail = a**c / mpmath.factorial(c) * c / (c - a)
    wait = tail / (sum(terms) + tail)  # Erlang C: the chance of waiting
    return a + wait * a / (c - a)


def _product_form_means(N: int, lam: mpmath.mpf) -> list[mpmath.mpf]:
    """E[x], E[y] of the tandem line by Jackson's product form: station 1 has
    ``min(n, N)`` unit servers, station 2 serves at ``sqrt(N m)``; both see the
    arrival rate ``N lam``; the sums run until the terms are below 1e-40."""
    means = []
    for service in (lambda n: min(n, N), lambda n: mpmath.sqrt(N * n)):
        w, total, first, n = mpmath.mpf(1), mpmath.mpf(1), mpmath.mpf(0), 0
        while w > mpmath.mpf(10) ** -40 * total or n < 10 * N:
            n += 1
            w *= N * lam / service(n)
            total += w
            first += n * w
        means.append(first / total / N)
    return means


@pytest.mark.parametrize("name", ["tandem", pytest.param("mmc", marks=pytest.mark.slow)])
def test_exact_chooses_its_truncation(name, capsys):
    """``exact`` of the unbounded M/M/c and tandem line without ``truncation=``, from
    Python and from the command line: the means equal Erlang C / the product form of
    the untruncated chain to 1e-9, and the mass cut is reported below 1e-12."""
    from mfstein.cli import main

    params, start = CASES[name]
    N = 10
    with mpmath.workdps(40):
        lam = mpmath.mpf(params["lam"])
        if name == "mmc":
            ref = [_erlang_mean(N * lam, 2 * N) / N]
        else:
            ref = _product_form_means(N, lam)
    r = mf.exact(model(name), params, N=N, start=start)
    assert np.allclose(r.mean, [float(v) for v in ref], rtol=0, atol=1e-9)
    argv = ["exact", "--model", spec(name), "--start", start, "--N", str(N), "--json"]
    argv += [f"--param={k}={v}" for k, v in params.items()]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mean"] == r.to_dict()["mean"]  # printed to its error: within it of the law
    unit = 10.0 ** place(data["errors"]["mean"])
    assert all(abs(p - float(v)) <= unit for p, v in zip(data["mean"], ref, strict=True))
    cut = data["truncation"]
    assert cut["chosen"] and 0 <= cut["mass_cut"] <= 1e-12, cut


# --------------------------------------------------------------------------
# table: every model, from Python and the command line
# --------------------------------------------------------------------------
def _observables(name: str) -> list[str]:
    """Two observables of the model: its first coordinate and a nonlinear one."""
    states = [str(x) for x in model(name).states]
    return [states[0], f"{states[-1]}**2 + {states[0]}"]


@pytest.mark.parametrize(
    "name", ["sis", *(pytest.param(m, marks=pytest.mark.slow) for m in EXACT if m != "sis")]
)
def test_table_two_observables_exact_and_mean_field(name, capsys):
    """``mfstein table --model X --observable A --observable B --exact --order 1`` at
    N = 10 parses as JSON, and each cell equals its independent route: the mean
    field g(s*) of ``solve``, and the exact value of ``exact``'s law
    (``ExactResult.expect``) to the digits printed."""
    from mfstein.cli import main

    params, start = CASES[name]
    gs = _observables(name)
    argv = ["table", "--model", spec(name), "--start", start, "--N", "10", "--exact"]
    argv += [f"--param={k}={v}" for k, v in params.items()]
    argv += ["--order", "1", "--json", *(a for g in gs for a in ("--observable", g))]
    assert main(argv) == 0
    tables = json.loads(capsys.readouterr().out)["tables"]
    import sympy as sp

    m = model(name)
    sol = mf.solve(m, params, start=start, dps=25)
    law = mf.exact(m, params, N=10, start=start)
    names = {str(x): x for x in m.states}
    for g, tab in zip(gs, tables, strict=True):
        (row,) = tab["rows"]
        assert tab["observable"] == g and row["exact_note"] is None
        at = {
            names[k]: sp.Float(mpmath.nstr(v, 30), 30)
            for k, v in zip(names, sol.s_star, strict=True)
        }
        mean_field = sp.sympify(g, locals=names).xreplace(at)  # g(s*) by SymPy
        assert abs(sp.Float(row["mean_field"], 30) - mean_field) < 1e-18, (g, row)
        ex = law.expect(g, m)
        digits = len(row["exact"].split(".")[1])
        assert abs(float(row["exact"]) - float(ex.mean)) <= 10.0**-digits, (g, row)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_table_simulates_every_model(name):
    """``table --simulate`` of every plain model (the thirty-site ring too): the
    simulation's CI covers the exact value where the chain is small enough, and the
    order-1 value at N = 10 within the CI plus its 1/N^2 error elsewhere."""
    import sim

    params, start = CASES[name]
    gs = _observables(name)
    tab = sim.accuracy_table(
        model(name), params, gs, [10], order=1, exact=name in EXACT, simulate=True,
        steps=200_000, reps=4, workers=1, start=start, dps=15,
    )  # fmt: skip
    for t in tab.tables:
        (row,) = t.rows
        sim_ = row["simulation"]
        assert sim_ is not None, row["simulation_note"]
        mean, ci = float(sim_["mean"]), float(sim_["ci95"])
        if row["exact"] is not None:
            assert abs(mean - float(row["exact"])) <= ci + 1e-9, (t.observable, row)
        else:
            assert abs(mean - float(row["order1"])) <= ci + 0.05, (t.observable, row)
