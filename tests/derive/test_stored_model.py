"""A library model read back from disk (derive.models.stored): the first ``solve`` of a
new process with a warm cache runs no SymPy and answers bit for bit as the full route."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from deadlines import deadline

from mfstein.ground import cache

ROOT = Path(__file__).resolve().parents[2]

#: One first solve in a new process: its JSON answer, then whether SymPy was imported,
#: the model's type and whether SciPy's linalg was imported.
PROBE = """
import json, sys
import mfstein as mf
sol = mf.solve("sir", {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}, precision=sys.argv[1])
print(json.dumps(sol.to_dict(), sort_keys=True, default=str))
print("sympy" in sys.modules, type(sol.source_model).__name__, "scipy.linalg" in sys.modules)
"""


def _first_solve(cache: Path, precision: str = "dps") -> tuple[str, bool, str]:
    """The answer, whether SymPy was imported, and the model's type, of a new process
    with the cache directory ``cache`` solving at ``precision`` (waits for the process
    to exit); at the default precision, a model this small never imports
    :mod:`scipy.linalg` (its float64 seeds are NumPy's, numeric.linalg.refinement)."""
    env = {**os.environ, "MFSTEIN_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, precision],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=deadline(120),
        check=True,
    )
    answer, flags = out.stdout.strip().splitlines()[-2:]
    sympy, kind, linalg = flags.split()
    assert precision == "float64" or linalg == "False"
    return answer, sympy == "True", kind


@pytest.mark.parametrize("precision", ["float64", "dps"])
def test_warm_first_solve_is_the_cold_one_without_sympy(tmp_path: Path, precision: str) -> None:
    cold, cold_sympy, cold_kind = _first_solve(tmp_path, precision)
    records = list((tmp_path / "models").glob("sir-*.json"))
    assert cold_sympy and cold_kind == "Model" and len(records) == 1
    warm, warm_sympy, warm_kind = _first_solve(tmp_path, precision)
    assert warm == cold  # every digit of every number
    assert not warm_sympy and warm_kind == "StoredModel"
    # a damaged record is a miss: the full route again, and the record written afresh
    records[0].write_text(records[0].read_text().replace('"sir"', '"sis"', 1))
    again, again_sympy, _ = _first_solve(tmp_path, precision)
    assert again == cold and again_sympy
    _, sympy_after, kind_after = _first_solve(tmp_path, precision)
    assert not sympy_after and kind_after == "StoredModel"


def test_stored_kernels_are_the_lambdified_ones(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    from derive.models import load_model
    from derive.models.stored import FLOAT64_KERNELS, save, stored
    from derive.sparse import lambda_kernels, sparse_rates

    model = load_model("sir")
    assert save("sir", model)
    st = stored("sir", {"beta": 1})
    assert st is not None and st.key == model.key and st.n == model.n
    assert stored("sir", {"beta": 1, "b": 3}) is None  # not a parameter: the full route
    lk, k64 = lambda_kernels(model), st.float64_kernels()
    rng = np.random.default_rng(1)
    for _ in range(5):
        s, p = rng.random(3), rng.random(4) + 0.1
        for name in FLOAT64_KERNELS:
            a, b = getattr(lk, name)(s, p), getattr(k64, name)(s, p)
            assert a.shape == b.shape and a.tobytes() == b.tobytes(), name
    assert np.array_equal(k64.jac_index, lk.jac_index)
    assert np.array_equal(k64.hess_index, lk.hess_index)
    sr, ssr = sparse_rates(model), st.sparse_rates()
    for what in ("rates", "grad", "hess"):
        s, p = rng.random(3), rng.random(4) + 0.1
        assert sr.evaluator(what)(s, p).tobytes() == ssr.evaluator(what)(s, p).tobytes(), what
    for a, b in zip(sr.jumps, ssr.jumps, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert np.array_equal(sr.grad_index, ssr.grad_index)
    assert np.array_equal(sr.hess_index, ssr.hess_index)
    assert [t.jump for t in st.transitions] == [tuple(t.jump) for t in model.transitions]
    assert st.transitions[0].rate == model.transitions[0].rate  # from the full model
    assert st.full_model().key == model.key
    again = pickle.loads(pickle.dumps(st))  # a process pool's copy: read from the record
    assert (
        again.key == model.key and again.float64_kernels().f(s, p).tobytes() == lk.f(s, p).tobytes()
    )


def test_a_model_with_a_fast_path_is_not_stored(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    from derive.models import load_model
    from derive.models.stored import save, stored

    model = load_model("supermarket", b=3)
    assert model.info.fast_path and not save("supermarket", model)
    assert stored("supermarket") is None


def test_a_model_that_cannot_be_kept_is_asked_once_per_process(monkeypatch) -> None:
    from derive.models import load_model
    from derive.models import stored as mod

    model = load_model("supermarket", b=3)
    assert not mod.save("supermarket", model)  # a fast path: refused, and remembered

    def walked(*_: object) -> bool:
        raise AssertionError("a refused model's rates were walked again")

    monkeypatch.setattr(mod, "_write", walked)
    assert not mod.save("supermarket", model)


def test_a_missing_kernel_module_is_generated_again(tmp_path: Path) -> None:
    _first_solve(tmp_path)  # writes the record
    record = next((tmp_path / "models").glob("sir-*.json")).read_text()
    module = json.loads(record.rpartition(cache.CHECK_PREFIX)[0])["mpmath_module"]
    (tmp_path / f"{module}.py").unlink()
    _, sympy, kind = _first_solve(tmp_path)  # the full model's kernels, generated afresh
    assert sympy and kind == "StoredModel" and (tmp_path / f"{module}.py").is_file()


@pytest.mark.parametrize("text", ['{"a": 1}', "not json"])
def test_a_record_that_is_not_one_is_a_miss(tmp_path: Path, monkeypatch, text: str) -> None:
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    from derive.models import stored as mod
    from mfstein.ground import cache

    key = mod.record_key("sir")
    path = mod._path("sir", key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(cache.with_check(text))
    mod._models.pop(key, None)
    assert mod.stored("sir") is None
