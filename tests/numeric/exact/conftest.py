"""Fixtures of the exact solver's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def compiled_search(monkeypatch):
    """Every chain takes the compiled route (:func:`numeric.exact.lattice.explore`), small
    ones too, which otherwise take NumPy's (:mod:`numeric.exact.small`)."""
    from numeric.exact import small

    monkeypatch.setattr(small, "SMALL_STATES", 0)
