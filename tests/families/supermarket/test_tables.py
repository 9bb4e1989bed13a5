"""Seed 000, Tables 1 and 2: the "Asymptotic Tight Bound" rows, recomputed with b = auto."""

from __future__ import annotations

import mpmath
import pytest

from numeric import bound, heavy_traffic_lambda

ALPHA = "0.05"
NS = (10, 100, 1000, 10000)
# (gamma, printed lambda row, printed "Asymptotic Tight Bound" row) -- the paper's numbers
PAPER = {
    "0.1": (("0.9109", "0.9206", "0.9292", "0.9369"), ("3.1872", "3.5499", "3.9542", "4.4049")),
    "0.01": (
        ("0.9911", "0.9921", "0.9929", "0.9937"),
        ("28.8070", "32.2472", "36.1022", "40.4250"),
    ),
}


def _rounded(x: mpmath.mpf, decimals: int) -> str:
    with mpmath.workdps(40):
        return mpmath.nstr(mpmath.nint(x * 10**decimals) / 10**decimals, 20, strip_zeros=False)


@pytest.mark.parametrize("gamma", sorted(PAPER))
def test_asymptotic_tight_bound_rows(gamma: str) -> None:
    lam_row, c_row = PAPER[gamma]
    for N, lam_printed, c_printed in zip(NS, lam_row, c_row, strict=True):
        lam = heavy_traffic_lambda(gamma, ALPHA, N, dps=40)
        assert mpmath.almosteq(lam, mpmath.mpf(lam_printed), abs_eps=0.5e-4)
        sol = bound(lam, "auto", dps=20)
        assert sol.digits == 20
        decimals = len(c_printed.split(".")[1])
        with mpmath.workdps(30):
            err = abs(sol.constant - mpmath.mpf(c_printed))
        assert err <= mpmath.mpf(10) ** -decimals / 2, (N, mpmath.nstr(sol.constant, 10))


def test_auto_buffer_is_the_smallest_stable_one() -> None:
    lam = heavy_traffic_lambda("0.1", ALPHA, 10, dps=40)
    sol = bound(lam, "auto", dps=20)
    bigger = bound(lam, sol.n + 3, dps=20)
    smaller = bound(lam, sol.n - 1, dps=20)
    with mpmath.workdps(30):
        assert abs(bigger.constant - sol.constant) <= mpmath.mpf(10) ** -20 * sol.constant
        assert abs(smaller.constant - sol.constant) > mpmath.mpf(10) ** -22 * sol.constant
