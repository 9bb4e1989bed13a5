"""The interpreted event loop: any model's jump chain, compiled once per installation.

The per-model loop of :mod:`sim.generic_kernels` is generated and compiled for
each model: numba's typing and lowering of it take seconds to tens of seconds
of CPU, most of a cold ``simulate`` (issue 34).  :func:`run_table_chain` is one
``njit(cache=True)`` function that reads the model from arrays -- the sparse
jumps, the intensities, their rounding allowances and the observables as
stack-machine programs (:mod:`derive.rate_program`), and for each transition
the intensities its jump changes -- so it is compiled once (into mfstein's
cache directory, :mod:`mfstein.ground.jit`) and then serves every model.

It walks the same chain with the same statistics as the per-model loop (see
:mod:`sim.generic_kernels` for the method: embedded jump chain, holding time
``1 / (N sum beta)`` as the weight, by-parts time integrals, the thinned second
moments, the same lattice checks, rejections and the same rule for the sign of
an intensity: a negative value within its allowance is zero, beyond it or NaN
stops the loop; the start, the inversion, the bounds check, the thinned second
moments and the end are the same jitted helpers of :mod:`sim.generic_kernels`).
After a jump it recomputes only the intensities that read a
coordinate the jump moved (each once), takes their old values off the total
and adds the new ones; the total is summed afresh from the stored intensities
every :data:`sim.generic_kernels.REFRESH` events.  The two loops draw the same
random words in the same way, but their floating-point sums differ in the
last bits, so they agree in law, not bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from derive.rate_ops import OP
from mfstein.ground.jit import numba
from sim.generic_kernels import (
    CLAMP,
    INF,
    NAN,
    REFRESH,
    begin,
    finish,
    in_bounds,
    inside_after,
    invert,
    thinned_moments,
)
from sim.rng import INV_2_53, load_state, next_u64

_U64 = np.uint64
(
    CONST, STATE, PARAM, ADD, MUL, DIV, NEG, POWI, SELECT,
    SUB, POW, MIN, MAX, HEAVISIDE, LT, LE, GT, GE, EQ, NE, AND, OR,
    SQRT, EXP, LOG, ABS, SIGN, NOT, SIN, COS, TAN, ASIN, ACOS, ATAN, SINH, COSH, TANH,
) = range(len(OP))  # fmt: skip
if (OP["select"], OP["sub"], OP["sqrt"], OP["tanh"]) != (SELECT, SUB, SQRT, TANH):
    raise ImportError("sim.table_loop's opcodes differ from derive.rate_program.OPS")


@numba.njit(cache=True, error_model="numpy")
def _unary(op, x):
    """The rarer one-argument operations."""
    if op == SQRT:
        return math.sqrt(x) if x >= 0.0 else NAN
    if op == EXP:
        return math.exp(x)
    if op == LOG:
        if x > 0.0:
            return math.log(x)
        return -INF if x == 0.0 else NAN
    if op == ABS:
        return abs(x)
    if op == SIGN:
        return 0.0 if x == 0.0 else math.copysign(1.0, x)
    if op == NOT:
        return 0.0 if x != 0.0 else 1.0
    if op == SIN:
        return math.sin(x)
    if op == COS:
        return math.cos(x)
    if op == TAN:
        return math.tan(x)
    if op == ASIN:
        return math.asin(x) if -1.0 <= x <= 1.0 else NAN
    if op == ACOS:
        return math.acos(x) if -1.0 <= x <= 1.0 else NAN
    if op == ATAN:
        return math.atan(x)
    if op == SINH:
        return math.sinh(x)
    if op == COSH:
        return math.cosh(x)
    return math.tanh(x)


@numba.njit(cache=True, error_model="numpy")
def _binary(op, a, b):
    """The rarer two-argument operations (comparisons give 1.0 or 0.0)."""
    if op == SUB:
        return a - b
    if op == POW:
        return a**b
    if op == MIN:
        return b if b < a else a
    if op == MAX:
        return b if b > a else a
    if op == HEAVISIDE:
        return 0.0 if a < 0.0 else (b if a == 0.0 else 1.0)
    if op == LT:
        return 1.0 if a < b else 0.0
    if op == LE:
        return 1.0 if a <= b else 0.0
    if op == GT:
        return 1.0 if a > b else 0.0
    if op == GE:
        return 1.0 if a >= b else 0.0
    if op == EQ:
        return 1.0 if a == b else 0.0
    if op == NE:
        return 1.0 if a != b else 0.0
    if op == AND:
        return 1.0 if a != 0.0 and b != 0.0 else 0.0
    return 1.0 if a != 0.0 or b != 0.0 else 0.0


@numba.njit(cache=True, error_model="numpy")
def _powi(x, e):
    """``x ** e`` for an integer ``e`` by repeated squaring (``1 / x**-e`` for ``e < 0``)."""
    m = -e if e < 0 else e
    acc = 1.0
    base = x
    while m > 0:
        if m & 1:
            acc *= base
        base *= base
        m >>= 1
    return 1.0 / acc if e < 0 else acc


@numba.njit(cache=True, error_model="numpy", inline="always")
def evaluate(code, ptr, consts, i, s, p, stack):
    """The value of program ``i`` (:class:`derive.rate_program.Programs`) at the
    densities ``s`` and parameters ``p`` (``stack``: scratch of its depth)."""
    top = 0
    for pc in range(ptr[i], ptr[i + 1]):
        op = code[pc, 0]
        arg = code[pc, 1]
        if op == CONST:
            stack[top] = consts[arg]
            top += 1
        elif op == STATE:
            stack[top] = s[arg]
            top += 1
        elif op == PARAM:
            stack[top] = p[arg]
            top += 1
        elif op == ADD:
            top -= 1
            stack[top - 1] += stack[top]
        elif op == MUL:
            top -= 1
            stack[top - 1] *= stack[top]
        elif op == DIV:
            top -= 1
            stack[top - 1] /= stack[top]
        elif op == NEG:
            stack[top - 1] = -stack[top - 1]
        elif op == POWI:
            stack[top - 1] = _powi(stack[top - 1], arg)
        elif op == SELECT:
            top -= 2
            if stack[top + 1] == 0.0:
                stack[top - 1] = stack[top]
        elif op >= SQRT:
            stack[top - 1] = _unary(op, stack[top - 1])
        else:
            top -= 1
            stack[top - 1] = _binary(op, stack[top - 1], stack[top])
    return stack[0]


@numba.njit(cache=True, error_model="numpy")
def _polynomial(t, poly_ptr, fac_ptr, factors, coef, s):
    """Intensity ``t`` from its monomials (:class:`derive.rate_program.PolynomialForms`:
    ``coef`` their coefficients' values)."""
    v = 0.0
    for m in range(poly_ptr[t], poly_ptr[t + 1]):
        term = coef[m]
        for f in range(fac_ptr[m], fac_ptr[m + 1]):
            x = s[factors[f, 0]]
            e = factors[f, 1]
            term *= x if e == 1 else _powi(x, e)
        v += term
    return v


@numba.njit(cache=True, error_model="numpy")
def rate(code, ptr, consts, t, nt, s, p, stack, poly):
    """Intensity ``t`` under the rule of :mod:`numeric.rate_signs`: its value (from its
    monomials when it is a polynomial, ``poly = (flags, poly_ptr, fac_ptr, factors,
    coef)``, else from its program) when ``>= 0`` (``+inf`` too: the total catches
    it), ``0`` when negative within its allowance (program ``nt + t``), NaN otherwise
    (the loop stops there)."""
    flags, poly_ptr, fac_ptr, factors, coef = poly
    if flags[t]:
        v = _polynomial(t, poly_ptr, fac_ptr, factors, coef, s)
    else:
        v = evaluate(code, ptr, consts, t, s, p, stack)
    if v >= 0.0:
        return v
    room = evaluate(code, ptr, consts, nt + t, s, p, stack)
    return 0.0 if -room <= v else NAN


@numba.njit(cache=True, error_model="numpy")
def coefficients(code, ptr, consts, first, count, p, stack):
    """The values of the monomials' coefficients: programs ``first .. first + count - 1``
    (in the parameters only)."""
    coef = np.empty(count)
    s = np.empty(0)
    for m in range(count):
        coef[m] = evaluate(code, ptr, consts, first + m, s, p, stack)
    return coef


@numba.njit(cache=True, error_model="numpy")
def rates_into(code, ptr, consts, depth, nt, s, p, poly_tabs, coef_base, R):
    """Every intensity at ``s`` into ``R`` (:func:`rate`; ``poly_tabs`` the monomial
    tables, their coefficients the programs from ``coef_base``)."""
    stack = np.empty(depth)
    flags, poly_ptr, fac_ptr, factors = poly_tabs
    coef = coefficients(code, ptr, consts, coef_base, fac_ptr.shape[0] - 1, p, stack)
    poly = (flags, poly_ptr, fac_ptr, factors, coef)
    for t in range(nt):
        R[t] = rate(code, ptr, consts, t, nt, s, p, stack, poly)
    return R


@numba.njit(cache=True, error_model="numpy")
def run_table_chain(
    code, ptr, consts, depth, nt, aff_ptr, aff_idx, poly_tabs, coef_base,
    p, n, N, jump_k, jump_v, jump_len, up, target, rng, steps, thin_bits, kind, upper,
    total, corr, cov_acc, hist, obs_acc,
):  # fmt: skip
    """Advance the chain by ``steps`` jumps from ``n`` (updated in place).

    ``code, ptr, consts``: the programs (rates ``0..nt-1``, their allowances
    ``nt..2nt-1``, the observables ``2nt..``), ``depth`` their stack depth;
    transition ``t`` changes the intensities ``aff_idx[aff_ptr[t]:aff_ptr[t + 1]]``;
    ``poly_tabs = (flags, poly_ptr, fac_ptr, factors)`` the intensities that are
    polynomials in the densities, whose coefficients are the programs from
    ``coef_base`` (evaluated once here).
    The other arguments and the returned scalars are those of
    :func:`sim.generic_kernels.run_chain`.
    """
    n_obs = obs_acc.shape[0]
    stack = np.empty(depth)
    flags, poly_ptr, fac_ptr, factors = poly_tabs
    coef = coefficients(code, ptr, consts, coef_base, fac_ptr.shape[0] - 1, p, stack)
    poly = (flags, poly_ptr, fac_ptr, factors, coef)
    s, upf, inv_n, sumsq, last, nrow, with_hist, check_lattice, thin_mask = begin(
        n, N, up, target, kind, hist, thin_bits
    )
    R = np.empty(nt)
    for t in range(nt):
        R[t] = rate(code, ptr, consts, t, nt, s, p, stack, poly)
    gval = np.empty(n_obs)
    for j in range(n_obs):
        gval[j] = evaluate(code, ptr, consts, 2 * nt + j, s, p, stack)
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
        if (i & (REFRESH - 1)) == 0 or not 0.0 < tot < INF:
            tot = 0.0
            tot_up = 0.0
            for t in range(nt):
                tot += R[t]
                tot_up += R[t] * upf[t]
            if not 0.0 < tot < INF:
                break  # an absorbing state, or a rate that is no jump rate (NaN, inf)
        events += 1
        w = inv_n / tot
        area += w * sumsq
        up_area += w * tot_up
        for j in range(n_obs):
            obs_acc[j] += w * gval[j]
        r64, r0, r1, r2, r3 = next_u64(r0, r1, r2, r3)
        if (r64 & thin_mask) == _U64(0):
            t_thin += w
            thinned_moments(n, nrow, w, cov_acc)
        T += w
        u = (r64 >> _U64(11)) * INV_2_53 * tot
        tiny = CLAMP * tot
        chosen = invert(R, u)
        m = jump_len[chosen]
        ok = in_bounds(n, jump_k, jump_v, chosen, m, upper)
        if ok and R[chosen] <= tiny and check_lattice:
            ok = inside_after(n, jump_k[chosen], jump_v[chosen], m, kind, upper, total)
        if not ok or R[chosen] <= tiny * 1e-3:
            rejected += 1
            continue
        for q in range(m):
            k = jump_k[chosen, q]
            dv = jump_v[chosen, q]
            old = n[k]
            n[k] = old + dv
            s[k] = (old + dv) * inv_n
            if with_hist:
                hist[k, old] += T - last[k]
                last[k] = T
            corr[k] += dv * T
            sumsq += 2.0 * dv * (old - target[k]) + dv * dv
        # the intensities the jump changed, then the observables at the new state;
        # evaluated here, not by calls: a call with array arguments on this path cost
        # several times the whole event (reference counts); numba inlines the
        # interpreter (``evaluate``, ``inline="always"``).  The polynomial stays
        # written out: ``_polynomial`` inlined here made SIR's and JIQ's events 1.3x
        # slower (stop 43, benchmarks/bench_loop_versions.py)
        lo, hi = aff_ptr[chosen], aff_ptr[chosen + 1]
        for a in range(lo, hi + n_obs):
            is_rate = a < hi
            t = aff_idx[a] if is_rate else 2 * nt + a - hi
            if is_rate and flags[t]:
                v = 0.0
                for mono in range(poly_ptr[t], poly_ptr[t + 1]):
                    term = coef[mono]
                    for f in range(fac_ptr[mono], fac_ptr[mono + 1]):
                        x = s[factors[f, 0]]
                        e = factors[f, 1]
                        term *= x if e == 1 else _powi(x, e)
                    v += term
            else:
                v = evaluate(code, ptr, consts, t, s, p, stack)
            if not is_rate:
                gval[a - hi] = v
                continue
            if not v >= 0.0:  # rare: the sign rule, with the allowance
                v = rate(code, ptr, consts, t, nt, s, p, stack, poly)
            tot -= R[t]
            tot_up -= R[t] * upf[t]
            R[t] = v
            tot += v
            tot_up += v * upf[t]
    return finish(n, hist, last, T, rng, r0, r1, r2, r3, area, t_thin, up_area, events, rejected)
