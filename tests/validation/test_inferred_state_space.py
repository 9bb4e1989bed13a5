"""Issue 32: a model written without ``ModelInfo`` gets its state space from its jumps,
and the "can leave the state space" check respects the conservation laws through the
start.

* :func:`derive.model.infer_state_space`: a conserved total gives the simplex, conserved
  sums covering every coordinate the box, anything else the orthant; the default start
  lies inside (the simplex's centre);
* a cache whose occupancy ``a + b`` is conserved, declared on the box ``[0, 1]^2``: from
  ``a + b = 1`` the face ``b = 1`` is met only at ``a = 0``, where the rate ``2a``
  vanishes, so the model is accepted; from ``a + b = 1.4`` the face is met at
  ``a = 0.4`` and the jump leaves the box: refused in one sentence;
* a tandem line with a ``sqrt(y)`` rate and no reference point: the fixed point is
  found from points of the state space though the origin has no finite derivative.
"""

from __future__ import annotations

import textwrap

import pytest
import sympy as sp

from derive import Model, Transition
from derive.spec import ModelInfo, StateSpace
from mfstein.cli import main
from mfstein.ground.errors import ParameterError

a, b, x, y, x1, y1, x2, y2, lam = sp.symbols("a b x y x1 y1 x2 y2 lam")


def _cache(info=None) -> Model:
    return Model("cache", (a, b), (), [Transition((-1, 1), 2 * a), Transition((1, -1), b)],
                 info=info)  # fmt: skip


def test_inferred_kinds() -> None:
    assert _cache().info.state_space.kind == "simplex"
    two_class = Model("two", (x1, y1, x2, y2), (), [
        Transition((-1, 1, 0, 0), x1), Transition((1, -1, 0, 0), y1 * x2),
        Transition((0, 0, -1, 1), x2), Transition((0, 0, 1, -1), y2),
    ])  # fmt: skip
    assert two_class.info.state_space.kind == "box"
    queue = Model("mm1", (x,), (lam,), [Transition((1,), lam), Transition((-1,), sp.Min(x, 1))])
    assert queue.info.state_space.kind == "orthant"
    # a declared space is kept, an undeclared one is marked as inferred
    assert _cache(ModelInfo(state_space=StateSpace("box"))).info.state_space.kind == "box"
    assert not _cache().info.state_space.declared


def test_plain_cache_starts_inside_its_simplex() -> None:
    """a' = b - 2a = 0 on a + b = 1: s* = (1/3, 2/3), W = diag(2/9) (1-D OU: Q/(2|J|))."""
    import numeric

    sol = numeric.solve(_cache(), {}, dps=20)
    assert [float(v) for v in sol.s_star] == pytest.approx([1 / 3, 2 / 3], abs=1e-18)
    assert float(sol.W[0, 0]) == pytest.approx(2 / 9, rel=1e-15)


def test_conserved_cache_on_a_box_is_checked_through_its_start() -> None:
    import numeric

    boxed = _cache(ModelInfo(state_space=StateSpace("box")))
    boxed.check_state_space()  # no start: the face b = 1 waits for the conserved value
    sol = numeric.solve(boxed, {}, start=["0.5", "0.5"], dps=20)
    assert [float(v) for v in sol.s_star] == pytest.approx([1 / 3, 2 / 3], abs=1e-18)
    with pytest.raises(ParameterError) as info:
        numeric.solve(boxed, {}, start=["0.7", "0.7"], dps=20)
    said = str(info.value)
    assert "can leave the state space" in said and "face b = 1" in said and "\n" not in said


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    path = tmp_path_factory.mktemp("plain") / "models.py"
    path.write_text(textwrap.dedent("""
        import sympy as sp
        from derive import Model, Transition
        from derive.spec import ModelInfo, StateSpace

        def cache():
            a, b = sp.symbols("a b")
            return Model("cache", (a, b), (), [Transition((-1, 1), a*2),
                Transition((1, -1), b)], info=ModelInfo(state_space=StateSpace("box")))

        def tandem():
            x, y, lam = sp.symbols("x y lam")
            return Model("tandem", (x, y), (lam,), [Transition((1, 0), lam),
                Transition((-1, 1), sp.Min(x, 1)), Transition((0, -1), sp.sqrt(y))])
        """))
    return {name: f"{path}:{name}" for name in ("cache", "tandem")}


def test_cli_box_cache_and_tandem_from_the_origin(files, capsys) -> None:
    assert main(["solve", "--model", files["cache"], "--start", "0.5,0.5", "--json"]) == 0
    capsys.readouterr()
    assert main(["solve", "--model", files["cache"], "--start", "0.7,0.7"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "can leave the state space" in err[0]
    # the tandem line: x* = lam, sqrt(y*) = x*; the origin has no finite derivative
    assert main(["solve", "--model", files["tandem"], "--param", "lam=0.5", "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert [float(v) for v in out["s_star"]] == pytest.approx([0.5, 0.25], abs=1e-25)
    assert any("sqrt(y)" in n and "random starts" in n for n in out["notes"])
    assert main(["transient", "--model", files["tandem"], "--param", "lam=0.5",
                 "--t", "0:1:3"]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the rate sqrt(y) of transition (0, -1)" in err[0]
    assert "Traceback" not in err[0] and "ZeroDivision" not in err[0]


def test_plain_cache_filled_below_one_takes_its_sum_from_the_start() -> None:
    """An inferred simplex is ``a + b <= 1``: a start on ``a + b = 0.7`` keeps that sum
    (s* = 0.7 (1/3, 2/3)), and the exact chain of the linear rates agrees with the
    mean field's constant; a start summing above 1 is refused in one sentence."""
    import mpmath

    import mfstein as mf
    import numeric

    sol = numeric.solve(_cache(), {}, start=["0.7", "0"], dps=30)
    with mpmath.workdps(40):
        assert mpmath.almosteq(sol.s_star[0], mpmath.mpf("0.7") / 3, 1e-28)
        assert mpmath.almosteq(sol.s_star[1], 2 * mpmath.mpf("0.7") / 3, 1e-28)
    ex = mf.exact(_cache(), {}, N=10, start=["0.7", "0"])
    # independent binomial occupancies: N E||S - s*||^2 is the mean field's c at every N
    assert abs(float(ex.n_mse) - float(sol.constant)) < 1e-9
    with pytest.raises(ParameterError, match=r"start must lie in the state space"):
        numeric.solve(_cache(), {}, start=["0.7", "0.7"])
