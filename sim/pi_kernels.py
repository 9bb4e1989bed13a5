"""Compiled slot loop of the Persistent-Idle simulator (numba).

One call of :func:`run_slots` advances ``n`` servers by ``steps`` slots of the
discrete-time model of "On the Persistent-Idle Load Distribution Policy Under
Batch Arrivals and Random Service Capacity".  In slot ``t``:

1. the batch ``a(t)`` is drawn (alias method, one xoshiro256** word);
2. the dispatcher acts on the state at the end of slot ``t - 1``
   (``I(t-1) = {i : Q_i(t-1) = 0}``, eq. (3)):

   * ``PI`` (eq. (4)): ``LI(t)`` is uniform on ``I(t-1)`` if it is non-empty,
     else ``LI(t) = LI(t-1)``; the whole batch joins ``LI(t)``;
   * ``PI_SPLIT`` (eq. (9)): ``LI(t)`` as under PI; if ``I(t-1)`` is non-empty
     the batch is split over the idle servers by a rule ``f`` satisfying (7)
     (the shares add up to ``a(t)``) and (8) (busy servers get nothing), else
     it joins ``LI(t)``.  The built-in rule gives ``floor(a / k)`` jobs to each of
     the ``k`` idle servers and one more to each of ``a mod k`` of them chosen
     uniformly (a partial Fisher--Yates shuffle of the idle list); its
     randomness ``B(t)`` is the words drawn for that shuffle.  A user rule
     ``rule(q, a, b, out)`` (numba-compiled) receives ``B(t) = b ~ U[0, 1)``
     and is checked against (7) and (8) in every slot where it is used;
   * ``JIQ``: a uniformly chosen idle server, else a uniformly chosen server;
   * ``JSQ``: a uniformly chosen server among the shortest queues;
   * ``RANDOM``: a uniformly chosen server;

   (for the last three the whole batch goes to one server, recorded as ``LI(t)``);
3. every server serves up to its capacity, ``Q_i(t) = [Q_i(t-1) + a_i(t) - s_i(t)]^+``
   (capacities are drawn only for servers holding work; an empty server's draw
   would not change anything), and the queues are recorded at the end of the slot.

Accumulated per call (all int64, exact): the slot count, arrivals, slots with
``a > 0``, tokens, ``Q_total`` at the start and the end, per-server ``sum_t Q_i(t)``
and idle slots, the path-bound counters and the count of slots in which a job
joined a busy server while some server was idle.

Tokens (the paper's communication cost): a server sends its token to the
dispatcher when it becomes idle, and the dispatcher returns it implicitly with
the next jobs it sends there.  So server ``i`` sends one message in slot ``t``
exactly when ``Q_i(t-1) + a_i(t) > 0`` and ``Q_i(t) = 0``.

Path bound (eq. (37)).  With ``Omega_t = {exists i != LI(t): Q_i(t) = 0}`` (eq. (17))
and, for an origin slot ``u``, ``tau_0(u) = min{t > u : Omega_t} - u`` (eq. (18)),
every slot ``u`` of the path is taken as an origin and ``tau_0(u)`` is compared with

* ``max(1, max_{i != LI(u+1)} Q_i(u))`` (the bound the paper's argument proves:
  the servers other than the one that receives the batches get no work until
  one of them idles; ``counter BOUND_VIOL``),
* ``max_{i != LI(u)} Q_i(u)`` as printed in (37) (``EQ37_VIOL``; the subset of
  origins where ``Omega_u`` fails, the case the proof treats, is ``EQ37_VIOL_PROOF``).

Origins whose ``Omega`` has not yet occurred are kept in a buffer carried from
call to call; if it is full (only in long stretches without ``Omega``), origins
are not checked and counted in ``UNCHECKED``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mfstein.ground.jit import numba
from sim.rng import INV_2_53, load_state, next_u64, store_state

_U64 = np.uint64

#: Policy codes of the compiled loop.
PI, PI_SPLIT, JIQ, JSQ, RANDOM = 0, 1, 2, 3, 4
POLICIES: dict[str, int] = {
    "pi": PI,
    "pi-split": PI_SPLIT,
    "jiq": JIQ,
    "jsq": JSQ,
    "random": RANDOM,
}

#: Indices into the int64 scalar accumulator.
(
    SLOTS,
    ARRIVALS,
    NONEMPTY,
    TOKENS,
    Q_START,
    Q_END,
    BOUND_CHECKS,
    BOUND_VIOL,
    EQ37_VIOL,
    EQ37_VIOL_PROOF,
    UNCHECKED,
    BUSY_WHILE_IDLE,
) = range(12)
N_SCALARS = 12

#: Layout of the int64 chain-state vector: ``LI(t)``, pending origins, slot clock,
#: and (after a rule violation) the offending batch.
LI, NPEND, CLOCK, BAD_BATCH = range(4)

#: Status codes returned by :func:`run_slots`.
OK, RULE_VIOLATION, RULE_ERROR = 0, 1, 2

#: Columns of the pending-origin buffer: corrected deadline, printed deadline, Omega at origin.
PENDING_COLUMNS = 3


def alias_table(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker/Vose alias table of a pmf on ``0..K-1``: ``(threshold, alias)``.

    Column ``j`` is chosen uniformly; it yields ``j`` with probability
    ``threshold[j]`` and ``alias[j]`` otherwise.
    """
    p = np.asarray(probs, dtype=float)
    K = len(p)
    scaled = p * K / p.sum()
    thr = np.ones(K)
    alias = np.arange(K, dtype=np.int64)
    small = [j for j in range(K) if scaled[j] < 1.0]
    large = [j for j in range(K) if scaled[j] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        thr[s] = scaled[s]
        alias[s] = g
        scaled[g] -= 1.0 - scaled[s]
        (small if scaled[g] < 1.0 else large).append(g)
    for j in small + large:  # rounding leftovers: probability one
        thr[j] = 1.0
        alias[j] = j
    return thr, alias


#: numba type of a split rule as :func:`run_slots` receives it: a first-class function
#: ``int64(q, a, b, out)`` (a C function pointer) returning 0, or 1 if the rule raised.
#: The kernel's cache key names only this type; a dispatcher argument's type names the
#: function's memory address, so no process found an earlier one's compiled
#: :func:`run_slots` (issues 34/35).
RULE_SIG = numba.types.int64(
    numba.types.int64[::1], numba.types.int64, numba.types.float64, numba.types.int64[::1]
)


@numba.cfunc(RULE_SIG, cache=True)
def no_rule(q, a, b, out):  # pragma: no cover - placeholder, never called
    """Placeholder split rule for the policies that do not use one."""
    out[0] = a
    return 0


def rule_pointer(rule: Any) -> Any:
    """The ``njit`` split rule ``rule(q, a, b, out)`` as a first-class function of type
    :data:`RULE_SIG` for :func:`run_slots`: a value ``rule`` returns is dropped, an
    exception it raises is caught and returned as 1 (a C function cannot raise).

    Compiled in every process that uses it (a small function, not cached: numba's
    cache would not see an edit of the user's module)."""

    def call(q, a, b, out):  # pragma: no cover - compiled by numba
        try:
            rule(q, a, b, out)
        except Exception:
            return 1
        return 0

    return numba.cfunc(RULE_SIG)(call)


@numba.njit(inline="always", cache=True)
def _below(r, k):
    """Top 32 bits of ``r`` mapped to ``[0, k)`` (Lemire); ``(value, ok)``."""
    m = (r >> _U64(32)) * _U64(k)
    low = m & _U64(0xFFFFFFFF)
    ok = True
    if low < _U64(k):
        ok = low >= (_U64(1) << _U64(32)) % _U64(k)
    return np.int64(m >> _U64(32)), ok


# One long compiled loop on purpose: split into calls, its state would leave the
# registers of the hot loop (issue 21 allows the simulators' inner loops to stay long).
@numba.njit(inline="always", cache=True)
def _top_two(qi, i, m1, m1i, m2):
    """The largest queue ``m1``, its server ``m1i`` and the second largest ``m2`` after
    server ``i``'s queue ``qi`` is seen; inlined into :func:`run_slots`'s loops."""
    if qi > m1:
        return qi, i, m1
    if qi > m2:
        return m1, m1i, qi
    return m1, m1i, m2


@numba.njit(cache=True)
def run_slots(
    policy,
    custom_rule,
    q,
    li_state,
    rng,
    steps,
    a_val,
    a_thr,
    a_alias,
    s_val,
    s_thr,
    s_alias,
    s_k,
    pending,
    check_bound,
    scal,
    qsum,
    idle_count,
    rule,
    alloc,
):
    """Advance the system ``steps`` slots in place; return a status code.

    Parameters
    ----------
    policy : int
        One of :data:`POLICIES`.
    custom_rule : bool
        PI-Split only: call ``rule`` instead of the built-in equal split.
    q : int64[n]
        Queue lengths at the end of the last slot (updated).
    li_state : int64[4]
        ``[LI(t-1), pending origins, slots so far, -]`` (updated; see :data:`LI`).
    rng : uint64[4]
        xoshiro256** state (updated).
    a_val, a_thr, a_alias
        Batch-size support and alias table.
    s_val, s_thr, s_alias : (n, K) arrays; s_k : int64[n]
        Capacity supports and alias tables per server (``s_k[i]`` columns used).
    pending : int64[cap, 3]
        Origins awaiting ``Omega`` (see the module docstring), updated.
    check_bound : bool
        Evaluate the path-bound counters.
    scal : int64[N_SCALARS]; qsum, idle_count : int64[n]
        Accumulators (added to).
    rule, alloc
        User split rule (a first-class function of type :data:`RULE_SIG`, e.g.
        :func:`rule_pointer` or :data:`no_rule`) and its int64[n] output buffer.

    Returns
    -------
    int
        :data:`OK`, or :data:`RULE_VIOLATION` (:data:`RULE_ERROR`: the rule raised):
        the rule's output is left in ``alloc``, the queues before the offending slot
        in ``q`` and its batch in ``li_state[BAD_BATCH]``; the other outputs are then
        meaningless.
    """
    n = q.shape[0]
    s0, s1, s2, s3 = load_state(rng)
    li = li_state[LI]
    npend = li_state[NPEND]
    cap = pending.shape[0]
    Ka = a_val.shape[0]
    idle_list = np.empty(n, dtype=np.int64)
    nidle = 0
    m1 = np.int64(-1)  # largest queue, its server, second largest (of Q(t-1))
    m1i = np.int64(-1)
    m2 = np.int64(-1)
    qtot = np.int64(0)
    for i in range(n):
        qi = q[i]
        qtot += qi
        if qi == 0:
            idle_list[nidle] = i
            nidle += 1
        m1, m1i, m2 = _top_two(qi, i, m1, m1i, m2)
    scal[Q_START] += qtot
    check = check_bound and n >= 2
    clock = li_state[CLOCK]
    arrivals = np.int64(0)
    nonempty = np.int64(0)
    tokens = np.int64(0)
    checks = np.int64(0)
    viol = np.int64(0)
    viol37 = np.int64(0)
    viol37p = np.int64(0)
    unchecked = np.int64(0)
    bwi = np.int64(0)
    status = OK
    for _ in range(steps):
        # Omega at the origin u = t - 1 and the printed bound, from Q(t-1), LI(t-1)
        if check:
            li_idle_prev = 1 if q[li] == 0 else 0
            omega_prev = nidle - li_idle_prev > 0
            m_print = m1 if m1i != li else m2
        # ---- batch a(t)
        r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
        x = (r >> _U64(11)) * INV_2_53 * Ka
        j = np.int64(x)
        if j >= Ka:
            j = Ka - 1
        a = a_val[j] if x - j < a_thr[j] else a_val[a_alias[j]]
        arrivals += a
        if a > 0:
            nonempty += 1
        # ---- dispatch
        if policy == PI or policy == PI_SPLIT:
            if nidle > 0:
                while True:
                    r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
                    k, ok = _below(r, nidle)
                    if ok:
                        break
                li = idle_list[k]
            if a > 0:
                if policy == PI or nidle == 0:
                    if nidle > 0 and q[li] != 0:
                        bwi += 1
                    q[li] += a
                elif custom_rule:
                    r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
                    b = (r >> _U64(11)) * INV_2_53
                    for i in range(n):
                        alloc[i] = 0
                    if rule(q, a, b, alloc) != 0:
                        status = RULE_ERROR
                        li_state[BAD_BATCH] = a
                        break
                    total = np.int64(0)
                    bad = False
                    for i in range(n):
                        total += alloc[i]
                        if alloc[i] < 0 or (alloc[i] > 0 and q[i] > 0):
                            bad = True
                    if bad or total != a:
                        status = RULE_VIOLATION
                        li_state[BAD_BATCH] = a
                        break
                    for i in range(n):
                        if alloc[i] > 0:
                            q[i] += alloc[i]
                else:
                    base = a // nidle
                    rem = a - base * nidle
                    for m in range(rem):  # partial Fisher-Yates: rem distinct idle servers
                        while True:
                            r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
                            k, ok = _below(r, nidle - m)
                            if ok:
                                break
                        k += m
                        tmp = idle_list[m]
                        idle_list[m] = idle_list[k]
                        idle_list[k] = tmp
                    for m in range(nidle):
                        i = idle_list[m]
                        if q[i] != 0:
                            bwi += 1
                        q[i] += base + (1 if m < rem else 0)
        else:
            if policy == RANDOM or nidle == 0:
                pool = n
            else:
                pool = nidle  # JIQ or JSQ with an idle server: a uniform idle server
            if policy == JSQ and nidle == 0:
                qmin = q[0]
                ties = 0
                for i in range(n):
                    if q[i] < qmin:
                        qmin = q[i]
                        ties = 1
                    elif q[i] == qmin:
                        ties += 1
                while True:
                    r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
                    k, ok = _below(r, ties)
                    if ok:
                        break
                for i in range(n):
                    if q[i] == qmin:
                        if k == 0:
                            li = i
                            break
                        k -= 1
            else:
                while True:
                    r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
                    k, ok = _below(r, pool)
                    if ok:
                        break
                li = k if (policy == RANDOM or nidle == 0) else idle_list[k]
            if a > 0:
                if nidle > 0 and q[li] != 0:
                    bwi += 1
                q[li] += a
        # ---- the origin u = t - 1 waits for the next Omega
        if check:
            m_corr = m1 if m1i != li else m2
            if m_corr < 1:
                m_corr = 1
        # ---- service, end-of-slot record, I(t)
        nidle = 0
        m1 = -1
        m1i = -1
        m2 = -1
        qtot = 0
        for i in range(n):
            qi = q[i]
            if qi > 0:
                if s_k[i] == 1:
                    s = s_val[i, 0]
                else:
                    r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
                    x = (r >> _U64(11)) * INV_2_53 * s_k[i]
                    j = np.int64(x)
                    if j >= s_k[i]:
                        j = s_k[i] - 1
                    s = s_val[i, j] if x - j < s_thr[i, j] else s_val[i, s_alias[i, j]]
                qi -= s
                if qi <= 0:
                    qi = 0
                    tokens += 1
                else:
                    qsum[i] += qi
                    qtot += qi
                q[i] = qi
            if qi == 0:
                idle_list[nidle] = i
                nidle += 1
                idle_count[i] += 1
            if check:
                m1, m1i, m2 = _top_two(qi, i, m1, m1i, m2)
        clock += 1
        if check:
            omega = nidle - (1 if q[li] == 0 else 0) > 0
            u = clock - 1
            if omega and npend == 0:
                # tau_0(u) = 1: the corrected bound max(1, .) always holds
                checks += 1
                if m_print < 1:
                    viol37 += 1
                    if not omega_prev:
                        viol37p += 1
            else:
                if npend == cap:  # drop origins whose fate is already known
                    keep = 0
                    for e in range(npend):
                        if pending[e, 0] < clock and pending[e, 1] < clock:
                            checks += 1
                            viol += 1
                            viol37 += 1
                            if pending[e, 2] == 0:
                                viol37p += 1
                        else:
                            pending[keep, 0] = pending[e, 0]
                            pending[keep, 1] = pending[e, 1]
                            pending[keep, 2] = pending[e, 2]
                            keep += 1
                    npend = keep
                if npend < cap:
                    pending[npend, 0] = u + m_corr
                    pending[npend, 1] = u + m_print
                    pending[npend, 2] = 1 if omega_prev else 0
                    npend += 1
                else:
                    unchecked += 1
                if omega:
                    for e in range(npend):
                        checks += 1
                        if pending[e, 0] < clock:
                            viol += 1
                        if pending[e, 1] < clock:
                            viol37 += 1
                            if pending[e, 2] == 0:
                                viol37p += 1
                    npend = 0
    li_state[CLOCK] = clock
    scal[SLOTS] += steps
    scal[ARRIVALS] += arrivals
    scal[NONEMPTY] += nonempty
    scal[TOKENS] += tokens
    scal[Q_END] += qtot
    scal[BOUND_CHECKS] += checks
    scal[BOUND_VIOL] += viol
    scal[EQ37_VIOL] += viol37
    scal[EQ37_VIOL_PROOF] += viol37p
    scal[UNCHECKED] += unchecked
    scal[BUSY_WHILE_IDLE] += bwi
    store_state(rng, s0, s1, s2, s3)
    li_state[LI] = li
    li_state[NPEND] = npend
    return status
