"""The prepared form of a model (numeric.exact.prepared) that the exact chains and the
simulators read, and the exact task's fast-path registry."""

from __future__ import annotations

import sys
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from derive.models import load_model
from mfstein.ground.errors import ParameterError
from numeric.exact.prepared import mean_field, prepare

SIR = {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}


def test_prepare_checks_the_parameters_and_fills_n() -> None:
    model = load_model("supermarket", b=2, replacement=False)
    p = prepare(model, 5, {"lam": "0.9"})
    assert p.model is model and p.N == 5 and p.params == {"lam": "0.9", "N": 5}
    with mpmath.workdps(30):  # parsed at 30 digits
        assert p.values["lam"] == mpmath.mpf("0.9") and p.values["N"] == 5
    with pytest.raises(ParameterError, match="must equal the lattice size N = 5") as info:
        prepare(model, 5, {"lam": "0.9", "N": 6})
    assert "\n" not in str(info.value)
    with pytest.raises(ParameterError, match=r"must be a derive\.Model"):
        prepare("supermarket", 5, {})


def test_placement_carries_the_conservation_law_into_the_mean_field() -> None:
    """SIR (S + I + R = 1): the start N (1/2, 3/10, 1/5) is on the lattice, and the
    mean field's fixed point carries the chain's value of the law."""
    sir = load_model("sir")
    placed = prepare(sir, 10, SIR).place(["1/2", "3/10", "1/5"])
    assert placed.start.tolist() == [5, 3, 2] and placed.start_given
    assert [tuple(map(str, row)) for row in placed.lattice.laws] == [("1", "1", "1")]
    mf, note = placed.mean_field()
    assert note is None and abs(sum(mf.s_star) - 1) < mpmath.mpf(10) ** -18
    # the function form reads the same numbers
    again, _ = mean_field(sir, placed.prepared.params, placed.start, 10, True, True)
    assert [mpmath.nstr(v, 18) for v in again.s_star] == [mpmath.nstr(v, 18) for v in mf.s_star]


def test_chain_and_prepared_form_agree() -> None:
    from numeric.exact.general import Chain

    model = load_model("supermarket", b=3)
    ch = Chain.setup(model, 6, {"lam": "0.9"}, ["1/2", "1/3", "0"], None, None)
    assert ch.placement.prepared.params == {"lam": "0.9"} and ch.N == 6
    assert ch.start.tolist() == [3, 2, 0]
    assert [float(Fraction(int(n), 6)) for n in ch.start] == [0.5, 1 / 3, 0.0]
    np.testing.assert_array_equal(ch.p64, [0.9])


def test_builtin_fast_path_is_found_whatever_was_imported_before(monkeypatch) -> None:
    """The supermarket's exact fast path registers itself when its module is imported;
    the registry imports it on the first lookup, so ``route="auto"`` does not depend
    on the caller having imported mfstein.families.supermarket.exact."""
    from mfstein.ground.fast_paths import REGISTERED
    from numeric.exact import fast_paths

    assert "supermarket" not in REGISTERED  # the built-in route, not a run-time one
    monkeypatch.delitem(sys.modules, "mfstein.families.supermarket.exact", raising=False)
    solver = fast_paths.fast_path(load_model("supermarket", b=2))
    assert solver is not None and solver.__name__ == "supermarket_fast"
    assert solver.__module__ == "mfstein.families.supermarket.exact"
    assert fast_paths.fast_path(load_model("sir")) is None
