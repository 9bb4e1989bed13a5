"""A user-written model in a file: a birth-death process with capacity.

``x`` is the occupied fraction of ``cap`` slots per unit of N; births arrive at
rate ``lam (cap - x)`` and each occupant leaves at rate 1.  The fixed point is
``x* = lam cap / (1 + lam)``.

    mfstein solve --model examples/birth_death.py:birth_death --param lam=0.5 --param cap=2

The file ships with the package as ``derive/models/examples/birth_death.py``, so
an installed mfstein reaches it from any directory by module name::

    mfstein solve --model derive.models.examples.birth_death:birth_death --param lam=0.5
"""

import sympy as sp

from derive import Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace


def birth_death(cap=1):
    """The model with ``cap`` slots per unit of N (a factory option)."""
    x, lam = sp.symbols("x lam")
    return Model(
        "birth-death",
        (x,),
        (lam,),
        [Transition((1,), lam * (cap - x), "birth"), Transition((-1,), x, "death")],
        info=ModelInfo(
            parameters=(Parameter("lam", low=0, doc="birth rate per free slot"),),
            state_space=StateSpace("orthant"),
        ),
    )
