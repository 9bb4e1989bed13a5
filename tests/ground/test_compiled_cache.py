"""numba's compiled caches of mfstein's functions live in mfstein's cache directory
and heal when damaged (mfstein.ground.jit)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from deadlines import deadline

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("mfstein", "derive", "numeric", "sim")
NUMBA_MODULES = (
    "sim.rng",
    "mfstein.families.supermarket.aggregated",
    "mfstein.families.supermarket.perserver",
    "sim.pi_kernels",
    "sim.tails",
    "sim.generic_kernels",
    "numeric.exact.states",
    "numeric.exact.lattice",
    "numeric.exact.solvers",
)


def _imports_numba(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "numba" for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "numba":
            return True
    return False


def _python(code: str, cache: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -c code args`` in a fresh process with ``MFSTEIN_CACHE_DIR=cache``."""
    env = {**os.environ, "MFSTEIN_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=deadline(120),
    )


def test_numba_is_imported_in_one_place_only() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for pkg in PACKAGES
        for p in (ROOT / pkg).rglob("*.py")
        if p.name != "jit.py" and _imports_numba(p)
    ]
    assert offenders == [], f"import numba through mfstein.ground.jit: {offenders}"
    # and the generated modules too
    from derive import supermarket

    assert "from mfstein.ground.jit import numba" in supermarket(2, 2).kernels("numba").source


LOCATOR_CODE = """
import importlib, sys
from mfstein.ground.cache import cache_dir
from mfstein.ground.jit import MfsteinCacheLocator, numba

root = str(cache_dir() / "numba")
seen = 0
for name in sys.argv[1:]:
    for obj in vars(importlib.import_module(name)).values():
        impl = getattr(getattr(obj, "_cache", None), "_impl", None)
        if isinstance(obj, numba.core.dispatcher.Dispatcher) and impl is not None:
            assert isinstance(impl.locator, MfsteinCacheLocator), (name, obj)
            assert impl.locator.get_cache_path().startswith(root), (name, obj)
            seen += 1
print(seen)
"""


def test_every_cached_function_uses_the_mfstein_locator(tmp_path) -> None:
    """In a fresh process (a locator keeps the cache directory of the moment its module
    was imported, so a test that imported one under another ``MFSTEIN_CACHE_DIR`` would
    leave it behind here): every cached function of mfstein's compiled modules keeps its
    code under this cache directory, through mfstein's locator."""
    out = _python(LOCATOR_CODE, tmp_path, *NUMBA_MODULES)
    assert out.returncode == 0, out.stderr[-800:]
    assert int(out.stdout) >= 20


#: a small exact solve that generates model modules and compiles numba kernels: the
#: supermarket's exact chain (its monotone-state enumeration and the Krylov solver are
#: compiled, about 8 CPU s from an empty cache).  A small chain of a general model (SIS at
#: N = 6) takes the NumPy route and compiles nothing, so it would heal nothing here.
EXACT = ["exact", "--N", "6", "--lam", "0.9", "--b", "3"]


def _exact(env: dict[str, str]) -> subprocess.CompletedProcess:
    out = subprocess.run(
        [sys.executable, "-m", "mfstein", *EXACT],
        env=env,
        capture_output=True,
        text=True,
        timeout=deadline(300),
    )
    out.stdout = re.sub(r"\d+(\.\d+)? s$", "<time>", out.stdout, flags=re.M)  # timings differ
    return out


def test_emptied_or_truncated_cache_files_are_regenerated_with_one_warning(tmp_path) -> None:
    env = {**os.environ, "MFSTEIN_CACHE_DIR": str(tmp_path)}
    first = _exact(env)
    assert first.returncode == 0, first.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    kinds = {p.suffix for p in files}
    assert {".py", ".nbi", ".nbc"} <= kinds, kinds
    for p in files:  # generated modules and indexes emptied, object code cut in half
        p.write_bytes(p.read_bytes()[: p.stat().st_size // 2] if p.suffix == ".nbc" else b"")
    healed = _exact(env)
    assert healed.returncode == 0, healed.stderr
    assert healed.stdout == first.stdout
    assert healed.stderr.count("warning") == 1 and "damaged cache files" in healed.stderr
    again = _exact(env)  # healed for good: silent
    assert again.returncode == 0 and again.stderr == "" and again.stdout == first.stdout


OTHER_CODE = """
import importlib.util, os, sys
from mfstein.ground.jit import MfsteinCacheLocator
spec = importlib.util.spec_from_file_location("theirs", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
locator = mod.f._cache._impl.locator
print(type(locator).__name__, isinstance(locator, MfsteinCacheLocator))
print(os.path.exists(os.environ["MFSTEIN_CACHE_DIR"]))
"""


def test_other_code_keeps_numbas_own_cache_locations(tmp_path) -> None:
    theirs = tmp_path / "theirs.py"
    theirs.write_text("from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return x + 1\n")
    done = _python(OTHER_CODE, tmp_path / "never-made", str(theirs))
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout.split()
    # numba's own locator (InTreeCacheLocator, named _InTreeCacheLocator before numba 0.68),
    # and mfstein's cache directory was not even created for it
    assert "InTreeCacheLocator" in out[0] and out[1:] == ["False", "False"], out


BLAS_CODE = """
import sys
import numpy as np
from mfstein.ground.jit import numba
from numba.np import linalg

own = linalg.ensure_blas
f = numba.njit(lambda x: x + 1)
assert f(1) == 2  # numba's registries are loaded (numba.np.arraymath imported)
from numba.np import arraymath
light = "scipy.linalg" not in sys.modules
print(light, arraymath._HAVE_BLAS, linalg.ensure_blas is own, arraymath.ensure_blas is own)
a = np.arange(1.0, 4.0)
dot = numba.njit(lambda x, y: np.dot(x, y))  # BLAS: numba's own check imports scipy.linalg
print(dot(a, a) == np.dot(a, a), "scipy.linalg.cython_blas" in sys.modules)
"""


def test_loading_numba_imports_no_scipy_linalg_and_blas_still_works(tmp_path) -> None:
    """numba's import-time BLAS question (``numba.np.arraymath``) is answered without
    importing ``scipy.linalg`` -- with numba's own answer -- and compiled code that uses
    BLAS still gets it, checked by numba's own ``ensure_blas``."""
    from mfstein.ground.jit import _blas_found

    assert _blas_found()  # SciPy is one of mfstein's requirements
    done = _python(BLAS_CODE, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True"] * 6, done.stdout


KERNEL_CALLS = """
from derive.models import load_model
k = load_model("sir").kernels("numba")
s, p = [0.6, 0.3, 0.1], [3.0, 1.0, 0.5, 0.1]
print(repr(k.f(s, p).tolist()), repr(k.rates(s, p).tolist()), repr(k.jac(s, p).tolist()))
"""


def _garble(path: Path, n: int) -> None:
    """One of four kinds of damage to a numba index or object-code file, by ``n``."""
    import pickle

    import numba

    data = path.read_bytes()
    kind = n % 4
    if kind == 0:
        data = b"\x00\xff garbage"
    elif kind == 1:
        data = data[: len(data) // 3]
    elif path.suffix == ".nbi":  # well-formed pickles of the wrong things
        data = pickle.dumps(numba.__version__) + pickle.dumps("not an index")
    else:
        data = pickle.dumps(("not", "object code"))
    path.write_bytes(data)


@pytest.mark.slow  # the same loader check as the default tier's sealed-file test below,
# on a model's kernels (three processes compiling them, 10 CPU s) instead of one function
def test_garbled_numba_index_and_object_files_heal(tmp_path) -> None:
    env = {**os.environ, "MFSTEIN_CACHE_DIR": str(tmp_path)}

    def run() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", KERNEL_CALLS],
            env=env,
            capture_output=True,
            text=True,
            timeout=deadline(300),
        )

    first = run()
    assert first.returncode == 0, first.stderr
    files = sorted(p for p in tmp_path.rglob("*") if p.suffix in (".nbi", ".nbc"))
    assert {p.suffix for p in files} == {".nbi", ".nbc"}
    for n, p in enumerate(files):
        _garble(p, n)
    healed = run()
    assert healed.returncode == 0, healed.stderr
    assert healed.stdout == first.stdout
    assert healed.stderr.count("RuntimeWarning: damaged cache files") == 1, healed.stderr
    again = run()  # stored afresh: silent
    assert again.returncode == 0 and again.stderr == "" and again.stdout == first.stdout


# ------------------------------------------ issue 36: sealed index and object-code files
SEALED = r"""
import importlib.util, json, sys, warnings
from mfstein.ground import cache
from mfstein.ground.jit import SEAL

root = cache.cache_dir()
src = root / "tiny.py"
src.write_text(
    "from mfstein.ground.jit import numba\n\n"
    "@numba.njit(cache=True)\ndef f(x):\n    return 2 * x + 1\n"
)

def fresh(tag):
    spec = importlib.util.spec_from_file_location(f"tiny_{tag}", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f

def damage(data, how):
    if how == "zero-length":
        return b""
    if how == "truncated":
        return data[: len(data) // 2]
    if how == "garbled":  # bytes of the middle third changed, the length kept
        a, b = len(data) // 3, 2 * len(data) // 3
        return data[:a] + bytes(255 - c for c in data[a:b]) + data[b:]
    # a pickle length field asking for 2**62 bytes (was "not enough memory" for ever)
    return data[:2] + b"\x8e" + (2**62).to_bytes(8, "little") + data[2:]

assert fresh("first")(20) == 41
files = {p.suffix: p for p in root.rglob("*.nb*")}
good = {s: p.read_bytes() for s, p in files.items()}
assert sorted(files) == [".nbc", ".nbi"] and all(g[-48:-32] == SEAL for g in good.values())
for n, (suffix, how) in enumerate(
    [(None, None)] + [(s, h) for s in (".nbi", ".nbc")
                      for h in ("zero-length", "truncated", "garbled", "length field")]
):
    for s, p in files.items():
        p.write_bytes(good[s])
    if suffix:
        files[suffix].write_bytes(damage(good[suffix], how))
    cache._damage_reported[0] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = fresh(n)
        value = f(20)
    print(json.dumps({
        "case": f"{suffix} {how}", "value": value, "hits": sum(f.stats.cache_hits.values()),
        "warnings": [str(w.message) for w in caught],
        "resealed": sorted(
            p.suffix for p in root.rglob("*.nb*") if p.read_bytes()[-48:-32] == SEAL
        ),
    }))
"""


def test_damaged_index_or_object_code_is_detected_before_it_is_unpickled(tmp_path) -> None:
    """Each damage to one ``.nbi`` or ``.nbc`` file (emptied, truncated, garbled in the
    middle, a length field asking for 2**62 bytes) is one warning naming that file and
    a recompilation, never "not enough memory" or LLVM aborting the process (both
    happened); the undamaged cache is used, silently."""
    env = {**os.environ, "MFSTEIN_CACHE_DIR": str(tmp_path)}
    env.pop("PYTHONWARNINGS", None)
    proc = subprocess.run(
        [sys.executable, "-c", SEALED],
        env=env,
        capture_output=True,
        text=True,
        timeout=deadline(60),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json

    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == 9
    control, damaged = rows[0], rows[1:]
    assert control["case"] == "None None" and control["value"] == 41, control
    assert control["hits"] == 1 and control["warnings"] == [], control  # loaded, silently
    for row in damaged:
        suffix = row["case"].split()[0]
        assert row["value"] == 41, row
        assert row["hits"] == 0, row  # compiled afresh
        assert len(row["warnings"]) == 1, row
        assert "damaged cache files" in row["warnings"][0] and suffix in row["warnings"][0], row
        assert row["resealed"] == [".nbc", ".nbi"], row  # stored again, sealed
