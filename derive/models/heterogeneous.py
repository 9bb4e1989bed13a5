"""Power-of-d choices with two server classes of different speeds.

N single-server queues with buffer ``b``: a fraction ``gamma`` of them (class 1)
serve at rate ``mu1``, the others (class 2) at rate ``mu2``.  Jobs arrive at
rate ``N lam``; each samples ``d`` queues uniformly (with replacement) and joins
a shortest one, ties broken uniformly among the sampled queues of that length.
This is the heterogeneous JSQ(d) scheme of A. Mukhopadhyay and R. R. Mazumdar,
"Analysis of randomized join-the-shortest-queue (JSQ) schemes in large
heterogeneous processor-sharing systems", IEEE Transactions on Control of
Network Systems 3(2), 2016 (with FIFO single servers instead of processor
sharing: the queue lengths have the same law).

State: ``x_k`` (``y_k``) = fraction of all N queues that are of class 1 (2) and
hold at least ``k`` jobs, ``k = 1..b``, with ``x_0 = gamma``, ``y_0 = 1 - gamma``
and ``x_{b+1} = y_{b+1} = 0``; ``t_k = x_k + y_k`` is the fraction of queues with
at least ``k`` jobs.  The shortest sampled queue has ``k - 1`` jobs with
probability ``t_{k-1}^d - t_k^d``, and it is then of class 1 with probability
``(x_{k-1} - x_k)/(t_{k-1} - t_k)``, so

* an arrival to a class-1 queue with ``k - 1`` jobs, ``+e(x_k)``, has intensity
  ``lam (x_{k-1} - x_k) sum_{i<d} t_{k-1}^i t_k^(d-1-i)`` (a polynomial: the
  quotient ``(t_{k-1}^d - t_k^d)/(t_{k-1} - t_k)`` expanded), and likewise for
  class 2;
* a departure from a class-1 queue with ``k`` jobs, ``-e(x_k)``, has intensity
  ``mu1 (x_k - x_{k+1})`` (``mu2 (y_k - y_{k+1})`` for class 2).

With ``mu1 = mu2`` the total ``t_k`` is the supermarket model's state and its
law does not depend on ``gamma``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import sympy as sp

from derive.model import LAM, Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace
from mfstein.ground.errors import check_int

CITATION = (
    "A. Mukhopadhyay and R. R. Mazumdar, Analysis of randomized join-the-shortest-queue "
    "(JSQ) schemes in large heterogeneous processor-sharing systems, IEEE Trans. Control "
    "Netw. Syst. 3(2), 2016"
)
MU1, MU2, GAMMA = sp.symbols("mu1 mu2 gamma")
_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def power_of_d_two_speeds(b: int = 5, d: int = 2) -> Model:
    """Buffer ``b >= 1``, ``d >= 1`` samples; parameters ``lam > 0``, ``mu1 > 0``,
    ``mu2 > 0`` and the class-1 fraction ``0 < gamma < 1`` (``gamma N`` must be a
    whole number for the finite-N chain)."""
    b = check_int("b", b, 1)
    d = check_int("d", d, 1)
    x = sp.symbols(f"x1:{b + 1}")
    y = sp.symbols(f"y1:{b + 1}")
    xp = (GAMMA, *x, sp.Integer(0))
    yp = (1 - GAMMA, *y, sp.Integer(0))
    t = [xp[k] + yp[k] for k in range(b + 2)]
    zeros = [0] * (2 * b)
    transitions = []
    for k in range(1, b + 1):
        ties = sp.Add(*[t[k - 1] ** i * t[k] ** (d - 1 - i) for i in range(d)])
        for cls, (pad, mu, off) in enumerate(((xp, MU1, 0), (yp, MU2, b)), start=1):
            up = list(zeros)
            up[off + k - 1] = 1
            down = list(zeros)
            down[off + k - 1] = -1
            transitions.append(
                Transition(
                    tuple(up),
                    LAM * (pad[k - 1] - pad[k]) * ties,
                    f"arrival to class {cls} level {k}",
                )
            )
            transitions.append(
                Transition(
                    tuple(down), mu * (pad[k] - pad[k + 1]), f"departure from class {cls} level {k}"
                )
            )
    observables = {
        "queue_length": sp.Add(*x, *y),
        "busy": x[0] + y[0],
        "busy_class1": x[0] / GAMMA,
        "busy_class2": y[0] / (1 - GAMMA),
        "jobs_class1": sp.Add(*x) / GAMMA,
        "jobs_class2": sp.Add(*y) / (1 - GAMMA),
    }
    observables.update({f"tail_{k}": x[k - 1] + y[k - 1] for k in range(1, b + 1)})
    info = ModelInfo(
        parameters=(
            Parameter("lam", low=0, doc="arrival rate per server"),
            Parameter("mu1", low=0, doc="service rate of class 1"),
            Parameter("mu2", low=0, doc="service rate of class 2"),
            Parameter("gamma", low=0, high=1, doc="fraction of servers in class 1"),
        ),
        state_space=StateSpace("box"),
        reference=None,
        citation=CITATION,
        observables=observables,
    )
    return Model(
        "power_of_d_two_speeds",
        (*x, *y),
        (LAM, MU1, MU2, GAMMA),
        transitions,
        info=info,
        key=("power_of_d_two_speeds", b, d, _DIGEST),
    )
