"""Exact stationary distribution of small finite-N systems (the ground truth).

>>> from numeric.exact import solve_exact
>>> r = solve_exact(4, "0.7", 3, 2)
>>> r.states, r.residual < 1e-12
(35, True)
"""

from numeric.exact.solve import ChainSolution, ExactResult, solve_chain, solve_exact

__all__ = ["ChainSolution", "ExactResult", "solve_chain", "solve_exact"]
