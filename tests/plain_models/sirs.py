"""SIRS with states named s, i, r (names the generated code once used itself) and
an infection that saturates like i exp(-i); a trickle of infection from outside
keeps the finite-N chain from being absorbed."""

import sympy as sp

from derive import Model, Transition


def sirs():
    s, i, r = sp.symbols("s i r")
    beta, gamma, nu = sp.symbols("beta gamma nu")
    return Model(
        "sirs",
        (s, i, r),
        (beta, gamma, nu),
        [
            Transition((-1, 1, 0), beta * s * (i + sp.Rational(1, 100)) * sp.exp(-i)),
            Transition((0, -1, 1), gamma * i),
            Transition((1, 0, -1), nu * r),
        ],
    )
