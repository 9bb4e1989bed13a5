"""Issue 23: every certified enclosure contains the value and shows the digits it proves.

Over seeded random parameter sets of every model :meth:`numeric.MeanFieldSolution.
certify` certifies (the supermarket, JSQ(L) with a finite and an infinite
buffer, SIR with its conservation law, the SIS and JIQ models, the RANDOM cache, bike
sharing (its reference point depends on the parameters), power of d with two speeds,
and a user model from a file), a solution at ``dps`` digits is certified and compared
with the same finite model solved at twice the digits the certificate claims:

* the interval printed for ``c`` (``CertifiedSolution.enclosure``, rounded outwards;
  what ``mfstein solve|bound --certify`` print) contains that value, and so do the
  balls of ``s*``, ``V`` and ``W``;
* it is printed with as many digits as it certifies, not more: each end has at most
  ``certified_digits + 2`` significant digits, and its relative width lies between
  ``10^-(certified_digits + 1)`` (no digit more is certified than the ball proves) and
  ``10^(1 - certified_digits)`` (the printed interval is as narrow as the claim).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import mpmath
import pytest
from deadlines import deadline
from mpmath import mpf

from derive.models import load_model, split_values
from derive.spec import Truncated
from numeric.certified.arb import to_arb, working_precision
from numeric.meanfield.entry import solve as solve_model

ROOT = Path(__file__).resolve().parents[2]
BIRTH_DEATH = str(ROOT / "examples" / "birth_death.py") + ":birth_death"

Case = tuple[str, dict[str, str], int]


def _cases(seed: int, rounds: int) -> list[Case]:
    """``rounds`` random parameter sets of each certifiable model, at 8 to 20 digits."""
    rng = random.Random(seed)
    u = rng.uniform
    out: list[Case] = []
    for _ in range(rounds):
        sets = [
            ("supermarket", {"b": str(rng.randint(2, 6)), "lam": f"{u(0.2, 0.97):.6f}"}),
            ("jsq_L", {"L": str(rng.randint(2, 4)), "b": str(rng.randint(2, 5)),
                       "alpha": f"{u(0.3, 1.5):.5f}", "beta": "1"}),
            ("jsq_L", {"L": str(rng.randint(2, 3)), "alpha": f"{u(0.3, 0.9):.5f}", "beta": "1"}),
            ("sir", {"beta": f"{u(0.5, 4):.4f}", "gamma": f"{u(0.2, 2):.4f}",
                     "rho": f"{u(0.05, 1):.4f}", "a": f"{u(0.01, 0.3):.4f}"}),
            (BIRTH_DEATH, {"cap": str(rng.randint(1, 3)), "lam": f"{u(0.1, 3):.5f}"}),
            ("sis", {"a": f"{u(0.01, 0.3):.4f}", "beta": f"{u(0.5, 3):.4f}",
                     "gamma": f"{u(0.5, 2):.4f}"}),
            ("jiq", {"lam": f"{u(0.2, 0.9):.4f}"}),
            ("cache_random", {"n": str(rng.randint(3, 5)), "m": "2",
                              "alpha": f"{u(0.2, 1.2):.3f}"}),
            ("bike_sharing", {"K": str(rng.randint(2, 5)), "lam": f"{u(0.5, 2):.4f}",
                              "mu": f"{u(0.5, 2):.4f}", "s": f"{u(0.5, 4):.4f}"}),
            ("power_of_d_two_speeds", {"b": "3", "lam": f"{u(0.3, 0.9):.4f}", "mu1": "1.5",
                                       "mu2": "0.5", "gamma": "0.5"}),
        ]
        out += [(name, pairs, rng.randint(8, 20)) for name, pairs in sets]
    return out  # fmt: skip


CASES = _cases(2323, 1)
SLOW_CASES = _cases(23023, 4)


def _significant(text: str) -> int:
    """Significant digits of a decimal string (``0.00123`` has 3, ``1.230e-5`` has 4)."""
    mantissa = text.lstrip("-").lower().split("e")[0].replace(".", "")
    return len(mantissa.lstrip("0"))


def _contains(ball, value) -> bool:
    """Whether an Arb ball contains the exact binary value of an ``mpf``."""
    with working_precision(4000):
        return bool(ball.contains(to_arb("v", value)))


def _finite(name: str, options: dict, b: int):
    """The finite model a solution of ``b`` states belongs to (a truncated family at
    that dimension): the model the certificate speaks about."""
    model = load_model(name, **options)
    return model.build(b) if isinstance(model, Truncated) else model


def _check(case: Case) -> None:
    name, pairs, dps = case
    options, params = split_values(name, dict(pairs))
    sol = solve_model(load_model(name, **options), params, dps=dps)
    cert = sol.certify(params=params)
    digits = cert.certified_digits
    assert digits >= dps, (digits, dps)
    truth = solve_model(_finite(name, options, sol.n), params, dps=2 * max(dps, digits))
    lo, hi = cert.enclosure()
    assert cert.to_dict()["constant_enclosure"] == {"lo": lo, "hi": hi}
    assert cert.interval() == f"[{lo}, {hi}]"
    with mpmath.workdps(4 * max(dps, digits)):
        c = truth.constant
        assert mpf(lo) <= c <= mpf(hi), (lo, c, hi)
        width = (mpf(hi) - mpf(lo)) / abs(c)
        assert mpf(10) ** (-digits - 1) < width <= mpf(10) ** (1 - digits), (lo, hi, digits)
    assert max(_significant(lo), _significant(hi)) <= digits + 2, (lo, hi, digits)
    for label, balls, values in (
        ("s_star", cert.s_star, truth.s_star),
        ("V", cert.V, truth.V),
        ("W", [cert.W[i, j] for i in range(sol.n) for j in range(sol.n)],
         [truth.W[i, j] for i in range(sol.n) for j in range(sol.n)]),
    ):  # fmt: skip
        for k, (ball, v) in enumerate(zip(balls, values, strict=True)):
            assert _contains(ball, v), (label, k, ball.str(30, radius=True), v)


def test_every_certifiable_model_is_sampled() -> None:
    names = {c[0] for c in CASES}
    assert names == {c[0] for c in SLOW_CASES} and len(names) == 9 and len(SLOW_CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{Path(c[0]).stem}-{c[2]}-{c[1]}")
def test_enclosure_contains_the_value_with_the_digits_it_certifies(case: Case) -> None:
    _check(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW_CASES, ids=lambda c: f"{Path(c[0]).stem}-{c[2]}-{c[1]}")
def test_more_sets_enclosure_contains_the_value_with_the_digits_it_certifies(case: Case) -> None:
    _check(case)


def test_command_line_enclosure_contains_the_value_with_the_digits_it_certifies() -> None:
    """``mfstein solve --certify --json``: the enclosure the command prints (SIR, a
    model with a conservation law) contains the value at twice the digits."""
    pairs = {"beta": "2.7", "gamma": "0.9", "rho": "0.4", "a": "0.07"}
    argv = ["solve", "--model", "sir", "--dps", "12", "--certify", "--json"]
    for k, v in pairs.items():
        argv += ["--param", f"{k}={v}"]
    env = {k: v for k, v in os.environ.items() if k != "MFSTEIN_TRACEBACK"}
    proc = subprocess.run([sys.executable, "-m", "mfstein", *argv], capture_output=True,
                          text=True, timeout=deadline(120), cwd=ROOT, env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    lo, hi = out["constant_enclosure"]["lo"], out["constant_enclosure"]["hi"]
    digits = out["certified_digits"]
    truth = solve_model(load_model("sir"), pairs, dps=2 * digits).constant
    with mpmath.workdps(4 * digits):
        assert mpf(lo) <= truth <= mpf(hi)
        width = (mpf(hi) - mpf(lo)) / truth
        assert mpf(10) ** (-digits - 1) < width <= mpf(10) ** (1 - digits)
    assert max(_significant(lo), _significant(hi)) <= digits + 2
