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


def pytest_configure(config: pytest.Config) -> None:
    """Generated kernels and numba's compiled caches go to pytest's cache directory,
    not the user's cache directory.

    Set here, before any test module is imported, because numba fixes the cache
    location of a function when it is decorated (at import).  The directory
    persists between runs like the real cache, so compiled code is reused; tests
    that need an empty cache set ``MFSTEIN_CACHE_DIR`` to a ``tmp_path`` themselves.
    Without pytest's cache plugin a temporary directory is used.
    """
    import os
    import tempfile

    cache = getattr(config, "cache", None)
    if cache is not None:
        path = cache.mkdir("mfstein-kernels")
    else:
        path = tempfile.mkdtemp(prefix="mfstein-test-cache-")
    os.environ["MFSTEIN_CACHE_DIR"] = str(path)
    # notebooks executed by the tests, rendered by the documentation build (tests/test_docs.py)
    executed = cache.mkdir("executed-notebooks") if cache is not None else tempfile.mkdtemp()
    os.environ["MFSTEIN_EXECUTED_NOTEBOOKS"] = str(executed)
