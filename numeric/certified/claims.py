"""Moved: the proof-grade checks of the registered claims are
:mod:`numeric.lemmas.certified_claims` (beside the lemmas they read).

This module keeps ``from numeric.certified.claims import check_certified`` working;
its names are loaded from the new home on first use, so that the certified
arithmetic of :mod:`numeric.certified`, which the lemmas read, does not import them.
"""

from __future__ import annotations

from mfstein.ground.lazy import lazy_package

__all__, __getattr__, __dir__ = lazy_package(
    __name__,
    {
        "numeric.lemmas.certified_claims": ("CertifiedReport", "check_certified"),
        "numeric.certified.claim_context": ("CertifiedContext",),
    },
)
