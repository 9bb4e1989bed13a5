"""Shared test configuration: an opt-in marker for long runs."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="long run: pass --run-slow to include it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
