"""Parameters named I, E and pi: to SymPy the imaginary unit, Euler's number and
pi, here the model's own symbols."""

import sympy as sp

from derive import Model, Transition


def sympy_names():
    x = sp.Symbol("x")
    I, E, pi = sp.symbols("I E pi")
    return Model(
        "sympy_names",
        (x,),
        (I, E, pi),
        [Transition((1,), I * (1 - x)), Transition((-1,), E * x + pi * x**2)],
    )
