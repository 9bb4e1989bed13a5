"""M/M/c with c = 2 servers per unit of population: departures at rate Min(x, 2)."""

import sympy as sp

from derive import Model, Transition


def mmc():
    x, lam = sp.symbols("x lam")
    return Model("mmc", (x,), (lam,), [Transition((1,), lam), Transition((-1,), sp.Min(x, 2))])
