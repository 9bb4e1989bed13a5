"""``mfstein models``: the library listed without the numeric stack, one model in
detail, JSON that parses, and an unknown name as one sentence with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

from deadlines import deadline

from mfstein.cli import main

PROBE = """
import sys
import mfstein.cli
status = mfstein.cli.main(["models", "--json"])
print("LOADED:" + ",".join(m for m in ("sympy", "numba", "scipy") if m in sys.modules))
"""


def test_listing_is_light_and_names_every_library_model() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=deadline(60),
        check=True,
    )
    text, _, loaded = out.stdout.rpartition("LOADED:")
    assert loaded.strip() == "", f"mfstein models imported {loaded}"
    entries = {e["name"]: e for e in json.loads(text)["models"]}
    from derive.models import available

    assert sorted(entries) == available()
    sis = entries["sis"]
    assert [p["name"] for p in sis["parameters"]] == ["a", "beta", "gamma"]
    assert set(sis["observables"]) == {"infected", "susceptible", "infection_rate"}
    assert "Size expansions" in sis["citation"]
    assert entries["supermarket"]["options"]["b"] is None  # required: no default
    assert entries["supermarket"]["options"]["d"] == "2"


def test_one_model_in_detail_and_an_unknown_name(capsys) -> None:
    assert main(["models", "sis", "--json"]) == 0
    entry = json.loads(capsys.readouterr().out)
    assert [t["jump"] for t in entry["transitions"]] == [[1], [-1]]
    assert main(["models", "sis"]) == 0
    text = capsys.readouterr().out
    assert "infected = I" in text and "jump (1,)" in text
    assert main(["models"]) == 0
    assert "supermarket:" in capsys.readouterr().out
    assert main(["models", "nope"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "model must be one of" in err


def test_summaries_are_plain_text_not_restructuredtext(capsys) -> None:
    """The factories' docstrings are reStructuredText; the terminal listing is not."""
    assert main(["models"]) == 0
    listing = capsys.readouterr().out
    assert main(["models", "power_of_two_heterogeneous"]) == 0
    detail = capsys.readouterr().out
    for text in (listing, detail):
        assert "``" not in text and ":func:`" not in text
    assert "K >= 2 servers" in detail
