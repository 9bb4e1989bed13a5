"""The power-of-d supermarket family: every route it takes its own way, in one package.

Registered by ONE entry, ``FAST_PATHS["supermarket"]`` of
:mod:`mfstein.ground.fast_paths` (the name ``derive.models.supermarket`` declares in
``ModelInfo.fast_path``): each task's general code finds the family's route there
(:func:`mfstein.ground.fast_paths.load`), and the packages' lazy tables find the
family's public short forms there (:func:`mfstein.ground.fast_paths.short_forms`).
The model itself (``derive/models/supermarket.py``, ``supermarket_structure.py``)
stays in derive's model library.  This package sits above ``sim`` and below the
command line: it imports the ground, ``derive``, ``numeric`` and ``sim``, and none of
them imports it.

The map, by task:

Mean field (``numeric.solve`` on a supermarket, ``numeric.bound``)
    ``member.py``        :class:`Member`, the model it was given and its rates
    ``equilibrium.py``   the shooting fixed point ``s*`` (eq. (1)), ``numeric.equilibrium``,
                         ``numeric.reference_point``
    ``solver.py``        Theorem 1's constant ``c = tr(P Q)`` by independent routes,
                         ``b = "auto"`` (``numeric.auto_buffer``); the ``mean_field`` and
                         ``fixed_point`` routes
    ``refined.py``       the refined mean-field bias ``V``
    ``tail.py``          the levels negligible for the float64 order 2
                         (the ``negligible_tail`` route)
    ``sweep.py``         float64 over many arrival rates (``numeric.constant_float64``)
    ``short_form.py``    the paper's ``numeric.bound(lam, b, d)``
    ``size_tables.py``   the ``mfstein bound`` command's tables over ``N``
Exact chain (``numeric.exact.solve``)
    ``exact.py``         the monotone state space (the ``exact`` route) and the short
                         form ``numeric.exact.solve_exact(N, lam, b, d)``
Simulation (``sim.simulate``)
    ``aggregated.py``    the compiled chain on the counts (Section 3)
    ``perserver.py``     the compiled explicit FIFO servers (``jsq``, ``random``)
    ``engine.py``        one unit of work of either (:class:`engine.Spec`), for workers
    ``simulate.py``      the run: checks, replications, the result
    ``fast_path.py``     the ``simulation`` route (a :class:`sim.base.Simulator`)
    ``simulate_short_form.py``  ``sim.simulate_supermarket(N, lam, b, d)``
The paper's tables (``mfstein table``)
    ``table.py``         the core paper's Tables 1 and 2: simulation, bound, exact value
"""
