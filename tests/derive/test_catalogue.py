"""The generated catalogue ``mfstein models`` lists equals what the factories build
now (regenerate with ``python -m derive.models.catalogue`` after changing one)."""

from __future__ import annotations

import json
from pathlib import Path

from derive.models.catalogue import build, source
from derive.models.catalogue_data import CATALOGUE


def test_catalogue_is_current() -> None:
    current = build()
    assert current == CATALOGUE, "run: python -m derive.models.catalogue"
    assert json.loads(source(current)) == current  # the generated text holds exactly these


def test_catalogue_file_is_the_generated_text() -> None:
    path = Path(__file__).resolve().parents[2] / "derive" / "models" / "catalogue.json"
    assert path.read_text(encoding="utf-8") == source(CATALOGUE)
