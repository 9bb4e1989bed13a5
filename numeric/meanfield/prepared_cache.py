"""Moved to :mod:`numeric.prepared.cache` (below every route, so that the problem every
route starts from, :mod:`numeric.prepared.problem`, can be cached there too); this name
stays for old imports."""

from numeric.prepared.cache import COUNTS, PreparedCache, forget_all, inputs_key, start_key

__all__ = ["COUNTS", "PreparedCache", "forget_all", "inputs_key", "start_key"]
