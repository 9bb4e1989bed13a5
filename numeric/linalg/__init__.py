"""Dense and structured linear algebra at any precision: tridiagonal Lyapunov equations,
iterative refinement of general Lyapunov and linear systems, Theorem 1's banded
Kronecker system.
"""
