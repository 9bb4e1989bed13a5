"""``--certify`` on ``mfstein bound``, ``mfstein solve`` and ``mfstein lemmas``."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from mfstein.cli import main


def test_bound_certify_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bound", "--gamma", "0.1", "--alpha", "0.05", "--N", "10", "--dps", "20"]
    assert main([*argv, "--certify", "--json"]) == 0
    (r,) = json.loads(capsys.readouterr().out)["results"]
    lo, hi = Decimal(r["constant_enclosure"]["lo"]), Decimal(r["constant_enclosure"]["hi"])
    assert lo < hi and abs(Decimal(r["constant"]) - lo) < Decimal("1e-19") * lo  # 20 digits
    assert r["certified_digits"] >= 20 and str(lo).startswith("3.18723976868")


def test_bound_certify_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bound", "--lam", "0.9", "--b", "5", "--N", "10", "--certify"]) == 0
    out = capsys.readouterr().out
    assert "certified constant [lo, hi]" in out and "[2.6477623985358799599" in out


def test_solve_certify(capsys: pytest.CaptureFixture[str]) -> None:
    params = ["--param", "beta=3", "--param", "gamma=1", "--param", "rho=0.5", "--param", "a=0.1"]
    assert main(["solve", "--model", "sir", *params, "--certify", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    lo, hi = Decimal(data["constant_enclosure"]["lo"]), Decimal(data["constant_enclosure"]["hi"])
    assert abs(Decimal(data["constant"]) - hi) < Decimal("1e-29") and lo < hi
    assert data["certified_digits"] >= 30
    assert main(["solve", "--model", "sir", *params, "--certify"]) == 0
    assert "certified: c in [1.0538097536230035060932" in capsys.readouterr().out


def test_lemmas_certify(capsys: pytest.CaptureFixture[str]) -> None:
    from numeric.lemmas.certified_claims import check_certified

    ids = ["lemma4", "lemma5", "lemma8", "lemma12.r", "theorem1.sign", "theorem1.constant"]
    rep = check_certified(ids, gamma="0.1", alpha="0.05", N=[10, 1000])
    verdicts = {c.id: [p.verdict for p in pts] for c, _, pts, _ in rep.rows}
    undecided = "not decided at this precision"
    assert verdicts["lemma4"] == [undecided] * 2  # no certified evaluator (float routes)
    assert verdicts["lemma5"] == ["proved"] * 2
    assert verdicts["lemma8"] == [undecided] * 2  # the bound is attained: equality
    assert verdicts["lemma12.r"] == ["proved"] * 2  # exact arithmetic
    assert verdicts["theorem1.sign"] == ["refuted"] * 2  # the paper's sign error
    assert verdicts["theorem1.constant"] == ["proved"] * 2
    argv = ["lemmas", "--gamma", "0.1", "--alpha", "0.05", "--N", "10", "--only", "lemma5"]
    assert main([*argv, "--certify", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (pt,) = data["claims"][0]["points"]
    assert pt["certified"] == "proved" and Decimal(pt["margin_enclosure"]["lo"]) > 0
    assert "holds" not in json.dumps(data["claims"])
