"""``mfstein lemmas``: JSON schema, human output, exit status 2 on bad input."""

from __future__ import annotations

import json

import pytest

from mfstein.cli import main


def test_json_schema(capsys):
    rc = main(
        [
            "lemmas",
            "--gamma",
            "0.1",
            "--alpha",
            "0.05",
            "--N",
            "10,100",
            "--b",
            "2",
            "--only",
            "lemma5,theorem1.sign,lemma12.r",
            "--json",
        ]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    ids = [c["id"] for c in out["claims"]]
    assert ids == [
        "lemma5",
        "lemma5.eighteenth",
        "lemma5.norm_J",
        "lemma5.norm_J_9",
        "lemma5.entries",
        "theorem1.sign",
        "lemma12.r",
    ]
    for c in out["claims"]:
        assert isinstance(c["statement"], str) and isinstance(c["equation"], str)
        assert c["holds_from_N"] is None or isinstance(c["holds_from_N"], int)
        assert [p["N"] for p in c["points"]] == [10, 100]
        for p in c["points"]:
            for key in ("lhs", "rhs", "margin"):
                assert isinstance(p[key], str)
                float(p[key])  # a decimal string
            assert isinstance(p["holds"], bool)
    sign = out["claims"][ids.index("theorem1.sign")]
    assert sign["holds_from_N"] is None
    assert all(not p["holds"] for p in sign["points"])
    assert "corrected_statement" in sign and "-2 vec(F~)" in sign["corrected_statement"]
    assert float(sign["points"][0]["lhs"]) < 0


def test_human_output(capsys):
    rc = main(["lemmas", "--lam", "0.9", "--N", "10", "--b", "1", "--only", "theorem1.eq6,lemma6"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "theorem1.eq6" in text and "verdict:" in text and "corrected:" in text
    assert "skipped: needs alpha" in text


@pytest.mark.parametrize(
    "argv",
    [
        ["--lam", "0.9", "--N", "10", "--only", "lemma5,nosuchclaim"],
        ["--lam", "0.9", "--N", "10", "--only", ","],
        ["--lam", "0.9", "--N", "0"],
        ["--lam", "0.9", "--N", "ten"],
        ["--lam", "1.2", "--N", "10"],
        ["--gamma", "0.1", "--N", "10"],
        ["--lam", "0.9", "--N", "10", "--dps", "3"],
        ["--lam", "0.9", "--N", "10", "--xi", "0"],
        ["--lam", "0.9", "--N", "10", "--b", "zero"],
        ["--gamma", "5", "--alpha", "0.05", "--N", "10,100"],
    ],
)
def test_bad_input_exit_2(argv, capsys):
    assert main(["lemmas", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err and "Traceback" not in err
