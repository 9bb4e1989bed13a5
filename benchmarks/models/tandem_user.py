"""A plain 2-coordinate user model for the exact solver's benchmarks: a tandem of two
infinite-server stations (arrivals at rate ``lam`` to the first, each job moving on at
rate ``mu1`` and leaving the second at rate ``mu2``), on the orthant; the solver picks
the truncation.  Its law is a product of two Poisson laws, of means ``N lam / mu1``
and ``N lam / mu2``.

    .venv/bin/python benchmarks/bench_exact_lu.py --cases "tandem N=20"
"""

import sympy as sp

from derive import Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace


def tandem_user():
    """The model (module docstring)."""
    x, y, lam, mu1, mu2 = sp.symbols("x y lam mu1 mu2")
    return Model(
        "tandem-user",
        (x, y),
        (lam, mu1, mu2),
        [
            Transition((1, 0), lam, "arrival"),
            Transition((-1, 1), mu1 * x, "move"),
            Transition((0, -1), mu2 * y, "departure"),
        ],
        info=ModelInfo(
            parameters=(Parameter("lam", low=0), Parameter("mu1", low=0), Parameter("mu2", low=0)),
            state_space=StateSpace("orthant"),
        ),
    )
