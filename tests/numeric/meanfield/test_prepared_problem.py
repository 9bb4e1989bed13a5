"""The float64 route's prepared problem (issues 31, 34): the problem every route starts
from, built once from (model, params, start), immutable, cached by its inputs, with its
float64 system and observable kept on it; order 2 extends the order-1
answer; a warm call runs no SymPy; matrices are converted to mpmath on first read
and equal the eager conversion."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy
from profiled import functions_called

import numeric
from derive.models import load_model
from numeric.meanfield import problem as pp
from numeric.meanfield.float64_values import Float64Matrix, mpf64

USER = str(Path(__file__).resolve().parents[3] / "benchmarks/models/supermarket_user.py")
SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}


def _sympy_calls(fn) -> list[str]:
    """The SymPy functions called (at any depth) while ``fn()`` runs: a profile hook
    sees every Python call, so nothing of SymPy runs unseen."""
    here = Path(sympy.__file__).parent
    roots = (f"{here}/", f"{here.resolve()}/")  # as imported, and through any symlink
    return [f for f in functions_called(fn)[1] if f.startswith(roots)]


def test_warm_order2_call_runs_no_sympy():
    """Order 2 too (order 1: tests/numeric/meanfield/test_sweep.py)."""
    order = 2
    m = load_model(f"{USER}:supermarket_user", b=4)
    numeric.solve(m, {"lam": "0.9"}, precision="float64", order=order)  # prepares the model
    # the hook sees SymPy when it runs (a check of the check)
    assert _sympy_calls(lambda: sympy.Symbol("x") + 1)
    calls = _sympy_calls(
        lambda: numeric.solve(m, {"lam": 0.8123}, precision="float64", order=order)
    )
    assert calls == [], calls[:5]


def test_order2_after_order1_reuses_the_order1_answer():
    m = load_model("sir")
    params = {**SIR, "beta": "3.25"}
    pp.forget()
    before = dict(pp.COUNTS)
    one = numeric.solve(m, params, precision="float64")
    mid = dict(pp.COUNTS)
    # one problem prepared (the one every route starts from: no float64 problem besides)
    assert mid.get("prepared:problem", 0) - before.get("prepared:problem", 0) == 1
    assert mid.get("fixed_point", 0) - before.get("fixed_point", 0) == 1
    two = numeric.solve(m, params, precision="float64", order=2)
    after = dict(pp.COUNTS)
    assert after == mid  # no new preparation, no new fixed-point search
    assert two.c2 is not None and two.digits2 >= 8
    assert two.constant == one.constant and two.s_star == one.s_star
    # the same numbers as order 2 asked first, from nothing kept
    pp.forget()
    fresh = numeric.solve(m, params, precision="float64", order=2)
    assert fresh.c2 == two.c2 and fresh.A == two.A and fresh.constant == two.constant


def test_problem_is_immutable_and_cached_by_its_inputs():
    m = load_model("sir")
    pp.forget()
    a = pp.prepare(m, SIR)
    assert pp.prepare(m, dict(SIR)) is a  # same inputs: the same problem
    assert pp.prepare(m, {**SIR, "beta": "3.5"}) is not a
    # another model object with the same transitions (it may declare other ranges,
    # another reference point): another problem
    from derive.models.sir import sir

    narrow = sir()  # (load_model keeps one model per name: its factory makes another)
    assert narrow is not m and narrow.key == m.key and pp.prepare(narrow, SIR) is not a
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.p64 = np.zeros(4)  # type: ignore[misc]
    with pytest.raises(ValueError):
        a.s64[0] = 1.0
    with pytest.raises(TypeError):
        a.values["beta"] = 1  # type: ignore[index]
    assert a.reduction.laws  # SIR conserves its population: a law, reduced coordinates
    assert float(a.values["beta"]) == 3.0 and a.p64.tolist() == [3.0, 1.0, 0.5, 0.1]


def test_the_float64_problem_is_the_prepared_problem_with_its_system_kept():
    """The float64 route reads the problem every route starts from (no problem of its
    own): its read-only ``s64`` and ``p64``, and its float64 system and observable
    matrix, made once and kept with it; problems at other parameters of the same
    model share the reference start's float64 values (the 30-digit start rounded
    once) and the system's model-level parts."""
    from numeric.prepared.problem import prepare_problem

    m = load_model(f"{USER}:supermarket_user", b=4)
    pp.forget()
    a, b = pp.prepare(m, {"lam": "0.5"}), pp.prepare(m, {"lam": "0.75"})
    assert a is prepare_problem(m, {"lam": "0.5"}) and b.s64 is a.s64
    assert a.s64.tolist() == [float(v) for v in a.s0] and b.p64.tolist() == [0.75]
    assert pp.system64(a) is pp.system64(a) and pp.system64(a).p is not pp.system64(b).p
    assert pp.system64(a).shared is pp.system64(b).shared
    assert pp.system64(b).p.tolist() == [0.75]
    M = pp.observable64(a, None)
    assert pp.observable64(a, None) is M and pp.observable64(b, None) is not M
    assert np.array_equal(M, np.eye(4))
    diag = pp.observable64(a, "diag:1,2,3,4")
    assert np.array_equal(diag, np.diag([1.0, 2.0, 3.0, 4.0])) and diag is not M
    for x in (a.s64, a.p64, M, diag):
        assert not x.flags.writeable
    # a start given in float64 is read as any start, and copied, not shared
    s = np.array([0.5, 0.25, 0.0, 0.0])
    c = pp.prepare(m, {"lam": "0.6"}, s)
    assert c.s64 is not s and c.s64.tolist() == s.tolist() and not c.s64.flags.writeable


def test_lazy_matrices_equal_the_eager_conversion():
    m = load_model("sir")
    sol = numeric.solve(m, SIR, precision="float64")
    for name in ("W", "P", "J", "Q"):
        lazy = getattr(sol, name)
        assert isinstance(lazy, Float64Matrix) and isinstance(lazy, mpmath.matrix)
        rows = lazy.tolist()
        eager = mpmath.matrix(rows)
        assert (lazy.rows, lazy.cols) == (m.n, m.n)
        assert all(lazy[i, j] == eager[i, j] for i in range(m.n) for j in range(m.n))
        twice = pickle.loads(pickle.dumps(lazy))
        assert twice.tolist() == rows
    W = sol.W
    other = copy.copy(W)
    other[0, 0] = 7  # a copy owns its entries
    assert W[0, 0] != 7 and other[0, 0] == 7
    A = np.array([[0.1, 0.0], [2.0**-60, -3.5]])
    M = Float64Matrix.dense(A, [0, 2], 3)
    assert M[2, 0] == mpf64(2.0**-60) and M[0, 0] == mpmath.mpf(0.1) and M[1, 1] == 0
    assert (M * 2)[2, 2] == -7  # mpmath arithmetic reads the converted entries
    with mpmath.workdps(5):  # exact whatever the working precision
        x, rounded = mpf64(0.1), mpmath.mpf(0.1)
    assert x == mpmath.mpf(0.1) and rounded != x


def test_deferred_lists_are_the_exact_float64_values_when_read():
    """``s_star``, ``V``, ``ftilde``, the eigenvalues and the matrices ``J``, ``Q``,
    ``P``, ``W`` of a float64 solution are made at their first read (a warm loop reads
    ``c``), then kept: the exact ``mpf`` of each double, the same object at every
    read, equal through copies and pickling."""
    from numeric.meanfield.problem import order1, prepare
    from numeric.meanfield.solution import Deferred

    m = load_model("sir")
    sol = numeric.solve(m, SIR, precision="float64")
    names, matrices = ("s_star", "V", "ftilde", "eigenvalues"), ("J", "Q", "P", "W")
    assert all(type(sol.__dict__[k]) is Deferred for k in names + matrices)
    twice = pickle.loads(pickle.dumps(sol))  # pickled as the values
    assert all(type(twice.__dict__[k]) is list for k in names)
    assert all(isinstance(twice.__dict__[k], mpmath.matrix) for k in matrices)
    pt = order1(prepare(m, SIR))
    with mpmath.workdps(5):  # first read: exact whatever the working precision
        s_star = sol.s_star
    assert s_star == [mpmath.mpf(x) for x in pt.s.tolist()]
    assert sol.V == [mpmath.mpf(x) for x in pt.V.tolist()]
    assert sol.s_star is sol.s_star and type(sol.__dict__["s_star"]) is list
    assert [float(x) for x in sol.ftilde] == (pt.block.Qs.diagonal() / 2).tolist()
    assert sorted(complex(x).real for x in sol.eigenvalues) == sorted(pt.block.eig.real)
    assert twice == sol and dataclasses.replace(sol, digits=3).V == sol.V
    b, blk = m.n, pt.block
    W, P = np.zeros((b, b)), np.zeros((b, b))
    W[np.ix_(blk.R, blk.R)], P[np.ix_(blk.K, blk.K)] = pt.W_R, blk.PK
    for name, want in (("J", pt.at.J), ("Q", blk.Qs), ("P", P), ("W", W)):
        got = getattr(sol, name)
        assert got is getattr(sol, name) and isinstance(got, mpmath.matrix)
        assert np.array_equal(np.array(got.tolist(), dtype=float), want), name
    with pytest.raises(dataclasses.FrozenInstanceError):
        sol.V = []


def test_search_from_the_start_reads_the_jacobian_evaluated_there():
    """The stability scale's reduced Jacobian at the start is the search's first one
    (no conservation law: the same product), and the fixed point is the same bit for
    bit; systems at other parameters share the model-level objects."""
    from numeric.meanfield.structure import fixed_point64

    m = load_model(f"{USER}:supermarket_user", b=10)
    problem = pp.prepare(m, {"lam": "0.85"})
    sysm, s0 = pp.system64(problem), np.array(problem.s64)
    J0 = sysm.reduce_jac_dense(sysm.jac_dense(s0))
    assert not sysm.red.laws and np.array_equal(J0, sysm.jac_reduced_dense(s0))
    s = fixed_point64(sysm, s0)
    assert np.array_equal(fixed_point64(sysm, s0, jac_start=J0), s)
    assert np.abs(sysm.f(s)).max() < 1e-12
    other = pp.system64(pp.prepare(m, {"lam": "0.9"}))
    assert other.shared is sysm.shared and not np.array_equal(other.p, sysm.p)


def test_warm_routes_at_working_precision_prepare_nothing():
    """Order 1, then order 2, then the transient (twice), then an observable, on one
    model at working precision: each route's problem is prepared once in the process
    (counted by the cache, numeric.prepared.cache), and order 2 reads the
    objects order 1 computed at its two working precisions instead of solving again;
    the numbers equal those of order 2 asked first, from nothing kept."""
    m = load_model("sir")
    params = {**SIR, "beta": "2.75"}
    pp.forget()
    before = dict(pp.COUNTS)

    def new(kind: str) -> int:
        return pp.COUNTS[kind] - before.get(kind, 0)

    one = numeric.solve(m, params, dps=15)
    assert new("prepared:general") == 1
    objects = new("objects:general")
    assert objects >= 2  # the two working precisions
    two = numeric.solve(m, params, dps=15, order=2)
    assert new("prepared:general") == 1 and new("objects:general") == objects
    assert two.c2 is not None and two.constant == one.constant and two.s_star == one.s_star
    first = numeric.transient(m, params, times=[0, 1, 2])
    again = numeric.transient(m, params, times=[0, 1, 2])
    assert new("prepared:transient") == 1
    assert np.array_equal(first.x, again.x)
    obs = numeric.solve(m, params, dps=15, observables=["I"])
    assert new("prepared:general") == 1 and new("objects:general") == objects
    assert "I" in obs.observables
    pp.forget()
    fresh = numeric.solve(m, params, dps=15, order=2)
    assert new("prepared:general") == 2
    assert fresh.c2 == two.c2 and fresh.A == two.A and fresh.B == two.B


def test_kept_objects_are_copies():
    """A solution's matrices are its own: changing one does not reach the next answer."""
    m = load_model("sir")
    params = {**SIR, "beta": "2.5"}
    one = numeric.solve(m, params, dps=15)
    w = one.W[0, 0]
    one.W[0, 0] = 12345
    one.s_star[0] = 12345
    two = numeric.solve(m, params, dps=15)
    assert two.W[0, 0] == w and two.s_star[0] != 12345


@pytest.mark.parametrize(("lam", "M"), [("0.5", None), ("0.9", "diag:1,2,3,4,5,6")])
def test_warm_float64_solve_is_the_cold_one_with_its_inputs(lam: str, M: str | None) -> None:
    """Whatever this process kept (problems, answers, the acceptance check's
    eigenvalues read again by the kept block), a float64 solve gives the numbers of
    one from nothing kept, and its result carries its inputs.  ``lam = 0.5`` drops
    the negligible tail (a block smaller than the model), ``0.9`` keeps every
    coordinate."""
    m = load_model(f"{USER}:supermarket_user", b=10)
    params = {"lam": lam}
    pp.forget()
    cold = numeric.solve(m, params, precision="float64", M=M)
    for other in ("0.55", "0.85", "0.95"):
        numeric.solve(m, {"lam": other}, precision="float64", M=M)
    pp.forget()
    pp.prepare(m, params, None, M)  # prepared, not yet solved
    warm = numeric.solve(m, params, precision="float64", M=M)
    again = numeric.solve(m, params, precision="float64", M=M)  # the kept answer
    assert (cold.truncated_at is None) == (lam == "0.9")
    for sol in (warm, again):
        assert sol.constant == cold.constant and sol.digits == cold.digits
        assert sol.s_star == cold.s_star and sol.V == cold.V and sol.notes == cold.notes
        assert sol.eigenvalues == cold.eigenvalues and sol.errors == cold.errors
        assert sol.W.tolist() == cold.W.tolist() and sol.P.tolist() == cold.P.tolist()
        assert sol.source_model is m and sol.inputs == params
        assert sol.start is None and sol.M == M


class _Garbage:
    """An object freed only by the garbage collector (it sits in a reference cycle)."""

    def __init__(self) -> None:
        self.cycle = self

    def __del__(self) -> None:
        pass


def test_the_profiled_call_is_not_charged_with_garbage_left_by_earlier_work():
    """The flake of this file under ``-n 2``: the collector, started by an allocation
    inside the profiled call, finalised a SymPy generator left by an earlier test, and
    the hook counted it as SymPy run by the call.  Garbage from before the call is freed
    before the hook starts, and the collector waits during the call."""
    _Garbage()  # garbage now; freed at the next collection
    _, called = functions_called(lambda: [[] for _ in range(20000)])
    assert not [f for f in called if f.endswith(":__del__")], called[:5]


def _search_system(case: str, lam: str) -> tuple:
    """``(system, s0, free, q)`` of the fixed-point search: the user-written supermarket
    (b = 10, no law) at ``lam`` or SIR (one conservation law)."""
    if case == "user":
        problem = pp.prepare(load_model(f"{USER}:supermarket_user", b=10), {"lam": lam})
    else:
        problem = pp.prepare(load_model("sir"), SIR)
    sysm, s0 = pp.system64(problem), np.array(problem.s64)
    return sysm, s0, list(sysm.red.free), sysm.laws64(s0)


@pytest.mark.parametrize("case", ["user", "sir"])
def test_search_functions_evaluate_each_new_state(case):
    """The fixed-point search's drift, reduced Jacobian and scale keep their last
    state's values (structure._search_functions): going back and forth between
    states gives each state's own values, bit for bit those of the system's methods
    (with a conservation law: on the free coordinates of the full state)."""
    from numeric.meanfield.structure import _search_functions

    sysm, s0, free, q = _search_system(case, "0.8")
    assert bool(sysm.red.laws) == (case == "sir")
    fr, jr, scale, drift = _search_functions(sysm, q, dense=True)
    rng = np.random.default_rng(3)
    ys = [s0[free] / 2 + rng.random(len(free)) / 4 for _ in range(2)]  # two states inside
    for y in (ys[0], ys[1], ys[0], ys[0].copy(), ys[1]):
        s = sysm.full(y, q)
        assert np.array_equal(fr(0, y), sysm.f(s)[free])
        assert np.array_equal(jr(0, y), sysm.jac_reduced_dense(s))
        assert scale(y) == max(1.0, float(np.abs(sysm.rates(s)).max()))
    for y in (ys[0], ys[1], ys[1].copy(), ys[0]):  # drift: both at once, and kept for fr
        s = sysm.full(y, q)
        f, size = drift(y)
        assert np.array_equal(f, sysm.f(s)[free])
        assert size == max(1.0, float(np.abs(sysm.rates(s)).max()))
        assert fr(0, y) is f and scale(y) == size


@pytest.mark.parametrize("case", ["user", "sir"])
def test_pseudo_transient_drift_gives_the_same_iterates(case):
    """Pseudo-transient continuation with the search's ``drift`` (the drift and the
    scale of a state from one evaluation of the rates) ends at the state it reaches
    with ``fr`` and ``scale`` called apart, bit for bit, and leaves the drift there
    kept for the first Newton step."""
    from numeric.meanfield.structure import _search_functions, linear_solver, pseudo_transient

    sysm, s0, free, q = _search_system(case, "0.93")
    fr, jr, scale, drift = _search_functions(sysm, q, dense=True)
    solve = linear_solver(dense=True)
    apart = pseudo_transient(fr, jr, s0[free], scale, solve)
    fr, jr, scale, drift = _search_functions(sysm, q, dense=True)
    calls = []
    both = pseudo_transient(
        fr, jr, s0[free], scale, solve, drift=lambda y: calls.append(1) or drift(y)
    )
    assert apart is not None and calls
    assert np.array_equal(both, apart)
    assert np.array_equal(fr(0, both), sysm.f(sysm.full(both, q))[free])


@pytest.mark.parametrize("lam", ["0.5", "0.8"])
def test_kept_block_of_a_model_without_laws_restricts_M(lam):
    """Without a conservation law (``T`` the identity) the kept block's ``M`` is ``M``
    on the kept coordinates, the same numbers as ``T_R^T M_RR T_R`` of the general
    case, for an observable that couples neighbours; the rows reached are the kept
    coordinates."""
    from numeric.meanfield.float64_point import AtPoint, kept_block
    from numeric.meanfield.structure import fixed_point64

    problem = pp.prepare(load_model(f"{USER}:supermarket_user", b=10), {"lam": lam})
    sysm = pp.system64(problem)
    assert not sysm.red.laws
    b = problem.model.n
    M64 = np.eye(b) + np.diag(np.full(b - 1, -0.5), 1) + np.diag(np.full(b - 1, 0.25), -1)
    at = AtPoint.of(sysm, fixed_point64(sysm, np.array(problem.s64)))
    blk = kept_block(sysm, at, M64)
    assert blk.dropped  # the tail is negligible: the block is not the whole state
    assert blk.R == blk.K
    TR = blk.TK[blk.R]
    assert np.array_equal(blk.MK, TR.T @ M64[np.ix_(blk.R, blk.R)] @ TR)
