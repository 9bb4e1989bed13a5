"""SIS epidemic without parameters, with a small infection from outside (so that
the finite-N chain is not absorbed at x = 0)."""

import sympy as sp

from derive import Model, Transition


def sis():
    x = sp.Symbol("x")
    infection = (2 * x + sp.Rational(1, 10)) * (1 - x)
    return Model("sis", (x,), (), [Transition((1,), infection), Transition((-1,), x)])
