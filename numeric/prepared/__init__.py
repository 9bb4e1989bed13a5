"""The problem every route starts from, prepared once from (model, params, start).

:mod:`~numeric.prepared.problem` builds it (the start checked against the state
space, the conservation laws and the reduced coordinates) on its parameter level,
:mod:`~numeric.prepared.parameters` (the names checked and the values parsed exactly,
once per model and parameter point); :mod:`~numeric.prepared.start` reads a start;
:mod:`~numeric.prepared.reduced` gives the model on its free coordinates (one per model);
:mod:`~numeric.prepared.cache` keeps the prepared problems of every route by their
inputs and counts them.  It sits below every route (mean field, expansion, exact,
certified, simulation) and imports only :mod:`numeric`'s own bottom modules.
"""
