"""Execute notebooks/07_second_order.py (CI size) and check what it reports.

The notebook runner is tests/notebooks/test_notebooks.py's ``run_notebook``; the
numbers are checked against independent routes: c and c2 by the float64 route
(``numeric.solve(..., precision="float64", order=2)``: its own fixed-point search,
SciPy's Bartels--Stewart and two third-moment solvers on lambdified NumPy kernels,
not the refined high-precision code the notebook calls, and no numba compile for
each buffer), exact values by the generator built in tests/notebooks/conftest.py.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import numeric
from derive.models import load_model

HERE = Path(__file__).resolve().parents[1] / "notebooks"


def _load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, HERE / file)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_second_order_notebook(tmp_path: Path) -> None:
    r = _load("_mfstein_nb_runner", "test_notebooks.py").run_notebook("07_second_order", tmp_path)
    conftest = _load("_mfstein_nb_conftest", "conftest.py")
    d = r["d"]
    for table, rows in r["tables"].items():
        for row in rows:
            model = load_model("supermarket", b=row["b"], d=d)
            ref = numeric.solve(model, {"lam": row["lam"]}, precision="float64", order=2)
            assert row["c"] == pytest.approx(float(ref.constant), rel=1e-9), table
            assert row["c2"] == pytest.approx(float(ref.c2), rel=1e-7), table
            assert row["second"] == pytest.approx(row["c"] + row["c2"] / row["N"], rel=1e-12)
            assert row["sim_ci95"] > 0
    lam10 = float(r["lam10"])
    for row in r["buffers"]:
        ref = conftest.reference(lam10, row["b"], d)
        ex = conftest.exact_moments(10, lam10, row["b"], d, ref.s)
        assert row["exact"] == pytest.approx(float(ex["n_mse"]), rel=1e-8)
        assert row["improves"] is bool(
            abs(row["second"] - row["exact"]) < abs(row["c"] - row["exact"])
        )
    # away from heavy traffic the correction helps, more so as N grows
    conv = r["convergence"]
    assert all(c["err_second"] < c["err_first"] for c in conv)
    ratios = [c["err_first"] / c["err_second"] for c in conv]
    assert ratios == sorted(ratios)
    assert np.isfinite(ratios).all()
