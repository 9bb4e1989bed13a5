"""mfstein: error analysis of mean-field load-balancing models by Stein's method.

The work is split into three packages that depend on each other one way only,
``sim -> numeric -> derive``:

* :mod:`derive`  -- symbolic models (SymPy), LaTeX, closed forms, generated kernels;
* :mod:`numeric` -- equilibrium, Lyapunov/Stein solutions and the Theorem-1
  constant at any precision, the exact finite-N solver, lemma checks;
* :mod:`sim`     -- numba simulators of the finite-N system with confidence intervals.

This package only holds the version and the ``mfstein`` console dispatcher.
"""

__version__ = "0.1.0"
