"""The state-space sentences of messages: densities and lattice counts share one text."""

from __future__ import annotations

import pytest

from derive.spec import StateSpace, region_text
from mfstein.ground.errors import ParameterError
from numeric.exact.lattice import Lattice
from numeric.exact.prepared import prepare
from numeric.expansion.transient import transient
from numeric.params import check_finite_model

DENSITIES = {
    "monotone": "1 >= s_1 >= ... >= s_4 >= 0",
    "simplex": "s_i >= 0, s_1 + ... + s_4 <= 1.5",
    "box": "0 <= s_i <= 1",
    "orthant": "s_i >= 0",
}
COUNTS = {
    "monotone": "7 >= n_1 >= ... >= n_4 >= 0",
    "simplex": "n_i >= 0, n_1 + ... + n_4 <= 9",
    "box": "0 <= n_i <= 7",
    "orthant": "n_i >= 0",
}


@pytest.mark.parametrize("kind", sorted(DENSITIES))
def test_densities_and_counts_read_the_same_formula(kind: str) -> None:
    assert StateSpace(kind, total=1.5).describe(4) == DENSITIES[kind]
    lat = Lattice(N=7, kind=kind, upper=5, total=9, truncated=False)
    assert lat.describe(4) == COUNTS[kind]
    assert region_text(kind, 4, var="n", top="7", total="9") == COUNTS[kind]


def test_a_truncated_orthant_shows_its_cap() -> None:
    lat = Lattice(N=7, kind="orthant", upper=5, total=5, truncated=True)
    assert lat.describe(2) == "0 <= n_i <= 5"


def test_only_a_finite_model_passes() -> None:
    with pytest.raises(ParameterError, match=r"must be a derive\.Model, got int"):
        check_finite_model(3, "unused")
    from derive.models import as_model

    family, _ = as_model("jsq_L", {})
    with pytest.raises(ParameterError, match="infinite buffers"):
        prepare(family, 10, {})
    with pytest.raises(ParameterError, match="for the transient"):
        transient(family, {}, times=[0, 1])
