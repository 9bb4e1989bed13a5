"""Numerics of heterogeneous population processes (K objects, each its own rates).

The model is :class:`derive.heterogeneous_population.HeterogeneousModel`; its
mean field lives on ``K x S`` coordinates ``x[k*S + s] = P(object k in s)``
(object-major order).  Modules: :mod:`~numeric.heterogeneous.rates` (the rate
tensors at given parameters), :mod:`~numeric.heterogeneous.algebra` (drift,
Jacobian, noise and the pair-covariance term, in float64 or ``mpf``),
:mod:`~numeric.heterogeneous.steady` (fixed point, covariance and the refined
``1/K`` term of Allmeier and Gast, SIGMETRICS 2022), :mod:`~numeric.heterogeneous.transient`
(mean field and its ``1/K`` term along time), :mod:`~numeric.heterogeneous.result`
(the result types) and :mod:`~numeric.heterogeneous.entry` (the parameters, the start
and the steady state ``numeric.solve`` returns for such a model).  The other tasks'
routes for such a model live with their task and build on this package (never the
other way): the product chain of the K objects in :mod:`numeric.exact.product`
(``numeric.exact.solve``), the transient in
:mod:`numeric.expansion.transient_heterogeneous` (``numeric.transient``).
"""
