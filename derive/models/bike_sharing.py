"""The homogeneous bike-sharing system with stations of finite capacity.

C. Fricker and N. Gast, "Incentives and redistribution in homogeneous
bike-sharing systems with stations of finite capacity", EURO Journal on
Transportation and Logistics 5(3), 2016 (arXiv:1201.1178, Section 2), as N.
Gast's reference tool rmf_tool ships it (``Example_bikeSharingSystem.ipynb``).
N stations of capacity ``K`` and ``s N`` bikes; users take a bike at rate
``lam`` from every non-empty station, ride for an exponential time of rate
``mu`` and return it to a uniformly chosen station that is not full.

State: ``x_i`` = fraction of stations holding ``i`` bikes, ``i = 0..K``
(``sum_i x_i = 1``); the bikes in transit are ``s - sum_i i x_i`` per station.
Transitions, ``i = 1..K``: a bike is taken from a station with ``i`` bikes,
jump ``-e_i + e_{i-1}`` at intensity ``lam x_i``; a bike is returned to a
station with ``i - 1`` bikes, jump ``e_i - e_{i-1}`` at intensity
``mu x_{i-1} (s - sum_j j x_j)``.

Observables: ``empty`` = ``x_0``, ``full`` = ``x_K``, ``problematic`` =
``x_0 + x_K`` (the paper's measure of a badly balanced system), ``in_transit``
= ``s - sum_i i x_i``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import sympy as sp

from derive.model import Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace
from mfstein.ground.errors import check_int

CITATION = (
    "C. Fricker and N. Gast, Incentives and redistribution in homogeneous bike-sharing "
    "systems with stations of finite capacity, EURO J. Transp. Logist. 5(3), 2016"
)
LAM, MU, S = sp.symbols("lam mu s")
_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def bike_sharing(K: int = 10) -> Model:
    """Stations of capacity ``K >= 1``; parameters ``lam > 0`` (take rate), ``mu > 0``
    (return rate), ``s > 0`` (bikes per station; the finite-N chain needs ``s N``
    to be a whole number).  The reference point puts ``min(floor(s), K)`` bikes in
    every station and the rest in transit, a state of every finite system."""
    K = check_int("K", K, 1)
    x = sp.symbols(f"x0:{K + 1}")
    riding = S - sp.Add(*[j * x[j] for j in range(K + 1)])
    transitions = []
    for i in range(1, K + 1):
        take = [0] * (K + 1)
        take[i], take[i - 1] = -1, 1
        transitions.append(Transition(tuple(take), LAM * x[i], f"take from {i}"))
        back = [0] * (K + 1)
        back[i], back[i - 1] = 1, -1
        transitions.append(Transition(tuple(back), MU * x[i - 1] * riding, f"return to {i - 1}"))

    def reference(values):
        import math

        start = min(K, math.floor(values["s"]))
        return tuple(sp.Integer(1 if k == start else 0) for k in range(K + 1))

    info = ModelInfo(
        parameters=(
            Parameter("lam", low=0, doc="rate at which a user takes a bike from a station"),
            Parameter("mu", low=0, doc="rate at which a ride ends"),
            Parameter("s", low=0, doc="bikes per station"),
        ),
        state_space=StateSpace("simplex", total=1.0),
        conservation=(tuple([1] * (K + 1)),),
        reference=reference,
        citation=CITATION,
        observables={
            "empty": x[0],
            "full": x[K],
            "problematic": x[0] + x[K],
            "in_transit": riding,
        },
    )
    return Model(
        "bike_sharing", x, (LAM, MU, S), transitions, info=info, key=("bike_sharing", K, _DIGEST)
    )
