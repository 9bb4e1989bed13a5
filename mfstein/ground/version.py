"""mfstein's version, read from the installed distribution (one source: ``pyproject.toml``).

A module of its own so that ``mfstein``, ``derive``, ``numeric`` and ``sim`` resolve
``__version__`` on first use (:func:`mfstein.ground.lazy.lazy_package`, ``unlisted``):
:mod:`importlib.metadata` brings ``email``, ``zipfile`` and ``importlib.resources``,
some 40 ms of imports that ``import mfstein`` no longer pays.  A ``solve`` or a
``simulate`` imports them anyway (gmpy2, under SymPy's mpmath; numba's entry points)
and is spared only the distribution lookup.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def _installed() -> str:
    try:
        return version("mfstein")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


#: The version of mfstein; ``derive``, ``numeric`` and ``sim`` carry the same one.
VERSION = _installed()
