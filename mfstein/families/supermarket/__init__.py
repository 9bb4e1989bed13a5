"""The supermarket (power-of-d) family's fast path: the shooting equilibrium, Theorem 1's
constant by independent routes, the refined bias and the float64 sweep over arrival
rates; listed as the family's fast path in mfstein.ground.fast_paths.FAST_PATHS.
"""
