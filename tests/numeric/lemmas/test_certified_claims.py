"""Claims that carry their certified evaluator: a user's claim is certified like the paper's,
and one evaluator over ``Sides`` (``stated``) is both hand-written twins to the bit."""

from __future__ import annotations

import mpmath
import pytest

from mfstein.ground.errors import ParameterError
from numeric.lemmas import REGISTRY, Claim, check, claim, register, unregister
from numeric.lemmas.certified_claims import check_certified
from numeric.lemmas.sides import stated

GRID = {"gamma": "0.1", "alpha": "0.05", "N": [10], "b": 3, "dps": 20}


def _trace(ctx):
    P = ctx.P
    return mpmath.fsum(P[i, i] for i in range(P.rows)), ctx.b_used / (2 * ctx.norm2_J)


def _trace_arb(c):
    return sum((c.P[i, i] for i in range(c.b)), c.num(0)), c.b / (2 * c.norm2_J())


@pytest.fixture
def user_claims():
    """A true claim and its false mirror image, both certified; one without a certificate."""
    claim(id="user.trace", statement="tr(P) >= b / (2 ||J||)", relation=">=", certified=_trace_arb)(
        _trace
    )
    claim(
        id="user.mirror", statement="tr(P) <= b / (2 ||J||)", relation="<=", certified=_trace_arb
    )(_trace)
    claim(id="user.float_only", statement="tr(P) >= b / (2 ||J||)", relation=">=")(_trace)
    yield
    for i in ("user.trace", "user.mirror", "user.float_only"):
        unregister(i)


def test_user_claim_is_certified_with_its_own_evaluator(user_claims):
    rep = check_certified(["user"], **GRID)
    points = {c.id: pts for c, _, pts, _ in rep.rows}
    assert [p.verdict for p in points["user.trace"]] == ["proved"]
    assert [p.verdict for p in points["user.mirror"]] == ["refuted"]
    (undecided,) = points["user.float_only"]
    assert undecided.verdict == "not decided at this precision"
    assert "no certified evaluator" in undecided.note
    # the ball margin agrees with the float route's margin (two independent routes)
    (fl,) = check(["user.trace"], **GRID).results[0].points
    ball = points["user.trace"][0].margin
    assert fl.holds and abs(float(ball.mid()) - float(fl.margin)) < 1e-15 * abs(float(fl.margin))
    assert float(ball.rad()) < 1e-15 * abs(float(fl.margin))
    lo, hi = points["user.mirror"][0].margin_strings(12)
    assert float(hi) < 0 and abs(float(lo) + float(fl.margin)) < 1e-10 * float(fl.margin)


def test_every_core_claim_declares_a_certified_check():
    """Every claim of the core paper carries its ball evaluator or is exact, except Lemma 4
    (a comparison of two floating-point routes)."""
    check(["lemma5"], lam="0.9", N=[10], b=2)  # registers the core paper's claims
    core = [c for c in REGISTRY.values() if not c.id.startswith("user.")]
    without = [c.id for c in core if c.certified is None and not c.exact]
    assert without == ["lemma4"]
    assert sorted(c.id for c in core if c.exact) == [
        "lemma12.epsilon",
        "lemma12.r",
        "lemma12.remark_epsilon",
        "lemma12.remark_r",
    ]


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"certified": "not a function"}, "certified of claim x.bad must be a function"),
        ({"certified": _trace_arb, "exact": True}, "claim x.bad is exact"),
    ],
)
def test_bad_certified_evaluator_is_one_sentence(kwargs, words):
    with pytest.raises(ParameterError, match=words):
        Claim(id="x.bad", statement="s", equation="", function=_trace, **kwargs)


TWIN_GRID = {"gamma": "0.1", "alpha": "0.05", "N": [10, 1000], "b": 3, "dps": 25}


@pytest.fixture
def twins():
    """The same claim twice: hand-written twins, and one evaluator over Sides."""
    register(
        Claim(
            id="user.twins",
            statement="s",
            equation="",
            function=_trace,
            relation=">=",
            certified=_trace_arb,
        )
    )

    @stated("user.sides", "my note", ">=")
    def _sides(x):
        """tr(P) >= b / (2 ||J||):
        the sum of Lemma 5 over i"""
        return x.sum(x.P[i, i] for i in range(x.b)), x.b / (2 * x.norm2_J)

    yield
    unregister("user.twins")
    unregister("user.sides")


def test_one_evaluator_is_both_twins_to_the_bit(twins):
    assert REGISTRY["user.sides"].statement == "tr(P) >= b / (2 ||J||): the sum of Lemma 5 over i"
    assert REGISTRY["user.sides"].certified is not None
    hand, sides = check(["user"], **TWIN_GRID).results
    for p, q in zip(hand.points, sides.points, strict=True):
        assert [v._mpf_ for v in (p.lhs, p.rhs, p.margin)] == [
            v._mpf_ for v in (q.lhs, q.rhs, q.margin)
        ]
        assert p.holds and q.holds
    (_, _, hand_balls, _), (_, _, side_balls, _) = check_certified(["user"], **TWIN_GRID).rows
    for p, q in zip(hand_balls, side_balls, strict=True):
        assert p.verdict == q.verdict == "proved"
        assert p.margin.mid().man_exp() == q.margin.mid().man_exp()
        assert p.margin.rad().man_exp() == q.margin.rad().man_exp()
