"""Execute notebooks/06_exponential_tails.py at CI size, as tests/notebooks does, and
check its numbers against routes computed here."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

NOTEBOOK = "06_exponential_tails"
NB_TESTS = Path(__file__).resolve().parents[2] / "notebooks" / "test_notebooks.py"


def _run(tmp_path: Path) -> dict:
    spec = importlib.util.spec_from_file_location("_mfstein_nb_tests", NB_TESTS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.run_notebook(NOTEBOOK, tmp_path)


def _mmn_mean(n: int, eps: float) -> float:
    """Textbook M/M/n mean number in system (Erlang C by its sum), for the ordering."""
    a = n * (1 - eps)
    terms = [a**j / math.factorial(j) for j in range(n)]
    last = a**n / math.factorial(n) / eps
    C = last / (sum(terms) + last)
    return a + C * (1 - eps) / eps


def test_notebook(tmp_path, refs):
    r = _run(tmp_path)
    assert r["alphas"] == [0.5, 1.0, 1.5, 2.0]
    exact = {(e["alpha"], e["n"]): e for e in r["exact"]}
    for (alpha, n), e in exact.items():
        eps = n ** (-alpha)
        assert e["eps"] == pytest.approx(eps, rel=1e-14)
        assert e["level_decay"] == pytest.approx((1 - eps) ** n, rel=1e-9)
        # JSQ's total queue dominates M/M/n's: E[eps qbar] at least the textbook value
        assert e["scaled_mean"] >= eps * _mmn_mean(n, eps) - 1e-12
        assert e["boundary_mass"] <= 1e-7
    # n = 2, alpha = 2 against the untruncated chain built in conftest
    e = exact[(2.0, 2)]
    ref = refs["jsq"](2, 0.25, 110)
    pmf = ref["pmf"]
    k = np.arange(len(pmf))
    assert e["scaled_mean"] == pytest.approx(0.25 * (k @ pmf), rel=1e-6)
    for x, t in zip(r["x"], e["tail"], strict=True):
        assert t == pytest.approx(pmf[k > math.floor(x / 0.25)].sum(), abs=1e-7)
    # the simulated n = 3 against the exact n = 3, within 3 x CI95 (fixed seed)
    for s in r["sim"]:
        if (s["alpha"], s["n"]) in exact:
            ex = exact[(s["alpha"], s["n"])]
            assert np.all(
                np.abs(np.array(s["tail"]) - ex["tail"]) <= 3 * np.array(s["tail_ci95"]) + 1e-12
            )
            assert abs(s["scaled_mean"] - ex["scaled_mean"]) <= 3 * s["scaled_mean_ci95"]
