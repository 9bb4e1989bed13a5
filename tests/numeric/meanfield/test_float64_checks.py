"""The float64 route proves what it returns (issue 36): the drift residual at the
returned point (relative to the size of its terms), the point inside the state space,
no kink, the stability of J -- the checks of :mod:`numeric.meanfield.acceptance`,
shared with the default route -- and a search that keeps looking from other starts
in the state space before refusing.  Every model is in the plain file
benchmarks/models/float64_checks.py (transitions only, no ModelInfo), which the probe
sweep reads too; every float64 answer is held against the
default route."""

from __future__ import annotations

from pathlib import Path

import mpmath
import pytest

import numeric
from derive.models import load_model
from mfstein.ground.errors import NumericalError, ParameterError

#: The plain model file both this test and the probe sweep read.
MODELS = Path(__file__).resolve().parents[3] / "benchmarks/models/float64_checks.py"


@pytest.fixture(scope="module")
def models() -> str:
    return str(MODELS)


def _both(spec: str, params: dict, **kw):
    """The float64 route's and the default route's answers (or their errors)."""
    out = []
    for precision in ("float64", "dps"):
        try:
            out.append(numeric.solve(load_model(spec), params, precision=precision, **kw))
        except (ParameterError, NumericalError) as exc:
            out.append(exc)
    return out


class _Run:
    """What ``mfstein solve ARGS`` returned and printed (in this process)."""

    def __init__(self, capsys: pytest.CaptureFixture, *args: str) -> None:
        from mfstein.cli import main

        capsys.readouterr()
        self.returncode = main(["solve", *args])
        out = capsys.readouterr()
        self.stdout, self.stderr = out.out, out.err

    def __repr__(self) -> str:
        return f"status {self.returncode}: {self.stderr!r}"


def _agree(r64, ref) -> None:
    """Every digit the float64 route claims holds against the default route."""
    tol = mpmath.mpf(10) ** -r64.digits
    assert r64.digits >= 8
    assert abs(r64.constant - ref.constant) <= tol * max(abs(ref.constant), mpmath.mpf(1))
    for g, w, e in zip(r64.s_star, ref.s_star, r64.errors["s_star"], strict=True):
        assert abs(g - w) <= max(e, tol * abs(w)), (g, w, e)


def test_no_fixed_point_is_refused_by_both_routes(
    models: str, capsys: pytest.CaptureFixture
) -> None:
    r64, ref = _both(f"{models}:jump", {"lam": "0.5"})
    for r in (r64, ref):
        assert isinstance(r, NumericalError), r
        assert "is not a fixed point" in str(r) and "relative to the size of its terms" in str(r)
    out = _Run(capsys, "--model", f"{models}:jump", "--param", "lam=0.5", "--float64")
    assert out.returncode == 1 and out.stdout == "", out
    assert len(out.stderr.strip().splitlines()) == 1 and "not a fixed point" in out.stderr


def test_a_fixed_point_on_a_kink_is_refused_by_both_routes(
    models: str, capsys: pytest.CaptureFixture
) -> None:
    r64, ref = _both(f"{models}:kink", {"lam": "0.5"})
    assert isinstance(r64, ParameterError) and str(r64) == str(ref)
    assert "lies on the kink" in str(r64)
    out = _Run(capsys, "--model", f"{models}:kink", "--param", "lam=0.5", "--float64")
    assert out.returncode == 2 and "lies on the kink" in out.stderr, out
    r64, ref = _both(f"{models}:kink", {"lam": "0.3"})  # off the kink: x* = 0.3
    _agree(r64, ref)


@pytest.mark.parametrize(
    "beta,gamma,start",
    [
        ("2.981", "1.628", "0.208"),  # pseudo-transient steps jump to the unstable 0
        ("3.842", "1.35", None),  # the start 0 is the unstable fixed point
        ("0.758", "4.252", "0.9"),  # x* = 0; the other root 1 - gamma/beta < 0
        ("2.246", "2.529", None),  # x* = 0 at the start
    ],
)
def test_sis_float64_agrees_with_the_default_route(models, beta, gamma, start) -> None:
    params = {"beta": beta, "gamma": gamma}
    r64, ref = _both(f"{models}:sis", params, start=None if start is None else [start])
    assert not isinstance(r64, Exception), r64
    assert not isinstance(ref, Exception), ref
    with mpmath.workdps(40):
        want = max(mpmath.mpf(0), 1 - mpmath.mpf(gamma) / mpmath.mpf(beta))
    assert abs(ref.s_star[0] - want) <= mpmath.mpf(10) ** -25
    if want == 0:  # W = 0: c = 0 exactly in both routes
        assert r64.constant == 0 and ref.constant == 0
    else:
        _agree(r64, ref)


def test_only_an_unstable_fixed_point_is_one_sentence(
    models: str, capsys: pytest.CaptureFixture
) -> None:
    r64, ref = _both(f"{models}:grow", {"c": "1"})
    assert isinstance(r64, ParameterError) and str(r64) == str(ref)
    assert "is not stable" in str(r64) and "not below -1e-09 max|J_ij|" in str(r64)
    out = _Run(capsys, "--model", f"{models}:grow", "--param", "c=1", "--float64")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out
    assert "is not stable" in out.stderr and "Matrix" not in out.stderr


def test_stability_is_judged_relative_to_the_scale_of_J(models: str) -> None:
    """Rates of size 1e-300: the float64 route answers c = 1/4 (scale-free), and an
    unstable point's sentence states the test applied, never "-1e-300 >= 0"."""
    r64 = numeric.solve(load_model(f"{models}:scaled"), {"c": "1e-300"}, precision="float64")
    assert abs(r64.constant - mpmath.mpf(1) / 4) <= mpmath.mpf(10) ** -r64.digits
    assert r64.digits >= 12
    applied = r"real part 1e-300, not below -1e-09 max\|J_ij\| = -1e-309 "
    with pytest.raises(ParameterError, match=applied) as exc:
        numeric.solve(load_model(f"{models}:grow"), {"c": "1e-300"}, precision="float64")
    assert ">= 0" not in str(exc.value).split(";")[0]


def test_residual_is_relative_to_the_size_of_the_terms(models: str) -> None:
    """At lam = 1000 the drift lam (1 - x) - x is a difference of terms of size 1000:
    the default route answers at every dps (order 2 too), the float64 route agrees."""
    m = load_model(f"{models}:birth_death")
    for dps in (20, 30):
        r = numeric.solve(m, {"lam": "1000"}, dps=dps, order=2)
        with mpmath.workdps(40):
            assert abs(r.s_star[0] - mpmath.mpf(1000) / 1001) <= mpmath.mpf(10) ** -(dps - 1)
    ref = numeric.solve(m, {"lam": "1000"}, dps=30, order=2)
    r64 = numeric.solve(m, {"lam": "1000"}, precision="float64", order=2)
    _agree(r64, ref)


def test_float64_with_method_fast_is_refused(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ParameterError, match="route 'fast' cannot be combined with the float64"):
        numeric.solve("supermarket", {"b": 3, "lam": "0.9"}, precision="float64", route="fast")
    out = _Run(
        capsys,
        "--model", "supermarket", "--param", "b=3", "--param", "lam=0.9", "--float64",
        "--method", "fast",
    )  # fmt: skip
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out
    assert "cannot be combined" in out.stderr and out.stdout == ""


def test_supermarket_at_lam_1_is_one_sentence(capsys: pytest.CaptureFixture) -> None:
    """b = 30, d = 5, lam = 1: the float64 search cannot resolve the fixed point;
    one sentence, no internal error."""
    out = _Run(
        capsys,
        "--model", "supermarket", "--param", "b=30", "--param", "d=5", "--param", "lam=1.0",
        "--float64",
    )  # fmt: skip
    assert out.returncode in (1, 2) and out.stdout == "", out
    assert len(out.stderr.strip().splitlines()) == 1 and "internal error" not in out.stderr


def test_every_coordinate_negligible_to_order_2(models: str) -> None:
    """SIS with beta < gamma: s* = 0, every coordinate negligible there; W, V, A, B,
    c and c2 vanish in both routes (no empty-matrix error)."""
    r64, ref = _both(f"{models}:sis", {"beta": "1", "gamma": "2"}, order=2)
    assert not isinstance(r64, Exception), r64
    assert not isinstance(ref, Exception), ref
    assert r64.c2 == 0 and ref.c2 == 0 and r64.constant == 0 and ref.constant == 0
    assert r64.truncated_at == 0 and all(v == 0 for v in r64.A)
