"""Numerics of heterogeneous population processes (K objects, each its own rates).

The model is :class:`derive.heterogeneous_population.HeterogeneousModel`; its
mean field lives on ``K x S`` coordinates ``x[k*S + s] = P(object k in s)``
(object-major order).  Modules: :mod:`~numeric.heterogeneous.rates` (the rate
tensors at given parameters), :mod:`~numeric.heterogeneous.algebra` (drift,
Jacobian, noise and the pair-covariance term, in float64 or ``mpf``),
:mod:`~numeric.heterogeneous.steady` (fixed point, covariance and the refined
``1/K`` term of Allmeier and Gast, SIGMETRICS 2022), :mod:`~numeric.heterogeneous.exact`
(the product chain of the K objects), :mod:`~numeric.heterogeneous.transient`
(mean field and its ``1/K`` term along time), :mod:`~numeric.heterogeneous.result`
(the result types) and :mod:`~numeric.heterogeneous.entry` (what the public
entries ``numeric.solve``, ``numeric.exact.solve`` and ``numeric.transient``
call for such a model).
"""
