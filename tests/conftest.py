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


@pytest.fixture(scope="session", autouse=True)
def _kernel_cache(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """Generated kernels go to pytest's cache directory, not the user's ``~/.cache``.

    The directory persists between runs like the real cache, so numba's compiled
    code is reused; tests that need an empty cache set ``MFSTEIN_CACHE_DIR`` to a
    ``tmp_path`` themselves.  Without pytest's cache plugin a session temp dir is used.
    """
    import os

    old = os.environ.get("MFSTEIN_CACHE_DIR")
    cache = getattr(request.config, "cache", None)
    path = cache.mkdir("mfstein-kernels") if cache is not None else tmp_path_factory.mktemp("k")
    os.environ["MFSTEIN_CACHE_DIR"] = str(path)
    yield
    if old is None:
        os.environ.pop("MFSTEIN_CACHE_DIR", None)
    else:
        os.environ["MFSTEIN_CACHE_DIR"] = old
