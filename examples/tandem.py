"""A user-written open network in a file: ``stations`` queues in tandem.

``x_i`` is the number of customers at station ``i`` per unit of N.  Customers
arrive at station 1 at rate ``lam`` (per unit of N), each customer at station
``i`` is served at rate ``mu`` (ample servers) and moves on to station
``i + 1``; customers served at the last station leave.  The fixed point is
``x_i* = lam / mu`` at every station.

    mfstein simulate --model examples/tandem.py:tandem --param lam=1 --param mu=1 \
        --N 100 --steps 1e6
"""

import sympy as sp

from derive import Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace


def tandem(stations=8):
    """The tandem network of ``stations`` stations (a factory option)."""
    k = int(stations)
    x = sp.symbols(f"x1:{k + 1}")
    lam, mu = sp.symbols("lam mu")
    transitions = [Transition((1,) + (0,) * (k - 1), lam, "arrival")]
    for i in range(k):
        jump = [0] * k
        jump[i] = -1
        if i + 1 < k:
            jump[i + 1] = 1
        transitions.append(Transition(tuple(jump), mu * x[i], f"service {i + 1}"))
    return Model(
        f"tandem-{k}",
        x,
        (lam, mu),
        transitions,
        info=ModelInfo(
            parameters=(
                Parameter("lam", low=0, doc="arrival rate at station 1"),
                Parameter("mu", low=0, doc="service rate per customer"),
            ),
            state_space=StateSpace("orthant"),
        ),
    )
