"""Join-Idle-Queue (JIQ): idle servers report to dispatchers, which send jobs to them.

The load-balancing scheme of Y. Lu, Q. Xie, G. Kliot, A. Geller, J. R. Larus and
A. Greenberg, "Join-Idle-Queue: a novel load balancing algorithm for
dynamically scalable web services" (Performance Evaluation 68(11), 2011), in
its JIQ-Random form, as a density-dependent population process to which the
refined mean field of N. Gast and B. Van Houdt ("A Refined Mean Field
Approximation", Proc. ACM Meas. Anal. Comput. Syst. 1(2), 2017) and the size
expansion of N. Gast, L. Bortolussi and M. Tribastone ("Size expansions of
mean field approximation: transient and steady-state analysis", 2019) apply.

N single-server queues (rate 1, buffer ``b``) and ``m = N/r`` dispatchers (``N``
a multiple of ``r``); jobs arrive at rate ``N lam``, each to a uniformly chosen
dispatcher (rate ``lam r`` per dispatcher).  Each dispatcher keeps an I-queue of
idle servers, of at most ``L > r`` entries:

* a dispatcher whose I-queue is non-empty sends the job to the server at its
  head, which leaves the I-queue;
* a dispatcher whose I-queue is empty sends the job to a uniformly chosen
  server (a job finding ``b`` jobs there is lost); if that server was idle, it
  leaves the I-queue it was listed in (it reports itself busy);
* a server that becomes idle joins the I-queue of a dispatcher chosen uniformly
  among those with room (with ``L > r`` one always has room: ``m L > N``).

So every idle server is listed exactly once.  State: ``x_k`` = fraction of the
N servers with at least ``k`` jobs (``k = 1..b``, ``x_{b+1} = 0``) and ``z_j`` =
number of dispatchers with at least ``j`` listed servers, divided by ``N``
(``j = 1..L``, ``z_0 = 1/r``, ``z_{L+1} = 0``), with the conservation law
``x_1 + z_1 + ... + z_L = 1`` (idle servers = listed servers).  Transitions:

* ``+e(x_1) - e(z_j)`` at ``lam r (z_j - z_{j+1})`` (via a non-empty I-queue of
  length ``j``) plus ``lam (1 - r z_1) j (z_j - z_{j+1})`` (a random dispatch
  that hits an idle server listed in an I-queue of length ``j``);
* ``+e(x_{k+1})`` at ``lam (1 - r z_1)(x_k - x_{k+1})``, ``k = 1..b-1`` (a random
  dispatch to a busy server with ``k`` jobs);
* ``-e(x_k)`` at ``x_k - x_{k+1}``, ``k = 2..b`` (a departure that leaves the
  server busy);
* ``-e(x_1) + e(z_{j+1})`` at ``(x_1 - x_2)(z_j - z_{j+1}) / (1/r - z_L)``,
  ``j = 0..L-1`` (a server becomes idle and joins an I-queue of length ``j``).

The mean field's fixed point has ``x_2 .. x_b`` small when ``r`` is large:
most jobs find an idle server (Lu et al.'s observation that JIQ's queueing
delay is small at moderate load); the observables below measure how much.
Reference point: every server busy with one job, every I-queue empty.

Observables: ``queue_length`` (mean jobs per server), ``busy = x_1``,
``idle = 1 - x_1``, ``tail_k = x_k``, ``occupied`` = ``r z_1`` (fraction of
dispatchers with a non-empty I-queue), ``random_dispatch = 1 - r z_1`` (the
probability that a job is dispatched at random), ``queued = x_2`` (fraction
of servers with a waiting job) and ``i_queue_length = r (z_1 + ... + z_L)``
(mean I-queue length per dispatcher).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import sympy as sp

from derive.model import LAM, Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace
from mfstein.ground.errors import ParameterError, check_int

CITATION = (
    "Y. Lu, Q. Xie, G. Kliot, A. Geller, J. R. Larus and A. Greenberg, Join-Idle-Queue: a "
    "novel load balancing algorithm for dynamically scalable web services, Performance "
    "Evaluation 68(11), 2011 (JIQ-Random)"
)
_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def jiq(b: int = 3, r: int = 2, L: int | None = None) -> Model:
    """JIQ-Random with server buffer ``b >= 1``, ``r >= 1`` servers per
    dispatcher and I-queues of at most ``L > r`` entries (default ``2 r``);
    parameter ``lam > 0`` (arrival rate per server, service rate 1)."""
    b = check_int("b", b, 1)
    r = check_int("r", r, 1)
    L = 2 * r if L is None else check_int("L", L, 1)
    if L <= r:
        raise ParameterError(
            f"L must be larger than r = {r} (so that an idle server always finds room), got {L}."
        )
    x = sp.symbols(f"x1:{b + 1}")
    z = sp.symbols(f"z1:{L + 1}")
    xp = (sp.Integer(1), *x, sp.Integer(0))
    zp = (sp.Rational(1, r), *z, sp.Integer(0))
    n = b + L
    random = 1 - r * z[0]  # probability that the chosen dispatcher's I-queue is empty

    def jump(**moves: int) -> tuple[int, ...]:
        v = [0] * n
        for key, step in moves.items():
            kind, k = key[0], int(key[1:])
            v[(k - 1) if kind == "x" else (b + k - 1)] += step
        return tuple(v)

    transitions = []
    for j in range(1, L + 1):
        rate = LAM * (r + random * j) * (zp[j] - zp[j + 1])
        transitions.append(
            Transition(jump(x1=1, **{f"z{j}": -1}), rate, f"to an idle server (I-queue {j})")
        )
    for k in range(1, b):
        rate = LAM * random * (xp[k] - xp[k + 1])
        transitions.append(
            Transition(jump(**{f"x{k + 1}": 1}), rate, f"random to a server with {k}")
        )
    for k in range(2, b + 1):
        transitions.append(
            Transition(jump(**{f"x{k}": -1}), xp[k] - xp[k + 1], f"departure at {k}")
        )
    room = zp[0] - zp[L]
    for j in range(L):
        rate = (xp[1] - xp[2]) * (zp[j] - zp[j + 1]) / room
        transitions.append(
            Transition(jump(x1=-1, **{f"z{j + 1}": 1}), rate, f"idle server joins I-queue {j}")
        )
    observables = {
        "queue_length": sp.Add(*x),
        "busy": x[0],
        "idle": 1 - x[0],
        "queued": x[1] if b > 1 else sp.Integer(0),
        "occupied": r * z[0],
        "random_dispatch": random,
        "i_queue_length": r * sp.Add(*z),
    }
    observables.update({f"tail_{k}": x[k - 1] for k in range(1, b + 1)})
    info = ModelInfo(
        parameters=(Parameter("lam", low=0, doc="arrival rate per server"),),
        state_space=StateSpace("box"),
        conservation=(tuple([1] + [0] * (b - 1) + [1] * L),),
        reference=(sp.Integer(1), *[sp.Integer(0)] * (n - 1)),
        citation=CITATION,
        observables=observables,
    )
    return Model("jiq", (*x, *z), (LAM,), transitions, info=info, key=("jiq", b, r, L, _DIGEST))
