"""A tandem line: arrivals to station 1, single-server station 1, and a station 2
whose service grows like the square root of its queue."""

import sympy as sp

from derive import Model, Transition


def tandem():
    x, y, lam = sp.symbols("x y lam")
    return Model(
        "tandem",
        (x, y),
        (lam,),
        [
            Transition((1, 0), lam),
            Transition((-1, 1), sp.Min(x, 1)),
            Transition((0, -1), sp.sqrt(y)),
        ],
    )
