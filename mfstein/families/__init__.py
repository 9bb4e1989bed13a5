"""Model families that some task solves its own way, one package each.

A family's package holds every structure-aware route of the family (mean field,
exact chain, simulators, tables) and is registered by ONE entry of
:data:`mfstein.ground.fast_paths.FAST_PATHS`.  The layer sits between ``sim`` and
the command line: a family may import the ground, ``derive``, ``numeric`` and
``sim``; none of them imports a family (they find it through the table).
"""
