"""The truncation of an exact chain on an unbounded state space, chosen and reported.

A model on the orthant ``s >= 0`` whose chain can climb without bound (an M/M/c
queue, a tandem line) has no finite lattice; the exact solver then blocks every
jump above ``n_k <= U`` and solves the truncated chain.  When the caller gives no
``truncation=``, :func:`choose_level` picks ``U``: it solves at a first level
(twice the mean field's largest count, plus ``N``), measures the stationary mass
the cut leaves out (:func:`cut_mass`), and raises the level until that mass is
below ``truncation_tol`` (default :data:`mfstein.ground.limits.TRUNCATION_TOL`), or
refuses in one sentence when the chain the next level needs exceeds the memory
policy (:mod:`numeric.exact.memory`).

The mass cut is ``m = m_U + m_beyond``: ``m_U``, the truncated law's mass on the
boundary layer ``max_k n_k = U`` (where jumps are blocked), and ``m_beyond``, the
tail beyond ``U`` extrapolated geometrically from the last two layers
(``m_U r / (1 - r)``, ``r = m_U / m_(U-1)``; exact for a geometric tail such as the
M/M/c queue's, an over-estimate for tails that decay faster, such as a Poisson
law's).  For a reversible chain the truncated law is the untruncated one
conditioned on ``n_k <= U`` (Kelly's truncation), so its error in total variation
is the mass beyond ``U``: at most ``m`` when the tail is geometric or lighter.
That is the precision statement every result with a truncation carries.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mfstein.ground.errors import ParameterError
from mfstein.ground.limits import TRUNCATION_TOL, TRUNCATION_TOL_RANGE

#: How much a level may grow from one solve to the next (the extrapolation may
#: ask for less; a tail that does not decay doubles the level).
MAX_GROWTH = 4


@dataclass(frozen=True)
class Cut:
    """The truncation ``n_k <= level`` of one exact chain and the mass it cuts."""

    #: The largest count kept in any coordinate.
    level: int
    #: The truncated law's mass on the layer ``max_k n_k = level``.
    boundary: float
    #: The extrapolated stationary mass beyond the level (module docstring).
    beyond: float
    #: Whether the solver chose the level (else the caller gave ``truncation=``).
    chosen: bool
    #: The tolerance the chosen level met (``None`` for a given truncation).
    tolerance: float | None = None

    @property
    def mass(self) -> float:
        """The mass cut, ``boundary + beyond``: the bound on the law's error."""
        return self.boundary + self.beyond

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (a value inside :class:`numeric.exact.ExactResult`)."""
        return {
            "level": self.level,
            "mass_cut": self.mass,
            "boundary_mass": self.boundary,
            "beyond_mass": self.beyond,
            "chosen": self.chosen,
            "tolerance": self.tolerance,
        }

    def text(self) -> str:
        """One line for reports: the level, the mass cut and what it bounds."""
        how = "chosen" if self.chosen else "given"
        if self.mass == 0.0:
            return f"n_k <= {self.level} ({how}); the law puts no mass on the cut (nothing is cut)"
        target = f" <= {self.tolerance:.0e}" if self.tolerance is not None else ""
        return (
            f"n_k <= {self.level} ({how}); mass cut {self.mass:.1e}{target} (on the cut "
            f"{self.boundary:.1e}, beyond it {self.beyond:.1e} extrapolated): the law's error "
            "in total variation is bounded by it"
        )


def check_tol(value: Any, truncation: Any = None) -> float:
    """``truncation_tol`` as a float in :data:`mfstein.ground.limits.TRUNCATION_TOL_RANGE`
    (``None``: the default :data:`mfstein.ground.limits.TRUNCATION_TOL`), or one sentence;
    refused beside a given ``truncation`` (which it would not choose)."""
    from mfstein.ground.numbers import parse_real

    if value is not None and truncation is not None:
        raise ParameterError(
            "truncation_tol (--truncation-tol) chooses a truncation, so it cannot be given with "
            "truncation= (--truncation); give one of them."
        )
    if value is None:
        return TRUNCATION_TOL
    low, high = TRUNCATION_TOL_RANGE
    return float(parse_real("truncation_tol", value, low, high))


def cut_mass(states: np.ndarray, pi: np.ndarray, level: int) -> tuple[float, float]:
    """``(boundary, beyond)`` of the law ``pi`` on ``states`` truncated at ``level``
    (module docstring): the mass on ``max_k n_k = level`` and the geometric
    extrapolation of the tail beyond it (``inf`` when the last layers do not decay)."""
    top = states.max(axis=1)
    boundary = float(pi[top == level].sum())
    if boundary == 0.0:
        return 0.0, 0.0
    below = float(pi[top == level - 1].sum())
    ratio = boundary / below if below > 0.0 else math.inf
    beyond = boundary * ratio / (1.0 - ratio) if ratio < 1.0 else math.inf
    return boundary, beyond


def first_level(start: np.ndarray, centre: np.ndarray, N: int) -> int:
    """The first level tried: twice the largest count of the mean field's fixed
    point (or of the start), plus ``N``, and never below the start."""
    peak = max(float(np.max(centre)), float(np.max(start)), 0.0)
    return max(int(np.max(start)), 2 * math.ceil(peak) + N, 2)


def next_level(level: int, boundary: float, beyond: float, tol: float) -> int:
    """The next level: where the geometric tail of the last solve falls below half
    of ``tol`` (plus a margin), at least a quarter more and at most
    :data:`MAX_GROWTH` times the level; twice the level when the tail does not decay."""
    if not (beyond < math.inf and beyond > 0.0):
        return 2 * level
    ratio = beyond / (boundary + beyond)  # r / (1 - r) = beyond / boundary
    steps = math.log(tol * (1.0 - ratio) / (2.0 * boundary)) / math.log(ratio)
    want = level + math.ceil(steps) + 2
    return int(min(max(want, level + max(1, level // 4)), MAX_GROWTH * level))


def choose_level(
    solve_at: Callable[[int], tuple[np.ndarray, np.ndarray]],
    first: int,
    tol: float,
    what: str,
) -> Cut:
    """The first level from ``first`` on whose mass cut is at most ``tol``.

    ``solve_at(level)`` solves the chain truncated at ``level`` and returns its
    states and law (the caller keeps the solve); ``what`` names the chain in the
    refusal when the next level's chain exceeds the memory limit.
    """
    from numeric.exact.space import TooManyStates

    level = first
    while True:
        try:
            states, pi = solve_at(level)
        except TooManyStates:
            raise ParameterError(
                f"{what} needs a truncation at n_k <= {level} or above to cut less than "
                f"{tol:.0e} of its stationary mass, and that chain has more states than the "
                "memory limit allows; give truncation= (--truncation), a larger truncation_tol "
                "(--truncation-tol) or a smaller N."
            ) from None
        boundary, beyond = cut_mass(states, pi, level)
        if boundary + beyond <= tol:
            return Cut(level, boundary, beyond, chosen=True, tolerance=tol)
        level = next_level(level, boundary, beyond, tol)
