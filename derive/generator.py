"""Former name of :mod:`derive.chain_operator` (the finite-N chain's generator on
quadratic test functions), kept so that existing imports keep working; the module
object is the same, so ``derive.generator.lemma7_difference`` is
``derive.chain_operator.lemma7_difference``."""

import sys

from derive import chain_operator as _chain_operator

sys.modules[__name__] = _chain_operator
