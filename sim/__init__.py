"""numba simulators of the finite-N supermarket system, with confidence intervals.

>>> from sim import simulate
>>> r = simulate(10, "0.9", b=5, steps=10**6, reps=2, seed=1)   # doctest: +SKIP
>>> r.n_mse.mean, r.n_mse.ci95                                   # doctest: +SKIP
"""

from sim.api import SimulationResult, simulate
from sim.stats import Estimate

__all__ = ["Estimate", "SimulationResult", "simulate"]
