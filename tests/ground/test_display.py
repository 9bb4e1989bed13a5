"""The presentation base of every result type (mfstein.ground.display.Presentable)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from mfstein.ground.display import (
    MAX_REPR_LINES,
    Presentable,
    count_row,
    params_text,
    renamed_to_text,
)


@dataclass(repr=False)
class _Toy(Presentable):
    params: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    _MORE = "the rest: .notes"

    def to_dict(self) -> dict:
        return {"params": self.params, "notes": self.notes}

    def _rows(self) -> list[tuple[str, str]]:
        rows = [("params", params_text(self.params))]
        if self.notes:
            rows.append(count_row("notes", self.notes))
        return rows


def test_a_result_declares_rows_and_dict_and_inherits_the_rest() -> None:
    toy = _Toy({"lam": "0.9", "d": 2}, ["a", "b"])
    assert repr(toy).splitlines() == [
        "_Toy",
        "  params  lam = 0.9, d = 2",
        "  notes   2 (see .notes)",
        "  (the rest: .notes)",
    ]
    assert json.loads(toy.to_json()) == toy.to_dict()
    assert "\n" not in toy.to_json(indent=None)
    html = toy._repr_html_()
    assert html.startswith("<table>") and "<b>_Toy</b>" in html and "the rest: .notes" in html
    assert repr(_Toy()).splitlines()[1] == "  params  none"


def test_the_text_is_the_repr_unless_a_result_writes_its_own() -> None:
    toy = _Toy({"lam": "0.9"})
    assert toy.to_text() == repr(toy)

    @dataclass(repr=False)
    class Long(_Toy):
        render = renamed_to_text("render")

        def to_text(self) -> str:
            return "a long text"

    long = Long({"lam": "0.9"})
    assert repr(long) == repr(toy).replace("_Toy", "Long")  # repr stays the short block
    with pytest.warns(DeprecationWarning, match=r"Long\.render\(\) is deprecated; use \.to_text"):
        assert long.render() == "a long text"


def test_repr_stays_short() -> None:
    toy = _Toy(notes=["x"])
    toy._rows = lambda: [(f"row {k}", "v") for k in range(40)]  # type: ignore[method-assign]
    assert len(repr(toy).splitlines()) == MAX_REPR_LINES


def test_a_result_type_must_declare_its_own_dict_and_rows() -> None:
    class Half(Presentable):
        def to_dict(self) -> dict:
            return {}

    with pytest.raises(TypeError, match="_rows"):
        Half()


@dataclass(frozen=True)
class _Part:
    mean: float

    def to_dict(self) -> dict:
        return {"mean": self.mean}


@dataclass(frozen=True)
class _Run:
    n: int
    part: _Part
    grid: list
    wall_seconds: float
    warnings: list


def test_fields_dict_follows_the_fields_in_order() -> None:
    from mfstein.ground.display import fields_dict

    run = _Run(3, _Part(0.25), [1, 2], 1.234567, ["w"])
    got = fields_dict(run, skip=("grid",), measurements=("wall_seconds",))
    assert list(got) == ["n", "part", "wall_seconds", "warnings"]
    assert got == {"n": 3, "part": {"mean": 0.25}, "wall_seconds": 1.23, "warnings": ["w"]}
    assert fields_dict(run)["wall_seconds"] == 1.234567 and fields_dict(run)["grid"] == [1, 2]


def test_agreement_digits_counts_the_leading_digits_two_numbers_share() -> None:
    """``floor(-log10(|a - b| / |a|))``, capped at 15, never negative."""
    from mfstein.ground.display import AGREEMENT_MAX, agreement_digits

    assert AGREEMENT_MAX == 15
    assert agreement_digits(2.0, 2.0) == 15  # equal: the cap
    assert agreement_digits(0.0, 0.0) == 15
    assert agreement_digits(1.0, 1.0 + 2.0**-40) == 12  # 9.09e-13 relative
    assert agreement_digits(-3.0, -3.0 - 3e-6 * 1.5) == 5  # 1.5e-6 relative
    assert agreement_digits(1.0, 1.0 + 2.0**-52) == 15  # 2.2e-16: capped
    assert agreement_digits(1.0, 3.0) == 0  # a difference beyond |a|
    assert agreement_digits(0.0, 1e-300) == 0
    assert agreement_digits(1.0, float("nan")) == 0
