"""mfstein.ground.lazy.lazy_package: one call makes a package's ``__all__``, ``__getattr__``
and ``__dir__``; names resolve on first use, a name has one home."""

from __future__ import annotations

import sys
import types

import pytest

from mfstein.ground.lazy import lazy_package


@pytest.fixture
def package() -> types.ModuleType:
    module = types.ModuleType("lazy_probe_pkg")
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


def test_names_resolve_on_first_use(package: types.ModuleType) -> None:
    exports = {"json": ("dumps", ("load_text", "loads"), ("codec", ""))}
    package.__all__, package.__getattr__, package.__dir__ = lazy_package(package.__name__, exports)
    import json

    assert package.__all__ == ["codec", "dumps", "load_text"]
    assert package.dumps is json.dumps
    assert package.load_text is json.loads
    assert package.codec is json
    assert dir(package) == ["codec", "dumps", "load_text"]
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        package.nothing  # noqa: B018


def test_a_name_has_one_home(package: types.ModuleType) -> None:
    with pytest.raises(ValueError, match="'dumps' exported by json and pickle"):
        lazy_package(package.__name__, {"json": ("dumps",), "pickle": ("dumps",)})


def test_unlisted_names_resolve_but_are_not_public(package: types.ModuleType) -> None:
    exports = {"json": ("dumps",)}
    package.__all__, package.__getattr__, package.__dir__ = lazy_package(
        package.__name__, exports, unlisted={"pickle": (("__codec__", "dumps"),)}
    )
    import pickle

    assert package.__all__ == ["dumps"] and dir(package) == ["dumps"]
    assert package.__codec__ is pickle.dumps


def test_the_version_is_read_on_first_use() -> None:
    """``import sim`` (and ``numeric``, ``derive``, ``mfstein``) reads no distribution
    metadata until ``__version__`` is asked for, and then every package has the same."""
    import subprocess

    code = (
        "import sys, sim, numeric, derive, mfstein\n"
        "print('importlib.metadata' in sys.modules)\n"
        "import importlib.metadata as m\n"
        "print(len({sim.__version__, numeric.__version__, derive.__version__,"
        " mfstein.__version__, m.version('mfstein')}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "1"]
