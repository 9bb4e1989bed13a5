"""The problem every route starts from, prepared once from (model, params, start).

:mod:`~numeric.prepared.problem` builds it (the parameter names checked, the values
parsed exactly, the start checked against the state space, the conservation laws
and the reduced coordinates); :mod:`~numeric.prepared.start` reads a start;
:mod:`~numeric.prepared.cache` keeps the prepared problems of every route by their
inputs and counts them.  It sits below every route (mean field, expansion, exact,
certified, simulation) and imports only :mod:`numeric`'s own bottom modules.
"""
