"""The supermarket (power-of-d) family's fast path: the shooting equilibrium, Theorem 1's
constant by independent routes, the refined bias and the float64 sweep over arrival
rates; registered as the family's fast path by numeric.meanfield.entry.
"""
