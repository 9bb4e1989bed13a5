"""numba simulators of the finite-N system, with confidence intervals."""
