"""The generated catalogue ``mfstein models`` lists equals what the factories build
now (regenerate with ``python -m derive.models.catalogue`` after changing one)."""

from __future__ import annotations

from derive.models.catalogue import build, source
from derive.models.catalogue_data import CATALOGUE


def test_catalogue_is_current() -> None:
    current = build()
    assert current == CATALOGUE, "run: python -m derive.models.catalogue"
    scope: dict = {}
    exec(source(current), scope)  # the generated text holds exactly these entries
    assert scope["CATALOGUE"] == current
