"""The kernel cache survives damage, unwritable directories, and new back ends."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from sympy.printing.pycode import PythonCodePrinter

from derive import supermarket
from derive.backends import BACKENDS, Backend, register_backend
from derive.models import load_model
from mfstein.errors import ParameterError

kernels_module = importlib.import_module("derive.kernels")


def _fresh(model, backend: str):
    kernels_module._memory_cache.pop((model.key, backend), None)
    return kernels_module.kernels(model, backend)


@pytest.mark.parametrize("damage", [b"", b"\x00\xff garbage", None])
def test_damaged_cache_file_is_regenerated(tmp_path, monkeypatch, damage) -> None:
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    model = supermarket(3, 2)
    k1 = _fresh(model, "mpmath")
    good = k1.path.read_bytes()
    k1.path.write_bytes(good[: len(good) // 2] if damage is None else damage)
    with pytest.warns(RuntimeWarning, match="damaged"):
        k2 = _fresh(model, "mpmath")
    assert k2.path.read_bytes() == good
    assert k2.f([0.5, 0.2, 0.1], [0.9]) == k1.f([0.5, 0.2, 0.1], [0.9])


def test_unwritable_cache_falls_back_to_a_private_directory(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(blocker))
    model = supermarket(2, 3)
    with pytest.warns(RuntimeWarning, match="not writable"):
        k = _fresh(model, "mpmath")
    assert not str(k.path).startswith(str(blocker))
    assert len(k.f([0.5, 0.2], [0.9])) == 2


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
