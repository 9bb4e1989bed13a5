"""A cache of two item classes under RANDOM replacement: a request for an item out
of the cache brings it in and evicts a uniformly chosen cached item, so the
occupancy a + b is conserved (it is the start's).  Each class has half of the
items; class 1 is requested twice as often as class 2."""

import sympy as sp

from derive import Model, Transition


def cache():
    a, b = sp.symbols("a b")
    half = sp.Rational(1, 2)
    occupancy = a + b
    return Model(
        "cache",
        (a, b),
        (),
        [
            Transition((1, -1), 2 * (half - a) * b / occupancy),
            Transition((-1, 1), (half - b) * a / occupancy),
        ],
    )
