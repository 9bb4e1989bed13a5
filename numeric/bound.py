"""Former name of :mod:`numeric.supermarket` (the supermarket model's structured
solver of Theorem 1's constant), kept so that existing imports keep working; the
module object is the same, so ``numeric.bound.solve`` is
``numeric.supermarket.solve``.  The public function :func:`numeric.bound` is
unchanged."""

import sys

from numeric import supermarket as _supermarket

sys.modules[__name__] = _supermarket
