"""The kernel cache survives damage, unwritable directories, and new back ends."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from deadlines import deadline
from sympy.printing.pycode import PythonCodePrinter

import mfstein.ground.cache
from derive import supermarket
from derive.backends import BACKENDS, Backend, register_backend
from derive.models import load_model
from mfstein.ground.errors import ParameterError

kernels_module = importlib.import_module("derive.kernels")


def _fresh(model, backend: str):
    kernels_module._memory_cache.pop((model.key, backend), None)
    return kernels_module.kernels(model, backend)


@pytest.mark.parametrize("damage", [b"", b"\x00\xff garbage", None])
def test_damaged_cache_file_is_regenerated(tmp_path, monkeypatch, damage) -> None:
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    # warned once per process
    monkeypatch.setattr(mfstein.ground.cache, "_damage_reported", [False])
    model = supermarket(3, 2)
    k1 = _fresh(model, "mpmath")
    good = k1.path.read_bytes()
    k1.path.write_bytes(good[: len(good) // 2] if damage is None else damage)
    with pytest.warns(RuntimeWarning, match="damaged"):
        k2 = _fresh(model, "mpmath")
    assert k2.path.read_bytes() == good
    assert k2.f([0.5, 0.2, 0.1], [0.9]) == k1.f([0.5, 0.2, 0.1], [0.9])


FALLBACK_PROBE = """
import warnings, os
warnings.simplefilter("always")
import mfstein.ground.cache
from derive import supermarket
from derive.models import load_model
from mfstein.ground.cache import cache_dir
with warnings.catch_warnings(record=True) as seen:
    k1 = supermarket(2, 3).kernels("mpmath")
    k2 = load_model("sir").kernels("mpmath")
    print(len(k1.f([0.5, 0.2], [0.9])))
print("DIRS", k1.path.parent, k2.path.parent, cache_dir())
print("ENV", os.environ["MFSTEIN_CACHE_DIR"])
print("WARNINGS", len([w for w in seen if "not writable" in str(w.message)]))
"""


def test_unwritable_cache_falls_back_to_one_private_directory(tmp_path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    env = {**os.environ, "MFSTEIN_CACHE_DIR": str(blocker)}
    out = subprocess.run(
        [sys.executable, "-c", FALLBACK_PROBE],
        env=env,
        capture_output=True,
        text=True,
        timeout=deadline(120),
        check=True,
    ).stdout.splitlines()
    assert out[0] == "2"
    dirs = out[1].split()[1:]
    assert len(set(dirs)) == 1, dirs  # one directory for both models and cache_dir()
    private = Path(dirs[0])
    assert not str(private).startswith(str(blocker))
    assert out[2] == f"ENV {private}"  # exported to worker processes
    assert out[3] == "WARNINGS 1"
    assert not private.exists()  # removed at exit


def test_adding_a_model_keeps_other_cache_keys() -> None:
    # the cache key depends on the generator and the model's own content, not on
    # the library's other families
    digest = kernels_module._generator_digest()
    load_model("sir")
    assert kernels_module._generator_digest() == digest
    a = load_model("supermarket", b=3)
    assert a.key == load_model("supermarket", b=3).key
    assert a.key != load_model("jsq_L", L=2, b=3).key


class _FloatBackend(Backend):
    """Plain-Python float kernels: a third back end through the same interface."""

    name = "pyfloat"
    imports = ("import math",)

    def __init__(self) -> None:
        self._p = PythonCodePrinter({"fully_qualified_modules": True})

    def print_expr(self, expr) -> str:
        return self._p.doprint(expr)

    def wrap_input(self, text: str) -> str:
        return f"float({text})"

    def function(self, name, shape, entries, body, values, doc) -> list[str]:
        size = 1
        for n in shape:
            size *= n
        out = [f"def {name}(s, p):", f'    """{doc}"""', *body, f"    out = [0.0] * {size}"]
        for (idx, _), e in zip(entries, values, strict=True):
            flat = idx[0] if len(idx) == 1 else idx[0] * shape[1] + idx[1]
            out.append(f"    out[{flat}] = {self.print_expr(e)}")
        return [*out, "    return out", "", ""]


def test_a_registered_backend_generates_the_same_kernels(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    register_backend(_FloatBackend())
    try:
        model = load_model("sir")
        kp = kernels_module.kernels(model, "pyfloat")
        kn = kernels_module.kernels(model, "numba")
        s, p = [0.5, 0.3, 0.2], [2.0, 1.0, 0.5, 0.1]
        assert np.allclose(kp.f(s, p), kn.f(np.array(s), np.array(p)), rtol=1e-15)
        assert np.allclose(
            np.array(kp.jac(s, p)).reshape(3, 3), kn.jac(np.array(s), np.array(p)), rtol=1e-15
        )
    finally:
        BACKENDS.pop("pyfloat", None)
    with pytest.raises(ParameterError, match="backend must be one of"):
        kernels_module.kernels(model, "pyfloat")


def test_arb_printer_refuses_functions_it_cannot_enclose() -> None:
    import sympy as sp

    from derive.backends import ArbPrinter

    x = sp.Symbol("x")
    printer = ArbPrinter()
    assert printer.doprint(sp.exp(x)) == "arb.exp(arb(x))"  # not math.exp: no enclosure
    with pytest.raises(ParameterError, match="function erf"):
        printer.doprint(sp.erf(x))
