"""User-registered claims, the verdict over a grid, and the package docstring example."""

from __future__ import annotations

import doctest

import mpmath
import pytest

import numeric.lemmas
from mfstein.ground.errors import ParameterError
from numeric.lemmas import REGISTRY, Claim, check, claim, register, unregister


@pytest.fixture
def cleanup():
    ids: list[str] = []
    yield ids
    for i in ids:
        unregister(i)


def test_false_user_claim_is_reported_failing(cleanup):
    cleanup.append("user.false")

    @claim(id="user.false", statement="lam >= 1 (false in every stable system)", relation=">=")
    def _false(ctx):
        return ctx.lam, mpmath.mpf(1)

    rep = check(["user.false"], lam="0.9", N=[10, 100])
    (r,) = rep.results
    assert [p.holds for p in r.points] == [False, False]
    assert r.holds_from_N is None
    assert all(p.margin < 0 for p in r.points)
    assert "does not hold" in r.verdict
    entry = rep.to_dict()["claims"][0]
    assert entry["holds_from_N"] is None and entry["points"][0]["holds"] is False


def test_holds_from_N_is_the_start_of_the_final_run(cleanup):
    cleanup.append("user.window")
    # holds at N = 10, fails at 100, holds at 1000 and 10000 -> holds from 1000 on
    register(
        Claim(
            id="user.window",
            statement="N is not 100",
            equation="",
            function=lambda ctx: _sides(ctx.N != 100),
            relation=">=",
        )
    )
    rep = check(["user"], lam="0.5", N="10000,10,1000,100")
    (r,) = rep.results
    assert r.Ns == [10, 100, 1000, 10000]
    assert [p.holds for p in r.points] == [True, False, True, True]
    assert r.holds_from_N == 1000


def _sides(ok: bool):
    return (1, 0) if ok else (0, 1)


def test_registration_errors(cleanup):
    with pytest.raises(ParameterError):
        register(Claim(id="lemma5", statement="dup", equation="", function=lambda c: (0, 0)))
    with pytest.raises(ParameterError):
        Claim(id="x", statement="s", equation="", function=lambda c: (0, 0), relation="~")
    with pytest.raises(ParameterError):
        Claim(id="has space", statement="s", equation="", function=lambda c: (0, 0))
    with pytest.raises(ParameterError):
        check(["nonexistent"], lam="0.5", N=[10])


def test_family_selection():
    rep = check(["lemma12"], gamma="0.1", alpha="0.05", N=[10])
    ids = [r.claim.id for r in rep.results]
    assert ids == [i for i in REGISTRY if i.startswith("lemma12.")]
    assert all(p.holds for r in rep.results for p in r.points)


def test_bad_parameters():
    for kwargs in (
        dict(lam="1.5", N=[10]),
        dict(lam="0.5", N=[0]),
        dict(lam="0.5", N=[10], dps=5),
        dict(lam="0.5", N=[10], xi="2"),
        dict(lam="0.5", N=[10], b="big"),
        dict(gamma="2", alpha="0.05", N=[10]),  # lam = 1 - 2/10^0.05 < 0
        dict(gamma="0.1", N=[10]),
        dict(lam="0.5", gamma="0.1", alpha="0.05", N=[10]),
    ):
        with pytest.raises(ParameterError):
            check(["lemma12"], **kwargs)


def test_package_docstring_example():
    result = doctest.testmod(numeric.lemmas, verbose=False)
    assert result.attempted >= 4 and result.failed == 0
    assert "mine.trace" not in REGISTRY


def test_grid_is_checked_once_for_both_runners():
    """check and check_certified read the same grid (numeric.lemmas.runner.grid_params):
    sorted sizes, the heavy-traffic rate at each N, and one sentence for a bad value."""
    from numeric.lemmas.certified_claims import check_certified
    from numeric.lemmas.runner import grid_params

    grid = grid_params(N="100,10,10", gamma="0.5", alpha="0.5", dps=20)
    assert grid.Ns == [10, 100] and grid.heavy
    ctx = grid.context(100)
    with mpmath.workdps(30):
        assert abs(ctx.lam - mpmath.mpf("0.95")) < mpmath.mpf(10) ** -18
    assert ctx.gamma == grid.fractions[0] and ctx.dps == 20
    for run in (check, check_certified):
        with pytest.raises(ParameterError, match="xi must satisfy 0 < xi < 1"):
            run(None, N=[10], lam="0.9", xi="2")
        with pytest.raises(TypeError, match="did you mean 'gamma'"):
            run(None, N=[10], gama="0.1", alpha="0.5")
