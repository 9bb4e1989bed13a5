"""Exact finite-N solver: independent construction, sanity, convergence, errors, CLI."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import numeric
from derive import Model, ParameterError, supermarket
from mfstein.cli import main
from mfstein.ground.display import place
from numeric.exact import solve_exact

# ---------------------------------------------------------------------------
# An independent construction: the chain on per-server queue lengths
# ---------------------------------------------------------------------------


def per_server_chain(N: int, lam: float, b: int, d: int, replacement: bool):
    """Dense generator on configurations x in {0..b}^N, built server by server.

    Arrivals come at rate lam*N; each samples an ordered d-tuple of servers
    (N^d equally likely tuples with replacement, N!/(N-d)! without) and joins the
    first sampled server with the shortest queue, or is lost if that queue holds b.
    Every busy server completes a job at rate 1.  Returns the stationary
    distribution (numpy least squares) and the blocking probability of each
    configuration.
    """
    configs = list(itertools.product(range(b + 1), repeat=N))
    index = {x: i for i, x in enumerate(configs)}
    if replacement:
        tuples = list(itertools.product(range(N), repeat=d))
    else:
        tuples = list(itertools.permutations(range(N), d))
    Q = np.zeros((len(configs), len(configs)))
    blocked = np.zeros(len(configs))
    for x, i in index.items():
        for tup in tuples:
            target = min(tup, key=lambda server: x[server])
            if x[target] == b:
                blocked[i] += 1 / len(tuples)
                continue
            y = list(x)
            y[target] += 1
            Q[i, index[tuple(y)]] += lam * N / len(tuples)
        for server in range(N):
            if x[server] > 0:
                y = list(x)
                y[server] -= 1
                Q[i, index[tuple(y)]] += 1.0
        Q[i, i] = -Q[i].sum()
    A = np.vstack([Q.T, np.ones(len(configs))])
    rhs = np.zeros(len(configs) + 1)
    rhs[-1] = 1.0
    pi = np.linalg.lstsq(A, rhs, rcond=None)[0]
    return configs, pi, blocked


TINY = [
    (3, 3, 1, True),
    (3, 3, 2, True),
    (3, 3, 3, True),
    (4, 2, 2, True),
    (4, 3, 2, True),
    (3, 3, 2, False),
    (3, 3, 3, False),
    (4, 3, 2, False),
    (4, 2, 3, False),
    (2, 3, 2, False),
]


@pytest.mark.parametrize(("N", "b", "d", "replacement"), TINY)
def test_matches_per_server_chain(N: int, b: int, d: int, replacement: bool) -> None:
    lam = 0.8
    configs, pi_x, blocked = per_server_chain(N, lam, b, d, replacement)
    expected: dict[tuple[int, ...], float] = {}
    for x, p in zip(configs, pi_x, strict=True):
        n = tuple(sum(1 for q in x if q >= k) for k in range(1, b + 1))
        expected[n] = expected.get(n, 0.0) + p
    r = solve_exact(N, "0.8", b, d, replacement=replacement)
    got = {tuple(n): p for n, p in zip(r.state_array.tolist(), r.pi, strict=True)}
    assert set(got) == set(expected)
    for n, p in expected.items():
        assert got[n] == pytest.approx(p, abs=1e-12)
    assert r.blocking == pytest.approx(float(pi_x @ blocked), abs=1e-12)
    counts = np.array([[sum(1 for q in x if q >= k) for k in range(1, b + 1)] for x in configs])
    assert np.allclose(r.mean, pi_x @ counts / N, atol=1e-12)
    assert r.residual < 1e-12


def test_generic_reachable_path_matches_supermarket_path() -> None:
    m = supermarket(2, 2)
    copy = Model("copy", m.states, m.params, m.transitions)  # not a SupermarketModel
    a = numeric.exact.solve(m, {"lam": "0.9"}, N=6)  # the supermarket's fast path
    g = numeric.exact.solve(copy, {"lam": "0.9"}, N=6, start=["5/6", "1/3"])
    assert a.solver == "direct" and a.lam == "0.9" and copy.info.fast_path is None
    assert g.states == a.states and g.start == [5, 2]
    got = {tuple(n): p for n, p in zip(g.state_array.tolist(), g.pi, strict=True)}
    for n, p in zip(a.state_array.tolist(), a.pi, strict=True):
        assert got[tuple(n)] == pytest.approx(p, abs=1e-13)


def test_direct_and_bicgstab_agree() -> None:
    a = solve_exact(10, "0.95", 5, 2, solver="direct")
    g = solve_exact(10, "0.95", 5, 2, solver="bicgstab", tol=1e-13)
    assert a.states == g.states == 3003
    assert a.residual < 1e-12 and g.residual < 1e-12
    assert np.abs(a.pi - g.pi).sum() < 1e-10
    assert np.allclose(a.n_cov, g.n_cov, atol=1e-9)


@pytest.mark.parametrize("replacement", [True, False])
def test_sanity_and_identities(replacement: bool) -> None:
    N, lam, b, d = 8, 0.9, 4, 2
    r = solve_exact(N, str(lam), b, d, replacement=replacement)
    assert r.states == 495  # C(12, 4)
    assert np.all(r.pi >= 0) and r.pi.sum() == pytest.approx(1.0, abs=1e-14)
    assert r.residual < 1e-12
    assert np.all(np.diff(r.state_array, axis=1) <= 0)  # n_1 >= ... >= n_b
    assert r.queue_length_pmf.sum() == pytest.approx(1.0, abs=1e-14)
    assert np.all(r.queue_length_pmf >= -1e-15)
    assert r.mean_jobs == pytest.approx(np.arange(b + 1) @ r.queue_length_pmf, rel=1e-13)
    # flow balance: accepted arrivals lam (1 - blocking) = departures E[S_1]
    assert lam * (1 - r.blocking) == pytest.approx(r.mean[0], rel=1e-10)
    Sb = r.state_array[:, -1]
    if replacement:
        direct = r.pi @ (Sb / N) ** d
    else:
        direct = r.pi @ (Sb * (Sb - 1) / (N * (N - 1)))
    assert r.blocking == pytest.approx(direct, rel=1e-10)
    assert np.allclose(r.n_cov, r.n_cov.T)
    assert np.all(np.linalg.eigvalsh(r.n_cov) > -1e-12)
    # N E||S - s*||^2 = tr(N Cov) + ||N (E S - s*)||^2 / N
    assert r.n_mse == pytest.approx(np.trace(r.n_cov) + r.n_bias @ r.n_bias / N, rel=1e-12)


def test_light_traffic_convergence_to_mean_field() -> None:
    lam, b = "0.7", 3
    ms = numeric.bound(lam, b, 2)
    c = float(ms.constant)
    V = np.array([float(v) for v in ms.V])
    W = np.array(ms.W.tolist(), dtype=float)
    Ns = [10, 20, 40]
    errs = {"mse": [], "bias": [], "cov": []}
    for N in Ns:
        r = solve_exact(N, lam, b, 2)
        assert r.residual < 1e-10
        errs["mse"].append(abs(r.n_mse - c))
        errs["bias"].append(np.abs(r.n_bias - V).max())
        errs["cov"].append(np.abs(r.n_cov - W).max())
    for name, e in errs.items():
        e = np.array(e)
        # decreasing, and halving with each doubling of N: an O(1/N) error
        ratios = e[1:] / e[:-1]
        assert np.all(ratios > 0.4) and np.all(ratios < 0.6), (name, e)
        # the tolerance shrinks with N
        assert np.all(e * np.array(Ns) < 1.5), (name, e)


def test_light_traffic_convergence_b4() -> None:
    lam, b = "0.7", 4
    ms = numeric.bound(lam, b, 2)
    V = np.array([float(v) for v in ms.V])
    W = np.array(ms.W.tolist(), dtype=float)
    e_bias, e_cov = [], []
    for N in (10, 20, 40):
        r = solve_exact(N, lam, b, 2)
        assert r.residual < 1e-10
        e_bias.append(np.abs(r.n_bias - V).max())
        e_cov.append(np.abs(r.n_cov - W).max())
    for e in (np.array(e_bias), np.array(e_cov)):
        ratios = e[1:] / e[:-1]
        assert np.all(ratios > 0.4) and np.all(ratios < 0.65)


def test_too_large_is_refused_before_allocation() -> None:
    with pytest.raises(ParameterError, match=r"N=50, b=10 gives 75,394,027,566 states"):
        solve_exact(50, "0.9", 10)
    with pytest.raises(ParameterError, match=r"8,008 states, needing about .* the limit is 1 MB"):
        solve_exact(10, "0.9", 6, memory_limit=1e6)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"N": 0, "lam": "0.9", "b": 3},
        {"N": 4, "lam": "-1", "b": 3},
        {"N": 4, "lam": "abc", "b": 3},
        {"N": 4, "lam": "0.9", "b": 0},
        {"N": 2, "lam": "0.9", "b": 3, "d": 3, "replacement": False},
        {"N": 4, "lam": "0.9", "b": 3, "solver": "magic"},
    ],
)
def test_bad_input(kwargs) -> None:
    with pytest.raises(ParameterError):
        solve_exact(**kwargs)


#: today's keys of ``mfstein exact --json`` (supermarket form) ...
JSON_KEYS = {
    "N",
    "lam",
    "b",
    "d",
    "states",
    "residual",
    "n_mse",
    "mean",
    "n_bias",
    "n_cov",
    "queue_length_pmf",
    "blocking",
    "seconds",
}
#: ... plus those of the one exact result type shared with ``--model``
MODEL_JSON_KEYS = {
    "model", "params", "relative_residual", "tolerance", "start", "law_values", "s_star",
    "V", "constant", "marginal_pmf", "mean_jobs", "up_rate", "method", "iterations", "notes",
    "truncation", "condition", "law_error", "errors",
}  # fmt: skip


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exact", "--N", "4", "--lam", "0.7", "--b", "3", "--d", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == JSON_KEYS | MODEL_JSON_KEYS
    assert out["states"] == 35 and out["lam"] == "0.7" and out["d"] == 3
    assert len(out["mean"]) == len(out["n_bias"]) == 3
    assert np.array(out["n_cov"]).shape == (3, 3)
    assert len(out["queue_length_pmf"]) == 4
    assert all(isinstance(out[k], float) for k in ("residual", "n_mse", "blocking", "seconds"))
    r = solve_exact(4, "0.7", 3, 3)
    doc = r.to_dict()  # printed down to the place its error allows, within half a unit of it
    assert out["n_mse"] == doc["n_mse"] and out["mean"] == doc["mean"]
    half = 10.0 ** place(out["errors"]["n_mse"]) / 2
    assert abs(out["n_mse"] - r.n_mse) <= half * (1 + 1e-12)


def test_cli_heavy_traffic_and_human(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["exact", "--N", "5", "--gamma", "0.1", "--alpha", "0.05", "--b", "3"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    lam = numeric.heavy_traffic_lambda("0.1", "0.05", 5)
    assert float(out["lam"]) == pytest.approx(float(lam), rel=1e-15)
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "residual" in text and "N E||S - s*||^2" in text


@pytest.mark.parametrize(
    "argv",
    [
        ["exact", "--N", "0", "--lam", "0.9", "--b", "3"],
        ["exact", "--N", "50", "--lam", "0.9", "--b", "10"],
        ["exact", "--N", "5", "--gamma", "0.1", "--b", "3"],
        ["exact", "--N", "5", "--lam", "0.9", "--b", "3", "--memory-limit", "-1"],
        ["exact", "--N", "5", "--b", "3"],
    ],
)
def test_cli_bad_input_exits_2(argv, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse's own errors
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip()
