"""The mean-field route for any model: parameters, conservation laws, fixed point, the
general and float64 routes, truncation to the coordinates that matter, and the solve
entry with its fast-path registry.
"""
