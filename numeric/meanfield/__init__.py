"""The stationary mean-field expansion of any model: the fixed point, the general and
float64 routes (order 1, and order 2 in :mod:`~numeric.meanfield.stationary`), the
observables' expansion, truncation to the coordinates that matter, the result record
and the solve and certify entries with their fast-path registry.  The parameters and
the conservation laws it starts from are below it (:mod:`numeric.params`,
:mod:`numeric.invariants`).
"""
