"""The supermarket model (power of d choices, sampling with replacement) written as
a user's model file: no family, no fast path, nothing declared but the
transitions, the parameter range and the state space (and, with ``unique=True``,
the uniqueness of its fixed point).

State ``s_k`` = fraction of servers with at least ``k`` jobs (``s_0 = 1``,
``s_{b+1} = 0``); arrivals join level ``k`` at rate ``lam (s_{k-1}^d - s_k^d)``,
departures leave level ``k`` at rate ``s_k - s_{k+1}`` (Section 3 of "Beyond
Scaling: Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic").

    mfstein solve --model benchmarks/models/supermarket_user.py:supermarket_user \\
        --param b=100 --param lam=0.9
"""

import sympy as sp

from derive import Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace


def supermarket_user(b=10, d=2, unique=False):
    """The model with buffer ``b`` and ``d`` choices; ``unique=True`` also declares
    that its fixed point is unique (summing ``f_k = 0`` from level ``k`` to ``b``
    gives ``s_k = lam (s_(k-1)^d - s_b^d)``: every ``s_k`` decreases with ``x = s_b``
    on the state space and ``s_b(x) = x`` has one root at most, the proof of
    :mod:`derive.models.supermarket`), which lets the float64 route start a warm
    call from a fixed point found before (:mod:`numeric.meanfield.problem`)."""
    b, d = int(b), int(d)
    s = sp.symbols(f"x1:{b + 1}")
    lam = sp.Symbol("lam")
    pad = (sp.Integer(1), *s, sp.Integer(0))
    tr = []
    for k in range(1, b + 1):
        e = [0] * b
        e[k - 1] = 1
        tr.append(Transition(tuple(e), lam * (pad[k - 1] ** d - pad[k] ** d), f"arrival {k}"))
        e = [0] * b
        e[k - 1] = -1
        tr.append(Transition(tuple(e), pad[k] - pad[k + 1], f"departure {k}"))
    return Model(
        f"supermarket-user-{b}",
        s,
        (lam,),
        tr,
        info=ModelInfo(
            parameters=(Parameter("lam", low=0, high=1, doc="arrival rate per server"),),
            state_space=StateSpace("monotone"),
            unique_fixed_point=bool(unique),
        ),
    )
