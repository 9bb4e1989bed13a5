"""Two classes of servers, half of the population each: an arrival takes an idle
class-1 server when it finds one, else (with the chance x + y of sampling a busy
one) an idle class-2 server."""

import sympy as sp

from derive import Model, Transition


def two_class():
    x, y = sp.symbols("x y")
    lam, mu1, mu2 = sp.symbols("lam mu1 mu2")
    half = sp.Rational(1, 2)
    return Model(
        "two_class",
        (x, y),
        (lam, mu1, mu2),
        [
            Transition((1, 0), 2 * lam * (half - x)),
            Transition((0, 1), lam * (x + y) * (half - y)),
            Transition((-1, 0), mu1 * x),
            Transition((0, -1), mu2 * y),
        ],
    )
