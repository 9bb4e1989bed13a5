"""Long numba kernels split into compiled helpers: same values, same short kernels."""

from __future__ import annotations

import importlib
import re
import shutil
from pathlib import Path

import mpmath
import numpy as np
import pytest

from derive import supermarket
from derive.backends import get_backend

kernels_module = importlib.import_module("derive.kernels")

CHUNK = 4


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty disk cache and memory cache, restored afterwards."""
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernels_module, "_memory_cache", {})
    return monkeypatch


def _helpers(source: str, name: str) -> list[list[str]]:
    """Body lines (after the docstring) of each helper ``_NAME_into_c`` in ``source``."""
    out = []
    for m in re.finditer(rf"def _{name}_into_\d+\(s, p, out, t\):\n(.*?)\n\n", source, re.S):
        out.append(m.group(1).splitlines()[1:])
    return out


def test_chunked_kernels_match_the_single_function_bit_for_bit(fresh) -> None:
    """Split kernels (helpers of CHUNK statements, temporaries passed through a
    scratch array) give exactly the floats of the unsplit kernel, and agree with
    the mpmath kernels to round-off."""
    model = supermarket(4, 3, mu="mu")
    be = get_backend("numba")
    fresh.setattr(be, "chunk_size", None)
    whole = model.kernels("numba")
    fresh.setattr(kernels_module, "_memory_cache", {})
    fresh.setattr(be, "chunk_size", CHUNK)
    split = model.kernels("numba")
    assert split.path != whole.path  # the chunk size is part of the cache key
    assert "def _rates_into_0(" not in whole.source

    for name in ("rates", "jac", "hess_values"):
        helpers = _helpers(split.source, name)
        assert len(helpers) > 1, name
        for body in helpers:
            statements = [
                ln for ln in body if re.match(r"    (x_\d+|out\[[\d, ]+\]) = (?!t\[)", ln)
            ]
            assert 0 < len(statements) <= CHUNK
    assert "t[0] = x_" in split.source  # some temporary crosses a helper boundary

    rng = np.random.default_rng(20261130)
    mp = model.kernels("mpmath")
    for _ in range(3):
        s = np.sort(rng.uniform(0.01, 1.0, model.n))[::-1].copy()
        p = np.array([rng.uniform(0.1, 0.99), rng.uniform(0.5, 2.0)])
        for name in ("rates", "jac", "hess_values"):
            a = getattr(split, name)(s, p)
            assert np.array_equal(a, getattr(whole, name)(s, p)), name
            with mpmath.workdps(30):
                ref = getattr(mp, name)([mpmath.mpf(x) for x in s], [mpmath.mpf(x) for x in p])
                ref = np.array(
                    [float(ref[i, j]) for i in range(ref.rows) for j in range(ref.cols)]
                    if isinstance(ref, mpmath.matrix)
                    else [float(x) for x in ref]
                ).reshape(a.shape)
            assert np.allclose(a, ref, rtol=1e-13, atol=1e-15), name
        out = np.full(len(model.transitions), np.nan)
        assert split.rates_into(s, p, out) is out
        assert np.array_equal(out, whole.rates(s, p))


def test_kernels_below_the_chunk_size_keep_their_source(fresh) -> None:
    """Every kernel of a small model is shorter than the chunk size: the source is
    the one of the unsplit back end, helper for helper."""
    model = supermarket(3, 2)
    be = get_backend("numba")
    fresh.setattr(be, "chunk_size", None)
    whole = kernels_module.generate_source(model, "numba")
    fresh.setattr(be, "chunk_size", 10_000)
    assert kernels_module.generate_source(model, "numba") == whole
    fresh.setattr(be, "chunk_size", CHUNK)
    assert kernels_module.generate_source(model, "numba") != whole


def test_module_name_depends_on_the_chunk_size_and_the_generator(fresh, tmp_path) -> None:
    """Changing the splitting or the generator's files gives a new cache file name,
    so a stale module is never loaded."""
    model = supermarket(3, 2)
    be = get_backend("numba")
    names = set()
    for size in (None, 150, CHUNK):
        fresh.setattr(be, "chunk_size", size)
        names.add(kernels_module._module_name(model, "numba", "base"))
    assert len(names) == 3
    # the generator digest reads the back ends' source: edit a copy of it
    copy = tmp_path / "derive"
    copy.mkdir()
    here = Path(kernels_module.__file__).parent
    for name in ("objects.py", "kernels.py", "backends.py"):
        shutil.copy(here / name, copy / name)
    fresh.setattr(kernels_module, "__file__", str(copy / "kernels.py"))
    assert kernels_module._module_name(model, "numba", "base") in names
    with open(copy / "backends.py", "a") as fh:
        fh.write("# an edit\n")
    assert kernels_module._module_name(model, "numba", "base") not in names
