"""The float64 point's short forms give the array forms' answers.

:func:`numeric.meanfield.structure.negligible` of a short state with its rates and
``|J|`` at hand runs on Python floats; it must drop exactly the coordinates the
array form drops (the form taken without ``absJ``), on fixed points with tails of
every size, on random states and matrices with NaN, infinite and zero entries, and
with a conservation law.
"""

from __future__ import annotations

import numpy as np

from derive.models import load_model
from numeric.meanfield.structure import negligible


def _system(name: str, params: dict, **kw):
    from numeric.meanfield.problem import system64
    from numeric.prepared.problem import prepare_problem

    return system64(prepare_problem(load_model(name, **kw), params))


def _both(sysm, s, delta, J, rates) -> tuple[list[int], list[int]]:
    """(short form, array form) of the same inputs."""
    with np.errstate(all="ignore"):
        short = negligible(sysm, s, delta, J=J, rates=rates, absJ=np.abs(J))
        array = negligible(sysm, s, delta, J=J, rates=rates)
    return short, array


def test_negligible_short_form_drops_what_the_array_form_drops() -> None:
    rng = np.random.default_rng(52)
    sysm = _system("supermarket", {"lam": "0.9"}, b=8)
    b, nt = sysm.model.n, sysm.sr.n_transitions
    seen = set()
    # fixed points of the queue: tails from none to most coordinates below delta
    for lam in (0.3, 0.5, 0.7, 0.9, 0.99):
        s = np.array([lam ** (2**k - 1) for k in range(1, b + 1)])
        rates, J = sysm.rates(s), sysm.jac_dense(s)
        for delta in (1e-24, 1e-12, 1e-6, 0.1):
            short, array = _both(sysm, s, delta, J, rates)
            assert short == array, (lam, delta, short, array)
            assert all(type(j) is int for j in short)
            seen.add(len(short))
    # random states, rates and J, with NaN, inf and exact zeros among them
    specials = (np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-300)
    for _ in range(300):
        s = rng.standard_normal(b) * 10.0 ** rng.integers(-40, 2, b)
        rates = np.abs(rng.standard_normal(nt)) * 10.0 ** rng.integers(-40, 2, nt)
        J = rng.standard_normal((b, b)) * (rng.random((b, b)) < 0.4)
        for x in (s, rates, J.ravel()):
            if rng.random() < 0.15:
                x[rng.integers(x.size)] = specials[rng.integers(len(specials))]
        short, array = _both(sysm, s, 1e-20, J, rates)
        assert short == array, (s, rates, J, short, array)
        seen.add(len(short))
    assert len(seen) > 3  # the cases drop nothing, some and many coordinates


def test_negligible_short_form_with_a_conservation_law() -> None:
    sysm = _system("sir", {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"})
    assert sysm.red.laws
    rng = np.random.default_rng(7)
    for _ in range(200):
        s = np.abs(rng.standard_normal(sysm.model.n)) * 10.0 ** rng.integers(-40, 1)
        s[rng.integers(s.size)] = 0.0
        rates, J = sysm.rates(s), sysm.jac_dense(s)
        short, array = _both(sysm, s, 1e-24, J, rates)
        assert short == array  # SIR's law has every coordinate: none is ever dropped
