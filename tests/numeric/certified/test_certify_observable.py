"""One certification entry, and it certifies the solution's own ``M`` (issue 31).

``numeric.certify(model, params, M=X)`` is ``numeric.solve(model, params, M=X).certify()``;
the certificate encloses ``c = tr(X W)`` whether ``M`` is left to the solution or given
again, records that ``X`` (``CertifiedSolution.M``), and refuses any other ``M``.  The
constant it proves is checked against ``sum_i X_ii W_ii`` from the identity's solution
(an independent route to ``tr(X W)``: ``W`` does not depend on ``M``).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

import numeric
from mfstein.ground.errors import ParameterError

CASES = {
    # a fast-path model (the supermarket's own solver) and a general one with a conservation law
    "supermarket": (
        {"b": 4, "lam": "0.9"},
        [Fraction(1), Fraction(2), Fraction(1, 2), Fraction(3)],
    ),
    "sir": (
        {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"},
        [Fraction(2), Fraction(1), Fraction(0)],
    ),
}


def _diag(weights: list[Fraction]) -> str:
    return "diag:" + ",".join(str(w) for w in weights)


@pytest.mark.parametrize("name", sorted(CASES))
def test_solution_certify_encloses_the_constant_of_its_own_M(name: str) -> None:
    params, weights = CASES[name]
    X = _diag(weights)
    sol = numeric.solve(name, params, dps=20, M=X)
    auto = sol.certify()  # M taken from the solution
    given = sol.certify(M=X)  # M given again: the same observable
    b = len(weights)
    exact = [[weights[i] if i == j else Fraction(0) for j in range(b)] for i in range(b)]
    for cert in (auto, given):
        assert cert.M == exact  # the certificate reports the solution's M, never another
        assert cert.to_dict()["certified_M"] == cert.observable_text()
        assert cert.decide(sol.constant, sol.digits) == "proved"
    assert auto.interval() == given.interval()

    # tr(X W) from the identity's solution, an independent route to the same constant
    plain = numeric.solve(name, params, dps=20)
    with mpmath.workdps(40):
        trace = sum(
            mpmath.mpf(w.numerator) / w.denominator * plain.W[i, i] for i, w in enumerate(weights)
        )
    assert auto.decide(trace, 15) == "proved"
    assert auto.decide(plain.constant, 15) == "refuted"  # it is not the identity's constant
    assert plain.certify().M == [[Fraction(int(i == j)) for j in range(b)] for i in range(b)]

    with pytest.raises(ParameterError, match="M must be the observable the solution"):
        sol.certify(M="identity")


def test_numeric_certify_is_solve_then_certify() -> None:
    params, weights = CASES["supermarket"]
    X = _diag(weights)
    one = numeric.certify("supermarket", params, dps=20, M=X)
    two = numeric.solve("supermarket", params, dps=20, M=X).certify()
    assert one.interval() == two.interval() and one.M == two.M
    assert one.certified_digits == two.certified_digits >= 20
