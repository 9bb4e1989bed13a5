"""The compiled event loop of the generic simulator: any model's jump chain.

The finite-N chain of a density-dependent population process jumps
``n -> n + l_t`` at rate ``N beta_t(n / N)`` (Section 3 of "Beyond Scaling:
Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic").  The event loop ``run_chain`` walks its embedded jump chain:
in state ``n`` it holds every intensity ``beta_t(n / N)``, picks transition
``t`` with probability ``beta_t / sum_u beta_u`` by inversion (a running sum
of the intensities in transition order against ``u * sum_u beta_u``, ``u``
from the top 53 bits of one xoshiro256** word, :mod:`sim.rng`), and weights
the visited state by its *expected* holding time
``w = 1 / (N sum_u beta_u(n / N))`` -- the conditional (Rao--Blackwellised)
form of the time average, so that
``E_pi[g(S)] = lim sum_i g(S_i) w_i / sum_i w_i`` with no exponential variates
drawn.

Generated, model-specialised loops.  :func:`chain_source` prints, for one
model, a module holding

* ``update_into(k, s, p, out)``: recomputes the intensities that involve
  coordinate ``k`` (``DEPS_IDX[DEPS_PTR[k]:DEPS_PTR[k + 1]]``), from the
  model's symbolic intensities with the printer and common-subexpression
  elimination of :mod:`derive.kernels`;
* ``run_chain_tables``: the event loop driven by tables (sparse jumps, the
  dependency lists and ``update_into``), for any number of transitions;
* ``run_chain_unrolled`` (models with at most :data:`MAX_UNROLL` transitions
  whose unrolled loop has at most :data:`MAX_UNROLL_LINES` lines: numba's
  compile time grows like the square of a function's size): the same loop with
  the inversion written out transition by transition, and after each comparison
  the code of that transition with its jump, its lattice check and the
  recomputation of the intensities it changes inlined as constants -- one
  unpredictable branch per event and no table look-ups; the intensities live in
  local variables ``R_t`` (registers), not in the array ``R``, and the
  statistics of a jump are printed after its intensity update. Both are printed
  from one template (:data:`_LOOP`) and do the same floating-point operations in
  the same order, so they return identical numbers for the same seed (tested).

The module is generated once and cached on disk next to the model's kernels
(:func:`chain_module`).  Only the intensities that depend on a coordinate the
jump moved change: when every jump touches fewer than a third of the
intensities (:func:`incremental_pays`) those are recomputed, their old sum
is taken off the total rate before and their new sum added after (pairwise
sums, :func:`_pair_sum`, to keep the chain of dependent additions short),
and the total is recomputed from the stored intensities every
:data:`REFRESH` events so that its rounding error never accumulates;
otherwise all intensities are recomputed by ``rates_into``.

Speed (supermarket, b = 10, N = 1000, lam = 0.9; one core of a shared machine):
the table-driven loop ran about 48 ns per event, the unrolled one about 23.5 ns
(measured when b = 10 was still unrolled: its 935-line loop is now above
:data:`MAX_UNROLL_LINES`, and b <= 8 are unrolled). What mattered, measured one
change at a time: statistics printed into the loop instead of an inlined helper
call (-13 ns), the comparisons and the transition code fused so the event costs
one unpredictable branch (-8 ns), pairwise sums and the old sum taken off early
(-2 ns: they sit on the loop-carried chain ``n -> s -> beta -> total -> u ->
branch``), the clamp threshold computed once per event (-1 ns); the jump's
statistics printed after its intensity update, so that the chain is issued first
after the mispredicted branch (-1.3 ns); the intensities held in locals ``R_t``
together with the thinned second moments written out for ``b <=``
:data:`MAX_COV_UNROLL` (-1.5 ns: the locals alone or the written-out update
alone gained nothing -- the stores into ``cov_acc`` may alias the array ``R``,
and the short inner loops mispredicted their exits). Reordering the inversion by
stationary frequency did not help, nor did ``fastmath={"nnan", "ninf", "nsz"}``,
a float copy of the counts, or computing ``u`` before the statistics at the top
of the event.

Statistics, each updated in O(number of coordinates the jump moves):

* ``sum_k (n_k - N s*_k)^2`` changes by ``2 l_k (n_k - N s*_k) + l_k^2``;
* time integrals of ``n_k`` by parts, ``int n_k = n_k(T) T - sum_jumps l_k tau``;
* the time spent at each value of each coordinate (marginal pmfs), also by parts:
  ``hist[k, n_k] += tau - last_k`` when ``n_k`` moves;
* ``sum_{t : sum(l_t) > 0} beta_t`` (accepted arrival intensity, for blocking);
* with observables ``g_j`` (any expressions in the state and the parameters,
  compiled into the module as ``observe_into`` like the intensities), their
  time integrals ``sum w g_j(n / N)``, evaluated at every event (a module
  without observables does no work for them);
* second moments ``n_j n_k`` on a Bernoulli(``2^-thin``) thinning of the events
  whose keep bit is the low ``thin`` bits of the same word (independent of the
  top 53 bits that choose the event; Horvitz--Thompson, as in
  :mod:`mfstein.families.supermarket.aggregated`).

Round-off and signs.  An intensity that is an exact zero may evaluate to
``+-1e-17``.  A negative value within its rounding allowance
(:func:`numeric.rate_signs.allowance_exprs`, the rule every route shares) is
stored as zero; a value below it or NaN is stored as NaN (``clamp_rates`` and
the printed updates; an infinite one, a division by zero, is kept), which makes
the total rate NaN or infinite, and the check ``0 < total < inf`` at the top of
every event stops the loop at that state, where
:func:`sim.generic.advance` finds it and the caller refuses the model with
exact's sentence for that lattice state.  A chosen jump whose intensity is at most
``CLAMP`` times the state's total is checked against the lattice (bounds, and
order or sum for the monotone and simplex kinds) and rejected as a self-loop
if it would leave it, or if it is below ``1e-3 CLAMP`` of the total (pure
round-off); every jump is checked against ``0 <= n_k <= upper``.  Rejections
are counted and reported, so the chain never leaves its lattice.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from mfstein.ground.jit import numba
from sim.rng import low_bits, store_state

_U64 = np.uint64

#: Intensities at most this fraction of the state's total rate are taken as zero.
CLAMP = 1e-14
#: The total rate is recomputed from the stored intensities every this many events.
REFRESH = 64
#: Models with at most this many transitions get the unrolled event loop ...
MAX_UNROLL = 64
#: ... when it is at most this many lines long.  numba's compile time grows like the
#: square of a function's size (its SSA reconstruction, reaching definitions and
#: type propagation each walk the whole function once per name bound in several
#: places): CPU seconds of the first simulation of a ring of S sites (2S
#: transitions, incremental), from an empty cache, 2 shared cores --
#: S = 4: unrolled loop 405 lines 12 s, table-driven loop 3.5 s; S = 8: 725 lines
#: 28-42 s, 3.7 s; S = 30: 2,241 lines over 15 min (not finished), 13 s.  The
#: table-driven loop does not grow with the model (its per-coordinate code is in
#: ``update_into``), so a larger model gets it, at about twice the time per event.
MAX_UNROLL_LINES = 800
#: Version of the generated chain modules (part of their cache key).
CHAIN_VERSION = "8"
_SELF_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]

#: An intensity that is not a jump rate is stored as NaN: the loop stops there.
NAN = np.nan
INF = np.inf

#: Indices into the scalar accumulator returned by ``run_chain``.
TIME, SUMSQ, THIN_TIME, UP, EVENTS, REJECTED = range(6)
N_SCALARS = 6


@numba.njit(inline="always", cache=True)
def inside_after(n, jk, jv, m, kind, upper, total):
    """Whether ``n`` plus the sparse jump ``(jk, jv)[:m]`` lies in the lattice
    (bounds, order for ``kind == 0``, sum for ``kind == 1``); ``n`` is restored."""
    for q in range(m):
        n[jk[q]] += jv[q]
    b = n.shape[0]
    ok = True
    acc = 0
    for k in range(b):
        v = n[k]
        if v < 0 or v > upper or (kind == 0 and k > 0 and v > n[k - 1]):
            ok = False
        acc += v
    if kind == 1 and acc > total:
        ok = False
    for q in range(m):
        n[jk[q]] -= jv[q]
    return ok


# The steps both event loops share -- the generated ones below and the interpreted
# one of sim.table_loop.  The per-event ones are inlined by numba
# (``inline="always"``: no call, the accumulators stay in the loop's registers).
# Each was timed in the table-driven loop (benchmarks/bench_loop_versions.py, the
# supermarket b = 10): no change; one helper for the whole acceptance test (bounds,
# lattice and round-off, returning a flag) made it 1.25x slower, so only its bounds
# loop is shared (in_bounds).


@numba.njit(cache=True)
def begin(n, N, up, target, kind, hist, thin_bits):
    """What an event loop starts from, at the counts ``n`` of population ``N``: the
    densities ``s = n / N``, ``upf[t] = 1.0`` for the arrival transitions (``up``, else
    ``0.0``), ``1 / N``, the running ``sum_k (n_k - N s*_k)^2`` (``target = N s*``),
    the coordinates' last jump times (zeros), a scratch row, whether the marginal pmfs
    are kept (``hist``), whether the lattice has an order or sum condition (``kind``)
    and the thinning mask of ``thin_bits``."""
    b = n.shape[0]
    nt = up.shape[0]
    upf = np.empty(nt)
    for t in range(nt):
        upf[t] = 1.0 if up[t] else 0.0
    inv_n = 1.0 / N
    s = np.empty(b)
    for k in range(b):
        s[k] = n[k] * inv_n
    sumsq = 0.0
    for k in range(b):
        sumsq += (n[k] - target[k]) ** 2
    with_hist = hist.shape[1] > 0
    check_lattice = kind == 0 or kind == 1
    last, nrow, mask = np.zeros(b), np.empty(b), low_bits(thin_bits)
    return s, upf, inv_n, sumsq, last, nrow, with_hist, check_lattice, mask


@numba.njit(inline="always", cache=True)
def invert(R, u):
    """The transition ``t`` of the inversion ``R_0 + ... + R_{t-1} <= u < R_0 + ... + R_t``
    (running sum in transition order); for a ``u`` at the very top (round-off of the
    sum), the last one with a positive intensity."""
    nt = R.shape[0]
    chosen = nt - 1
    acc = 0.0
    for t in range(nt):
        acc += R[t]
        if u < acc:
            chosen = t
            break
    while chosen > 0 and R[chosen] == 0.0:
        chosen -= 1
    return chosen


@numba.njit(inline="always", cache=True)
def in_bounds(n, jump_k, jump_v, t, m, upper):
    """Whether jump ``t`` (``m`` moved coordinates) keeps every count it moves in
    ``0..upper``: the check of every chosen jump (one whose intensity is within
    round-off of zero also checks the whole lattice, :func:`inside_after`)."""
    ok = True
    for q in range(m):
        v = n[jump_k[t, q]] + jump_v[t, q]
        if v < 0 or v > upper:
            ok = False
    return ok


@numba.njit(inline="always", cache=True)
def thinned_moments(n, nrow, w, cov_acc):
    """The thinned second moments ``cov_acc[j, k] += (w n_j) n_k``, ``j <= k`` (``nrow``:
    scratch for the counts as floats, converted once, not once per product)."""
    b = n.shape[0]
    for j in range(b):
        nrow[j] = n[j]
    for j in range(b):
        wj = w * nrow[j]
        crow = cov_acc[j]
        for k in range(j, b):
            crow[k] += wj * nrow[k]


@numba.njit(cache=True)
def finish(n, hist, last, T, rng, r0, r1, r2, r3, area, t_thin, up_area, events, rejected):
    """Close a run at time ``T``: the time at each coordinate's final value into ``hist``
    (when kept), the RNG words back into ``rng``; the scalars :data:`TIME`,
    :data:`SUMSQ`, :data:`THIN_TIME`, :data:`UP`, :data:`EVENTS`, :data:`REJECTED`."""
    if hist.shape[1] > 0:
        for k in range(n.shape[0]):
            hist[k, n[k]] += T - last[k]
    store_state(rng, r0, r1, r2, r3)
    out = np.zeros(N_SCALARS)
    out[TIME] = T
    out[SUMSQ] = area
    out[THIN_TIME] = t_thin
    out[UP] = up_area
    out[EVENTS] = events
    out[REJECTED] = rejected
    return out


#: Moving coordinate ``K`` by ``DV``: the count and the density, then (after
#: the intensities, in the unrolled loop) the by-parts statistics at time ``T``
#: from the old count ``OLD`` (printed into the loops: an inlined function call
#: here cost a third of the event time).
_MOVE_STATE = """\
OLD = n[K]
n[K] = OLD + DV
s[K] = (OLD + DV) * inv_n
"""
_MOVE_STATS = """\
if with_hist:
    hist[K, OLD] += T - last[K]
    last[K] = T
corr[K] += DV * T
sumsq += 2.0 * DV * (OLD - target[K]) + DV * DV
"""


def _move(k: Any, dv: Any, stats: bool) -> list[str]:
    text = _MOVE_STATS if stats else _MOVE_STATE
    old = f"old{k}" if str(k).isdigit() else f"old_{k}"
    return text.replace("OLD", old).replace("K", str(k)).replace("DV", str(dv)).splitlines()


# The generated event loop.  Its start, inversion, bounds check, thinned second
# moments and end are the helpers above, shared with sim.table_loop; its
# accumulators and per-event accounting (holding time, areas) are written out, as in
# sim.table_loop and mfstein.families.supermarket.aggregated.hold, so that they stay in registers.
_LOOP = '''

@numba.njit(cache=True, error_model="numpy")
def @NAME@(
    p, n, N, jump_k, jump_v, jump_len, up, target, rng, steps, thin_bits, kind, upper,
    total, corr, cov_acc, hist, obs_acc,
):
    """Advance the chain by ``steps`` jumps from ``n`` (see sim.generic_kernels.run_chain)."""
    nt = jump_len.shape[0]
    s, upf, inv_n, sumsq, last, nrow, with_hist, check_lattice, thin_mask = begin(
        n, N, up, target, kind, hist, thin_bits
    )
    R = np.empty(nt)
    rates_into(s, p, R)
    clamp_rates(s, p, R)  # round-off of exact zeros to 0, NaN (stop) for a negative rate
@LOAD@
    gval = np.empty(N_OBS)
    r0, r1, r2, r3 = load_state(rng)
    T = 0.0
    area = 0.0
    t_thin = 0.0
    up_area = 0.0
    rejected = 0
    events = 0
    tot = 0.0
    tot_up = 0.0
    for i in range(steps):
        if @REFRESH@ or not 0.0 < tot < INF:
            # the totals from the stored intensities: no drift accumulates
@TOTALS@
            if not 0.0 < tot < INF:
                break  # an absorbing state, or a rate that is no jump rate (NaN, inf)
        events += 1
        w = inv_n / tot
        area += w * sumsq
        up_area += w * tot_up
@OBSERVE@        r64, r0, r1, r2, r3 = next_u64(r0, r1, r2, r3)
        if (r64 & thin_mask) == _U64(0):
            t_thin += w
@COV@
        T += w
        u = (r64 >> _U64(11)) * INV_2_53 * tot
        tiny = CLAMP * tot
@UNROLLED@
@STORE@
        chosen = invert(R, u)
        m = jump_len[chosen]
        ok = in_bounds(n, jump_k, jump_v, chosen, m, upper)
        if ok and R[chosen] <= tiny and check_lattice:
            # within round-off of zero: check the whole lattice condition
            ok = inside_after(n, jump_k[chosen], jump_v[chosen], m, kind, upper, total)
        if not ok or R[chosen] <= tiny * 1e-3:
            rejected += 1
            continue
        for q in range(m):
            k = jump_k[chosen, q]
            dv = jump_v[chosen, q]
@MOVE_TABLES@
@UPDATE_TABLES@
@RELOAD@
    return finish(n, hist, last, T, rng, r0, r1, r2, r3, area, t_thin, up_area, events, rejected)
'''

_FULL_UPDATE = """\
rates_into(s, p, R)
chk = 0.0
for t in range(nt):
    chk += R[t] - abs(R[t])  # 0 unless a rate is negative, infinite or NaN
if chk != 0.0:
    clamp_rates(s, p, R)  # the rare state with a zero's round-off or a bad rate
"""

_CLAMP = '''

@numba.njit(cache=True, error_model="numpy")
def clamp_rates(s, p, R):
    """R from rates_into, checked: the round-off of an exact zero becomes 0, a rate
    negative beyond its allowance (numeric.rate_signs) or not finite becomes NaN."""
    clean = True
    for t in range(R.shape[0]):
        if not 0.0 <= R[t] < INF:
            clean = False
    if clean:
        return R
    for t in range(R.shape[0]):
        if not 0.0 <= R[t] < INF:
            R[t] = NAN  # a rate of no coordinate stays refused; update_into decides the rest
    for k in range(s.shape[0]):
        update_into(k, s, p, R)
    return R
'''

_TABLE_UPDATE = """\
for q in range(m):
    k = jump_k[chosen, q]
    lo, hi = DEPS_PTR_A[k], DEPS_PTR_A[k + 1]
    tot -= _pair_sum(R, DEPS_IDX_A, lo, hi, upf, False)
    tot_up -= _pair_sum(R, DEPS_IDX_A, lo, hi, upf, True)
    update_into(k, s, p, R)
    tot += _pair_sum(R, DEPS_IDX_A, lo, hi, upf, False)
    tot_up += _pair_sum(R, DEPS_IDX_A, lo, hi, upf, True)
"""


#: The observables' time integrals, at the top of every event (the state of the
#: holding time ``w``): ``obs_acc[j] += w g_j(n / N)``.
_OBSERVE = """\
observe_into(s, p, gval)
for j in range(N_OBS):
    obs_acc[j] += w * gval[j]
"""


def observe_source(model: Any, observables: Sequence[Any]) -> list[str]:
    """Source lines of ``observe_into(s, p, out)``: the observables (SymPy expressions
    in the model's states and parameters) at the state ``s`` into ``out``, printed
    like the intensities (:class:`_Blocks`: neutral names, common subexpressions)."""
    import sympy as sp

    from derive.backends import get_backend

    be = get_backend("numba")
    names = {x: sp.Symbol(f"_s{i}") for i, x in enumerate(model.states)}
    names.update({q: sp.Symbol(f"_p{j}") for j, q in enumerate(model.params)})
    exprs = [sp.sympify(g).xreplace(names) for g in observables]
    reps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("_c"), order="none")
    used = set().union(*(e.free_symbols for e in exprs)) if exprs else set()
    body = [
        f"{sym} = {be.wrap_input(f'{arr}[{j}]')}"
        for arr, pre, count in (("s", "_s", model.n), ("p", "_p", len(model.params)))
        for j in range(count)
        if (sym := sp.Symbol(f"{pre}{j}")) in used
    ]
    body += [f"{sym} = {be.print_expr(sub)}" for sym, sub in reps]
    body += [f"out[{j}] = {be.print_expr(e)}" for j, e in enumerate(reduced)]
    return [
        "",
        "",
        '@numba.njit(cache=True, error_model="numpy")',
        "def observe_into(s, p, out):",
        '    """The observables g_j(s) into out (NaN or inf where one is not a number)."""',
        *("    " + line for line in body),
        "    return out",
    ]


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def incremental_pays(deps_ptr: Any, jumps: Any) -> bool:
    """Whether updating only the moved coordinates' intensities is cheaper than
    recomputing all of them: every jump touches fewer than a third of them
    (e.g. 4 of 20 for the supermarket model with b = 10; not for SIR's 3)."""
    ptr = np.asarray(deps_ptr)
    J = np.asarray(jumps)
    nt = J.shape[0]
    touched = [int(sum(ptr[k + 1] - ptr[k] for k in np.flatnonzero(row))) for row in J]
    return nt > 0 and 3 * max(touched) < nt


class _Blocks:
    """The model's intensities with neutral symbol names, grouped by coordinate.

    States print as ``_s<i>``, parameters as ``_p<j>``
    (:func:`derive.backends.positional_symbols`) and common
    subexpressions as ``_c<m>``, so that the same lines can be inlined into the
    event loop (whose own names never start with ``_s``, ``_p`` or ``_c``) and
    used in ``update_into``: the two evaluate identical expressions.
    """

    def __init__(self, model: Any) -> None:
        import sympy as sp

        from derive.backends import get_backend, input_sources, positional_symbols
        from numeric.rate_signs import allowance_exprs

        be = get_backend("numba")
        names = positional_symbols(model)
        rates = [sp.sympify(tr.rate).xreplace(names) for tr in model.transitions]
        room = [a.xreplace(names) for a in allowance_exprs(model)]
        self.ptr, self.idx = [0], []
        self.lines: list[list[str]] = []
        for x in model.states:
            mine = [t for t, r in enumerate(rates) if names[x] in r.free_symbols]
            self.idx += mine
            self.ptr.append(len(self.idx))
            exprs = [rates[t] for t in mine]
            reps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("_c"), order="none")
            used = set().union(*(e.free_symbols for e in exprs)) if exprs else set()
            body = [
                f"{sym} = {be.wrap_input(src)}" for src, sym in input_sources(model) if sym in used
            ]
            body += [f"{sym} = {be.print_expr(sub)}" for sym, sub in reps]
            for t, e in zip(mine, reduced, strict=True):
                # a jump rate, the round-off of an exact zero (0), or NaN: the loop stops
                body += [
                    f"_v{t} = {be.print_expr(e)}",
                    # a call, not a conditional expression: see _rate
                    f"R[{t}] = _rate(_v{t}, {be.print_expr(room[t])})",
                ]
            self.lines.append(body)

    def deps(self, k: int) -> list[int]:
        return self.idx[self.ptr[k] : self.ptr[k + 1]]

    def tagged(self, k: int, tag: str) -> list[str]:
        """The lines of coordinate ``k`` with every name they bind suffixed by ``tag``
        (:func:`_own_names`)."""
        return _own_names(self.lines[k], tag)


#: The names the intensity blocks bind: states, parameters, common subexpressions
#: and the raw intensities (``_s3``, ``_p0``, ``_c12``, ``_v7``).
_BLOCK_NAME = re.compile(r"\b(_[spcv]\d+)\b")


def _own_names(lines: list[str], tag: str) -> list[str]:
    """``lines`` with each name of :data:`_BLOCK_NAME` suffixed ``_<tag>``, so that
    a block printed in several branches of one function binds names of its own in
    each.  numba's SSA reconstruction walks every block of the function once for
    each name that is bound in more than one place, so names shared between
    branches make its compile time grow like the square of the number of
    branches (a 30-coordinate ``update_into``: 7.2 s; with names of its own, a
    fraction of it); names bound once cost nothing there."""
    return [_BLOCK_NAME.sub(rf"\1_{tag}", line) for line in lines]


@numba.njit(cache=True)
def _rate(v, room):
    """The stored intensity of a raw value ``v`` whose rounding allowance is ``room``:
    ``v`` when ``v >= 0`` (``+inf`` too: the total is checked for it at every event),
    ``0`` within the allowance below zero (the round-off of an exact zero), else NaN.

    A function, not a conditional expression printed per intensity: each printed
    ``a if c else b`` is two more basic blocks and one more name bound in two of
    them, and numba's SSA reconstruction and reaching-definition passes walk the
    whole function once per such name -- compile time quadratic in the number of
    intensities (a 30-coordinate ``update_into``: 7 s, its unrolled event loop:
    minutes).  A plain call keeps numba's IR straight-line; LLVM inlines it."""
    return v if v >= 0.0 else (0.0 if -room <= v else NAN)


@numba.njit(inline="always", cache=True)
def _pair_sum(R, idx, lo, hi, upf, up_only):
    """``sum R[idx[lo:hi]]`` (weighted by ``upf`` if ``up_only``) added pair by
    pair, ``(x0 + x1) + (x2 + x3) + ...``: half the dependent additions of a
    running sum, and the order :func:`_sum` prints."""
    acc = 0.0
    j = lo
    while j + 1 < hi:
        a, c = R[idx[j]], R[idx[j + 1]]
        if up_only:
            a, c = a * upf[idx[j]], c * upf[idx[j + 1]]
        acc += a + c
        j += 2
    if j < hi:
        acc += R[idx[j]] * upf[idx[j]] if up_only else R[idx[j]]
    return acc


def _sum(terms: list[str | None]) -> str:
    """The pairwise sum of :func:`_pair_sum`; ``None`` stands for a term that
    ``up_only`` weights by zero (dropped: ``x + 0.0 == x`` and ``x * 1.0 == x``)."""
    groups = [terms[j : j + 2] for j in range(0, len(terms), 2)]
    parts = []
    for g in groups:
        kept = [x for x in g if x is not None]
        if kept:
            parts.append(f"({kept[0]} + {kept[1]})" if len(kept) == 2 else kept[0])
    return " + ".join(parts) if parts else "0.0"


_COV_LOOP = "thinned_moments(n, nrow, w, cov_acc)\n"
#: Up to this many coordinates the thinned second moments are printed as
#: straight-line code (short inner loops of varying length mispredict their exits).
MAX_COV_UNROLL = 16


def _cov(b: int, unrolled: bool) -> str:
    """The thinned update ``cov_acc[j, k] += (w n_j) n_k``, ``j <= k``: the loop, or
    the same operations written out."""
    if not unrolled or b > MAX_COV_UNROLL:
        return _COV_LOOP
    lines = [f"nv{j} = float(n[{j}])" for j in range(b)]
    for j in range(b):
        lines.append(f"wv = w * nv{j}")
        lines += [f"cov_acc[{j}, {k}] += wv * nv{k}" for k in range(j, b)]
    return "\n".join(lines) + "\n"


def _locals(nt: int, load: bool) -> str:
    """Copy the intensities between the array ``R`` and the locals ``R_t`` of the
    unrolled loop (which keeps them in registers: no store-to-load forwarding on
    the loop-carried chain ``R -> acc -> branch``)."""
    pairs = [(f"R_{t}", f"R[{t}]") for t in range(nt)]
    return "".join(f"{a} = {b}\n" if load else f"{b} = {a}\n" for a, b in pairs)


def _totals(up: list[bool], local: bool) -> str:
    """``tot`` and ``tot_up`` summed from the stored intensities in transition
    order (the locals skip the ``up`` weight 0: ``x + R * 0.0 == x`` for
    ``x >= +0.0``)."""
    if not local:
        return (
            "tot = 0.0\ntot_up = 0.0\nfor t in range(nt):\n"
            "    tot += R[t]\n    tot_up += R[t] * upf[t]\n"
        )
    lines = ["tot = 0.0", "tot_up = 0.0"]
    lines += [f"tot += R_{t}" for t in range(len(up))]
    lines += [f"tot_up += R_{t}" for t in range(len(up)) if up[t]]
    return "\n".join(lines) + "\n"


def _unrolled(jumps: np.ndarray, up: list[bool], blocks: _Blocks, incremental: bool) -> str:
    """The inversion written out: after each partial sum, transition ``t``'s code."""
    out = []
    for t, row in enumerate(jumps):
        ks = [int(k) for k in np.flatnonzero(row)]
        out.append("acc = R_0" if t == 0 else f"acc += R_{t}")
        out.append(f"if u < acc:  # transition {t}: jump {list(map(int, row))}")
        checks = [
            f"n[{k}] + {int(row[k])} <= upper" if row[k] > 0 else f"n[{k}] - {-int(row[k])} >= 0"
            for k in ks
        ]
        body = [
            f"ok = {' and '.join(checks) if checks else 'True'}",
            f"if ok and R_{t} <= tiny and check_lattice:",
            f"    ok = inside_after(n, jump_k[{t}], jump_v[{t}], {len(ks)}, kind, upper, total)",
            f"if not ok or R_{t} <= tiny * 1e-3:",
            "    rejected += 1",
            "    continue",
        ]
        for k in ks:
            body += _move(k, f"({int(row[k])})", stats=False)
        if not incremental:
            body += _FULL_UPDATE.splitlines() + _locals(len(jumps), load=True).splitlines()
        for k in ks if incremental else ():
            dep = blocks.deps(k)
            ups = [f"R_{d}" if up[d] else None for d in dep]
            # the old intensities leave the totals before the new ones are known
            body.append(f"tot -= {_sum([f'R_{d}' for d in dep])}")
            body.append(f"tot_up -= {_sum(ups)}")
            body += [
                re.sub(r"^R\[(\d+)\] = ", r"R_\1 = ", line) for line in blocks.tagged(k, f"t{t}")
            ]
            body.append(f"tot += {_sum([f'R_{d}' for d in dep])}")
            body.append(f"tot_up += {_sum(ups)}")
        # the statistics last: the intensities and the total (the loop-carried
        # chain) are issued first after the mispredicted branch
        for k in ks:
            body += _move(k, f"({int(row[k])})", stats=True)
        body.append("continue")
        out += ["    " + line for line in body]
    return "\n".join(out) + "\n"


def chain_source(model: Any, observables: Sequence[Any] = ()) -> str:
    """Python source of the model's chain module (module docstring).

    The module takes ``rates_into`` from the model's kernel module, so that its
    loops have only array and number arguments and numba caches them on disk.
    With ``observables`` (SymPy expressions in the model's states and
    parameters) its loops also integrate each of them over time
    (``observe_into``, :data:`_OBSERVE`); without, they do no work for them.
    """
    kern = model.kernels("numba")
    jumps = np.asarray(kern.jumps, dtype=np.int64)
    up = [bool(x) for x in jumps.sum(axis=1) > 0]
    blocks = _Blocks(model)
    incremental = incremental_pays(blocks.ptr, jumps)
    refresh = "(i & (REFRESH - 1)) == 0" if incremental else "True"
    update = _TABLE_UPDATE if incremental else _FULL_UPDATE
    head = [
        f'"""Event loops of the generic simulator generated by mfstein.sim (v{CHAIN_VERSION}) '
        "-- do not edit.",
        "",
        f"model: {model.name}, b = {model.n}, {len(jumps)} transitions, "
        f"incremental = {incremental}",
        '"""',
        "",
        "import math",
        "",
        "import numpy as np",
        "",
        "from mfstein.ground.generated import load_generated",
        "from mfstein.ground.jit import numba",
        "from sim.generic_kernels import (",
        "    CLAMP, INF, NAN, REFRESH,",
        "    inside_after, _pair_sum, _rate, begin, finish, in_bounds, invert, thinned_moments,",
        ")",
        "from sim.rng import INV_2_53, load_state, next_u64",
        "",
        f"rates_into = load_generated({Path(kern.path).stem!r}).rates_into",
        "_U64 = np.uint64",
        f"INCREMENTAL = {incremental}",
        f"N_OBS = {len(observables)}",
        f"DEPS_PTR = {blocks.ptr!r}",
        f"DEPS_IDX = {blocks.idx!r}",
        "DEPS_PTR_A = np.array(DEPS_PTR, dtype=np.int64)",
        "DEPS_IDX_A = np.array(DEPS_IDX, dtype=np.int64)",
        "",
        "",
        '@numba.njit(cache=True, error_model="numpy")',
        "def update_into(k, s, p, R):",
        '    """Recompute the intensities that involve coordinate k (sim.rate_signs rule)."""',
    ]
    first = True
    for k in range(model.n):
        if not blocks.deps(k):
            continue
        head.append(f"    {'if' if first else 'elif'} k == {k}:")
        first = False
        head += ["        " + line for line in blocks.tagged(k, f"k{k}")]
    head.append("    return R")
    head += observe_source(model, observables)
    src = "\n".join(head) + "\n" + _CLAMP
    observe = _indent(_OBSERVE, 8) if observables else ""

    def loop(name: str, unrolled: str, local: bool) -> str:
        text = _LOOP.replace("@NAME@", name).replace("@REFRESH@", refresh)
        text = text.replace("@OBSERVE@", observe)
        text = text.replace("@TOTALS@\n", _indent(_totals(up, local), 12))
        text = text.replace("@COV@\n", _indent(_cov(model.n, local), 12))
        for key, spaces, lines in (
            ("@LOAD@", 4, _locals(len(jumps), load=True)),
            ("@STORE@", 8, _locals(len(jumps), load=False)),
            ("@RELOAD@", 8, _locals(len(jumps), load=True)),
        ):
            text = text.replace(f"{key}\n", _indent(lines, spaces) if local else "")
        text = text.replace("@UNROLLED@\n", _indent(unrolled, 8))
        text = text.replace(
            "@MOVE_TABLES@\n",
            _indent("\n".join(_move("k", "dv", False) + _move("k", "dv", True)) + "\n", 12),
        )
        return text.replace("@UPDATE_TABLES@\n", _indent(update, 8))

    src += loop("run_chain_tables", "", False)
    if 0 < len(jumps) <= MAX_UNROLL:
        unrolled = loop("run_chain_unrolled", _unrolled(jumps, up, blocks, incremental), True)
        if unrolled.count("\n") <= MAX_UNROLL_LINES:
            src += unrolled
    return src


_CHAINS: dict[str, ModuleType] = {}
#: Names a cached chain module must define to be trusted.
_REQUIRED = (
    "update_into", "clamp_rates", "observe_into", "run_chain_tables", "rates_into",
    "DEPS_PTR", "DEPS_IDX", "N_OBS",
)  # fmt: skip


def chain_module(model: Any, observables: Sequence[Any] = ()) -> tuple[str, ModuleType]:
    """The generated chain module of ``model`` (integrating ``observables``, SymPy
    expressions in its states and parameters): its cache name and the module,
    through the one loader of generated code (:func:`mfstein.ground.generated.generated_module`:
    written atomically to the cache directory, checked before it is trusted,
    regenerated when damaged)."""
    from mfstein.ground.generated import generated_module

    exprs, key = _chain_key(model, observables)
    name = _chain_name(key)
    if name not in _CHAINS:
        gen = generated_module(
            "simchain", key, lambda: chain_source(model, exprs), required=_REQUIRED
        )
        _CHAINS[name] = gen.module
    return name, _CHAINS[name]


#: :func:`_chain_key` and the kernel module's name, by model key and observables, for
#: this process: the kernel module's name hashes the generator's files (some 0.7 ms).
_KEYS: dict[tuple[Any, ...], tuple[tuple[Any, ...], str, str]] = {}


def _chain_key(model: Any, observables: Sequence[Any]) -> tuple[tuple[Any, ...], str]:
    """The observables as SymPy expressions and the cache key of the chain module of
    ``model`` with them: the model's key, the name of its numba kernel module (computed,
    not generated: :func:`derive.kernels.module_name_of`), the generator's version and
    digest, SymPy's release and the observables' ``srepr``."""
    exprs, key, _stem = _keys(model, observables)
    return exprs, key


def _keys(model: Any, observables: Sequence[Any]) -> tuple[tuple[Any, ...], str, str]:
    """:func:`_chain_key` and the name of the model's numba kernel module, computed once
    per process for a model key and observables (their SymPy expressions, or strings)."""
    try:
        memo: tuple[Any, ...] | None = (model.key, tuple(observables))
        hit = _KEYS.get(memo)  # type: ignore[arg-type]
    except TypeError:  # an observable that is not hashable
        memo, hit = None, None
    if hit is not None:
        return hit
    import sympy as sp

    from derive.kernels import module_name_of

    stem = module_name_of(model, "numba")
    exprs = tuple(sp.sympify(g) for g in observables)
    watched = tuple(sp.srepr(g) for g in exprs)
    key = repr((model.key, stem, CHAIN_VERSION, sp.__version__, _SELF_DIGEST, watched))
    if memo is not None:
        _KEYS[memo] = (exprs, key, stem)
    return exprs, key, stem


def chain_files(model: Any, observables: Sequence[Any] = ()) -> tuple[Path, Path]:
    """Where the cache directory keeps the model's numba kernel module and its chain
    module with ``observables`` (neither generated here)."""
    from mfstein.ground import cache

    _exprs, key, stem = _keys(model, observables)
    folder = cache.cache_dir()
    return folder / f"{stem}.py", folder / f"{_chain_name(key)}.py"


def _chain_name(key: str) -> str:
    from mfstein.ground.generated import module_name

    return module_name("simchain", key)


def chain_name(model: Any, observables: Sequence[Any] = ()) -> str:
    """The name of the chain module of ``model`` with ``observables`` (not generated)."""
    return _chain_name(_chain_key(model, observables)[1])


def chain_compiled(name: str) -> bool:
    """Whether the chain module ``name`` has compiled code: its event loop, when the
    module is loaded in this process (:func:`mfstein.ground.jit.is_compiled`: compiled
    here or indexed on disk), else an index of numba's for a function of it on disk
    (:func:`mfstein.ground.jit.has_index`).  A module loaded only to price its loop
    (:func:`sim.interpreted.pick_loop` generates it to measure it) is not compiled: taken
    for compiled, it made every later ``auto`` run of the model in the process choose
    afresh, re-preparing the run (some 6 ms of a 2e5-event SIR call, stop 54)."""
    from mfstein.ground import cache
    from mfstein.ground.jit import has_index, is_compiled

    mod = _CHAINS.get(name)
    if mod is not None:
        return is_compiled(event_loop(mod))
    return has_index(cache.cache_dir() / f"{name}.py")


def chain_never_compiled(model: Any, observables: Sequence[Any] = ()) -> bool:
    """Whether the compiled loop of ``model`` (with ``observables``) has certainly never
    been compiled, decided without generating its source: its chain module is neither
    loaded in this process nor written in the cache directory, and no numba index of a
    function of that module's name is on disk (:func:`mfstein.ground.jit.has_index`).  ``False``
    means "maybe": :func:`compile_seconds` of :func:`chain_module` then tells."""
    from mfstein.ground import cache

    name = chain_name(model, observables)
    return not (cache.cache_dir() / f"{name}.py").is_file() and not chain_compiled(name)


def load_chain(name: str, path: Path | None = None) -> ModuleType:
    """The generated chain module ``name`` in a worker process
    (:func:`mfstein.ground.generated.load_generated`: checked, one sentence when missing
    or damaged)."""
    mod = _CHAINS.get(name)
    if mod is None:
        from mfstein.ground.generated import load_generated

        mod = _CHAINS[name] = load_generated(name, path, required=_REQUIRED)
    return mod


def run_chain(mod: ModuleType, *args: Any, unrolled: bool = True) -> np.ndarray:
    """Advance the chain with the generated loop of ``mod`` (:func:`chain_module`).

    Parameters
    ----------
    mod:
        The model's chain module.
    *args:
        ``p, n, N, jump_k, jump_v, jump_len, up, target, rng, steps, thin_bits,
        kind, upper, total, corr, cov_acc, hist, obs_acc``: parameter values (float64,
        model order); counts (int64[b], updated in place); population size;
        sparse jumps (transition ``t`` moves coordinates
        ``jump_k[t, :jump_len[t]]`` by ``jump_v[t, :jump_len[t]]``); ``up[t] = 1``
        for transitions with ``sum(l) > 0``; ``N s*`` (the centre of the
        squared error); the xoshiro256** state (uint64[4], updated in place);
        number of jumps; second moments on one event in ``2^thin_bits``;
        lattice bounds (:mod:`numeric.exact.lattice` codes); the by-parts
        correction ``sum_jumps l_k tau`` (float64[b], the caller forms
        ``int n_k = n_k(T) T - corr_k``); thinned ``sum w n_j n_k`` (float64[b, b],
        upper triangle); time at each value of each coordinate
        (float64[b, m], ``m = 0`` to skip); the time integrals
        ``sum w g_j(n / N)`` of the module's observables (float64[N_OBS]).
    unrolled:
        Use the unrolled loop when the module has one (identical results).

    Returns
    -------
    numpy.ndarray
        The scalars :data:`TIME`, :data:`SUMSQ`, :data:`THIN_TIME`, :data:`UP`,
        :data:`EVENTS`, :data:`REJECTED`.
    """
    return event_loop(mod, unrolled)(*args)


def event_loop(mod: ModuleType, unrolled: bool = True) -> Any:
    """The compiled loop :func:`run_chain` calls: ``run_chain_unrolled`` when asked for
    and the module has one, else ``run_chain_tables``."""
    fn = getattr(mod, "run_chain_unrolled", None) if unrolled else None
    return fn or mod.run_chain_tables


#: The constant of :func:`compile_seconds`: the least it estimates for any loop.
MIN_COMPILE_SECONDS = 2.0


#: The lines of each event loop's source, by the loop's module and name, for this process.
_LINES: dict[tuple[str, str], int] = {}


def compile_seconds(mod: ModuleType, unrolled: bool = True) -> float | None:
    """Estimated seconds of numba's first compilation of :func:`event_loop` of ``mod``
    and of what it calls (``None`` when the loop is compiled already, in this process
    or in the on-disk cache).

    numba's typing and lowering grow faster than the function: with ``L`` the lines
    of the loop's source, ``2 + 2e-5 L^2`` seconds of one core, the functions it calls
    from its module and the kernel module included (``update_into``, ``clamp_rates``,
    ``rates_into``: 0.5-0.7 s of it).  Measured at stop 54 in a cache holding the
    interpreted loop, so that the helpers were compiled: SIR (L = 193) 2.9-3.0 s
    against 2.74, SIS (129) 2.1-2.6 against 2.33, tandem lines of 2, 4 and 8 stations
    (173, 270, 495) 2.5-2.6, 3.5 and 7.1 against 2.60, 3.46 and 6.90 s of CPU time; a
    shared machine's wall time can be several times that.  The helpers every loop
    calls, when not compiled yet, add :func:`sim.loop_prices.helpers_seconds`
    (:func:`sim.loop_prices.compile_seconds`, the price its callers read).
    """
    from mfstein.ground.jit import is_compiled

    fn = event_loop(mod, unrolled)
    if is_compiled(fn):
        return None
    where = (mod.__name__, fn.__name__)
    lines = _LINES.get(where)
    if lines is None:
        import inspect

        try:
            lines = len(inspect.getsource(fn.py_func).splitlines())
        except (OSError, TypeError):  # pragma: no cover - source not readable
            lines = 500
        _LINES[where] = lines
    return MIN_COMPILE_SECONDS + 2e-5 * lines**2
