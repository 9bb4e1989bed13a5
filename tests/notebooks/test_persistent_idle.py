"""Execute notebooks/05_persistent_idle.py the way tests/notebooks runs the others.

``tests/notebooks/test_notebooks.py`` keeps a fixed list of notebooks; this file
executes the new one with that module's own ``run_notebook`` (loaded by path) and
checks the numbers it reports against independent routes.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from numeric.pi.exact import solve_pi_exact

NB_TESTS = Path(__file__).resolve().parents[1] / "notebooks" / "test_notebooks.py"


def _run_notebook(name: str, tmp_path: Path) -> dict:
    spec = importlib.util.spec_from_file_location("_mfstein_nb_tests", NB_TESTS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.run_notebook(name, tmp_path)


def test_persistent_idle_notebook(tmp_path: Path) -> None:
    r = _run_notebook("05_persistent_idle", tmp_path)
    loads = r["loads"]
    assert len(loads) >= 3
    for pol, p in r["policies"].items():
        np.testing.assert_allclose(p["load"], loads, rtol=1e-12)
        # the delay grows with the load, and its CIs are finite and positive
        assert all(d2 > d1 for d1, d2 in zip(p["delay"], p["delay"][1:], strict=False)), pol
        assert all(0 < c < np.inf for c in p["delay_ci95"])
        assert all(v == 0 for v in p["busy_while_idle"]), pol
    pi = r["policies"]["pi"]
    assert all(v == 0 for v in pi["bound_violations"])
    assert all(m <= 1.0 + 1e-3 for m in pi["messages_per_batch"])
    # the exact values it printed, recomputed here, and the simulation around them
    ex = r["exact"]
    again = solve_pi_exact(ex["arrivals"], ex["services"], policy="pi")
    np.testing.assert_allclose(ex["mean_queue"], again.mean_queue, rtol=1e-9)
    diff = np.abs(np.array(ex["sim_mean_queue"]) - again.mean_queue)
    assert np.all(diff <= 3 * np.array(ex["sim_ci95"]))
