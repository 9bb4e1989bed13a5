"""numba simulators of finite-N systems (any model; the supermarket's own engines),
with confidence intervals.

>>> from sim import simulate
>>> params = {"b": 5, "lam": "0.9"}                  # b builds the model, lam is its rate
>>> r = simulate("supermarket", params, N=10, steps=10**6, reps=2, seed=1)  # doctest: +SKIP
>>> r.n_mse.mean, r.n_mse.ci95                                   # doctest: +SKIP

Modules: :mod:`sim.generic` (any model), :mod:`sim.stats` (batch means),
:mod:`sim.runner` (replications, workers, checkpoints), :mod:`sim.api`
(``simulate``).  The supermarket's own engines (the CTMC on counts, explicit FIFO
servers), its short form ``simulate_supermarket(N, lam, b, d)`` and the core paper's
Tables 1 and 2 are the family's (:mod:`mfstein.families.supermarket`), reached through
its registration.  The names below are imported lazily so that ``mfstein --help``
does not load numba.
"""

from __future__ import annotations

from mfstein.ground.fast_paths import short_forms
from mfstein.ground.lazy import VERSION, lazy_package

__all__, __getattr__, __dir__ = lazy_package(
    __name__,
    {
        "sim.accuracy": ("AccuracyTable", "AccuracyTables", ("accuracy_table", "accuracy")),
        "sim.api": ("simulate",),
        "sim.base": ("SimulationResult", "Simulator"),
        "sim.generic": ("GenericSimulator",),
        "sim.stats": ("Estimate",),
        **short_forms(__name__),  # a family's own short form (simulate_supermarket)
    },
    unlisted=VERSION,
)
