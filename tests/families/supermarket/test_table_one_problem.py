"""The paper's table reads one prepared problem per ``N`` (issue 31).

Each ``N`` of :func:`mfstein.families.supermarket.table.build` builds one supermarket model
and prepares it once
(:func:`numeric.prepared.problem.prepare_problem`); the bound (order 1 by the family's
fast path), ``c2`` (order 2, extending order 1 on the same problem), the simulation and
the exact chain all read it, counted by :data:`numeric.prepared.cache.COUNTS`.  On
main before this change the simulation and the exact chain built models of their own:
two problems and three parameter points per ``N``.

The simulation is centred at the order-1 solution's ``s*``, which is, bit for bit, the
reference point the short form ``simulate_supermarket`` computes again; so a fixed seed
gives the same numbers either way.
"""

from __future__ import annotations

import numpy as np

import numeric
from mfstein.families.supermarket import table
from mfstein.families.supermarket.fast_path import SupermarketFastPath, simulate_centred
from mfstein.families.supermarket.simulate import Rate, reference_point
from mfstein.families.supermarket.simulate_short_form import simulate_supermarket
from numeric.meanfield.problem import forget
from numeric.prepared.cache import COUNTS

RUN = {"steps": 4_000, "reps": 1, "seed": 5, "workers": 1}


def test_each_N_prepares_one_problem_that_every_column_reads():
    forget()  # whichever test of this worker ran before
    before = dict(COUNTS)

    def new(kind: str) -> int:
        return COUNTS[kind] - before.get(kind, 0)

    rows = table.build("1", "0.5", [3, 4], exact=True, **RUN)
    assert [r.N for r in rows] == [3, 4]
    assert all(r.exact and r.c2 and r.second_order for r in rows)  # every column ran
    # one problem and one parameter point per N, whichever column reads them
    assert new("prepared:problem") == 2
    assert new("prepared:params") == 2
    # order 2 extends order 1 on that problem: one working-precision record per N
    assert new("prepared:general") == 2


def test_order2_extends_the_order1_solution_of_the_same_problem():
    forget()
    lam = "0.75"
    before = dict(COUNTS)
    row = table.columns(lam, "auto", 2, 30)
    assert COUNTS["prepared:problem"] - before.get("prepared:problem", 0) == 1
    # the public route on the same inputs reads the problem the row prepared
    again = numeric.solve(row.model, row.params, dps=30)
    assert COUNTS["prepared:problem"] - before.get("prepared:problem", 0) == 1
    sol = row.solution
    assert sol.constant == again.constant and sol.s_star == again.s_star
    # the numbers of the short forms the table called before
    short = numeric.bound(lam, "auto", 2, dps=30)
    assert row.model.n == short.n and sol.constant == short.constant
    assert sol.digits == short.digits
    so = numeric.second_order(row.model, row.params, dps=30)
    assert sol.c2 == so.c2 and sol.digits2 == so.digits


def test_the_simulation_is_centred_at_the_order1_fixed_point_bit_for_bit():
    lam, N = "0.8", 20
    row = table.columns(lam, "auto", 2, 30)
    b = row.model.n
    centre = [float(x) for x in row.solution.s_star]
    assert centre == reference_point(lam, b, 2, True, "pod", N)  # the old centre, exactly
    mine = simulate_centred(row.model, row.params, N, row.solution.s_star, **RUN)
    short = simulate_supermarket(N, lam, b, 2, **RUN)
    assert list(mine.s_star) == centre
    assert mine.n_mse.mean == short.n_mse.mean and mine.n_mse.ci95 == short.n_mse.ci95
    assert np.array_equal(mine.mean.mean, short.mean.mean)


def test_the_fast_path_reads_the_rate_from_the_prepared_problem():
    """The registered simulator's rate is the problem's reading of the exact input, at
    53 bits for the chain and at the centre's digits for ``s*``: the numbers reading
    the text gives, and ``9/10`` is ``0.9``."""
    row = table.columns("9/10", 3, 2, 30)
    sim = SupermarketFastPath(row.model, 10, row.params)
    assert sim.rate == Rate("9/10", 0.9, Rate.of("0.9").at_read)
    assert sim.lam_text == "9/10"
