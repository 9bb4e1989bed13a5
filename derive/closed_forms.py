"""Moved: the supermarket's closed forms are :mod:`derive.models.closed_forms`.

This module keeps ``from derive.closed_forms import closed_form`` working; its names
are loaded from the new home on first use (nothing of ``derive.models`` is imported
by ``derive`` itself, so the two packages do not import each other).
"""

from __future__ import annotations

from mfstein.ground.lazy import lazy_package

__all__, __getattr__, __dir__ = lazy_package(
    __name__,
    {
        "derive.models.closed_forms": (
            "ClosedForm",
            "closed_form",
            "equilibrium_closed_form",
            "evaluate",
            "shooting_polynomial",
        )
    },
)
