"""The general route at working precision on the coordinates that matter
(:mod:`numeric.meanfield.truncation`): same digits as the whole model solved in full."""

from __future__ import annotations

from pathlib import Path

import mpmath
import pytest

import numeric
from derive.models import load_model
from numeric.meanfield.stationary import second_order
from numeric.precision import agreeing_digits

USER = str(Path(__file__).resolve().parents[3] / "benchmarks/models/supermarket_user.py")


def test_user_model_30_digits_on_the_kept_levels():
    m = load_model(f"{USER}:supermarket_user", b=60)
    r = numeric.solve(m, {"lam": "0.9"}, dps=30)
    fast = numeric.bound("0.9", 60, 2, dps=30)  # the supermarket's own tridiagonal route
    assert r.truncated_at is not None and r.truncated_at < 20 and "negligible" in r.note
    assert r.digits >= 30 and agreeing_digits(fast.constant, r.constant) >= 30
    with mpmath.workdps(40):
        for got, want, err in zip(r.V, fast.V, r.errors["V"], strict=True):
            assert abs(got - want) <= err + mpmath.mpf(10) ** -45


@pytest.mark.slow
def test_order2_beyond_the_dense_limit():
    """b = 130 > 120 free coordinates is answered at order 2, and equals the
    order 2 of the 25-level model solved in full (its levels beyond 10 carry
    less than 1e-40 at lam = 0.9)."""
    m = load_model(f"{USER}:supermarket_user", b=130)
    r = numeric.solve(m, {"lam": "0.9"}, dps=20, order=2)
    full = second_order(load_model("supermarket", b=25), {"lam": "0.9"}, dps=20)
    assert r.digits2 >= 20 and agreeing_digits(full.c2, r.c2) >= 20
    assert len(r.A) == 130 and all(v == 0 for v in r.A[40:])


def test_order2_entries_past_the_truncated_tail_keep_their_stated_error():
    """Issue 23: at order 2 the tail argument of order 1 does not hold -- the Hessian
    carries the second moments of the last kept level into the mean of the first
    dropped one without a small factor, so ``A`` there is of the size of ``s*`` two
    levels up (1.5e-23 at lam = 0.95, far above ``delta``).  Every entry of ``A`` and
    ``B`` of b = 20 (truncated) lies within its stated error and one unit of its
    last digit of the 15-level model solved whole at twice the precision."""
    from numeric.precision import solution_entries

    lam, dps = "0.95", 16
    r = numeric.solve(load_model("supermarket", b=20), {"lam": lam}, dps=dps, order=2)
    full = numeric.solve(load_model("supermarket", b=15), {"lam": lam}, dps=2 * dps, order=2)
    assert any("negligible" in n for n in r.notes)
    with mpmath.workdps(4 * dps):
        for name in ("A", "B"):
            strings, stated = solution_entries(r, name, dps)
            if name == "B":
                strings = [strings[i * 20 + j] for i in range(15) for j in range(15)]
                truth = [full.B[i, j] for i in range(15) for j in range(15)]
            else:
                strings, truth = strings[:15], list(full.A)
            for k, (text, t) in enumerate(zip(strings, truth, strict=True)):
                err = abs(mpmath.mpf(text) - t)
                assert err <= mpmath.mpf(stated), (name, k, text, stated)
                if text != "0":
                    unit = mpmath.mpf(10) ** (mpmath.floor(mpmath.log10(abs(mpmath.mpf(text)))))
                    digits = len(text.lstrip("-").split("e")[0].replace(".", "").lstrip("0"))
                    assert err <= unit * mpmath.mpf(10) ** (1 - digits), (name, k, text)


def test_the_truncation_rule_reads_the_problems_float64_system():
    """The truncation rule's float64 structure is the prepared problem's own system
    (:func:`numeric.meanfield.problem.system64`), kept with it: the float64 route on
    the same inputs afterwards builds no second one."""
    from numeric.meanfield.problem import forget, system64
    from numeric.meanfield.truncation import negligible_at
    from numeric.prepared.problem import prepare_problem

    m = load_model(f"{USER}:supermarket_user", b=30)
    forget()
    dropped, delta = negligible_at(m, {"lam": "0.9"}, 20, None)
    assert dropped and 0 < delta < 1e-30
    problem = prepare_problem(m, {"lam": "0.9"})
    kept = problem.derived("system64", lambda: pytest.fail("a second float64 system"))
    assert system64(problem) is kept and kept.model is m
    sol = numeric.solve(m, {"lam": "0.9"}, precision="float64")
    assert sol.truncated_at is not None and system64(problem) is kept
