"""numba simulators of the finite-N supermarket system, with confidence intervals.

>>> from sim import simulate
>>> r = simulate(10, "0.9", b=5, steps=10**6, reps=2, seed=1)   # doctest: +SKIP
>>> r.n_mse.mean, r.n_mse.ci95                                   # doctest: +SKIP

Modules: :mod:`sim.aggregated` (CTMC on counts), :mod:`sim.perserver` (explicit
FIFO servers), :mod:`sim.stats` (batch means), :mod:`sim.runner` (replications,
workers, checkpoints), :mod:`sim.api` (``simulate``), :mod:`sim.table` (seed
000's Tables 1 and 2).  The names below are imported lazily so that
``mfstein --help`` does not load numba.
"""

from __future__ import annotations

from typing import Any

from mfstein import __version__ as __version__

__all__ = [
    "Estimate",
    "GenericSimulator",
    "ModelSimulationResult",
    "SimulationResult",
    "Simulator",
    "simulate",
    "simulate_model",
]


def __getattr__(name: str) -> Any:
    if name in ("simulate", "SimulationResult"):
        from sim import api

        return getattr(api, name)
    if name in ("simulate_model", "GenericSimulator"):
        from sim import generic

        return getattr(generic, name)
    if name in ("Simulator", "ModelSimulationResult"):
        from sim import base

        return getattr(base, name)
    if name == "Estimate":
        from sim.stats import Estimate

        return Estimate
    raise AttributeError(f"module 'sim' has no attribute {name!r}")
