"""``numeric.lemmas.sides.Sides``: every name reads the same number at the working
precision and in Arb balls; unknown names and claims without a statement are refused."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from mfstein.ground.errors import ParameterError
from numeric.certified.arb import working_precision
from numeric.certified.claim_context import CertifiedContext
from numeric.certified.enclosures import heavy_traffic_ball
from numeric.lemmas.runner import grid_params
from numeric.lemmas.sides import READERS, Sides, stated


def _floats(value) -> list[float]:
    """A number, a list or a matrix as a flat list of floats (eigenvalue lists sorted)."""
    if hasattr(value, "entries"):  # arb_mat
        return [float(v.mid()) for v in value.entries()]
    if isinstance(value, mpmath.matrix):
        return [float(value[i, j]) for i in range(value.rows) for j in range(value.cols)]
    if isinstance(value, list | tuple):
        return sorted(x for v in value for x in _floats(v))
    return [float(value.mid()) if hasattr(value, "mid") else float(value)]


def test_the_two_readers_of_every_name_agree():
    """Each name of READERS, read at the working precision and in balls at one point, is
    the same number (to far below float64's resolution: both enclose the exact value)."""
    grid = grid_params(gamma="0.1", alpha="0.05", N=[100], b=3, dps=25)
    ctx = grid.context(100, lam_guard=20)
    c = CertifiedContext(ctx, heavy_traffic_ball(Fraction("0.1"), Fraction("0.05"), 100), True)
    with mpmath.workdps(ctx.dps + ctx.guard):
        x = Sides(ctx)
        work = {name: getattr(x, name) for name in READERS}
    with working_precision(c.prec):
        y = Sides(c, balls=True)
        balls = {name: getattr(y, name) for name in READERS}
        ops = {
            "num": (work["num"](Fraction(1, 3)), balls["num"](Fraction(1, 3))),
            "sqrt": (work["sqrt"](mpmath.mpf(2)), balls["sqrt"](y.num(2))),
            "sum": (work["sum"]([x.lam, x.xi]), balls["sum"]([y.lam, y.xi])),
            "max": (work["max"]([x.lam, x.xi]), balls["max"]([y.lam, y.xi])),
            "min": (work["min"]([x.lam, x.xi]), balls["min"]([y.lam, y.xi])),
            "tol": (work["tol"](x.lam), balls["tol"](y.lam)),
            "equality_tol": (work["equality_tol"](x.num(5)), balls["equality_tol"](y.num(5))),
        }
    assert x.balls is False and y.balls is True and y.ctx is ctx
    for name in READERS:
        a, b = ops[name] if name in ops else (work[name], balls[name])
        a, b = _floats(a), _floats(b)
        assert len(a) == len(b) > 0, name
        for u, v in zip(a, b, strict=True):
            assert abs(u - v) <= 1e-14 * max(abs(u), 1e-300), (name, u, v)
        below_one = balls["equality_tol"](y.lam)
    # equality_tol differs by design below 1: 10^-digits max(1, |v|) vs 10^-digits |v|
    with mpmath.workdps(ctx.dps + ctx.guard):
        assert work["equality_tol"](x.lam) == work["tol"](1) > 1.05 * work["tol"](x.lam)
    assert abs(float(below_one.mid()) - float(work["tol"](x.lam))) <= 1e-14 * float(below_one.mid())


def test_sides_name_errors():
    ctx = grid_params(lam="0.9", N=[10], b=1).context(10)
    with pytest.raises(AttributeError, match="Sides has no 'lamda'"):
        Sides(ctx).lamda  # noqa: B018
    with pytest.raises(ParameterError, match=r"claim user\.nodoc needs a docstring"):
        stated("user.nodoc", "")(lambda x: (x.lam, x.lam))
