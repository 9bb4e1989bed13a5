"""The SIRS epidemic: an example of a model with a conservation law.

Fractions ``S``, ``I``, ``R`` of a population of N individuals, ``S + I + R = 1``.
Transitions (all jumps of size 1/N):

* infection ``(-1, +1, 0)`` at rate ``(a + beta I) S`` -- contact with the
  infected at rate ``beta`` plus an outside source at rate ``a``;
* recovery ``(0, -1, +1)`` at rate ``gamma I``;
* loss of immunity ``(+1, 0, -1)`` at rate ``rho R``.

With ``a > 0`` the finite-N chain is irreducible on ``{S + I + R = 1}`` and
has a proper stationary law; the mean field has a unique fixed point in the
simplex (declared as ``unique_fixed_point``): ``gamma I = rho R`` gives
``R = gamma I / rho`` and ``S = 1 - k I`` with ``k = 1 + gamma / rho > 1``, so a
fixed point is a root in ``[0, 1/k]`` of
``g(I) = (a + beta I)(1 - k I) - gamma I = -beta k I^2 + (beta - a k - gamma) I + a``.
``g(0) = a > 0`` and ``g(1/k) = -gamma / k < 0``; for ``beta > 0`` the product of
the two roots is ``-a / (beta k) < 0``, so exactly one is positive, and for
``beta = 0`` ``g`` is linear: one root in ``(0, 1/k)`` either way.  The drift's
Jacobian is singular (the sum is conserved); numeric solves on reduced
coordinates and reports everything in ``(S, I, R)``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import sympy as sp

from derive.model import Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace

S, I, R = sp.symbols("S I R")
BETA, GAMMA, RHO, A = sp.symbols("beta gamma rho a")
_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def sir() -> Model:
    """SIRS with parameters ``beta >= 0``, ``gamma > 0``, ``rho > 0``, ``a > 0``.

    Reference point ``(0.99, 0.01, 0)``: almost everybody susceptible.
    """
    transitions = [
        Transition((-1, 1, 0), (A + BETA * I) * S, "infection"),
        Transition((0, -1, 1), GAMMA * I, "recovery"),
        Transition((1, 0, -1), RHO * R, "loss of immunity"),
    ]
    info = ModelInfo(
        parameters=(
            Parameter("beta", low=0, low_inclusive=True, doc="contact rate"),
            Parameter("gamma", low=0, doc="recovery rate"),
            Parameter("rho", low=0, doc="rate of loss of immunity"),
            Parameter("a", low=0, doc="infection rate from outside"),
        ),
        state_space=StateSpace("simplex", total=1.0),
        conservation=((1, 1, 1),),
        reference=(sp.Rational(99, 100), sp.Rational(1, 100), sp.Integer(0)),
        observables={"susceptible": S, "infected": I, "recovered": R},
        unique_fixed_point=True,  # the module docstring's proof
        citation="SIRS epidemic (a textbook example of a density-dependent population process)",
    )
    return Model(
        "sir", (S, I, R), (BETA, GAMMA, RHO, A), transitions, info=info, key=("sir", _DIGEST)
    )
