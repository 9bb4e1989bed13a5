"""Fixtures of the derive tests: a kernel cache of their own.

Generated kernels go to a directory inside pytest's cache (``.pytest_cache``),
not the user's ``~/.cache/mfstein``; it persists between runs like the real
cache does, so numba's compiled code is reused.  Tests that need an empty cache
set ``MFSTEIN_CACHE_DIR`` to a ``tmp_path`` themselves.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _derive_kernel_cache(request: pytest.FixtureRequest):
    old = os.environ.get("MFSTEIN_CACHE_DIR")
    os.environ["MFSTEIN_CACHE_DIR"] = str(request.config.cache.mkdir("mfstein-kernels"))
    yield
    if old is None:
        os.environ.pop("MFSTEIN_CACHE_DIR", None)
    else:
        os.environ["MFSTEIN_CACHE_DIR"] = old
