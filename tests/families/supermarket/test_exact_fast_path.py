"""The exact task has one entry, ``numeric.exact.solve``; the supermarket family's
solver is its registered fast path and ``solve_exact`` is a short form of it."""

from __future__ import annotations

import numpy as np
import pytest

import numeric
import numeric.exact
from derive.models import load_model
from mfstein.ground.errors import ParameterError
from numeric.exact import solve_exact


def test_auto_route_is_the_short_form_and_agrees_with_the_general_chain() -> None:
    model = load_model("supermarket", b=3, d=2)
    fast = numeric.exact.solve(model, {"lam": "0.9"}, N=6)
    short = solve_exact(6, "0.9", 3, 2)
    general = numeric.exact.solve(model, {"lam": "0.9"}, N=6, route="general")
    # the same implementation: the same bits
    assert fast.lam == "0.9" and general.lam is None
    assert np.array_equal(fast.pi, short.pi) and fast.n_mse == short.n_mse
    # two solves of one chain: pi differs by at most the residuals times the chain's
    # condition (a generous 1e4 here, for 84 states)
    tol = 1e4 * (fast.residual + general.residual)
    assert fast.states == general.states == 84
    order = [np.lexsort(r.state_array.T[::-1]) for r in (fast, general)]
    assert np.array_equal(fast.state_array[order[0]], general.state_array[order[1]])
    assert np.abs(fast.pi[order[0]] - general.pi[order[1]]).sum() <= tol
    for key in ("mean", "n_cov", "queue_length_pmf"):
        np.testing.assert_allclose(getattr(fast, key), getattr(general, key), rtol=0, atol=tol)
    assert abs(fast.blocking - general.blocking) <= tol
    # s* and the mean field's V and c by two routes (the family's shooting, numeric.solve)
    np.testing.assert_allclose(fast.s_star, general.s_star, rtol=0, atol=1e-15)
    np.testing.assert_allclose(fast.V, general.V, rtol=1e-14)
    assert fast.constant == pytest.approx(general.constant, rel=1e-14)
    assert fast.relative_residual <= fast.tolerance and general.relative_residual <= 1e-10


def test_fast_path_declines_what_it_cannot_honour() -> None:
    # a service rate kept as a parameter: the general chain (no short-form fields)
    r = numeric.exact.solve(load_model("supermarket", b=2, mu="mu"), {"lam": "1.2", "mu": 2}, N=4)
    assert r.lam is None and r.relative_residual <= r.tolerance
    # a start: the general chain, from that start
    s = numeric.exact.solve("supermarket", {"b": 2, "lam": "0.9"}, N=4, start=["1/2", "1/4"])
    assert s.lam is None and s.start == [2, 1]
    with pytest.raises(ParameterError, match=r"route='fast'.*start or a truncation"):
        numeric.exact.solve(
            "supermarket", {"b": 2, "lam": "0.9"}, N=4, start=["1/2", "1/4"], route="fast"
        )
    with pytest.raises(ParameterError, match=r"route='fast'.*this model"):
        numeric.exact.solve("sir", {"beta": 2, "gamma": 1}, N=5, route="fast")
    with pytest.raises(ParameterError, match="route must be one of auto, general, fast"):
        numeric.exact.solve("supermarket", {"b": 2, "lam": "0.9"}, N=4, route="quick")


def test_fast_path_checks_its_parameters_in_one_sentence() -> None:
    model = load_model("supermarket", b=2, d=3, replacement=False)
    with pytest.raises(ParameterError, match="N must be an integer >= 3"):
        numeric.exact.solve(model, {"lam": "0.9"}, N=2)
    with pytest.raises(ParameterError, match="must equal the lattice size N = 5"):
        numeric.exact.solve(model, {"lam": "0.9", "N": 6}, N=5)
    with pytest.raises(ParameterError, match="mu is not a parameter"):
        numeric.exact.solve(load_model("supermarket", b=2), {"lam": "0.9", "mu": 1}, N=4)
    with pytest.raises(ParameterError, match="lam must be > 0"):
        numeric.exact.solve(load_model("supermarket", b=2), {"lam": "-1"}, N=4)
    with pytest.raises(ParameterError, match="N must be >= d = 3 to sample 3 distinct"):
        solve_exact(2, "0.9", 2, 3, replacement=False)  # the short form's own sentence


def test_short_form_reports_the_mean_field_it_is_compared_with() -> None:
    r = solve_exact(5, "0.8", 3, 2)
    mf = numeric.solve(load_model("supermarket", b=3, d=2), {"lam": "0.8"}, dps=20)
    assert r.constant == float(mf.constant)
    assert np.array_equal(r.V, np.array([float(v) for v in mf.V]))
    assert r.start == [0, 0, 0] and 0 < r.relative_residual <= r.residual


def test_fallback_warning_names_the_callers_line() -> None:
    """b = 5 is too large for the without-replacement mean field at N = 6: the warning
    points at the line that called the exact task, through either entry."""
    model = load_model("supermarket", b=5, replacement=False)
    with pytest.warns(UserWarning, match="too large for the without-replacement") as got:
        solve_exact(6, "0.9", 5, 2, replacement=False)
        numeric.exact.solve(model, {"lam": "0.9"}, N=6)
    assert [w.filename for w in got] == [__file__, __file__]
