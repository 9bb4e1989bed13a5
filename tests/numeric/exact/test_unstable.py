"""``numeric.exact.solve`` answers a model whose mean-field fixed point is unstable:
the finite chain still has a stationary law."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import numeric
from derive import Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace
from mfstein.ground.errors import ParameterError
from numeric.exact import general


def _rational_sir() -> Model:
    """rmf_tool's non-stable SIR: infection S (1 + 10 I/(a + S)), recovery 5 I, loss
    of immunity (10 S + 0.1) R; at a = 0.1 the mean field has a limit cycle."""
    S, I, a = sp.symbols("S I a")
    return Model(
        "sir_rational",
        (S, I),
        (a,),
        [
            Transition((-1, 1), S * (1 + 10 * I / (a + S))),
            Transition((0, -1), 5 * I),
            Transition((1, 0), (10 * S + sp.Rational(1, 10)) * (1 - S - I)),
        ],
        info=ModelInfo(
            parameters=(Parameter("a", low=0),),
            state_space=StateSpace("simplex", total=1.0),
            reference=(sp.Rational(1, 2), sp.Rational(1, 2)),
        ),
    )


def test_unstable_mean_field_still_answers():
    m = _rational_sir()
    with pytest.raises(ParameterError, match="is not stable"):
        numeric.solve(m, {"a": "0.1"}, dps=15)
    N = 20
    r = general.solve(m, {"a": "0.1"}, N=N)
    assert any("is not stable" in n for n in r.notes)
    assert np.isnan(r.constant) and np.all(np.isnan(r.s_star))
    assert r.pi.sum() == pytest.approx(1.0, abs=1e-12) and r.pi.min() >= 0
    # the law is stationary: the balance equations of a dense generator built here
    # from the reported states and the model's rates hold
    states = r.state_array
    index = {tuple(s): k for k, s in enumerate(states.tolist())}
    n = len(states)
    Q = np.zeros((n, n))
    for k, (si, ii) in enumerate(states.tolist()):
        s, i = si / N, ii / N
        rates = [s * (1 + 10 * i / (0.1 + s)), 5 * i, (10 * s + 0.1) * (1 - s - i)]
        for (ds, di), rate in zip([(-1, 1), (0, -1), (1, 0)], rates, strict=True):
            target = index.get((si + ds, ii + di))
            if rate > 0 and target is not None:
                Q[k, target] += N * rate
                Q[k, k] -= N * rate
    assert np.max(np.abs(r.pi @ Q)) < 1e-9 * np.max(np.abs(Q))
